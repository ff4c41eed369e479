"""`/memory`: the model merges project-memory entries, under the seed's two safety rules.

Entries recalled at least once are kept verbatim and never merged; a reply that does not parse
leaves the store untouched. It only runs past 60 entries with at least two never recalled, so
`/memory` on a small store is a deliberate no-op rather than a rewrite.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable, Sequence

import msgspec

from ...protocol import MemoryCompactionResult
from .store import (
    COMPACT_MIN_ENTRIES,
    COMPACT_MIN_UNUSED,
    KINDS,
    MAX_ENTRIES,
    MAX_TEXT_CHARS,
    MemoryKind,
    MemoryEntry,
    MemoryRefused,
    ProjectMemory,
    check_note,
    fold,
)

log = logging.getLogger(__name__)


def compaction_skip_reason(entries: Sequence[MemoryEntry]) -> str | None:
    """Why `/memory` would do nothing now, or None when it may run."""
    if len(entries) <= COMPACT_MIN_ENTRIES:
        return (
            f"the store has {len(entries)} entries; compaction only runs past {COMPACT_MIN_ENTRIES}, "
            "so nothing was changed"
        )
    unused = sum(1 for e in entries if e.hits == 0)
    if unused < COMPACT_MIN_UNUSED:
        return (
            f"only {unused} entr{'y has' if unused == 1 else 'ies have'} never been recalled; merging needs "
            f"at least {COMPACT_MIN_UNUSED}, and recalled entries are kept verbatim, so nothing was changed"
        )
    return None


_COMPACTION_INSTRUCTIONS = f"""You maintain a coding agent's project memory: short notes about one codebase.
Merge the notes under "Notes to merge" into fewer, better notes.

- Combine notes that say the same thing or overlap into one note.
- Drop a note only when another note (merged or kept) already says it, or it is contradicted by a newer one.
- Keep every distinct fact, decision, gotcha and command; do not invent anything.
- Each note is one self-contained line of at most {MAX_TEXT_CHARS} characters that makes sense without any conversation.
- kind is one of: {", ".join(KINDS)}.
- Do not repeat the notes under "Kept notes": they are kept verbatim anyway.
- Return no more notes than you were given to merge.

Reply with JSON only, exactly this shape and nothing else:
{{"entries": [{{"kind": "fact", "text": "..."}}]}}"""


def build_compaction_request(entries: Sequence[MemoryEntry]) -> tuple[str, str]:
    """(instructions, user_text) for the side request; only never-recalled entries are sent to merge."""
    unused = [{"kind": e.kind, "text": e.text} for e in entries if e.hits == 0]
    kept = [{"kind": e.kind, "text": e.text} for e in entries if e.hits > 0]
    user_text = (
        "Notes to merge:\n"
        + json.dumps({"entries": unused}, ensure_ascii=False, indent=1)
        + "\n\nKept notes (context only, do not return them):\n"
        + json.dumps({"entries": kept}, ensure_ascii=False, indent=1)
    )
    return _COMPACTION_INSTRUCTIONS, user_text


class _ReplyEntry(msgspec.Struct, forbid_unknown_fields=True):
    kind: str
    text: str


class _Reply(msgspec.Struct, forbid_unknown_fields=True):
    entries: list[_ReplyEntry]


_reply_decoder = msgspec.json.Decoder(_Reply)
_FENCE = re.compile(r"^```[A-Za-z]*\n(.*)\n```$", re.DOTALL)


class BadCompactionReply(ValueError):
    pass


def parse_compaction_reply(reply_text: str, max_entries: int) -> list[tuple[MemoryKind, str]]:
    """The model's merged notes, or BadCompactionReply: any flaw rejects the whole reply."""
    body = reply_text.strip()
    fenced = _FENCE.match(body)  # one wrapping code fence is the only leniency
    if fenced:
        body = fenced.group(1).strip()
    try:
        reply = _reply_decoder.decode(body)
    except msgspec.DecodeError as err:
        raise BadCompactionReply(f"the reply is not the expected JSON: {err}") from err
    if not reply.entries:
        # An empty list parses, but accepting it would delete every unused note.
        raise BadCompactionReply("the reply has no entries")
    if len(reply.entries) > max_entries:
        raise BadCompactionReply(f"the reply has {len(reply.entries)} entries for {max_entries} sent")
    notes: list[tuple[MemoryKind, str]] = []
    for position, item in enumerate(reply.entries):
        try:
            notes.append(check_note(item.kind, item.text))
        except MemoryRefused as err:
            raise BadCompactionReply(f"entry {position}: {err}") from err
    return notes


def apply_compaction_reply(
    store: ProjectMemory,
    reply_text: str,
    *,
    sent: Sequence[MemoryEntry] | None = None,
) -> MemoryCompactionResult:
    """Replace the merged entries with the model's notes; leave the file untouched on any doubt.

    `sent` is the entries whose merge the model was asked for (the unused ones passed to
    `build_compaction_request`). When omitted, the unused entries in the file now are taken: right
    when nothing else wrote in between, which the caller ensures by not awaiting anything else.
    Entries that appeared, or were recalled, since the request are kept verbatim either way.
    """

    def merge(entries: list[MemoryEntry], now: Callable[[], str]) -> tuple[list[MemoryEntry] | None, MemoryCompactionResult]:
        before = len(entries)
        reason = compaction_skip_reason(entries)
        if reason:
            return None, MemoryCompactionResult(ran=False, reason=reason, before=before, after=before)
        sent_entries = [e for e in entries if e.hits == 0] if sent is None else list(sent)
        sent_keys = {(e.kind, fold(e.text), e.created_at) for e in sent_entries}
        try:
            notes = parse_compaction_reply(reply_text, max(len(sent_entries), 1))
        except BadCompactionReply as err:
            log.warning("memory compaction reply rejected: %s", err)
            return None, MemoryCompactionResult(
                ran=False,
                reason=f"the model's reply could not be used ({err}); the store was left untouched",
                before=before,
                after=before,
            )
        # Recalled entries are never merged: the rule that makes compaction safe to run at all.
        kept = [e for e in entries if e.hits > 0 or (e.kind, fold(e.text), e.created_at) not in sent_keys]
        seen = {fold(e.text) for e in kept}
        stamp = now()
        merged: list[MemoryEntry] = []
        for kind, text in notes:
            if fold(text) in seen:
                continue  # the model repeated a kept note or itself
            seen.add(fold(text))
            merged.append(MemoryEntry(kind=kind, text=text, hits=0, created_at=stamp))
        result = (kept + merged)[:MAX_ENTRIES]
        return result, MemoryCompactionResult(ran=True, before=before, after=len(result))

    return store.edit(merge)


async def compact(store: ProjectMemory, ask: Callable[[str, str], Awaitable[str]]) -> MemoryCompactionResult:
    """The whole `/memory` flow: `ask(instructions, user_text)` is the tool-less side request.

    File work runs in a thread: waiting for another process's lock must not stall the loop."""
    entries = await asyncio.to_thread(store.entries)
    reason = compaction_skip_reason(entries)
    if reason:
        return MemoryCompactionResult(ran=False, reason=reason, before=len(entries), after=len(entries))
    instructions, user_text = build_compaction_request(entries)
    reply = await ask(instructions, user_text)
    return await asyncio.to_thread(apply_compaction_reply, store, reply, sent=[e for e in entries if e.hits == 0])
