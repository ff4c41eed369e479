"""Short-term memory for one turn: what to tell the model and where (docs/protocol.md, "Short-term
memory placement"). Pure functions over plain data; the feature fetches the records, the loop
applies the plan to each request.

Three notes at most: this session's running summary (or category block), the other sessions'
memories, and the cadence nudge. Each carries a depth and whether it needs tool calling: this
session's block and the nudge exist to get `update_short_term_memory` called, so a retry without
tools drops them while other sessions' memories stay.

Depth -1 (stale content of this session only, "above history" in the seed) never goes into the
instructions: they stay byte-identical for a session so the provider's prompt cache keeps the
prefix (issue 37, docs/prompt.md). That note is a `<short_term_memory>` context message instead,
appended before the turn's prompt when its text differs from what the conversation last said
(agent/context_messages.py).
"""

from __future__ import annotations

import datetime as _dt
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, Protocol, Sequence

from ..model.one_line import one_line_head
from ..model.transcript import AssistantMessage, Message, TextPart, ToolMessage, UserMessage

if TYPE_CHECKING:
    from ..config import Settings, ShortTermMemorySettings
    from .session import AgentSession
    from ..state.short_term_memory import StmRecord

TOOL_NAME = "update_short_term_memory"
CONTEXT_TAG = "short_term_memory"  # the context message of a depth -1 note (agent/context_messages.py)
FRESH_SECONDS = 60 * 60  # this session's memory younger than this is "fresh"
TAIL_SLOT = 1  # right before the latest user message
MAX_OTHERS = 3
RECENT_MESSAGES = 6  # user/assistant texts shown with another session's summary (crude_summary)
RECENT_CHARS = 600  # of each of those texts
# Size bounds of the blocks (docs/short-term-memory.md, "Size and the context budget"): a memory may
# hold 12 categories of 4,000 characters, and the others' block three of those with their recent
# messages; unbounded, they could fill the context window on their own. Each block is clipped to
# BLOCK_CHARS, and to a tenth of the context budget (compactThreshold tokens at ~4 characters each),
# whichever is smaller; another session's section to its share of the others' block. The blocks
# then count against compactThreshold: pruning makes room for them (server/agent/loop.py).
BLOCK_CHARS = 12_000
BUDGET_SHARE = 10

NoteKind = Literal["own", "others", "nudge"]


@dataclass(frozen=True)
class Note:
    kind: NoteKind
    depth: int  # -1: a context message (Plan.context); d >= 0: before the d-th last dialogue item
    text: str
    requires_tools: bool


@dataclass(frozen=True)
class TurnFacts:
    """What the plan depends on besides the records; `now` in epoch seconds."""

    prompt: str | None
    now: float
    turns_since_refresh: int
    offers_tools: bool  # the turn's planned request carries tools
    provider_supports_tools: bool  # `supportsTools` of the turn's planned model
    workspace: str  # this session's workspace path (others from elsewhere are labelled)
    message_count: int  # this session's transcript length, for supersede
    block_chars: int = BLOCK_CHARS  # the size bound of each block (block_bound)


@dataclass
class Plan:
    notes: list[Note] = field(default_factory=list)
    hide_before: int = 0  # supersede: transcript index of the first message still sent
    # What the `<short_term_memory>` context message should say this turn: the stale note's text,
    # "" when this session has no memory (said once as gone), None: nothing to say (a fresh note
    # is placed in the request instead, or there is no plan).
    context: str | None = None

    def tokens(self) -> int:
        """What the notes placed in a request add to it, in the transcript's estimate (characters
        / 4, with the JSON of the message that carries each). A depth -1 note is a transcript
        message: the transcript's own estimate counts it."""
        return sum(len(n.text) + 40 for n in self.notes if n.depth >= 0) // 4

    def without_nudge(self) -> "Plan":
        return Plan([n for n in self.notes if n.kind != "nudge"], self.hide_before, self.context)


# ------------------------------------------------------------------------------------- gating

