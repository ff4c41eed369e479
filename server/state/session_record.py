"""The session record exactly as docs/state-files.md shows it (`sessions/<uuid>.json`), and its summary.

Forward compatible by construction: msgspec ignores fields it does not know on load, so a record
written by a newer server (with, say, `pendingApproval`) still loads here. Only the fields a record
cannot mean anything without (`id`, `createdAt`, `updatedAt`, `cwd`) are required.
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..model.session_state import Notebook as Notebook, SessionState
from ..model.todo import Todo as Todo  # the record's vocabulary, importable from here as before
from ..model.one_line import one_line_head
from ..model.timestamps import iso_to_epoch
from ..model.transcript import Message, TextPart, UserMessage

#: Titles longer than this are cut and end with an ellipsis (the ellipsis counts).
TITLE_MAX = 80


class SessionRecord(SessionState, kw_only=True):
    """A session's state as a file holds it: the fields a record cannot mean anything without are
    required here (a live session has no `createdAt` before its first message)."""

    created_at: str
    updated_at: str


def record_of(state: SessionState, **stamps: Any) -> SessionRecord:
    """The record to write for `state`, with the stamps of this save (`updated_at`, `model`, ...).

    A snapshot: its lists and dicts are copies, so the loop can go on appending while the writer
    thread encodes it."""
    fields = {name: _copied(value) for name, value in msgspec.structs.asdict(state).items()}
    return SessionRecord(**(fields | stamps))


def _copied(value: Any) -> Any:
    if isinstance(value, (list, dict)):
        return type(value)(value)
    if isinstance(value, msgspec.Struct):
        return msgspec.structs.replace(value, **{k: _copied(v) for k, v in msgspec.structs.asdict(value).items()})
    return value


_encoder = msgspec.json.Encoder()
record_decoder = msgspec.json.Decoder(SessionRecord)


def encode_record(record: SessionRecord) -> bytes:
    return _encoder.encode(record)


def decode_record(data: bytes) -> SessionRecord:
    return record_decoder.decode(data)


def make_title(prompt: str, limit: int = TITLE_MAX) -> str:
    """The prompt on one line, cut to `limit` characters with an ellipsis when longer.

    The cut prefers a word boundary in the last quarter so a title does not end mid-word.
    """
    text = one_line_head(prompt, limit)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= (limit * 3) // 4:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def first_prompt(messages: list[Message]) -> str:
    for message in messages:
        if isinstance(message, UserMessage) and not message.context:
            # The first part is what the user typed; later parts are attached files.
            text = next((p.text for p in message.content if isinstance(p, TextPart)), "")
            if text.strip():
                return text
    return ""


def record_problem(record: SessionRecord, expected_id: str | None = None) -> str | None:
    """Why a record that decoded is still unusable, or None. Checks what types cannot."""
    if expected_id is not None and record.id != expected_id:
        return f"its id {record.id!r} does not match the file name"
    for name in ("created_at", "updated_at"):
        try:
            iso_to_epoch(getattr(record, name))
        except ValueError:
            return f"{name.replace('_a', 'A')} is not an ISO 8601 time"
    return None
