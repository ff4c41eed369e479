"""read_file, write_file and edit_file.

Reads prefer the editor's buffer (what the user sees, unsaved edits included) over the disk, so the
model never edits a stale copy. Writes go through `host.apply_text`, which the editor host turns
into an undoable edit and the disk host into an atomic write.
"""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .. import workspace_fs
from ..images import IMAGE_SUFFIXES, MAX_INPUT_BYTES, ImageError, raw_image
from ..workspace_fs import NotRegularFile
from . import seen_files
from .arguments import check_arguments
from .background import command_output_file, read_output_file
from .base import Tool, ToolError, ToolHost, ToolResult
from .edit_match import Planned, plan_edit
from .output_cap import DEFAULT_LIMIT
from .workspace_paths import resolve_workspace_path, workspace_relative

# Without an explicit end_line a read stops here: whole large files crowd out the conversation.
DEFAULT_MAX_LINES = 2000
# Minified files have enormous lines; one of them should not eat the whole output budget.
MAX_LINE_CHARS = 2000
# read_file's output budget (characters): whole lines up to it, then the note where to read on.
# Under the common output cap (tools/output_cap.py), so that cap never cuts the note off.
READ_BUDGET = DEFAULT_LIMIT - 500
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


def read_regular_file(root: Path, path: Path) -> bytes:
    """The bytes of a regular file inside the workspace; NotRegularFile for anything else.

    Through `agent/workspace_fs.py`: resolved beneath the root's descriptor (a link or a swapped
    directory cannot lead out), opened non-blocking and checked on the open descriptor."""
    return workspace_fs.read_bytes(root, path)


_kind = workspace_fs.kind_of


def read_disk_text(root: Path, path: Path, shown: str) -> str:
    """The file's text from disk, refusing what is not UTF-8 text."""
    try:
        data = read_regular_file(root, path)
    except IsADirectoryError:
        raise ToolError(f"'{shown}' is a directory; use list_files to see what it holds") from None
    except workspace_fs.OutsideWorkspace as exc:
        raise ToolError(f"'{shown}' cannot be read: {exc.strerror}; file tools only work inside the workspace") from None
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
    return buffered if buffered is not None else read_disk_text(host.root, path, shown)


async def editor_or_disk_text(host: ToolHost, path: Path, shown: str) -> str:
    """`current_text` for the file tools: an editor that must be asked (ACP) is asked."""
    buffered = await host.editor_text(path)
    if buffered is not None:
        return buffered
    # In a worker thread: a large file or a slow disk never holds the event loop.
    return await asyncio.to_thread(read_disk_text, host.root, path, shown)


async def _read_image(host: ToolHost, path: Path, shown: str) -> ToolResult:
    """An image file: checked by its first bytes here, sent to the model after the step's results."""
    try:
        # One byte past the cap at most: raw_image then says it is too large.
        data = await asyncio.to_thread(workspace_fs.read_bytes, host.root, path, max_bytes=MAX_INPUT_BYTES)
    except FileNotFoundError:
        raise ToolError(f"file not found: '{shown}'") from None
    except (workspace_fs.OutsideWorkspace, NotRegularFile, IsADirectoryError) as exc:
        raise ToolError(f"'{shown}' cannot be read: {exc}") from None
    try:
        image = raw_image(data, f"'{shown}'")
    except ImageError as exc:
        raise ToolError(str(exc)) from None
    return ToolResult(f"'{shown}' is an image ({image.media_type}, {len(data):,} bytes): it follows as an image "
                      "when the model takes images, else a line says it was not sent", image=image)


def _number_line(number: int, line: str) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}... [line cut: {len(line):,} characters]"
    return f"{number:>5}\t{line}"


async def _read_file(host: ToolHost, args: ReadFileArgs) -> ToolResult:
    # A command's output file (its path printed by run_command) is the one file read outside the
    # workspace: it is named exactly, never a folder or another state file (tools/background.py).
    output = command_output_file(args.path)
    path = output or resolve_workspace_path(host.root, args.path)
    shown = str(output) if output else workspace_relative(host.root, path)
    if output is None and path.suffix.lower() in IMAGE_SUFFIXES:
        return await _read_image(host, path, shown)
    text = await asyncio.to_thread(read_output_file, output) if output else await editor_or_disk_text(host, path, shown)
    if output is None:
        seen_files.remember(host, path, text)
    lines = split_lines(text)
    start = args.start_line or 1  # both are at least 1: the Struct's bound
    end = args.end_line or None
    if end is not None and end < start:
        raise ToolError(f"end_line {end} is before start_line {start}")
    if not lines:
        return ToolResult(f"'{shown}' is empty")
    if start > len(lines):
        raise ToolError(f"start_line {start} is past the end of '{shown}' ({len(lines)} lines)")
    last_wanted = min(end if end is not None else start + DEFAULT_MAX_LINES - 1, len(lines))
    # Whole lines up to the budget: a cut never lands inside a line or drops the note below.
    out: list[str] = []
    used = 0
    for number in range(start, last_wanted + 1):
        numbered = _number_line(number, lines[number - 1])
        if out and used + len(numbered) + 1 > READ_BUDGET:
            break
        out.append(numbered)
        used += len(numbered) + 1
    last = start + len(out) - 1
    body = "\n".join(out)
    if last < len(lines):
        why = "" if last == last_wanted else f" (output limit of {READ_BUDGET:,} characters)"
        body += (
            f"\n[showing lines {start}-{last} of {len(lines)}{why}; "
            f"pass start_line={last + 1} to read on]"
        )
    return ToolResult(body)