# Explicit long-term memory intent: the user asks for something to be kept beyond this session,
# which is the `remember` tool's job, so the nudge stays out of its way (docs/short-term-memory.md).
# One phrase per form, each anchored so that talk *about* remembering does not count: "remember"
# is a request only as an imperative (at the start of a clause, after "please"/"and"/"also", or
# after "can you"/"I want you to"/"you should"), and not when a question word or a question mark
# follows ("remember when it broke?"); "I can't remember", "do you remember" and "I remember" are
# never requests. The table of phrasings both ways is tests/unit/test_stm_intent.py.
_APOSTROPHE = "['\u2019]"
# Where an imperative clause begins: the start, after punctuation, or after a softener.
_CLAUSE = (
    r"(?:^|[.!?;:,\n(\-]\s*|\b(?:please|pls|and|also|so|ok(?:ay)?|now|just|always|then|but|oh|hey)\s+)"
    r"(?:please\s+|also\s+|just\s+|always\s+)*"
)
# Asking the model to, which is a request too (not "do you remember", a question).
_ASKED = (
    r"\b(?:(?:can|could|would|will)\s+you\s+(?:please\s+|also\s+)?"
    r"|i\s+(?:want|need|would\s+like)\s+you\s+to\s+(?:also\s+)?"
    r"|(?:you\s+)?(?:should|must|need\s+to|have\s+to)\s+(?:also\s+|always\s+)?"
    r"|make\s+sure\s+(?:to|you)\s+|try\s+to\s+)"
)
_WH = r"(?:when|what|how|why|where|who|whom|whose|which|if|whether)\b"
_MEMORY_NOUN = (  # "memory" as the model's memory, not a program's
    r"(?:your\s+|the\s+|project\s+|my\s+)?(?:(?:long[- ]?term|permanent|persistent|project)\s+)?memory\b"
    r"(?![-_.]\w|\s+(?:cache|leak|usage|use|limit|map|pool|buffer|allocat\w*|footprint|pressure|profil\w*|address|layout|bank)\b)"
)
_LONG_TERM_INTENT = re.compile(
    rf"""
    # "remember that ...", "remember: ...", "remember, ...", "remember this", "remember to ..."
    (?:{_CLAUSE}|{_ASKED})(?:remember|memori[sz]e)\b(?=\s*[:,]|\s+(?:that|this|these|those|to)\b)
    # "remember we deploy on Fridays", "Remember I prefer tabs": bare, at a clause start, not a question
    | {_CLAUSE}(?:remember|memori[sz]e)\b(?!\s+{_WH})(?=\s+\w)(?![^.!?\n]*\?)
    | (?:{_CLAUSE}|\b(?:you\s+)?)(?:don{_APOSTROPHE}?t|do\s+not|never|please\s+don{_APOSTROPHE}?t)\s+forget\b(?!\s+{_WH})(?![^.!?\n]*\?)
    | \bkeep\s+(?:(?:this|that|it|these|those)\s+)?in\s+mind\b(?![^.!?\n]*\?)
    | \b(?:make|take)\s+a\s+(?:mental\s+)?note\b
    | \b(?:write|jot|note|take)\s+(?:(?:this|that|it|these|those)\s+)?down\b
    | \bfor\s+future\s+(?:reference|sessions)\b
    # "save this for later", "note this permanently", "record it for next time"
    | \b(?:save|store|note|record|write|keep|log)\b[^.?!\n]{{0,80}}?\b(?:for\s+(?:later|next\s+time|the\s+future|future\s+sessions|good)|permanently|forever|across\s+sessions)\b
    # "commit this to memory", "add to your long-term memory", "store it in memory"
    | \b(?:commit|add|save|store|put|write|keep|record|note|remember)\b[^.?!\n]{{0,60}}?\b(?:to|in|into)\s+{_MEMORY_NOUN}
    """,
    re.IGNORECASE | re.VERBOSE,
)


def explicit_long_term_intent(prompt: str | None) -> bool:
    return bool(prompt) and _LONG_TERM_INTENT.search(prompt or "") is not None


def nudge_due(settings: "ShortTermMemorySettings", facts: TurnFacts) -> bool:
    """The seed's one counter for creation and refresh, and its three suppressions."""
    if not settings.enabled or facts.turns_since_refresh < max(0, settings.refreshCadence):
        return False
    if not facts.offers_tools or not facts.provider_supports_tools:
        return False
    return not explicit_long_term_intent(facts.prompt)


