"""Automatic pruning of the history sent on the wire, and the repairs pruning needs.

`prune_for_wire` shapes one request; the session record keeps the full history (the input list and
its structs are never changed; the view may share the messages it leaves untouched, so treat them
as immutable). See docs/context.md for the ladder, the repairs and the errors they prevent.

Sizes (compact JSON in UTF-16 code units, `json_length`, as `estimate_tokens` measures the whole
list) are taken once per message and once per part taken out, and summed: a ladder rung costs no re-encoding, and with the default
estimate the figure a rung checks equals `estimate_tokens(view.messages)` exactly.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

import msgspec

from ..model.transcript import (
    AssistantMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
    estimate_tokens,
    image_units,
    inline_parts,
    json_length,
)

# Rungs 2..9 keep this many recent dialogue items (user/assistant messages, an assistant message's
# tool results counting with it) intact and take tool calls and results out of everything older.
WINDOWS = (256, 128, 64, 32, 16, 8, 4, 2)
LADDER_STEPS = 1 + len(WINDOWS) + 1  # reasoning, the windows, whole oldest messages
# The transcript is cut into chunks of about this much original JSON (half the default budget), at
# dialogue items (user or assistant messages), counted from its start: a pruned span never crosses
# a cut, so spans in earlier chunks keep their key (and their summary) while pruning reaches further.
# A small threshold gets smaller chunks (half its budget, at least SPAN_CHUNK_MIN) so a long turn
# under it still makes several spans; each one is summarised once (see wire_view.py).
SPAN_CHUNK_BYTES = 240_000
SPAN_CHUNK_MIN = 4_000
SUMMARY_INPUT_CHARS = 48_000
SUMMARY_MAX_CHARS = 4_000  # of a summary placed in a marker

_encoder = msgspec.json.Encoder()
_ID_KEY = len(',"itemId":')
_USER, _ASSISTANT, _TOOL = 0, 1, 2


@dataclass(frozen=True)
class PrunedSpan:
    """Transcript indices [start, end) whose content was (partly) removed from the request.

    `removed` holds the original messages of the span that lost content (dropped whole, or their
    tool calls and results taken out), as the session record has them: what a summary describes.
    `key` is `f"{start}-{end}-<hash of the original messages in the range>"`, the same on every
    pruning of the same transcript prefix.
    """

    key: str
    start: int
    end: int
    removed: list[Message] = field(hash=False)
    size: int = 0  # bytes of original JSON in [start, end)


def span_chunk_bytes(budget_tokens: int) -> int:
    """Chunk size for a budget: half of it in bytes (4 per token), within the bounds above."""
    return min(SPAN_CHUNK_BYTES, max(SPAN_CHUNK_MIN, budget_tokens * 2))


@dataclass
class PrunedView:
    messages: list[Message]
    pruned: bool
    spans: list[PrunedSpan]
    steps: int  # ladder rungs used: 0 when it fitted, else 1..LADDER_STEPS
    tokens: int = 0  # the estimate of `messages` (the figure the ladder compared with the budget)
    markers: int = 0  # marker messages in `messages` (the rest come from the transcript)


# --------------------------------------------------------------------------- repairs


def drop_orphaned_results(messages: Sequence[Message]) -> list[Message]:
    """Drop every tool result whose call is not earlier in `messages`, and tool messages left empty.

    Calls without a result are kept on purpose: that is what a call waiting for approval looks like.
    """
    calls: set[str] = set()
    out: list[Message] = []
    for m in messages:
        if isinstance(m, AssistantMessage):
            calls.update(p.tool_call_id for p in m.content if isinstance(p, ToolCallPart))
        elif isinstance(m, ToolMessage):
            kept = [r for r in m.content if r.tool_call_id in calls]
            if not kept:
                continue
            if len(kept) != len(m.content):
                m = ToolMessage(content=kept)
        out.append(m)
    return out


# --------------------------------------------------------------------------- markers and summaries


def _marker(count: int, summary: str | None) -> str:
    what = f"{count} earlier message{'s' if count != 1 else ''}"
    text = (
        f"[Context note, not from the user: history was pruned here to fit the context window. {what} "
        "at this point were removed or had their tool calls and results left out.]"
    )
    if summary and summary.strip():
        return f"{text}\nSummary of the pruned part:\n{_clip(summary, SUMMARY_MAX_CHARS)}"
    return (
        f"{text} No summary of that part is available: check files and state again rather than "
        "relying on what you remember of it."
    )


def marker_text(span: PrunedSpan, summary: str | None) -> str:
    """The text of the user message that stands where `span` was pruned."""
    return _marker(len(span.removed), summary)


def marker_message(spans: Sequence[PrunedSpan], summaries: Mapping[str, str]) -> UserMessage:
    """One user message holding the markers of spans that stand at the same place, in order."""
    return _user("\n\n".join(marker_text(span, summaries.get(span.key)) for span in spans))


def _user(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


def _clip(text: str, limit: int) -> str:
    start, end = _stripped_bounds(text)
    size = end - start
    if size <= limit:
        return text[start:end]
    return f"{text[start:start + limit]}… [{size - limit} more characters]"


_EDGE = 4096


def _stripped_bounds(text: str) -> tuple[int, int]:
    """Where `text.strip()` would start and end, without copying the text (a 50 MB prompt is
    clipped on the event loop's thread for every summary request): only the edges are stripped,
    unless an edge is whitespace throughout."""
    if len(text) <= 2 * _EDGE:
        return _stripped_bounds_whole(text)
    head, tail = text[:_EDGE].lstrip(), text[-_EDGE:].rstrip()
    if not head or not tail:
        return _stripped_bounds_whole(text)
    return _EDGE - len(head), len(text) - _EDGE + len(tail)


def _stripped_bounds_whole(text: str) -> tuple[int, int]:
    stripped = text.lstrip()
    start = len(text) - len(stripped)
    return start, start + len(stripped.rstrip())


def render_message(message: Message) -> list[str]:
    """Plain-text lines for a summary request (reasoning left out, long texts clipped)."""
    if isinstance(message, UserMessage):
        return [f"USER: {_clip(''.join(p.text for p in message.content), 2_000)}"]
    lines: list[str] = []
    if isinstance(message, AssistantMessage):
        for p in message.content:
            if isinstance(p, TextPart) and p.text.strip():
                lines.append(f"ASSISTANT: {_clip(p.text, 2_000)}")
            elif isinstance(p, ToolCallPart):
                args = p.input if isinstance(p.input, str) else json.dumps(p.input, ensure_ascii=False)
                lines.append(f"TOOL CALL {p.tool_name} {_clip(args, 400)}")
    else:
        for r in message.content:
            label = "TOOL ERROR" if r.is_error else "TOOL RESULT"
            lines.append(f"{label} {r.tool_name}: {_clip(r.output, 600)}")
    return lines


SUMMARY_INSTRUCTIONS = (
    "You summarise part of a coding agent's conversation that had to be removed from its context "
    "window. Write a short summary, at most about 150 words, as terse bullet points: the goal being "
    "worked on, files read or changed, decisions made, commands run and their outcomes, and anything "
    "left unresolved. State facts only; no preamble, no advice."
)


def summary_request(span: PrunedSpan) -> tuple[str, str]:
    """(instructions, user text) for the tool-less side request that summarises `span`.

    Reasoning is left out, long texts are clipped per item, and the whole is capped at
    SUMMARY_INPUT_CHARS (the start and the end of the span are kept).
    """
    body = "\n".join(line for m in span.removed for line in render_message(m))
    if len(body) > SUMMARY_INPUT_CHARS:
        head = SUMMARY_INPUT_CHARS // 3
        tail = SUMMARY_INPUT_CHARS - head
        body = f"{body[:head]}\n[… {len(body) - head - tail} characters omitted …]\n{body[-tail:]}"
    text = (
        f"These {len(span.removed)} messages were pruned from the conversation. Summarise them.\n\n"
        f"<pruned>\n{body}\n</pruned>"
    )
    return SUMMARY_INSTRUCTIONS, text


# --------------------------------------------------------------------------- the ladder


def _id_bytes(item_id: str | None) -> int:
    """What `,"itemId":"…"` adds to a part's compact JSON, in the estimate's units (json_length)."""
    if not item_id:
        return 0
    if item_id.isascii() and item_id.isprintable() and '"' not in item_id and "\\" not in item_id:
        return _ID_KEY + len(item_id) + 2
    return _ID_KEY + json_length(_encoder.encode(item_id))


class _Work:
    """Per-message bookkeeping for one pruning: surviving messages, kept parts and sizes.

    Sizes are of compact JSON with item ids stripped (a pruned view is sent without them): each
    message is encoded once, and a part is encoded only when it is taken out.
    """

    def __init__(self, messages: Sequence[Message], chunk_bytes: int = SPAN_CHUNK_BYTES,
                 summaries: Mapping[str, str] = {}) -> None:  # noqa: B006 - read only
        self.messages = messages
        self.chunk_bytes = chunk_bytes
        n = len(messages)
        encode = _encoder.encode
        self.raw: list[bytes] = [encode(m) for m in messages]
        self.role: list[int] = [_USER] * n
        self.kept: list[list[int]] = [[] for _ in range(n)]
        # In the estimate's units (json_length); `raw` stays bytes for the span keys and the chunk
        # cuts, which measure original JSON in bytes (SPAN_CHUNK_BYTES).
        self.size: list[int] = [json_length(r) + image_units(m) for r, m in zip(self.raw, messages)]
        self.alive: list[bool] = [True] * n
        self.cut: list[bool] = [False] * n  # tool calls or results taken out
        answered: set[str] = set()
        calls: list[str] = []
        for i, m in enumerate(messages):
            if isinstance(m, AssistantMessage):
                self.role[i] = _ASSISTANT
                self.size[i] -= sum(_id_bytes(p.item_id) for p in m.content)
                calls.extend(p.tool_call_id for p in m.content if isinstance(p, ToolCallPart))
            elif isinstance(m, ToolMessage):
                self.role[i] = _TOOL
                answered.update(r.tool_call_id for r in m.content)
            else:
                continue
            self.kept[i] = list(range(len(m.content)))
            if not m.content:
                self.alive[i] = False  # an empty assistant or tool message has nothing to send
        self.pending: set[str] = {c for c in calls if c not in answered}
        self.total = sum(s for s, a in zip(self.size, self.alive) if a)  # of surviving messages
        self.count = sum(self.alive)
        self.base: list[bool] = self.alive  # survivors before the last rung (set by the caller)
        self._chunks: list[tuple[int, int]] | None = None
        self._chunk_of: list[int] = []
        self._keys: dict[tuple[int, int], str] = {}
        self.anchors = self._anchors(summaries)

    def take_out(self, i: int, drop: list[int], cut: bool) -> None:
        """Remove parts `drop` (indices into the message's content) from message i."""
        if not drop:
            return
        content = self.messages[i].content
        gone = set(drop)
        self.kept[i] = [j for j in self.kept[i] if j not in gone]
        self.cut[i] = self.cut[i] or cut
        if not self.kept[i]:
            self.alive[i] = False
            self.total -= self.size[i]
            self.count -= 1
            return
        removed = 0
        for j in drop:
            p = content[j]
            removed += json_length(_encoder.encode(p)) - _id_bytes(getattr(p, "item_id", None)) + 1  # its comma too
            if isinstance(p, ToolResultPart):
                removed += image_units(p)
        self.size[i] -= removed
        self.total -= removed

    def key(self, start: int, end: int) -> str:
        if (start, end) not in self._keys:
            digest = hashlib.blake2b(b"\n".join(self.raw[start:end]), digest_size=6).hexdigest()
            self._keys[(start, end)] = f"{start}-{end}-{digest}"
        return self._keys[(start, end)]

    def _anchors(self, summaries: Mapping[str, str]) -> list[tuple[int, int, str]]:
        """Ranges that already have a summary, still valid (same indices, same content), sorted and
        not overlapping. A span never crosses one: a summarised span keeps its key as pruning
        extends past it, and what is lost after it makes a new span."""
        n = len(self.messages)
        found: list[tuple[int, int, str]] = []
        for key in summaries:
            head = key.split("-", 2)
            if len(head) != 3 or not head[0].isdigit() or not head[1].isdigit():
                continue
            start, end = int(head[0]), int(head[1])
            if 0 <= start < end <= n and self.key(start, end) == key:
                found.append((start, end, key))
        found.sort()
        out: list[tuple[int, int, str]] = []
        for anchor in found:
            if not out or anchor[0] >= out[-1][1]:
                out.append(anchor)
        return out

    def chunks(self) -> list[tuple[int, int]]:
        """The transcript cut at a dialogue item each time `chunk_bytes` of original JSON passed.

        Counted from the start of the transcript, so a cut stays where it is as the transcript
        grows (one long prompt included) and pruning reaches further: spans inside earlier chunks
        keep their keys.
        """
        if self._chunks is None:
            out: list[tuple[int, int]] = []
            start, acc = 0, 0
            for i, raw in enumerate(self.raw):
                if i > start and self.role[i] != _TOOL and acc >= self.chunk_bytes:
                    out.append((start, i))
                    start, acc = i, 0
                acc += len(raw)
            out.append((start, len(self.raw)))
            self._chunks = out
            self._chunk_of = [c for c, (s, e) in enumerate(out) for _ in range(s, e)]
        return self._chunks

    def spans(self, alive: list[bool], with_removed: bool, keys: bool = True) -> list[PrunedSpan]:
        """The spans in which content was lost: tool calls or results taken out, or a message
        dropped by the last rung (a message emptied by stripping reasoning is no loss worth a
        marker). Lost messages inside a summarised range (an anchor) make that range's span; the
        others make one span per chunk and gap between anchors, from the first to the last."""
        self.chunks()
        cut, base, anchors, chunk_of = self.cut, self.base, self.anchors, self._chunk_of
        groups: list[tuple[tuple[Any, ...], list[int]]] = []
        a = 0
        for i in range(len(cut)):
            if not (cut[i] or (base[i] and not alive[i])):
                continue
            while a < len(anchors) and anchors[a][1] <= i:
                a += 1
            label: tuple[Any, ...] = ("a", a) if a < len(anchors) and anchors[a][0] <= i else ("c", chunk_of[i], a)
            if groups and groups[-1][0] == label:
                groups[-1][1].append(i)
            else:
                groups.append((label, [i]))
        out: list[PrunedSpan] = []
        for label, hit in groups:
            if label[0] == "a":
                start, end, key = anchors[label[1]]
            else:
                start, end = hit[0], hit[-1] + 1
                key = self.key(start, end) if keys else ""
            removed: list[Any] = [self.messages[i] for i in hit] if with_removed else hit
            size = sum(len(r) for r in self.raw[start:end]) if with_removed else 0
            out.append(PrunedSpan(key, start, end, removed, size))
        return out

    def places(self, alive: list[bool], spans: list[PrunedSpan]) -> dict[int, list[PrunedSpan]]:
        """Where each span's marker goes: before the next surviving message, never between a tool
        call and its results. Spans with nothing surviving between them share one marker message."""
        n = len(alive)
        at: dict[int, list[PrunedSpan]] = {}
        pos = 0
        for span in spans:
            pos = max(pos, span.start)
            while pos < n and (not alive[pos] or self.role[pos] == _TOOL):
                pos += 1
            at.setdefault(pos, []).append(span)
        return at

    def marker_bytes(self, alive: list[bool], spans: list[PrunedSpan], summaries: Mapping[str, str]) -> tuple[int, int]:
        """(length in the estimate's units, messages) of the markers for `spans`."""
        at = self.places(alive, spans)
        return sum(json_length(_encoder.encode(marker_message(group, summaries))) for group in at.values()), len(at)

    def build(self, alive: list[bool], spans: list[PrunedSpan], summaries: Mapping[str, str]) -> list[Message]:
        at = self.places(alive, spans)
        out: list[Message] = []
        for i, m in enumerate([*self.messages, None]):
            if i in at:
                out.append(marker_message(at[i], summaries))
            if m is None or not alive[i]:
                continue
            if isinstance(m, AssistantMessage):
                kept = self.kept[i]
                parts = m.content if len(kept) == len(m.content) else [m.content[j] for j in kept]
                if any(p.item_id for p in parts):
                    m = inline_parts(parts)
                elif len(parts) != len(m.content):
                    m = AssistantMessage(content=list(parts))
            elif isinstance(m, ToolMessage) and len(self.kept[i]) != len(m.content):
                m = ToolMessage(content=[m.content[j] for j in self.kept[i]])
            out.append(m)
        return out


def prune_for_wire(
    messages: list[Message],
    budget_tokens: int,
    summaries: Mapping[str, str] = {},  # noqa: B006 - read only
    *,
    estimate: Callable[[list[Message]], int] = estimate_tokens,
) -> PrunedView:
    """The history to send for one request, pruned to `budget_tokens` when it does not fit.

    Rungs, stopping at the first whose view fits: (1) strip every reasoning part (and, as in every
    pruned view, every item id); (2..) take tool calls and their results out of everything older
    than the last WINDOWS[k] dialogue items, keeping assistant text; (last) drop whole oldest
    messages (a dialogue item with the tool results after it), never the newest user message or
    anything after it, nor a message holding a pending call; the first user message (the task as
    first stated) goes last. After the last rung the view is sent even if still over budget.
    One marker message per pruned span stands where the span was, with its summary when
    `summaries` holds the span's key.

    A custom `estimate` is called on whole candidate views (slower); the default one is summed
    from sizes measured once, and gives the same figure as `estimate_tokens` on the view.
    """
    total = estimate(messages)
    if total <= budget_tokens:
        return PrunedView(list(messages), False, [], 0, total)

    work = _Work(messages, span_chunk_bytes(budget_tokens), summaries)
    fast = estimate is estimate_tokens

    def fits(alive: list[bool], size: int, count: int) -> bool:
        spans = work.spans(alive, with_removed=False, keys=False)  # a summary's key is an anchor's
        if fast:
            marks, marked = work.marker_bytes(alive, spans, summaries)
            length = 2 + size + marks + max(count + marked - 1, 0)
            return length // 4 <= budget_tokens
        return estimate(drop_orphaned_results(work.build(alive, spans, summaries))) <= budget_tokens

    def finish(alive: list[bool], steps: int) -> PrunedView:
        spans = work.spans(alive, with_removed=True)
        view = drop_orphaned_results(work.build(alive, spans, summaries))
        return PrunedView(view, True, spans, steps, estimate(view), len(work.places(alive, spans)))

    n = len(messages)
    role = work.role

    # Rung 1: reasoning goes, and every item id with it (the view is sent inline).
    for i, m in enumerate(messages):
        if role[i] == _ASSISTANT:
            drop = [j for j, p in enumerate(m.content) if isinstance(p, ReasoningPart)]
            work.take_out(i, drop, cut=False)
    step = 1
    if fits(work.alive, work.total, work.count):
        return finish(work.alive, step)

    # Then: tool calls and results older than a shrinking window of dialogue items. Each rung
    # handles only the messages between its boundary and the previous one.
    dialogue = [i for i in range(n) if role[i] != _TOOL]
    pending = work.pending
    taken: set[str] = set()
    done = 0  # messages before this index are handled
    for window in WINDOWS:
        step += 1
        boundary = dialogue[-window] if len(dialogue) > window else 0
        for i in range(done, boundary):
            if not work.alive[i]:
                continue
            content = messages[i].content
            if role[i] == _ASSISTANT:
                calls = {j: p for j in work.kept[i] if isinstance(p := content[j], ToolCallPart)}
                drop = [j for j, p in calls.items() if p.tool_call_id not in pending]
                taken.update(calls[j].tool_call_id for j in drop)
            elif role[i] == _TOOL:
                drop = [j for j in work.kept[i] if isinstance(p := content[j], ToolResultPart) and p.tool_call_id in taken]
            else:
                continue
            work.take_out(i, drop, cut=True)
        done = max(done, boundary)
        if fits(work.alive, work.total, work.count):
            return finish(work.alive, step)

    # Last rung: whole oldest messages, in units of a dialogue item and the tool messages after it.
    step += 1
    work.base = work.alive.copy()
    users = [i for i in dialogue if role[i] == _USER]
    newest_user = users[-1] if users else n
    first_user = users[0] if users else -1
    units: list[list[int]] = []
    first_unit: list[int] = []
    starts = [i for i in dialogue if i < newest_user]
    for k, s in enumerate(starts):
        e = starts[k + 1] if k + 1 < len(starts) else newest_user
        unit = [i for i in range(s, e) if work.alive[i]]
        if not unit or any(
            role[i] == _ASSISTANT
            and any(isinstance(p, ToolCallPart) and p.tool_call_id in pending for p in messages[i].content)
            for i in unit
        ):
            continue  # nothing left, or a call waiting for approval (it stays, with its results)
        if s == first_user:
            first_unit = unit
        else:
            units.append(unit)
    if first_unit:
        units.append(first_unit)
    gone_size, gone_count = [0], [0]  # of the first k units
    for unit in units:
        gone_size.append(gone_size[-1] + sum(work.size[i] for i in unit))
        gone_count.append(gone_count[-1] + len(unit))

    def dropped(k: int) -> list[bool]:
        alive = work.base.copy()
        for unit in units[:k]:
            for i in unit:
                alive[i] = False
        return alive

    lo, hi, best = 1, len(units), len(units)
    while lo <= hi:  # the fewest units whose removal fits
        mid = (lo + hi) // 2
        if fits(dropped(mid), work.total - gone_size[mid], work.count - gone_count[mid]):
            best, hi = mid, mid - 1
        else:
            lo = mid + 1
    return finish(dropped(best), step)