def _write_count(text: str) -> str:
    n = count_lines(text)
    return f"{n} line{'' if n == 1 else 's'}"


def _rejected(shown: str) -> ToolResult:
    return ToolResult(f"the user rejected the edit to '{shown}'; the file is unchanged", is_error=True)


async def _write_file(host: ToolHost, args: WriteFileArgs) -> ToolResult:
    path = resolve_workspace_path(host.root, args.path)
    shown = workspace_relative(host.root, path)
    content = args.content
    try:
        found = await asyncio.to_thread(workspace_fs.stat, host.root, path)
    except FileNotFoundError:
        found = None
    except OSError as exc:
        raise ToolError(f"cannot write '{shown}': {exc.strerror or exc}") from None
    if found is not None and stat.S_ISDIR(found.st_mode):
        raise ToolError(f"'{shown}' is a directory; give a file path")
    if found is not None and not stat.S_ISREG(found.st_mode):
        raise ToolError(f"'{shown}' is {_kind(found.st_mode)}, not a regular file; it cannot be written")
    exists = found is not None or host.open_document_text(path) is not None
    if exists:
        await _refuse_stale(host, path, shown)
    try:
        # Created beneath the root's descriptor (agent/workspace_fs.py); removed again on rejection.
        made = [] if exists else await asyncio.to_thread(workspace_fs.make_dirs, host.root, path.parent)
    except OSError as exc:
        raise ToolError(f"cannot create the folders of '{shown}': {exc.strerror or exc}") from None
    if not await host.apply_text(path, content, create=not exists):
        # Leave the tree as it was; rmdir only removes what is still empty.
        await asyncio.to_thread(workspace_fs.remove_empty_dirs, host.root, made)
        return _rejected(shown)
    seen_files.remember(host, path, content)
    verb = "overwrote" if exists else "created"
    return ToolResult(f"{verb} '{shown}' ({_write_count(content)})")


async def _refuse_stale(host: ToolHost, path: Path, shown: str) -> None:
    """Refuse to overwrite a file that changed since this session's agent last read or wrote it."""
    seen = seen_files.last_seen(host, path)
    if seen is None:
        return
    try:
        now = await editor_or_disk_text(host, path, shown)
    except ToolError:
        now = None  # binary or unreadable now: certainly not what the agent saw
    if now is None or seen_files.digest(now) != seen:
        raise ToolError(
            f"'{shown}' changed since you last read or wrote it (the user or a command edited it); "
            "read it again with read_file and then write it, so their change is not lost"
        )


def _edits_of(args: EditFileArgs) -> list[EditItem]:
    single = not isinstance(args.old_text, UnsetType) or not isinstance(args.new_text, UnsetType)
    if single and not isinstance(args.edits, UnsetType):
        raise ToolError("pass either old_text/new_text or edits, not both")
    if not isinstance(args.edits, UnsetType):
        if not args.edits:
            raise ToolError("edits is empty; give at least one {old_text, new_text}")
        return args.edits
    if isinstance(args.old_text, UnsetType) or isinstance(args.new_text, UnsetType):
        missing = "old_text" if isinstance(args.old_text, UnsetType) else "new_text"
        raise ToolError(f"missing argument '{missing}': pass old_text and new_text (or edits)")
    return [EditItem(args.old_text, args.new_text, args.replace_all)]


async def _planned_edit(host: ToolHost, args: EditFileArgs) -> tuple[Path, str, str, list[Planned]]:
    """What an edit_file call would do: (path, shown, the text after it, each edit); refusals raise.

    Edits apply one after another to the text in memory; one refusal refuses them all, so the
    file is written whole or not at all."""
    path = resolve_workspace_path(host.root, args.path)
    shown = workspace_relative(host.root, path)
    edits = _edits_of(args)
    text = await editor_or_disk_text(host, path, shown)
    done = []
    for index, edit in enumerate(edits):
        try:
            planned = plan_edit(text, edit.old_text, edit.new_text, shown=shown, replace_all=edit.replace_all is True)
        except ToolError as exc:
            if len(edits) == 1:
                raise
            raise ToolError(f"edit {index + 1} of {len(edits)}: {exc}\nNo edit was applied; the file is unchanged.") from None
        text = planned.text
        done.append(planned)
    return path, shown, text, done


