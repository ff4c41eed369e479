"""The model's project-memory tools: `remember`, `recall` and `forget` (the store:
state/memory/; the task list's `todo_write`: todo_tools.py).

The rule the descriptions teach (from the memory seed): if it should survive this turn,
todo_write it; if it should survive this session, remember it. The transcript is pruned and
compacted, so neither belongs only in messages.

Refusals (duplicate, too long, store full, memory disabled) come back as tool results with
`is_error` and the reason, so the model can correct itself on the next step.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Annotated

import msgspec
from msgspec import Meta

from ...model.memory import KINDS, MemoryKind
from ...state.memory.store import MAX_TEXT_CHARS, MemoryEntry, MemoryRefused, ProjectMemory
from .arguments import ENUM_ORDER
from .base import Tool, ToolHost, ToolResult

_REMEMBER_DESCRIPTION = f"""Save a note to project memory: it is shown to you at the start of every future session in this project.
If it should survive this session, remember it (if it only needs to survive this turn, use todo_write instead).
Remember what a newcomer would get wrong: a command that works, a decision and why, a trap, a non-obvious fact.
Write one self-contained line (max {MAX_TEXT_CHARS} characters) that makes sense with no conversation around it: "Tests run with `bun test`, not `npm test`", never "use the new approach".
Duplicates are refused; the store holds at most 300 notes."""

_RECALL_DESCRIPTION = """Search project memory for notes saved in earlier sessions. Every term must appear in a note (AND, case-insensitive), so use a few specific words: "migration seed order".
Returns the 15 most recently used matches. Recalling a note marks it as used, which keeps it verbatim when memory is compacted."""

_FORGET_DESCRIPTION = """Remove every project memory note containing the given text (case-insensitive substring).
Use it when a note turned out wrong or stale: a confidently wrong note is worse than none. Quote enough of the note to match only it."""

_KIND_DOC = (
    "fact: how something is. decision: what was chosen and why. "
    "gotcha: a trap to avoid. command: an invocation that works."
)


# The tools' arguments. Not `RememberArgs`/`RecallArgs`/`ForgetArgs`: those are the commands'
# (protocol.py), which also name a workspace and which the model never sees.
class RememberNote(msgspec.Struct, forbid_unknown_fields=True):
    kind: Annotated[MemoryKind, Meta(description=_KIND_DOC, extra_json_schema={ENUM_ORDER: list(KINDS)})]
    text: Annotated[str, Meta(min_length=1, max_length=MAX_TEXT_CHARS, description="One self-contained line, no line breaks.")]


class RecallTerms(msgspec.Struct, forbid_unknown_fields=True):
    terms: Annotated[
        str, Meta(min_length=1, description="Space-separated words; a note matches when it contains all of them.")
    ]


class ForgetText(msgspec.Struct, forbid_unknown_fields=True):
    text: Annotated[str, Meta(min_length=1, description="Text contained in the notes to remove (case-insensitive).")]


def _error(message: str) -> ToolResult:
    return ToolResult(output=message, is_error=True)


def _line(entry: MemoryEntry) -> str:
    return f"- ({entry.kind}) {entry.text}"


def memory_tools(get_memory: Callable[[], ProjectMemory], session_id: str | None = None) -> list[Tool]:
    """`remember`, `recall` and `forget` over the store `get_memory` returns at call time.

    `get_memory` is called per call (the workspace's store can change, e.g. memory disabled by a
    settings change); it may raise `MemoryDisabled`, which becomes an error result."""

    async def remember(host: ToolHost, args: RememberNote) -> ToolResult:
        try:
            entry = await asyncio.to_thread(lambda: get_memory().remember(args.kind, args.text, session_id))
        except MemoryRefused as err:
            return _error(f"not remembered: {err}")
        # Every later session of this folder is told this note: the user sees each one as it is
        # written (a workspace file may have talked the model into it) and how to take it back.
        shown = entry.text if len(entry.text) <= 200 else entry.text[:199] + "…"
        notice = f"project memory: saved ({entry.kind}) {shown} · /forget {shown[:40]} removes it"
        return ToolResult(output=f"remembered: ({entry.kind}) {entry.text}", notice=notice)

    async def recall(host: ToolHost, args: RecallTerms) -> ToolResult:
        terms = args.terms
        try:
            found = await asyncio.to_thread(lambda: get_memory().recall(terms))
        except MemoryRefused as err:
            return _error(f"recall failed: {err}")
        if not found:
            return ToolResult(output=f"no note contains all of: {' '.join(terms.split())}")
        plural = "s" if len(found) != 1 else ""
        return ToolResult(output=f"{len(found)} note{plural}:\n" + "\n".join(_line(e) for e in found))

    async def forget(host: ToolHost, args: ForgetText) -> ToolResult:
        text = args.text
        try:
            removed = await asyncio.to_thread(lambda: get_memory().forget(text))
        except MemoryRefused as err:
            return _error(f"nothing forgotten: {err}")
        if removed == 0:
            return ToolResult(output=f"no note contains {text.strip()!r}; nothing was removed")
        return ToolResult(output=f"forgot {removed} note{'s' if removed != 1 else ''} containing {text.strip()!r}")

    return [
        Tool(
            name="remember",
            description=_REMEMBER_DESCRIPTION,
            arguments=RememberNote,
            run=remember,
            summary=lambda args: f"({args.get('kind', '?')}) {str(args.get('text', ''))[:80]}",
            read_only=True,  # project memory in the state home, never a workspace file
        ),
        Tool(
            name="recall",
            description=_RECALL_DESCRIPTION,
            arguments=RecallTerms,
            run=recall,
            summary=lambda args: str(args.get("terms", "")),
            read_only=True,  # project memory in the state home, never a workspace file
        ),
        Tool(
            name="forget",
            description=_FORGET_DESCRIPTION,
            arguments=ForgetText,
            run=forget,
            summary=lambda args: str(args.get("text", "")),
            read_only=True,  # project memory in the state home, never a workspace file
        ),
    ]

