"""What the editor showed as a prompt was sent (`ChatArgs.context`), rendered for the model.

It reaches the model as the `editor_context` section of the turn's context message, before the
prompt (agent/context_messages.py: never in the instructions, so their bytes stay the same and
the provider's prompt cache keeps them). Everything the client sends is capped here: the
selection's text, the number of open files, every path's length. The text is the user's file,
so it is data to the model, never instructions; nothing in it is run or followed here.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from ..protocol import EditorContext, LspRange

EDITOR = "editor_context"
SELECTION_CHARS = 6_000  # the selection's text sent at most (a long selection says how much is left out)
OPEN_FILES = 30  # open files listed at most
PATH_CHARS = 300


def uri_path(uri: str) -> Path | None:
    """The local path of a `file:` URI, or None for any other scheme (untitled:, git:, ...)."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    return Path(unquote(parsed.path))


def shown_path(root: Path, uri: str) -> str:
    """A URI as the model should read it: relative to the workspace when inside it."""
    path = uri_path(uri)
    if path is None:
        text = uri
    else:
        try:
            text = path.relative_to(root).as_posix()
        except ValueError:
            text = str(path)
    clean = "".join(c if c.isprintable() else "?" for c in text)
    return clean if len(clean) <= PATH_CHARS else clean[: PATH_CHARS - 1] + "…"


def lines_of(span: LspRange) -> str:
    """1-based line numbers of a range, as people and the file tools count them: "40-52" or "7"."""
    first = span.start.line + 1
    # A selection ending at column 0 of the next line covers whole lines: that line is not in it.
    last = span.end.line + (0 if span.end.character > 0 or span.end.line == span.start.line else -1) + 1
    return str(first) if last <= first else f"{first}-{last}"


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:  # a fence the selection itself holds must not close ours
        fence += "`"
    return f"{fence}\n{text}\n{fence}"


def render(context: EditorContext | None, root: Path) -> str:
    """The section's body, or "" when the client sent nothing worth saying."""
    if context is None:
        return ""
    lines: list[str] = []
    if context.activeFile:
        where = shown_path(root, context.activeFile)
        if context.cursor is not None:
            where += f" (cursor at line {context.cursor.line + 1}, column {context.cursor.character + 1})"
        lines.append(f"Active file: {where}")
    if context.visibleRange is not None:
        visible = context.visibleRange
        lines.append(f"Visible: {shown_path(root, visible.uri)} lines {lines_of(visible.range)}")
    if context.openFiles:
        shown = [shown_path(root, uri) for uri in context.openFiles[:OPEN_FILES]]
        more = len(context.openFiles) - len(shown)
        lines.append("Open files: " + ", ".join(shown) + (f" (and {more} more)" if more > 0 else ""))
    selection = context.selection
    if selection is not None and selection.text:
        text = selection.text
        cut = len(text) - SELECTION_CHARS
        if cut > 0:
            text = text[:SELECTION_CHARS]
        lines.append(f"Selected in {shown_path(root, selection.uri)} lines {lines_of(selection.range)}"
                     + (f" (the first {SELECTION_CHARS} characters; {cut} more not shown, read the file for them):"
                        if cut > 0 else ":"))
        lines.append(_fenced(text))
    if not lines:
        return ""
    return "What the user sees in the editor as they send this prompt:\n" + "\n".join(lines)
