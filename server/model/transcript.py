"""The transcript: messages and parts exactly as the session record shows them (docs/state-files.md).

One `assistant` message per provider response; one `tool` message per step holding all of that
step's results. `item_id` is the provider's stored-item id and is present only on parts that came
from a completed, stored provider response.
"""

from __future__ import annotations

import math
import threading
from typing import Any, Sequence, Union

import msgspec


class TextPart(msgspec.Struct, tag="text", tag_field="type", omit_defaults=True, rename="camel"):
    text: str
    item_id: str | None = None
    # The model declined: `text` is its refusal (Responses `refusal` content, Chat `refusal`).
    # A flag on a text part, not a new part type, so every reader of the record's shape (docs/state-files.md) shows it.
    refusal: bool = False


class ReasoningPart(msgspec.Struct, tag="reasoning", tag_field="type", omit_defaults=True, rename="camel"):
    text: str
    item_id: str | None = None
    encrypted_content: str | None = None


class ToolCallPart(msgspec.Struct, tag="tool-call", tag_field="type", omit_defaults=True, rename="camel"):
    tool_call_id: str
    tool_name: str
    input: Any
    item_id: str | None = None


class ImageRef(msgspec.Struct, omit_defaults=True, rename="camel", kw_only=True):
    """An image of the conversation: its bytes are a file of the image store (state/image_store.py,
    named by `name`), so the record stays small and a token estimate does not count base64."""

    name: str  # the store's file name: the SHA-256 of the bytes and the format's extension
    media_type: str
    width: int
    height: int
    label: str = ""  # what the user attached ("screenshot.png", "pasted image"), for display


class ToolResultPart(msgspec.Struct, tag="tool-result", tag_field="type", omit_defaults=True, rename="camel"):
    tool_call_id: str
    tool_name: str
    output: str
    is_error: bool = False
    images: list[ImageRef] = []  # read_file of an image (agent/images.py), sent after the step's results


AssistantPart = Union[TextPart, ReasoningPart, ToolCallPart]


class UserMessage(msgspec.Struct, tag="user", tag_field="role", omit_defaults=True):
    content: list[TextPart]
    # A context message (agent/context_messages.py): what changed around the conversation (git
    # status, the task list, AGENTS.md, project memory), appended by the server, not typed by the
    # user. Clients do not show it as a prompt; it goes to the model as a user message.
    context: bool = False
    images: list[ImageRef] = []  # sent with the prompt (agent/images.py)


class AssistantMessage(msgspec.Struct, tag="assistant", tag_field="role"):
    content: list[AssistantPart]


class ToolMessage(msgspec.Struct, tag="tool", tag_field="role"):
    content: list[ToolResultPart]


Message = Union[UserMessage, AssistantMessage, ToolMessage]

_encoder = msgspec.json.Encoder()


def encode_messages(messages: list[Message]) -> bytes:
    return _encoder.encode(messages)


def shown(messages: Sequence[Message]) -> list[Message]:
    """The messages a client shows: context messages are for the model only."""
    return [m for m in messages if not (isinstance(m, UserMessage) and m.context)]


