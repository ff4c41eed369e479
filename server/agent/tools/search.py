"""list_files and grep.

grep runs ripgrep (`tools/ripgrep.py`): linear-time regexes, `.gitignore` respected, a subprocess
with a time limit and an output cap, killed by abort. list_files walks the workspace in a worker
thread (an abort stops it at the next file), so nothing of either runs on the event loop's thread.
"""

from __future__ import annotations

import asyncio
import re
import threading
from pathlib import Path
from typing import Annotated, Any, Literal

import msgspec
from msgspec import UNSET, Meta, UnsetType

from ...model.workspace_files import walk_files
from .background import SPILL_BYTES, command_output_file
from .base import Tool, ToolError, ToolHost, ToolResult
from .. import workspace_fs
from . import ripgrep
from .output_cap import cap_output
from .workspace_paths import resolve_workspace_path, workspace_relative

MAX_LIST_ENTRIES = 1000
MAX_GREP_MATCHES = 500
# Paging (issue 37): how far `offset` may reach, and the most matches files/count modes look at.
MAX_GREP_OFFSET = 20_000
MAX_GREP_SCAN = 20_000
MAX_GREP_CONTEXT = 10
MAX_GREP_LINE_CHARS = 300
# Bigger files are generated data or logs; scanning them costs much and finds little.
MAX_GREP_FILE_BYTES = 5_000_000


def _glob_segment(segment: str) -> str:
    out, i = [], 0
    while i < len(segment):
        c = segment[i]
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            # A ']' right after '[' (or '[!') belongs to the class, as in shells.
            first = i + 2 if segment.startswith("[!", i) else i + 1
            close = segment.find("]", first + 1)
            if close < 0:
                out.append(re.escape(c))
            else:
                body = segment[first:close]
                # Escape what Python's re would read as nesting or set operations.
                body = "".join("\\" + ch if ch in "\\[&~|" else ch for ch in body)
                out.append("[" + ("^" if first == i + 2 else "") + body + "]")
                i = close
        elif c == "{" and "}" in segment[i:]:
            close = segment.index("}", i)
            out.append("(?:" + "|".join(_glob_segment(alt) for alt in segment[i + 1 : close].split(",")) + ")")
            i = close
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def compile_glob(pattern: str) -> tuple[re.Pattern[str], bool]:
    """A regex for `pattern`, and whether it matches the file name alone (no '/' in the pattern).

    `**` spans any number of directories, `*` and `?` stay within one name, `[abc]` and `{a,b}`
    work as in shells. A pattern without '/' matches a file name at any depth, like .gitignore."""
    pattern = pattern.strip()
    while pattern.startswith("./"):
        pattern = pattern[2:]
    pattern = pattern.lstrip("/") or "**"
    if "/" not in pattern and pattern != "**":
        return re.compile(_glob_segment(pattern)), True
    parts = pattern.split("/")
    regex = ""
    for index, part in enumerate(parts):
        last = index == len(parts) - 1
        if part == "**":
            regex += ".*" if last else "(?:[^/]+/)*"
        else:
            regex += _glob_segment(part) + ("" if last else "/")
    return re.compile(regex), False


def _glob_matcher(pattern: str | None) -> Any:
    if not pattern:
        return lambda rel: True
    try:
        regex, name_only = compile_glob(pattern)
    except (re.error, ValueError) as exc:
        raise ToolError(f"invalid glob pattern '{pattern}': {exc}") from None
    if name_only:
        return lambda rel: regex.fullmatch(rel.rsplit("/", 1)[-1]) is not None
    return lambda rel: regex.fullmatch(rel) is not None


def _start(host: ToolHost, raw: str | None) -> tuple[Path, str]:
    start = resolve_workspace_path(host.root, raw or ".")
    shown = workspace_relative(host.root, start)
    try:
        workspace_fs.stat(host.root, start)
    except FileNotFoundError:
        raise ToolError(f"path not found: '{shown}'") from None
    except OSError as exc:
        raise ToolError(f"cannot search '{shown}': {exc.strerror or exc}") from None
    return start, shown


def _walk_matching(host: ToolHost, start: Path, pattern: str, stop: threading.Event) -> list[str]:
    matches = _glob_matcher(pattern)
    base = start if start.is_dir() else start.parent
    found = []
    for file in walk_files(start):
        if stop.is_set():  # the call was aborted: the thread ends at the next file
            break
        if matches(file.relative_to(base).as_posix()):
            found.append(workspace_relative(host.root, file))
    return found


