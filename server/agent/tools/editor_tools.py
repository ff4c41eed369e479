"""The editor's own intelligence as tools: its diagnostics and its language servers' navigation
(docs/protocol.md "Editor context and intelligence"; docs/editor-intelligence.md).

A client that declares `experimental.shiro.editor {diagnostics, navigation}` answers the
server -> client requests `shiro/diagnostics` and `shiro/navigate`; the editor host hands such a
client over as an `Editor` (lsp/editor_requests.py). Then:

- `diagnostics`, `find_definition`, `find_references`, `workspace_symbols` are offered (each only
  with its capability; the terminal and ACP hosts have no editor, so they are never offered);
- an edit (edit_file, write_file, apply_patch) asks for the touched files' diagnostics before it
  applies and again once the editor has settled (bounded by `diagnosticsWaitMs`), and its result
  lists the errors the edit introduced, new ones only, capped.

What an editor answers is data: it is capped, printed, and never run or followed here.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections import Counter
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ...protocol import FileDiagnostics, LspDiagnostic, LspLocation, LspPosition, NavigateParams, NavigateResult
from .. import workspace_fs
from ..editor_context import shown_path, uri_path
from .base import Tool, ToolError, ToolHost, ToolResult
from .workspace_paths import resolve_workspace_path

EDIT_TOOLS = frozenset({"edit_file", "write_file", "apply_patch"})
NEW_ERRORS_SHOWN = 20  # new errors listed after an edit at most
DIAGNOSTICS_SHOWN = 100  # lines of the `diagnostics` tool at most
LOCATIONS_SHOWN = 50
MESSAGE_CHARS = 300
LINE_TEXT_CHARS = 160
POLL_SECONDS = 0.1  # how often the touched files' diagnostics are asked while the editor settles
# Answers in a row that must agree after a change before the editor counts as settled: a language
# server may publish in phases (TypeScript: syntax first, then the semantic errors).
QUIET_POLLS = 3
ERROR, WARNING = 1, 2
_SEVERITY = {1: "error", 2: "warning", 3: "info", 4: "hint"}


class EditorUnavailable(Exception):
    """The editor did not answer (an error, a timeout): the caller goes on without it."""


@runtime_checkable
class Editor(Protocol):
    """What the client declared it answers, and the two requests (lsp/editor_requests.py)."""

    @property
    def offers_diagnostics(self) -> bool: ...

    @property
    def offers_navigation(self) -> bool: ...

    async def diagnostics(self, uris: list[str] | None) -> list[FileDiagnostics]: ...

    async def navigate(self, params: NavigateParams) -> NavigateResult: ...


def editor_of(host: ToolHost) -> Editor | None:
    """The host's editor when its client declared anything it answers; None for the terminal and
    ACP hosts (they have none) and for an editor client that declared nothing."""
    editor = getattr(host, "editor", None)
    if isinstance(editor, Editor) and (editor.offers_diagnostics or editor.offers_navigation):
        return editor
    return None


# -- diagnostics of an edit -------------------------------------------------------------------------


def _key(diagnostic: LspDiagnostic) -> tuple[str, str, str]:
    # Not the range: an edit above an old error moves it, and a moved error is not a new one.
    return diagnostic.message, str(diagnostic.code or ""), diagnostic.source or ""


def _errors(items: list[FileDiagnostics]) -> dict[str, list[LspDiagnostic]]:
    out: dict[str, list[LspDiagnostic]] = {}
    for item in items:
        out.setdefault(item.uri, []).extend(d for d in item.diagnostics if d.severity in (None, ERROR))
    return out


def new_errors(before: list[FileDiagnostics], after: list[FileDiagnostics]) -> dict[str, list[LspDiagnostic]]:
    """The errors in `after` that `before` did not have, per file (as many times as they are new)."""
    old = _errors(before)
    out: dict[str, list[LspDiagnostic]] = {}
    for uri, errors in _errors(after).items():
        seen = Counter(_key(d) for d in old.get(uri, []))
        for diagnostic in errors:
            key = _key(diagnostic)
            if seen[key] > 0:
                seen[key] -= 1
            else:
                out.setdefault(uri, []).append(diagnostic)
    return out


def _one_line(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def describe(root: Path, uri: str, diagnostic: LspDiagnostic) -> str:
    start = diagnostic.range.start
    code = f" {_one_line(str(diagnostic.code), 40)}" if diagnostic.code not in (None, "") else ""
    source = f" ({_one_line(diagnostic.source, 40)})" if diagnostic.source else ""
    severity = _SEVERITY.get(diagnostic.severity or ERROR, "error")
    return (f"{shown_path(root, uri)}:{start.line + 1}:{start.character + 1}: {severity}{code}: "
            f"{_one_line(diagnostic.message, MESSAGE_CHARS)}{source}")


def new_errors_report(root: Path, errors: dict[str, list[LspDiagnostic]]) -> str:
    lines = [describe(root, uri, d) for uri, found in errors.items() for d in found]
    if not lines:
        return ""
    shown = lines[:NEW_ERRORS_SHOWN]
    more = len(lines) - len(shown)
    return ("The editor reports new errors after this edit (fix them if the edit caused them):\n"
            + "\n".join(shown) + (f"\n(and {more} more)" if more > 0 else ""))


async def settled_diagnostics(editor: Editor, uris: list[str], before: list[FileDiagnostics],
                              wait_seconds: float) -> list[FileDiagnostics]:
    """The touched files' diagnostics once the editor has settled: after they changed from
    `before` (a client's publication count, `generation`, is part of them: when it moved, the
    language servers looked at the edit even if they found nothing new) and then stayed the same
    for QUIET_POLLS more polls, or when `wait_seconds` ran out (an edit that
    changes no diagnostic, with a client that does not count, waits that long;
    bench/diagnostics_wait.py)."""
    deadline = time.monotonic() + wait_seconds
    last: list[FileDiagnostics] | None = None
    changed = False
    quiet = 0
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return last if last is not None else before
        await asyncio.sleep(min(POLL_SECONDS, remaining))
        try:
            now = await asyncio.wait_for(editor.diagnostics(uris), timeout=max(deadline - time.monotonic(), 0.05))
        except (EditorUnavailable, asyncio.TimeoutError):
            return last if last is not None else before
        quiet = quiet + 1 if changed and now == last else 0
        if quiet >= QUIET_POLLS:
            return now
        changed = changed or now != before
        last = now


class _Watching:
    """The host an edit tool runs on: before each file is applied, its diagnostics are asked."""

    def __init__(self, host: ToolHost, editor: Editor) -> None:
        self._host = host
        self._editor = editor
        self.root = host.root
        self.before: dict[str, list[FileDiagnostics]] = {}

    def __getattr__(self, name: str) -> Any:  # every other host method, as it is
        return getattr(self._host, name)

    def open_document_text(self, path: Path) -> str | None:
        return self._host.open_document_text(path)

    async def editor_text(self, path: Path) -> str | None:
        return await self._host.editor_text(path)

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        uri = Path(path).as_uri()
        if uri not in self.before:
            try:
                self.before[uri] = await self._editor.diagnostics([uri])
            except EditorUnavailable:
                pass  # no baseline, no report for this file
        return await self._host.apply_text(path, new_text, create=create)


def with_edit_diagnostics(tool: Tool[Any], editor: Editor, wait_ms: int) -> Tool[Any]:
    """`tool` whose result also lists the errors its edit introduced (new ones only)."""
    inner = tool.run

    async def run(host: ToolHost, args: Any) -> ToolResult:
        watching = _Watching(host, editor)
        result = await inner(watching, args)  # type: ignore[arg-type]
        if result.is_error or not watching.before:
            return result
        uris = list(watching.before)
        before = [item for found in watching.before.values() for item in found]
        after = await settled_diagnostics(editor, uris, before, wait_ms / 1000)
        report = new_errors_report(host.root, new_errors(before, after))
        if not report:
            return result
        return dataclasses.replace(result, output=f"{result.output}\n\n{report}")

    return dataclasses.replace(tool, run=run)


# -- the tools --------------------------------------------------------------------------------------

_PATH_DOC = "File path, relative to the workspace root."


class DiagnosticsArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, Meta(description=_PATH_DOC + " Default: every file the editor has problems for.")] | UnsetType = UNSET
    severity: Annotated[
        Literal["error", "warning", "all"],
        Meta(description="error: errors only; warning: errors and warnings (default); all: hints too."),
    ] | UnsetType = UNSET


class SymbolAtArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, Meta(description=_PATH_DOC)]
    line: Annotated[int, Meta(ge=1, description="The 1-based line the symbol is on (as read_file numbers it).")]
    symbol: Annotated[str, Meta(min_length=1, max_length=200, description="The identifier as written on that line.")]
    occurrence: Annotated[int, Meta(ge=1, description="Which occurrence on that line, when it appears more than once. Default 1.")] | UnsetType = UNSET


class SymbolsArgs(msgspec.Struct, forbid_unknown_fields=True):
    query: Annotated[str, Meta(min_length=1, max_length=200, description="A name or part of one.")]


def _uri(host: ToolHost, raw: str) -> tuple[Path, str]:
    path = resolve_workspace_path(host.root, raw)
    return path, path.as_uri()


async def _line_text(host: ToolHost, path: Path, line: int) -> str | None:
    """Line `line` (0-based) of a workspace file: the editor's buffer, else the disk."""
    text = await host.editor_text(path)
    if text is None:
        try:
            data = await asyncio.to_thread(workspace_fs.read_bytes, host.root, path, max_bytes=8 * 1024 * 1024)
        except (OSError, ValueError, workspace_fs.OutsideWorkspace):
            return None
        text = data.decode("utf-8", errors="replace")
    lines = text.split("\n")
    return lines[line].rstrip("\r") if 0 <= line < len(lines) else None


