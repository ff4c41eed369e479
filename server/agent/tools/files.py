"""read_file, write_file and edit_file.

Reads prefer the editor's buffer (what the user sees, unsaved edits included) over the disk, so the
model never edits a stale copy. Writes go through `host.apply_text`, which the editor host turns
into an undoable edit and the disk host into an atomic write.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from .base import Tool, ToolError, ToolHost, ToolResult
from .output_cap import cap_output
from .workspace_paths import resolve_workspace_path, workspace_relative

# Without an explicit end_line a read stops here: whole large files crowd out the conversation.
DEFAULT_MAX_LINES = 2000
# Minified files have enormous lines; one of them should not eat the whole output budget.
MAX_LINE_CHARS = 2000
# NUL bytes in the first block are the usual mark of a binary file (what git and grep look at).
_SNIFF_BYTES = 8192


def looks_binary(data: bytes) -> bool:
    return b"\x00" in data[:_SNIFF_BYTES]


def split_lines(text: str) -> list[str]:
    """Lines as an editor numbers them: only \\n ends a line, a trailing \\r is dropped.

    str.splitlines would also split on form feeds and other separators, shifting line numbers
    away from what the user sees."""
    if not text:
        return []
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def count_lines(text: str) -> int:
    return len(split_lines(text))


class NotRegularFile(OSError):
    """A FIFO, socket or device: reading one could block the server or never end."""

    def __init__(self, kind: str) -> None:
        super().__init__(f"{kind}, not a regular file")
        self.kind = kind


def read_regular_file(path: Path) -> bytes:
    """The bytes of a regular file; NotRegularFile for anything else.

    Opened non-blocking and checked on the open descriptor, so a FIFO cannot stall the event
    loop and a file swapped for a device between a check and the read is still refused."""
    mode = os.stat(path).st_mode  # first, for a clear message: opening a socket fails with ENXIO
    if not stat.S_ISREG(mode):
        raise NotRegularFile(_kind(mode))
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(_kind(mode))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def read_disk_text(path: Path, shown: str) -> str:
    """The file's text from disk, refusing what is not UTF-8 text."""
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory; use list_files to see what it holds")
    try:
        data = read_regular_file(path)
    except NotRegularFile as exc:
        raise ToolError(f"'{shown}' is {exc.kind}, not a regular file; only text files can be read") from None
    except FileNotFoundError:
        raise ToolError(f"file not found: '{shown}'") from None
    except OSError as exc:
        raise ToolError(f"cannot read '{shown}': {exc.strerror or exc}") from None
    if looks_binary(data):
        raise ToolError(f"'{shown}' is a binary file ({len(data):,} bytes); only text files can be read")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ToolError(f"'{shown}' is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def current_text(host: ToolHost, path: Path, shown: str) -> str:
    """The editor buffer when the file is open there, else the file on disk."""
    buffered = host.open_document_text(path)
    return buffered if buffered is not None else read_disk_text(path, shown)


async def editor_or_disk_text(host: ToolHost, path: Path, shown: str) -> str:
    """`current_text` for the file tools: an editor that must be asked (ACP) is asked."""
    buffered = await host.editor_text(path)
    return buffered if buffered is not None else read_disk_text(path, shown)


def _number(lines: list[str], first: int) -> str:
    out = []
    for offset, line in enumerate(lines):
        if len(line) > MAX_LINE_CHARS:
            line = f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line):,} characters]"
        out.append(f"{first + offset:>5}\t{line}")
    return "\n".join(out)


async def _read_file(host: ToolHost, args: dict[str, Any]) -> ToolResult:
    path = resolve_workspace_path(host.root, args["path"])
    shown = workspace_relative(host.root, path)
    lines = split_lines(await editor_or_disk_text(host, path, shown))
    start: int = args.get("start_line") or 1
    end: int | None = args.get("end_line")
    if start < 1 or (end is not None and end < 1):
        raise ToolError("start_line and end_line count from 1")
    if end is not None and end < start:
        raise ToolError(f"end_line {end} is before start_line {start}")
    if not lines:
        return ToolResult(f"'{shown}' is empty")
    if start > len(lines):
        raise ToolError(f"start_line {start} is past the end of '{shown}' ({len(lines)} lines)")
    last = min(end if end is not None else start + DEFAULT_MAX_LINES - 1, len(lines))
    body = _number(lines[start - 1 : last], start)
    if end is None and last < len(lines):
        body += (
            f"\n[showing lines {start}-{last} of {len(lines)}; "
            f"pass start_line={last + 1} to read on]"
        )
    return ToolResult(cap_output(body))


def _write_count(text: str) -> str:
    n = count_lines(text)
    return f"{n} line{'' if n == 1 else 's'}"


def _rejected(shown: str) -> ToolResult:
    return ToolResult(f"the user rejected the edit to '{shown}'; the file is unchanged", is_error=True)


def _make_parents(path: Path, root: Path) -> list[Path]:
    """Create the missing parent directories; return them, deepest first, to undo on rejection."""
    made: list[Path] = []
    parent = path.parent
    while not parent.exists() and parent != root and root in parent.parents:
        made.append(parent)
        parent = parent.parent
    for directory in reversed(made):
        directory.mkdir()
    return made