def user_text(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


def final_text(message: AssistantMessage) -> str:
    """The visible text of one assistant message (its text parts joined, a refusal included)."""
    return "".join(p.text for p in message.content if isinstance(p, TextPart))


def refused(message: AssistantMessage) -> bool:
    """The model declined in this response (a refusal part)."""
    return any(isinstance(p, TextPart) and p.refusal for p in message.content)


def pending_calls(messages: list[Message]) -> list[ToolCallPart]:
    """Tool calls in the transcript with no result anywhere after them.

    A call still waiting for its result is what a suspended approval looks like.
    """
    answered: set[str] = set()
    for m in messages:
        if isinstance(m, ToolMessage):
            answered.update(r.tool_call_id for r in m.content)
    return [
        p
        for m in messages
        if isinstance(m, AssistantMessage)
        for p in m.content
        if isinstance(p, ToolCallPart) and p.tool_call_id not in answered
    ]


def estimate_tokens(messages: list[Message]) -> int:
    """The seed's estimate: compact JSON length / 4, the images the JSON holds by reference
    added (`image_units`). For deciding, never for billing."""
    return _json_size(messages) // 4


def image_tokens(width: int, height: int) -> int:
    """An image at OpenAI's high detail, as its vision pricing tiles it: fitted within 2048 px, the
    shorter side brought down to 768 px, 170 per 512 px tile and 85 more. A figure for deciding
    (other providers count otherwise, a low-detail image costs 85), not a bill."""
    w, h = float(max(width, 1)), float(max(height, 1))
    fit = min(1.0, 2048 / max(w, h))
    w, h = w * fit, h * fit
    fit = min(1.0, 768 / min(w, h))
    w, h = w * fit, h * fit
    return 85 + 170 * max(1, math.ceil(w / 512)) * max(1, math.ceil(h / 512))


def image_units(item: Message | ToolResultPart) -> int:
    """The images a message (or a tool result) carries, in the estimate's units (4 a token): the
    record names each by its file, so its JSON does not count the picture the model is sent;
    without this a few screenshots could overflow the window unseen."""
    if isinstance(item, UserMessage | ToolResultPart):
        refs = item.images
    elif isinstance(item, ToolMessage):
        refs = [ref for part in item.content for ref in part.images]
    else:
        return 0
    return 4 * sum(image_tokens(ref.width, ref.height) for ref in refs)


# The design's estimate is `JSON.stringify(messages).length / 4` (docs/context.md): a length in
# UTF-16 code units of the JSON text, not UTF-8 bytes, which read a CJK text at about three times
# its length and started pruning and the red gauge at a third of the threshold (issue 36 item 5).
# msgspec writes non-ASCII characters as they are, as JSON.stringify does, so the length is read
# off the encoded bytes: one unit per character (every byte but UTF-8 continuation bytes) and one
# more per character outside the BMP (a 4-byte lead, 0xF0 and up), a surrogate pair in JS.
# `bytes.isascii` and `bytes.translate` run in C: an ASCII text costs one scan.
_CONTINUATION = bytes(range(0x80, 0xC0))
_BELOW_FOUR_BYTE_LEAD = bytes(range(0xF0))


def json_length(data: bytes) -> int:
    """The JavaScript `.length` of the UTF-8 JSON text `data`: its UTF-16 code units."""
    if data.isascii():
        return len(data)
    leads = data.translate(None, _CONTINUATION)  # one byte per character
    return len(leads) + len(leads.translate(None, _BELOW_FOUR_BYTE_LEAD))


# The sizes of the last few lists measured, per message: each step measures the whole history
# twice (the wire view's fit, the status), and at 120k tokens one encode is ~0.5 ms. A list whose
# first messages are the very objects measured before (appended to since) only encodes the new
# ones. Messages are never changed in place (a rewrite, such as `strip_item_ids`, makes new ones),
# so an object measured once keeps its size. Bounded: the lists of a few sessions.
_SIZE_MEMO: dict[int, tuple[list[Message], list[int]]] = {}
_SIZE_MEMO_LISTS = 8
# The wire view prunes in a worker thread (server/agent/wire_view.py) while the event loop's thread
# measures for the status: the memo is only read and changed under this lock.
_SIZE_MEMO_LOCK = threading.Lock()


def _json_size(messages: list[Message]) -> int:
    """json_length(encode_messages(messages)), from per-message sizes: `[` + items joined by `,` + `]`."""
    with _SIZE_MEMO_LOCK:
        known = _SIZE_MEMO.pop(id(messages), None)
    if known is not None and len(known[0]) <= len(messages) and all(a is b for a, b in zip(known[0], messages)):
        measured, sizes = known
        fresh = messages[len(measured):]
        measured, sizes = measured + fresh, sizes + [json_length(_encoder.encode(m)) + image_units(m) for m in fresh]
    else:
        measured, sizes = list(messages), [json_length(_encoder.encode(m)) + image_units(m) for m in messages]
    with _SIZE_MEMO_LOCK:
        _SIZE_MEMO[id(messages)] = (measured, sizes)  # most recent last
        while len(_SIZE_MEMO) > _SIZE_MEMO_LISTS:
            del _SIZE_MEMO[next(iter(_SIZE_MEMO))]
    return 2 + sum(sizes) + max(len(sizes) - 1, 0)


def inline_parts(parts: Sequence[AssistantPart]) -> AssistantMessage:
    """An assistant message of `parts` without provider item ids: sent inline, depending on nothing stored."""
    return AssistantMessage(content=[msgspec.structs.replace(p, item_id=None) if p.item_id else p for p in parts])


def strip_item_ids(messages: list[Message]) -> list[Message]:
    """The same history with every provider item id removed, so all of it goes inline."""
    return [
        inline_parts(m.content) if isinstance(m, AssistantMessage) and any(p.item_id for p in m.content) else m
        for m in messages
    ]