def _utf16(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


async def _position(host: ToolHost, path: Path, args: SymbolAtArgs) -> LspPosition:
    text = await _line_text(host, path, args.line - 1)
    if text is None:
        raise ToolError(f"{args.path} has no line {args.line}")
    index, wanted = -1, args.occurrence if args.occurrence is not UNSET else 1
    for _ in range(wanted):
        index = text.find(args.symbol, index + 1)
        if index < 0:
            raise ToolError(f"{args.symbol!r} does not occur {wanted} time(s) on line {args.line} of {args.path}; "
                            "read the file to find the line it is on")
    return LspPosition(line=args.line - 1, character=_utf16(text[:index]))


async def _ask(editor: Editor, params: NavigateParams) -> NavigateResult:
    try:
        return await editor.navigate(params)
    except EditorUnavailable as exc:
        raise ToolError(f"the editor did not answer ({exc}); use grep instead") from None


async def _locations(host: ToolHost, locations: list[LspLocation], what: str) -> ToolResult:
    if not locations:
        return ToolResult(f"the editor's language servers found no {what}")
    out = []
    for location in locations[:LOCATIONS_SHOWN]:
        start = location.range.start
        line = f"{shown_path(host.root, location.uri)}:{start.line + 1}:{start.character + 1}"
        path = uri_path(location.uri)
        text = None
        if path is not None:
            try:  # the line's text only for workspace files: nothing outside it is read
                text = await _line_text(host, resolve_workspace_path(host.root, str(path)), start.line)
            except ToolError:
                text = None
        out.append(f"{line}  {_one_line(text, LINE_TEXT_CHARS)}" if text else line)
    more = len(locations) - len(out)
    return ToolResult("\n".join(out) + (f"\n(and {more} more)" if more > 0 else ""))


def diagnostics_tool(editor: Editor) -> Tool[DiagnosticsArgs]:
    async def run(host: ToolHost, args: DiagnosticsArgs) -> ToolResult:
        uris = None if args.path is UNSET else [_uri(host, args.path)[1]]
        try:
            items = await editor.diagnostics(uris)
        except EditorUnavailable as exc:
            raise ToolError(f"the editor did not answer ({exc})") from None
        worst = {"error": ERROR, "warning": WARNING, "all": 4}[args.severity if args.severity is not UNSET else "warning"]
        lines = [describe(host.root, item.uri, d) for item in items for d in item.diagnostics
                 if (d.severity or ERROR) <= worst]
        if not lines:
            return ToolResult("the editor reports no problems" + ("" if uris is None else f" in {args.path}"))
        shown = lines[:DIAGNOSTICS_SHOWN]
        more = len(lines) - len(shown)
        return ToolResult("\n".join(shown) + (f"\n(and {more} more)" if more > 0 else ""))

    return Tool(
        name="diagnostics",
        description=("The problems (errors, warnings) the user's editor shows, from every language server it "
                     "runs: one file's, or the whole workspace's. Use it after changes to check them."),
        arguments=DiagnosticsArgs, run=run, summary=lambda args: f"diagnostics {args.get('path', '')}".strip(),
        read_only=True)  # plan mode offers it (docs/modes.md)


def _at_tool(editor: Editor, name: str, kind: Literal["definition", "references"], description: str) -> Tool[SymbolAtArgs]:
    async def run(host: ToolHost, args: SymbolAtArgs) -> ToolResult:
        path, uri = _uri(host, args.path)
        position = await _position(host, path, args)
        result = await _ask(editor, NavigateParams(kind=kind, uri=uri, position=position))
        return await _locations(host, result.locations or [], kind)

    return Tool(name=name, description=description, arguments=SymbolAtArgs, run=run,
                summary=lambda args: f"{name} {args.get('symbol', '')}", read_only=True)


def navigation_tools(editor: Editor) -> list[Tool[Any]]:
    async def symbols(host: ToolHost, args: SymbolsArgs) -> ToolResult:
        result = await _ask(editor, NavigateParams(kind="symbols", query=args.query))
        found = result.symbols or []
        if not found:
            return ToolResult(f"the editor's language servers know no symbol matching {args.query!r}")
        locations = await _locations(host, [s.location for s in found[:LOCATIONS_SHOWN]], "symbols")
        named = [f"{_one_line(s.name, 80)}  {line}" for s, line in zip(found, locations.output.split("\n"))]
        more = len(found) - LOCATIONS_SHOWN
        return ToolResult("\n".join(named) + (f"\n(and {more} more)" if more > 0 else ""))

    return [
        _at_tool(editor, "find_definition", "definition",
                 "Where a symbol is defined, asked of the user's editor's own language servers (exact, unlike "
                 "grep). Give the file, the 1-based line the symbol is used on, and the symbol."),
        _at_tool(editor, "find_references", "references",
                 "Every place a symbol is used, asked of the user's editor's own language servers. Give the file, "
                 "the 1-based line the symbol is on, and the symbol."),
        Tool(name="workspace_symbols",
             description="Find classes, functions and other symbols by name across the workspace, through the "
                         "user's editor's language servers.",
             arguments=SymbolsArgs, run=symbols, summary=lambda args: f"workspace_symbols {args.get('query', '')}",
             read_only=True),
    ]


def editor_tools(host: ToolHost, tools: list[Tool[Any]], wait_ms: int) -> list[Tool[Any]]:
    """`tools` with the edits reporting new errors, plus the editor's tools, as the client declared
    them; `tools` unchanged for a host without an editor (terminal, ACP)."""
    editor = editor_of(host)
    if editor is None:
        return tools
    out = list(tools)
    if editor.offers_diagnostics:
        out = [with_edit_diagnostics(t, editor, wait_ms) if t.name in EDIT_TOOLS else t for t in out]
        out.append(diagnostics_tool(editor))
    if editor.offers_navigation:
        out.extend(navigation_tools(editor))
    return out