async def _list_files(host: ToolHost, args: ListFilesArgs) -> ToolResult:
    start, shown = await asyncio.to_thread(_start, host, args.path or None)
    pattern = args.pattern or "**/*"
    _glob_matcher(pattern)  # a bad pattern is the model's error, at once
    stop = threading.Event()
    try:
        # In a worker thread: a walk of a large tree never holds the event loop.
        found = await asyncio.to_thread(_walk_matching, host, start, pattern, stop)
    finally:
        stop.set()
    if not found:
        return ToolResult(f"no files match '{pattern}' in '{shown}'")
    found.sort()
    body = "\n".join(found[:MAX_LIST_ENTRIES])
    if len(found) > MAX_LIST_ENTRIES:
        body += (
            f"\n[... listing cut: showing {MAX_LIST_ENTRIES:,} of {len(found):,} files; "
            "narrow it with pattern or path ...]"
        )
    return ToolResult(cap_output(body))


async def _grep(host: ToolHost, args: GrepArgs) -> ToolResult:
    pattern = args.pattern
    glob = args.glob or None
    mode = args.output_mode or "content"
    offset = args.offset or 0
    limit = args.limit or MAX_GREP_MATCHES
    # Content pages through matches; files and count need every match to list or count them.
    wanted = offset + limit if mode == "content" else MAX_GREP_SCAN
    output = command_output_file(args.path) if args.path else None
    buffers: dict[str, str] = {}
    if output is not None:
        # A command's output file (tools/background.py): searched alone, from its own folder.
        shown = str(output)
        base = output.parent
        found = await ripgrep.search(
            output.parent, output.name, pattern, case_insensitive=args.case_insensitive is True,
            max_matches=wanted, max_file_bytes=SPILL_BYTES + 1)
    else:
        start, shown = await asyncio.to_thread(_start, host, args.path or None)
        base = host.root
        buffers = _open_buffers(host, start, _glob_matcher(glob) if glob else None)
        found = await ripgrep.search(
            host.root, workspace_fs.relative_to_root(host.root, start), pattern,
            case_insensitive=args.case_insensitive is True, glob=glob, buffers=buffers,
            max_matches=wanted, max_file_bytes=MAX_GREP_FILE_BYTES,
        )
    notes = [note for note in (found.stopped,) if note]
    if not found.matches:
        return ToolResult("\n".join([f"no matches for {pattern!r} in '{shown}'", *(f"[{n}]" for n in notes)]))
    more = "" if found.complete else " or more"
    if mode == "content":
        page = found.matches[offset : offset + limit]
        total = found.total
        before = args.before if not isinstance(args.before, UnsetType) else (args.context or 0)
        after = args.after if not isinstance(args.after, UnsetType) else (args.context or 0)
        if before or after:
            lines = await asyncio.to_thread(_with_context, base, buffers, page, before, after)
        else:
            lines = [f"{m.path}:{m.line}: {_short(m.text)}" for m in page]
        unit = "matches"
    else:
        counts: dict[str, int] = {}
        for match in found.matches:
            counts[match.path] = counts.get(match.path, 0) + 1
        entries = [path if mode == "files" else f"{path}: {n}" for path, n in counts.items()]
        page_entries = entries[offset : offset + limit]
        lines, total, unit = page_entries, len(entries), "files"
        if found.total > len(found.matches):
            notes.append(f"only the first {len(found.matches):,} of {found.total:,}{more} matches were looked at; "
                         "narrow it with path or glob")
            more = " or more"
    if not lines:
        return ToolResult(f"offset {offset} is past the last of the {total:,} {unit}; use a smaller offset")
    body = "\n".join(lines)
    shown_end = offset + (len(page) if mode == "content" else len(page_entries))
    if shown_end < total:
        body += (
            f"\n[showing {unit} {offset + 1}-{shown_end} of {total:,}{more}; "
            f"pass offset={shown_end} to continue, or narrow it with path, glob or a more specific pattern]"
        )
    for note in notes:
        body += f"\n[{note}]"
    return ToolResult(cap_output(body))


def _short(text: str) -> str:
    line = text.rstrip("\r")
    return line[:MAX_GREP_LINE_CHARS] + "..." if len(line) > MAX_GREP_LINE_CHARS else line


def _with_context(base: Path, buffers: dict[str, str], matches: list[ripgrep.Match], before: int,
                  after: int) -> list[str]:
    """Matches with `before`/`after` lines around them, as grep -C prints them: 'path:N: match',
    'path-N- context', '--' between groups. The files are read beneath the root (workspace_fs)."""
    texts: dict[str, list[str]] = {}
    out: list[str] = []
    last: tuple[str, int] | None = None
    hits = {(m.path, m.line) for m in matches}
    for match in matches:
        if match.path not in texts:
            if match.path in buffers:
                texts[match.path] = buffers[match.path].split("\n")
            else:
                try:
                    data = workspace_fs.read_bytes(base, match.path, max_bytes=MAX_GREP_FILE_BYTES)
                    texts[match.path] = data.decode("utf-8", "replace").split("\n")
                except OSError:
                    texts[match.path] = []
        lines = texts[match.path]
        first = max(match.line - before, 1)
        if last is not None and last[0] == match.path and first <= last[1] + 1:
            first = last[1] + 1
        elif last is not None:
            out.append("--")
        end = min(match.line + after, len(lines)) if lines else match.line
        for n in range(first, max(end, match.line) + 1):
            if (match.path, n) in hits or n == match.line:
                out.append(f"{match.path}:{n}: {_short(lines[n - 1] if n <= len(lines) else match.text)}")
            elif n <= len(lines):
                out.append(f"{match.path}-{n}- {_short(lines[n - 1])}")
        last = (match.path, max(end, match.line, last[1] if last and last[0] == match.path else 0))
    return out


