"""`shiro.inlineEdit` and `shiro.resolveInlineEdit`: "Edit with shiro-neko…" on a selection
(docs/protocol.md "Editor context and intelligence"; docs/editor-intelligence.md).

The edit is a normal turn of the session (queued, recorded, its prompt in the history) whose
prompt holds the instruction and the selected text and asks for the replacement in one fenced
block. While it runs only the tools that read work (the others are offered, so the request's prefix
stays the same, and refused when called): the turn may look around but never change a file, so the
result is limited to the range. The replacement waits (in memory, bounded)
until the client resolves it: accepted, it is applied through the editor host (`workspace/applyEdit`
for an open file, so undo works) and recorded as that turn's checkpoint, so a rewind to the turn
takes it back; rejected, it is dropped.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Callable

from ..agent import workspace_fs
from ..agent.editor_context import lines_of, shown_path, uri_path
from ..agent.tools.base import ToolError, ToolResult
from ..agent.tools.workspace_paths import resolve_workspace_path
from ..errors import InvalidArguments, Refused
from ..protocol import (
    InlineEditArgs,
    InlineEditResult,
    LspPosition,
    LspRange,
    LspTextEdit,
    LspWorkspaceEdit,
    ResolveInlineEditArgs,
    ResolveInlineEditResult,
)

if TYPE_CHECKING:
    from pathlib import Path

    from ..agent.session import AgentSession
    from ..agent.tools.base import Tool, ToolHost
    from .checkpoints import CheckpointFeature

READ_ONLY_TOOLS = frozenset({"read_file", "list_files", "grep", "diagnostics", "find_definition",
                             "find_references", "workspace_symbols"})
INLINE_REFUSAL = ("refused: this turn is an inline edit of a selection; it may only read. Answer with the "
                  "replacement text in one fenced code block.")
MAX_PENDING = 20  # replacements waiting for an answer, oldest dropped first
INSTRUCTION_CHARS = 4_000
SELECTION_CHARS = 100_000  # a larger selection is refused: the turn could not send it back whole


def offset_of(text: str, position: LspPosition) -> int:
    """The index in `text` of an LSP position (UTF-16 characters), clamped to the text like LSP's."""
    index = 0
    for _ in range(position.line):
        newline = text.find("\n", index)
        if newline < 0:
            return len(text)
        index = newline + 1
    end = text.find("\n", index)
    line = text[index:] if end < 0 else text[index:end]
    units = 0
    for i, char in enumerate(line):
        if units >= position.character:
            return index + i
        units += 2 if ord(char) > 0xFFFF else 1
    return index + len(line)


def replacement_of(answer: str) -> str | None:
    """The last complete fenced block of the model's answer, or None."""
    found: str | None = None
    fence: str | None = None
    body: list[str] = []
    for line in answer.split("\n"):
        stripped = line.strip()
        if fence is None:
            if stripped.startswith("```"):
                fence = stripped[: len(stripped) - len(stripped.lstrip("`"))]
                body = []
        elif stripped == fence:
            found, fence = "\n".join(body), None
        else:
            body.append(line)
    return found


def prompt_for(where: str, instruction: str, selected: str) -> str:
    fence = "```"
    while fence in selected:
        fence += "`"
    return (f"Edit in place: {where}.\nInstruction: {instruction}\n\nThe selected text:\n{fence}\n{selected}\n{fence}\n\n"
            "Reply with the text that replaces the selected text, whole, in one fenced code block, and nothing "
            "else. Do not edit files: the user reviews your replacement as a diff before it is applied.")


async def _refused(host: "ToolHost", args: Any) -> ToolResult:
    return ToolResult(INLINE_REFUSAL, is_error=True)


@dataclass
class _Pending:
    session_id: str
    path: "Path"
    uri: str
    start: LspPosition
    end: LspPosition
    original: str
    replacement: str