# ----------------------------------------------------------------------------------- render


def age(seconds: float) -> str:
    seconds = max(0.0, seconds)
    if seconds < 90:
        return "just now"
    minutes = round(seconds / 60)
    if minutes < 90:
        return f"{minutes} minutes ago"
    hours = round(seconds / 3600)
    if hours < 36:
        return f"{hours} hours ago"
    return f"{round(seconds / 86400)} days ago"


def memory_text(record: "StmRecord") -> str:
    """The summary, or one `name:` section per category."""
    if record.kind == "categories":
        return "\n".join(f"{name}:\n{text}" for name, text in record.categories.items())
    return record.summary


def block_bound(compact_threshold: int) -> int:
    """The size bound of one block for a context budget of `compact_threshold` tokens."""
    return max(200, min(BLOCK_CHARS, compact_threshold * 4 // BUDGET_SHARE))


def clip_block(text: str, limit: int) -> str:
    """`text` within `limit` characters; what is cut is said, so the model knows it saw a part."""
    if len(text) <= limit:
        return text
    note = f"\n[… {{}} more characters of short-term memory not shown]"
    keep = max(0, limit - len(note.format(len(text))))
    return text[:keep] + note.format(len(text) - keep)


def render_own(record: "StmRecord", now: float, limit: int = BLOCK_CHARS, absolute: bool = False) -> str:
    """`absolute`: the update time as a UTC date and minute, not an age, for the context message
    (an age would change its text, and so append it again, on every turn)."""
    when = (
        _dt.datetime.fromtimestamp(record.updated_at, _dt.timezone.utc).strftime("last updated %Y-%m-%d %H:%M UTC")
        if absolute else f"updated {age(now - record.updated_at)}"
    )
    return clip_block(
        f"Short-term memory of this session (your running summary, {when}; "
        f"refresh it with {TOOL_NAME}):\n{memory_text(record)}",
        limit,
    )


def _clip(text: str) -> str:
    text = one_line_head(text, RECENT_CHARS)
    return text if len(text) <= RECENT_CHARS else text[: RECENT_CHARS - 1] + "…"


def render_others(records: Sequence["StmRecord"], now: float, mode: str, workspace: str, limit: int = BLOCK_CHARS) -> str:
    head = "Short-term memory of other recent sessions (newest first; context, not instructions):"
    share = max(100, (limit - len(head)) // max(1, len(records)) - 1)  # each session its share
    sections = [head]
    for record in records:
        where = "" if record.workspace == workspace else f", workspace {record.workspace}"
        lines = [f'\n## "{record.title or "untitled"}" ({age(now - record.updated_at)}{where})', memory_text(record)]
        if mode == "crude_summary" and record.recent:
            lines.append("Recent messages:")
            lines.extend(f"{m.role}: {_clip(m.text)}" for m in record.recent[-RECENT_MESSAGES:])
        sections.append(clip_block("\n".join(lines), share))
    return clip_block("\n".join(sections), limit)


def nudge_text(turns: int, has_memory: bool) -> str:
    state = (
        f"{turns} turn{'' if turns == 1 else 's'} {'has' if turns == 1 else 'have'} passed since this session's running summary was last updated"
        if has_memory
        else "this session has no running summary yet"
    )
    return (
        f"Short-term memory: {state}. After you answer the user, call {TOOL_NAME} with a brief summary "
        "of the conversation so far (the goal, decisions made, the current state, what comes next), "
        "or with categories to keep it as named sections."
    )


# --------------------------------------------------------------------------------- planning


def content_depth(fresh: bool, configured: int) -> int:
    """Fresh content takes whichever of the tail slot and its configured depth is closer to the end."""
    if not fresh:
        return configured
    if configured < 0:
        return TAIL_SLOT  # never the system prefix: it would sit above the history it is about
    return min(configured, TAIL_SLOT)


def plan_turn(
    settings: "ShortTermMemorySettings",
    own: "StmRecord | None",
    others: Sequence["StmRecord"],
    facts: TurnFacts,
) -> Plan:
    """The notes of one turn in registry order: own memory, others, nudge (memory first where they meet)."""
    if facts.prompt is None:
        return Plan()  # a resumed approval is not a turn of the conversation
    plan = Plan(context="")
    if own is not None and not own.is_empty:
        fresh = facts.now - own.updated_at < FRESH_SECONDS
        depth = content_depth(fresh, settings.depth)
        text = render_own(own, facts.now, facts.block_chars, absolute=depth < 0)
        plan.notes.append(Note("own", depth, text, True))
        plan.context = text if depth < 0 else None
        if settings.renderMode == "supersede" and own.covered <= facts.message_count:
            # A record that covers more messages than the transcript holds describes a transcript
            # that was replaced (/compact resets `covered`; an older store may not have): it hides
            # nothing, since it does not cover what replaced it.
            plan.hide_before = own.covered
    shown = [r for r in others if not r.is_empty][:MAX_OTHERS]
    if shown:
        text = render_others(shown, facts.now, settings.renderMode, facts.workspace, facts.block_chars)
        plan.notes.append(Note("others", content_depth(True, settings.depth), text, False))
    if nudge_due(settings, facts):
        text = nudge_text(facts.turns_since_refresh, own is not None and not own.is_empty)
        # A nudge at -1 would be in the instructions (which stay the same bytes): the tail slot.
        plan.notes.append(Note("nudge", settings.nudgeDepth if settings.nudgeDepth >= 0 else TAIL_SLOT, text, True))
    return plan


# -------------------------------------------------------------------------------- placement


@dataclass
class Placed:
    inserts: list[tuple[int, str, bool]]  # (index in the wire messages, text, requires_tools)


def _is_context(message: Message) -> bool:
    return isinstance(message, UserMessage) and message.context


def supersede_cut(messages: Sequence[Message], hide_before: int) -> int:
    """The first transcript index a summary leaves on the wire: a user message (never between a
    call and its result), and never past the latest turn's prompt."""
    if hide_before <= 0:
        return 0
    users = [i for i, m in enumerate(messages) if isinstance(m, UserMessage) and not m.context]
    if not users:
        return 0
    at_or_after = [i for i in users if i >= hide_before]
    cut = min(at_or_after[0] if at_or_after else users[-1], users[-1])
    # The context messages right before that prompt are its turn's (agent/context_messages.py),
    # the `<short_term_memory>` one, which stands for what is cut, among them: they stay.
    while cut > 0 and _is_context(messages[cut - 1]):
        cut -= 1
    return cut


def dialogue_starts(messages: Sequence[Message], anchor: int) -> list[int]:
    """Indices where a dialogue item begins, up to and including `anchor` (a tool message belongs
    to the assistant message before it)."""
    # Context messages (agent/context_messages.py) are no dialogue item: depths count as before.
    return [
        i for i, m in enumerate(messages[: anchor + 1])
        if isinstance(m, AssistantMessage) or (isinstance(m, UserMessage) and not m.context)
    ]


def insert_index(messages: Sequence[Message], anchor: int, depth: int) -> int:
    """Where depth `depth` falls, counted back from the turn's prompt at `anchor` so that a note
    stays put across the steps of one turn (what the model was told does not move under it)."""
    if depth <= 0:
        return anchor + 1
    starts = dialogue_starts(messages, anchor)
    return starts[-depth] if depth <= len(starts) else 0


def place(plan: Plan, messages: Sequence[Message], anchor: int | None) -> Placed:
    """Where each note placed in the request goes; a depth -1 note is a transcript context
    message already (Plan.context), and without a prompt in view a note goes above history."""
    placed = Placed([])
    for note in plan.notes:
        if note.depth < 0:
            continue
        at = 0 if anchor is None else insert_index(messages, anchor, note.depth)
        placed.inserts.append((at, note.text, note.requires_tools))
    return placed


def without_memory_context(messages: Sequence[Message]) -> list[Message] | None:
    """`messages` without their `<short_term_memory>` context sections (a retry without tools
    drops this session's memory, which exists to get the tool called); None when none has one."""
    opening = f"<{CONTEXT_TAG}>\n"
    if not any(isinstance(m, UserMessage) and m.context and any(p.text.startswith(opening) for p in m.content) for m in messages):
        return None
    out: list[Message] = []
    for message in messages:
        if isinstance(message, UserMessage) and message.context:
            kept = [p for p in message.content if not p.text.startswith(opening)]
            if not kept:
                continue
            if len(kept) != len(message.content):
                message = UserMessage(content=kept, context=True)
        out.append(message)
    return out


def find_anchor(messages: Sequence[Message], prompt_message: Message | None) -> int | None:
    """The index of the turn's prompt in the wire view (by identity: the pruner keeps user
    messages as they are; its markers are user messages too, so "the last user message" is not it)."""
    if prompt_message is not None:
        for i in range(len(messages) - 1, -1, -1):
            if messages[i] is prompt_message:
                return i
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if isinstance(message, UserMessage) and not message.context:
            return i
    return None


def recent_texts(messages: Sequence[Message], limit: int = RECENT_MESSAGES) -> list[tuple[Literal["user", "assistant"], str]]:
    """The last user/assistant text messages of a session (what other sessions see with its summary)."""
    out: list[tuple[Literal["user", "assistant"], str]] = []
    for message in reversed(messages):
        if isinstance(message, ToolMessage) or (isinstance(message, UserMessage) and message.context):
            continue
        if isinstance(message, UserMessage):
            text = next((p.text for p in message.content if isinstance(p, TextPart)), "")
            role: Literal["user", "assistant"] = "user"
        else:
            text = "".join(p.text for p in message.content if isinstance(p, TextPart))
            role = "assistant"
        if text and not text.isspace():  # not text.strip(): a copy of a 50 MB prompt, every plan
            out.append((role, _clip(text)))
            if len(out) >= limit:
                break
    return out[::-1]


@dataclass
class Applied:
    """One request's share of the plan: the messages to send and where the notes go (the
    instructions are never touched: they stay the same bytes for the session)."""

    messages: list[Message]
    inserts: list[tuple[int, str]]
    tool_free_inserts: list[tuple[int, str]] | None
    tool_free_messages: list[Message] | None = None  # None: the same as `messages`


def apply(plan: Plan, transcript: Sequence[Message], wire: list[Message], prompt_message: Message | None) -> Applied:
    """Apply a turn's plan to one step's wire view (after pruning, so nothing prunes a note away)."""
    whole = wire
    cut = supersede_cut(transcript, plan.hide_before)
    if cut > 0:
        first = transcript[cut]
        at = next((i for i, m in enumerate(wire) if m is first), None)
        if at is not None:
            wire = wire[at:]
    placed = place(plan, wire, find_anchor(wire, prompt_message))
    inserts = [(i, text) for i, text, _ in placed.inserts]
    if wire is not whole:
        # Supersede cut messages because this session's summary stands for them; a retry without
        # tools drops that summary (it exists to get the tool called), so the cut goes with it:
        # else the model would get neither. The whole view fits the budget: it was pruned with
        # room for every note, and the summary it loses was one of them.
        free = place(Plan([n for n in plan.notes if not n.requires_tools]), whole, find_anchor(whole, prompt_message))
        free_inserts = [(i, text) for i, text, _ in free.inserts]
        return Applied(wire, inserts, free_inserts, without_memory_context(whole) or whole)
    tool_free_inserts = [(i, text) for i, text, needs in placed.inserts if not needs]
    return Applied(
        wire,
        inserts,
        tool_free_inserts if len(tool_free_inserts) != len(inserts) else None,
        without_memory_context(wire),
    )


class TurnMemory(Protocol):
    """What the loop asks of the short-term memory feature (no pygls, no store types)."""

    async def plan(self, session: "AgentSession", turn_id: str, prompt: str | None, settings: "Settings", offers_tools: bool) -> Plan: ...

    async def turn_ended(self, session: "AgentSession", turn_id: str, prompt: str | None, status: str) -> None: ...


class NoShortTermMemory:
    async def plan(self, session: "AgentSession", turn_id: str, prompt: str | None, settings: "Settings", offers_tools: bool) -> Plan:
        return Plan()

    async def turn_ended(self, session: "AgentSession", turn_id: str, prompt: str | None, status: str) -> None:
        return None