def _open_buffers(host: ToolHost, start: Path, matches: Any) -> dict[str, str]:
    """The editor's open buffers under `start` (root-relative path -> text): searched instead of the disk."""
    listing = getattr(host, "open_documents", None)
    if listing is None:
        return {}
    base = start if start.is_dir() else start.parent
    out: dict[str, str] = {}
    for path, text in listing():
        try:
            rel_base = Path(path).relative_to(base).as_posix()
        except ValueError:
            continue
        if start != base and Path(path) != start:
            continue
        if matches is not None and not matches(rel_base):
            continue
        out[workspace_relative(host.root, Path(path))] = text
    return out


_SKIP_DOC = "Directories such as .git, node_modules, .venv and __pycache__ are skipped."

_LIST_PATTERN_DOC = "Glob matched against paths relative to `path`. Default '**/*' (everything)."
_GREP_GLOB_DOC = "Only search files whose path relative to `path` matches this glob, e.g. '*.py' or 'src/**/*.ts'."


class ListFilesArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Annotated[str, Meta(description=_LIST_PATTERN_DOC)] | UnsetType = UNSET
    path: Annotated[str, Meta(description="Directory to list, relative to the workspace root. Default: the root.")] | UnsetType = UNSET


class GrepArgs(msgspec.Struct, forbid_unknown_fields=True):
    pattern: Annotated[str, Meta(description="Regular expression (ripgrep / Rust regex syntax).")]
    path: Annotated[
        str, Meta(description="File or directory to search, relative to the workspace root. Default: the root.")
    ] | UnsetType = UNSET
    glob: Annotated[str, Meta(description=_GREP_GLOB_DOC)] | UnsetType = UNSET
    case_insensitive: Annotated[bool, Meta(description="Ignore case. Default false.")] | UnsetType = UNSET
    output_mode: Annotated[
        Literal["content", "files", "count"],
        Meta(description="content: the matching lines (default); files: only the paths of files that match; "
                         "count: each file's number of matching lines."),
    ] | UnsetType = UNSET
    context: Annotated[int, Meta(ge=0, le=MAX_GREP_CONTEXT, description="Lines shown before and after each match (content mode).")] | UnsetType = UNSET
    before: Annotated[int, Meta(ge=0, le=MAX_GREP_CONTEXT, description="Lines shown before each match; overrides context.")] | UnsetType = UNSET
    after: Annotated[int, Meta(ge=0, le=MAX_GREP_CONTEXT, description="Lines shown after each match; overrides context.")] | UnsetType = UNSET
    offset: Annotated[int, Meta(ge=0, le=MAX_GREP_OFFSET, description="Skip this many results (matches, or files): the 'continue' note says which.")] | UnsetType = UNSET
    limit: Annotated[int, Meta(ge=1, le=MAX_GREP_MATCHES, description=f"At most this many results. Default {MAX_GREP_MATCHES}.")] | UnsetType = UNSET


LIST_FILES = Tool(
    name="list_files",
    description=(
        "List files in the workspace whose path matches a glob pattern, as sorted paths relative "
        "to the workspace root. '**' matches any number of directories, '*' any part of a name, "
        "'{a,b}' alternatives; a pattern without '/' (such as '*.py') matches file names at any "
        f"depth. {_SKIP_DOC} At most {MAX_LIST_ENTRIES:,} entries are shown."
    ),
    arguments=ListFilesArgs,
    run=_list_files,
    summary=lambda args: f"list {args.get('pattern') or '**/*'} in {args.get('path') or '.'}",
    read_only=True,
)

GREP = Tool(
    name="grep",
    description=(
        "Search file contents with a regular expression (ripgrep's Rust syntax: no look-around or "
        "backreferences), line by line; files ignored by .gitignore are skipped. Output lines look "
        "like 'path:line: text' (path relative to the workspace root, line numbers from 1). Open "
        f"editor buffers are searched with their unsaved text. {_SKIP_DOC} Binary files are "
        f"skipped. At most {MAX_GREP_MATCHES} matches are shown; a note says the offset to continue "
        "at. context/before/after add lines around each match ('path-N- text'); output_mode "
        "'files' lists only the matching files, 'count' each file's number of matches."
    ),
    arguments=GrepArgs,
    run=_grep,
    summary=lambda args: f"grep {args.get('pattern', '')!r}",
    read_only=True,
)