async def _write_file(host: ToolHost, args: dict[str, Any]) -> ToolResult:
    path = resolve_workspace_path(host.root, args["path"])
    shown = workspace_relative(host.root, path)
    content: str = args["content"]
    if path.is_dir():
        raise ToolError(f"'{shown}' is a directory; give a file path")
    if path.exists() and not path.is_file():
        raise ToolError(f"'{shown}' is {_kind(path.stat().st_mode)}, not a regular file; it cannot be written")
    exists = path.exists() or host.open_document_text(path) is not None
    made = [] if exists else _make_parents(path, Path(os.path.abspath(host.root)))
    if not await host.apply_text(path, content, create=not exists):
        for directory in made:  # leave the tree as it was; rmdir only removes what is still empty
            try:
                directory.rmdir()
            except OSError:
                break
        return _rejected(shown)
    verb = "overwrote" if exists else "created"
    return ToolResult(f"{verb} '{shown}' ({_write_count(content)})")


def _positions(text: str, needle: str) -> list[int]:
    # Overlapping matches count too: replacing "aa" in "aaa" is ambiguous even though str.count says 1.
    found, at = [], text.find(needle)
    while at >= 0:
        found.append(at)
        at = text.find(needle, at + 1)
    return found


async def _planned_edit(host: ToolHost, args: dict[str, Any]) -> tuple[Path, str, str, int, str, str]:
    """What an edit_file call would do: (path, shown, the text now, where, old, new); refusals raise."""
    path = resolve_workspace_path(host.root, args["path"])
    shown = workspace_relative(host.root, path)
    old: str = args["old_text"]
    new: str = args["new_text"]
    if not old:
        raise ToolError("old_text is empty; to write a whole file use write_file")
    if old == new:
        raise ToolError("old_text and new_text are the same; there is nothing to change")
    text = await editor_or_disk_text(host, path, shown)
    found = _positions(text, old)
    if not found and "\r\n" in text and "\r\n" not in old:
        # read_file shows CRLF files without the \r, so the model's old_text has bare \n.
        old, new = old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
        found = _positions(text, old)
    if not found:
        raise ToolError(
            f"old_text not found in '{shown}'; read the file again and copy the text exactly, "
            "whitespace and indentation included"
        )
    if len(found) > 1:
        raise ToolError(
            f"old_text found {len(found)} times in '{shown}'; include more surrounding lines to "
            "make it unique"
        )
    return path, shown, text, found[0], old, new


async def _edit_file(host: ToolHost, args: dict[str, Any]) -> ToolResult:
    path, shown, text, at, old, new = await _planned_edit(host, args)
    updated = text[:at] + new + text[at + len(old) :]
    if not await host.apply_text(path, updated, create=False):
        return _rejected(shown)
    first = text.count("\n", 0, at) + 1
    old_span = max(count_lines(old), 1)
    return ToolResult(
        f"edited '{shown}': replaced lines {first}-{first + old_span - 1} "
        f"({old_span} line{'' if old_span == 1 else 's'}) with {_write_count(new)}"
    )


async def _preview_edit(host: ToolHost, args: dict[str, Any]) -> tuple[Path, str] | None:
    """The whole file as the edit would leave it, for the approval's diff (None: it would fail)."""
    try:
        path, _, text, at, old, new = await _planned_edit(host, args)
    except (ToolError, KeyError, TypeError, OSError):
        return None
    return path, text[:at] + new + text[at + len(old) :]


async def _preview_write(host: ToolHost, args: dict[str, Any]) -> tuple[Path, str] | None:
    try:
        return resolve_workspace_path(host.root, args["path"]), str(args["content"])
    except (ToolError, KeyError, TypeError, OSError):
        return None


_PATH_DOC = "File path, relative to the workspace root (or absolute inside the workspace)."

READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file from the workspace. Lines are numbered from 1, each shown as "
        "'<line number><TAB><text>'; the numbers are not part of the file. If the file is open in "
        "the editor you get the editor's current text, unsaved changes included. Without a range "
        f"at most {DEFAULT_MAX_LINES} lines are returned; use start_line/end_line (1-based, "
        "inclusive) to read a part of a large file. Binary files are refused."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": _PATH_DOC},
            "start_line": {"type": "integer", "minimum": 1, "description": "First line to show (1-based). Default 1."},
            "end_line": {
                "type": "integer",
                "minimum": 1,
                "description": "Last line to show, inclusive. Default: the end of the file "
                f"(at most {DEFAULT_MAX_LINES} lines from start_line).",
            },
        },
        "required": ["path"],
        "additionalProperties": False,
    },
    run=_read_file,
    summary=lambda args: f"read {args.get('path', '')}",
)

WRITE_FILE = Tool(
    name="write_file",
    description=(
        "Create a file, or replace an existing file's whole content. Missing parent directories "
        "are created. Prefer edit_file for changing part of an existing file: it is safer and "
        "shorter. Write the complete content, without line numbers. The user may reject the edit."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": _PATH_DOC},
            "content": {"type": "string", "description": "The complete new content of the file."},
        },
        "required": ["path", "content"],
        "additionalProperties": False,
    },
    run=_write_file,
    approval="edit",
    preview=_preview_write,
    summary=lambda args: f"write {args.get('path', '')}",
)

EDIT_FILE = Tool(
    name="edit_file",
    description=(
        "Replace one exact piece of text in an existing file. old_text must occur exactly once in "
        "the file's current text (the editor's buffer when the file is open): copy it from "
        "read_file output without the line-number prefix, keeping whitespace and indentation "
        "exactly, and include enough surrounding lines to make it unique. new_text replaces it; "
        "use an empty new_text to delete. Make several calls for several separate changes. "
        "The user may reject the edit."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": _PATH_DOC},
            "old_text": {"type": "string", "description": "The exact text to replace; must occur exactly once."},
            "new_text": {"type": "string", "description": "The text to put in its place."},
        },
        "required": ["path", "old_text", "new_text"],
        "additionalProperties": False,
    },
    run=_edit_file,
    approval="edit",
    preview=_preview_edit,
    summary=lambda args: f"edit {args.get('path', '')}",
)
