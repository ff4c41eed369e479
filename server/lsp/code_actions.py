"""shiro in every editor's lightbulb: `textDocument/codeAction` for any file.

Editors ask for code actions on every cursor move, so the answer is built from the request alone
(no disk, no model, no await): "Ask shiro-neko…", "Fix with shiro-neko" (only when the request
carries diagnostics), "Explain with shiro-neko", "Edit with shiro-neko…", each running the
command `shiro.ask {uri, range, action, diagnostics?}` (commands/editor.py).
bench/code_actions.py measures it while a turn streams.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from .. import protocol as wire

ASK_TITLE = "Ask shiro-neko…"
FIX_TITLE = "Fix with shiro-neko"
EXPLAIN_TITLE = "Explain with shiro-neko"
EDIT_TITLE = "Edit with shiro-neko…"
MAX_DIAGNOSTICS = 20  # sent along with "Fix" at most
MESSAGE_CHARS = 1_000

KINDS = [types.CodeActionKind.QuickFix, types.CodeActionKind.RefactorRewrite]
OPTIONS = types.CodeActionOptions(code_action_kinds=KINDS)


def _position(position: types.Position) -> dict[str, int]:
    return {"line": position.line, "character": position.character}


def _range(span: types.Range) -> dict[str, Any]:
    return {"start": _position(span.start), "end": _position(span.end)}


def _diagnostic(diagnostic: types.Diagnostic) -> dict[str, Any]:
    out: dict[str, Any] = {"range": _range(diagnostic.range), "message": diagnostic.message[:MESSAGE_CHARS]}
    if diagnostic.severity is not None:
        out["severity"] = int(diagnostic.severity)
    if diagnostic.code is not None:
        out["code"] = diagnostic.code
    if diagnostic.source is not None:
        out["source"] = diagnostic.source[:100]
    return out


def _wanted(kind: str | None, only: list[str] | None) -> bool:
    """LSP's `only`: a kind and its sub-kinds; an action without a kind is never asked for by kind."""
    if not only:
        return True
    return kind is not None and any(kind == o or kind.startswith(o + ".") for o in only)


def code_actions(params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    span = _range(params.range)
    only = [getattr(k, "value", k) for k in params.context.only] if params.context.only else None
    diagnostics = [_diagnostic(d) for d in params.context.diagnostics[:MAX_DIAGNOSTICS]]
    offered: list[tuple[str, str, str | None]] = [(ASK_TITLE, "ask", None)]
    if diagnostics:
        offered.append((FIX_TITLE, "fix", types.CodeActionKind.QuickFix.value))
    offered += [(EXPLAIN_TITLE, "explain", None), (EDIT_TITLE, "edit", types.CodeActionKind.RefactorRewrite.value)]
    out = []
    for title, action, kind in offered:
        if not _wanted(kind, only):
            continue
        argument: dict[str, Any] = {"uri": uri, "range": span, "action": action}
        if action == "fix":
            argument["diagnostics"] = diagnostics
        out.append(types.CodeAction(
            title=title,
            kind=kind,
            diagnostics=list(params.context.diagnostics[:MAX_DIAGNOSTICS]) if action == "fix" else None,
            command=types.Command(title=title, command=wire.ASK, arguments=[argument]),
        ))
    return out
