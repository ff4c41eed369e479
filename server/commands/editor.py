"""shiro.ask (what shiro's code actions run), shiro.inlineEdit and shiro.resolveInlineEdit
(docs/protocol.md "Editor context and intelligence")."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from .. import protocol as wire
from ..agent.editor_context import lines_of, shown_path, uri_path
from ..features.inline_edit import offset_of
from ..protocol import (
    AskArgs,
    AskResult,
    ChatArgs,
    EditorContext,
    EditorSelection,
    FocusChatParams,
    InlineEditArgs,
    InlineEditResult,
    LspDiagnostic,
    ResolveInlineEditArgs,
    ResolveInlineEditResult,
)
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer

MAX_DIAGNOSTICS = 20


def _problems(root: Path, diagnostics: list[LspDiagnostic]) -> str:
    lines = []
    for d in diagnostics[:MAX_DIAGNOSTICS]:
        code = f" [{d.code}]" if d.code not in (None, "") else ""
        source = f" ({d.source})" if d.source else ""
        lines.append(f"- line {d.range.start.line + 1}: {' '.join(d.message.split())[:500]}{code}{source}")
    return "\n".join(lines)


def _prompt(action: str, where: str, problems: str) -> str:
    if action == "fix":
        return f"Fix these problems the editor reports in {where}:\n{problems}" if problems else f"Fix the problems in {where}."
    return f"Explain the code selected in {where}."


def register(server: "ShiroServer") -> None:
    @command(server, wire.ASK, AskArgs)
    async def ask(ls: "ShiroServer", args: AskArgs) -> AskResult:
        session = ls.service.session_for(args.sessionId, args.workspace)
        path = uri_path(args.uri)
        # From the editor's buffer (memory) only: the selection as the user sees it.
        text = session.deps.host.open_document_text(path) if path is not None else None
        selected = ""
        if text is not None:
            selected = text[offset_of(text, args.range.start):offset_of(text, args.range.end)]
        context = EditorContext(activeFile=args.uri, cursor=args.range.start,
                                selection=EditorSelection(uri=args.uri, range=args.range, text=selected))
        if args.action in ("ask", "edit"):
            ls.sink.focus_chat(FocusChatParams(sessionId=session.id, context=context, action=args.action,
                                               diagnostics=args.diagnostics))
            return AskResult(sessionId=session.id, action=args.action)
        where = f"{shown_path(session.root, args.uri)} lines {lines_of(args.range)}"
        chat = ChatArgs(prompt=_prompt(args.action, where, _problems(session.root, args.diagnostics)),
                        sessionId=session.id, context=context, wait=False)
        _, item = ls.service.submit_chat(chat)
        return AskResult(sessionId=session.id, action=args.action, turnId=item.turn_id)

    @command(server, wire.INLINE_EDIT, InlineEditArgs)
    async def inline_edit(ls: "ShiroServer", args: InlineEditArgs) -> InlineEditResult:
        session = ls.service.session_for(args.sessionId, args.workspace)
        return await ls.service.inline_edits.run(session, args)

    @command(server, wire.RESOLVE_INLINE_EDIT, ResolveInlineEditArgs)
    async def resolve_inline_edit(ls: "ShiroServer", args: ResolveInlineEditArgs) -> ResolveInlineEditResult:
        return await ls.service.inline_edits.resolve(lambda sid: ls.service.session_for(sid, None), args)