def _describe(planned: Planned) -> str:
    span = max(planned.old_lines, 1)
    where = (
        f"{planned.count} places, the first at line {planned.first_line}"
        if planned.count > 1 else f"lines {planned.first_line}-{planned.first_line + span - 1}"
    )
    how = f" (matched {planned.how})" if planned.how else ""
    lines = f"{planned.new_lines} line{'' if planned.new_lines == 1 else 's'}"
    return f"replaced {where} ({span} line{'' if span == 1 else 's'}) with {lines}{how}"


async def _edit_file(host: ToolHost, args: EditFileArgs) -> ToolResult:
    path, shown, updated, done = await _planned_edit(host, args)
    if not await host.apply_text(path, updated, create=False):
        return _rejected(shown)
    seen_files.remember(host, path, updated)
    return ToolResult(f"edited '{shown}': " + "; ".join(_describe(p) for p in done))


async def _preview_edit(host: ToolHost, args: dict[str, Any]) -> tuple[Path, str] | None:
    """The whole file as the edit would leave it, for the approval's diff (None: it would fail).
    The approval comes before `run_tool`'s check, so the arguments are checked here the same way."""
    try:
        path, _, updated, _ = await _planned_edit(host, check_arguments(EditFileArgs, args, "edit_file"))
    except (ToolError, OSError):
        return None
    return path, updated


async def _preview_write(host: ToolHost, args: dict[str, Any]) -> tuple[Path, str] | None:
    try:
        checked = check_arguments(WriteFileArgs, args, "write_file")
        return resolve_workspace_path(host.root, checked.path), checked.content
    except (ToolError, OSError):
        return None


_PATH_DOC = "File path, relative to the workspace root (or absolute inside the workspace)."
_END_LINE_DOC = (
    "Last line to show, inclusive. Default: the end of the file "
    f"(at most {DEFAULT_MAX_LINES} lines from start_line)."
)


class ReadFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, Meta(description=_PATH_DOC)]
    start_line: Annotated[int, Meta(ge=1, description="First line to show (1-based). Default 1.")] | UnsetType = UNSET
    end_line: Annotated[int, Meta(ge=1, description=_END_LINE_DOC)] | UnsetType = UNSET


class WriteFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, Meta(description=_PATH_DOC)]
    content: Annotated[str, Meta(description="The complete new content of the file.")]


_OLD_DOC = "The exact text to replace; must occur exactly once (unless replace_all)."
_NEW_DOC = "The text to put in its place (empty to delete)."
_ALL_DOC = "Replace every occurrence instead of requiring exactly one. Default false."


class EditItem(msgspec.Struct, forbid_unknown_fields=True):
    old_text: Annotated[str, Meta(description=_OLD_DOC)]
    new_text: Annotated[str, Meta(description=_NEW_DOC)]
    replace_all: Annotated[bool, Meta(description=_ALL_DOC)] | UnsetType = UNSET


class EditFileArgs(msgspec.Struct, forbid_unknown_fields=True):
    path: Annotated[str, Meta(description=_PATH_DOC)]
    old_text: Annotated[str, Meta(description=_OLD_DOC)] | UnsetType = UNSET
    new_text: Annotated[str, Meta(description=_NEW_DOC)] | UnsetType = UNSET
    replace_all: Annotated[bool, Meta(description=_ALL_DOC)] | UnsetType = UNSET
    edits: Annotated[
        list[EditItem],
        Meta(description="Several edits to this file, applied in order, all or none (instead of old_text/new_text)."),
    ] | UnsetType = UNSET


READ_FILE = Tool(
    name="read_file",
    description=(
        "Read a text file from the workspace. Lines are numbered from 1, each shown as "
        "'<line number><TAB><text>'; the numbers are not part of the file. If the file is open in "
        "the editor you get the editor's current text, unsaved changes included. Without a range "
        f"at most {DEFAULT_MAX_LINES} lines are returned; use start_line/end_line (1-based, "
        "inclusive) to read a part of a large file. Binary files are refused."
    ),
    arguments=ReadFileArgs,
    run=_read_file,
    summary=lambda args: f"read {args.get('path', '')}",
    read_only=True,
)

WRITE_FILE = Tool(
    name="write_file",
    description=(
        "Create a file, or replace an existing file's whole content. Missing parent directories "
        "are created. Prefer edit_file for changing part of an existing file: it is safer and "
        "shorter. Write the complete content, without line numbers. The user may reject the edit."
    ),
    arguments=WriteFileArgs,
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
        "use an empty new_text to delete. replace_all: true changes every occurrence. For several "
        "changes to one file pass edits: [{old_text, new_text}, ...], applied in order, all or none. "
        "The user may reject the edit."
    ),
    arguments=EditFileArgs,
    run=_edit_file,
    approval="edit",
    preview=_preview_edit,
    summary=lambda args: f"edit {args.get('path', '')}",
)