class InlineEdits:
    def __init__(self, checkpoints: "CheckpointFeature") -> None:
        self.checkpoints = checkpoints
        self._running: set[str] = set()  # turn ids of inline edits running now
        self._pending: OrderedDict[str, _Pending] = OrderedDict()

    def tools(self, session: "AgentSession", tools: list["Tool[Any]"]) -> list["Tool[Any]"]:
        """An inline edit's turn only reads (its answer is the edit). The model is offered the same
        tools as in any turn, so the request's prefix stays byte-identical for the prompt cache
        (agent/context_messages.py); any other tool is refused when called, without asking."""
        current = session.turns.current
        if current is None or current.turn_id not in self._running:
            return tools
        return [tool if tool.name in READ_ONLY_TOOLS else replace(tool, run=_refused, approval=None, always_ask=None)
                for tool in tools]

    async def _text(self, session: "AgentSession", path: "Path") -> str:
        text = await session.deps.host.editor_text(path)
        if text is not None:
            return text
        try:
            data = await asyncio.to_thread(workspace_fs.read_bytes, session.root, path, max_bytes=8 * 1024 * 1024)
        except OSError as exc:
            raise Refused(f"cannot read {shown_path(session.root, path.as_uri())}: {exc}") from None
        return data.decode("utf-8", errors="replace")

    def _path(self, session: "AgentSession", uri: str) -> "Path":
        path = uri_path(uri)
        if path is None:
            raise Refused(f"{uri} is not a file on disk; save it in the workspace first")
        try:
            return resolve_workspace_path(session.root, str(path))
        except ToolError as exc:
            raise Refused(f"{exc}: only files of this workspace can be edited in place") from None

    async def run(self, session: "AgentSession", args: InlineEditArgs) -> InlineEditResult:
        instruction = args.instruction.strip()
        if not instruction:
            raise InvalidArguments("the instruction is empty: say what to change in the selection")
        if len(instruction) > INSTRUCTION_CHARS:
            raise InvalidArguments(f"the instruction is over {INSTRUCTION_CHARS} characters; shorten it")
        path = self._path(session, args.uri)
        text = await self._text(session, path)
        start, end = offset_of(text, args.range.start), offset_of(text, args.range.end)
        if end < start:
            raise InvalidArguments("the range ends before it starts")
        selected = text[start:end]
        if len(selected) > SELECTION_CHARS:
            raise Refused(f"the selection is over {SELECTION_CHARS} characters; select less, or ask in the chat")
        where = f"{shown_path(session.root, args.uri)} lines {lines_of(args.range)}"
        item = session.turns.submit(prompt_for(where, instruction, selected))
        self._running.add(item.turn_id)
        try:
            outcome = await asyncio.shield(item.done)
        finally:
            self._running.discard(item.turn_id)
        empty = InlineEditResult(sessionId=session.id, turnId=item.turn_id, edit=LspWorkspaceEdit(changes={}))
        if outcome.status != "completed":
            empty.error = outcome.error or f"the turn ended {outcome.status}"
            return empty
        replacement = replacement_of(outcome.text)
        if replacement is None:
            empty.error = "the model answered without a replacement (no fenced block); see its answer in the chat"
            return empty
        if selected.endswith("\n") and not replacement.endswith("\n"):
            replacement += "\n"  # a fenced block cannot end with the line break the selection had
        self._pending[item.turn_id] = _Pending(session.id, path, args.uri, args.range.start, args.range.end, selected, replacement)
        while len(self._pending) > MAX_PENDING:
            self._pending.popitem(last=False)
        edit = LspTextEdit(range=LspRange(start=args.range.start, end=args.range.end), newText=replacement)
        return InlineEditResult(sessionId=session.id, turnId=item.turn_id, edit=LspWorkspaceEdit(changes={args.uri: [edit]}))

    async def resolve(self, session_of: Callable[[str], "AgentSession"], args: ResolveInlineEditArgs) -> ResolveInlineEditResult:
        pending = self._pending.pop(args.turnId, None)
        if pending is None:
            raise Refused(f"no inline edit of turn {args.turnId} is waiting (it was resolved, replaced by "
                          f"{MAX_PENDING} later ones, or the server restarted); run the edit again")
        if not args.accept:
            return ResolveInlineEditResult(applied=False)
        session = session_of(pending.session_id)
        text = await self._text(session, pending.path)
        start, end = offset_of(text, pending.start), offset_of(text, pending.end)
        if text[start:end] != pending.original:
            raise Refused("the selected text changed since the edit was made; run \"Edit with shiro-neko\" again")
        # The turn's checkpoint covers the edit (recorded before it, its end recorded again after
        # it): the turn's files list it and a rewind to this turn takes it back.
        await self.checkpoints.before_tools(session, args.turnId)
        applied = await session.deps.host.apply_text(pending.path, text[:start] + pending.replacement + text[end:], create=False)
        await self.checkpoints.amend(session, args.turnId)
        return ResolveInlineEditResult(applied=applied)
