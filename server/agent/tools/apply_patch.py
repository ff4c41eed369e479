"""apply_patch: Codex's patch format, offered instead of edit_file to the model families trained on
it (agent/model_family.py "codex"; the swap is in service.py `tools_for`).

    *** Begin Patch
    *** Add File: path          (every following line starts with '+')
    *** Delete File: path
    *** Update File: path
    *** Move to: new/path       (optional, right after Update File)
    @@ optional context line    (one or more chunks; ' ' context, '-' removed, '+' added)
    *** End of File             (optional: the chunk ends at the file's end)
    *** End Patch

All or none: every file's new text is computed and checked first; nothing is written while any
part is refused. Each chunk's old lines are found through edit_file's matcher
(tools/edit_match.py), so the same stages and the same "exactly one place" rule hold.

A chunk's `@@ <line>` (several stacked: nested) is an anchor, as git's hunk header names the
function a hunk is in: the chunk must then match exactly once among the places that start in the
anchor line's scope (the lines after it up to the next line as little indented that starts a
declaration, that line included: git's section heading is the last such line before a hunk).
Text repeated elsewhere in the file is then no ambiguity. Nothing matching in scope, the chunk
is looked for in the whole file as edit_file would (the anchor only narrows). Found at several
places, the patch's order decides as in Codex (`_locate`): the one place after the previous
chunk, or for a chunk closed by `*** End of File` the place that ends the file. A git-style
`@@ -12,7 +12,8 @@ def f` header is read the same way. Context and removed lines that carry
read_file's `<number><TAB>` prefixes (all of them, numbered consecutively) lose them, the
context lines on both sides of the change, so no number is ever written into the file. Paths pass
the same workspace guard as the file tools; git metadata (`.git`) is refused outright.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import Meta

from .. import workspace_fs
from . import seen_files
from .arguments import check_arguments
from .base import Tool, ToolError, ToolHost, ToolResult
from .edit_match import Ambiguous, NotFound, Planned, anchor_key, plan_edit, strip_line_numbers, width
from .files import editor_or_disk_text
from .workspace_paths import resolve_workspace_path, workspace_relative

_BEGIN, _END = "*** Begin Patch", "*** End Patch"
_ADD, _DELETE, _UPDATE, _MOVE = "*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "
_EOF = "*** End of File"
# A patch bigger than this is not an edit a model should send in one call.
MAX_PATCH_CHARS = 2_000_000
# An anchor matching more lines than this names no place (and scoping each would be quadratic).
MAX_ANCHOR_LINES = 100
_GIT_RANGE = re.compile(r"^\s*-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@")
# Where an anchor's scope ends: a line starting a declaration (git's default section heading).
_DECLARATION = re.compile(r"[A-Za-z_$]")


@dataclass
class _Chunk:
    anchors: list[str] = field(default_factory=list)
    rows: list[tuple[str, str]] = field(default_factory=list)  # (' ', '-' or '+', the line)
    at_end: bool = False  # '*** End of File' closed it: its old lines end the file

    @property
    def old(self) -> list[str]:
        return [text for mark, text in self.rows if mark != "+"]

    @property
    def new(self) -> list[str]:
        return [text for mark, text in self.rows if mark != "-"]

    def unnumbered(self) -> _Chunk:
        """The chunk without read_file's prefixes on its context and removed lines (and on its
        added lines only when every one carries one)."""
        added = [text for mark, text in self.rows if mark == "+"]
        plus = strip_line_numbers("\n".join(added)) is not None if added else False
        rows = [(mark, text if mark == "+" and not plus else strip_line_numbers(text) or "")
                for mark, text in self.rows]
        return _Chunk(self.anchors, rows, self.at_end)


def _anchor(row: str) -> str:
    """The line an '@@' row names ('' for none), a git-style range taken off."""
    return _GIT_RANGE.sub("", row[2:], count=1).strip()


@dataclass
class _Op:
    kind: str  # add | delete | update
    path: str
    move_to: str | None = None
    added: list[str] = field(default_factory=list)
    chunks: list[_Chunk] = field(default_factory=list)


def parse_patch(text: str) -> list[_Op]:
    lines = text.strip().replace("\r\n", "\n").split("\n")
    if not lines or lines[0].strip() != _BEGIN:
        raise ToolError(f"the patch must start with '{_BEGIN}'")
    if lines[-1].strip() != _END:
        raise ToolError(f"the patch must end with '{_END}'")
    ops: list[_Op] = []
    body = lines[1:-1]
    i = 0
    while i < len(body):
        line = body[i]
        if line.startswith(_ADD):
            op = _Op("add", line[len(_ADD):].strip())
            i += 1
            while i < len(body) and not body[i].startswith("*** "):
                if not body[i].startswith("+"):
                    raise ToolError(f"line {i + 2}: every line of an added file starts with '+': {body[i][:80]!r}")
                op.added.append(body[i][1:])
                i += 1
            ops.append(op)
        elif line.startswith(_DELETE):
            ops.append(_Op("delete", line[len(_DELETE):].strip()))
            i += 1
        elif line.startswith(_UPDATE):
            op = _Op("update", line[len(_UPDATE):].strip())
            i += 1
            if i < len(body) and body[i].startswith(_MOVE):
                op.move_to = body[i][len(_MOVE):].strip()
                i += 1
            chunk: _Chunk | None = None
            while i < len(body) and (not body[i].startswith("*** ") or body[i].strip() == _EOF):
                row = body[i]
                if row.startswith("@@"):
                    anchor = _anchor(row)
                    if chunk is None or chunk.rows:
                        chunk = _Chunk()
                        op.chunks.append(chunk)
                    if anchor:  # '@@ class A' then '@@ def f': nested, one chunk
                        chunk.anchors.append(anchor)
                    i += 1
                    continue
                if chunk is None:
                    chunk = _Chunk()
                    op.chunks.append(chunk)
                if row.strip() == _EOF:
                    chunk.at_end = True
                elif row[:1] in ("+", "-", " "):
                    chunk.rows.append((row[:1], row[1:]))
                elif row == "":
                    chunk.rows.append((" ", ""))
                else:
                    raise ToolError(f"line {i + 2}: a changed file's line starts with ' ', '-' or '+': {row[:80]!r}")
                i += 1
            op.chunks = [c for c in op.chunks if c.rows]
            if not op.chunks and op.move_to is None:
                raise ToolError(f"'*** Update File: {op.path}' has no changes")
            ops.append(op)
        elif not line.strip():
            i += 1
        else:
            raise ToolError(
                f"line {i + 2}: expected '*** Add File: ', '*** Delete File: ' or '*** Update File: ', got {line[:80]!r}"
            )
    if not ops:
        raise ToolError("the patch changes nothing")
    return ops


def _guard(host: ToolHost, raw: str) -> tuple[Path, str]:
    if not raw:
        raise ToolError("a file header names no path")
    path = resolve_workspace_path(host.root, raw)
    shown = workspace_relative(host.root, path)
    if ".git" in Path(shown).parts:
        raise ToolError(f"'{shown}' is git metadata; apply_patch never writes inside .git")
    return path, shown


def _block(lines: list[str], at: int) -> range:
    """The anchor line's scope: the lines after it up to the next line indented no deeper that
    starts a declaration, that line included."""
    depth = width(lines[at])
    end = at + 1
    while end < len(lines):
        line = lines[end]
        end += 1
        if line.strip() and width(line) <= depth and _DECLARATION.match(line.lstrip()):
            break
    return range(at + 1, end)


def anchor_scope(lines: list[str], anchors: list[str], shown: str) -> frozenset[int] | None:
    """The 0-based lines a chunk may start on after its anchors (None: no anchor or none found).
    An anchor matches a line equal to it (spaces around and typographic quotes aside), else the
    lines that start with it (a function named without its arguments)."""
    region: frozenset[int] | None = None
    for anchor in anchors:
        want = anchor_key(anchor)
        candidates = sorted(region) if region is not None else range(len(lines))
        keys = {i: anchor_key(lines[i]) for i in candidates}
        hits = [i for i, k in keys.items() if k == want] or [i for i, k in keys.items() if k.startswith(want)]
        if not hits:
            return None
        if len(hits) > MAX_ANCHOR_LINES:
            raise ToolError(f"'@@ {anchor}' matches {len(hits)} lines of '{shown}'; "
                            "anchor on a line that occurs once, such as the function's header")
        region = frozenset(j for i in hits for j in _block(lines, i))
    return region


@dataclass
class _Planned:
    writes: dict[Path, str | None]  # the new text, None: delete
    shown: dict[Path, str]
    lines: list[str]


async def _exists(host: ToolHost, path: Path) -> bool:
    if host.open_document_text(path) is not None:
        return True
    try:
        await asyncio.to_thread(workspace_fs.stat, host.root, path)
    except FileNotFoundError:
        return False
    return True


async def plan_patch(host: ToolHost, text: str) -> _Planned:
    if len(text) > MAX_PATCH_CHARS:
        raise ToolError(f"the patch is over {MAX_PATCH_CHARS:,} characters; split it into several calls")
    planned = _Planned({}, {}, [])
    for op in parse_patch(text):
        path, shown = _guard(host, op.path)
        if path in planned.writes:
            raise ToolError(f"'{shown}' appears twice in the patch; change each file in one section")
        planned.shown[path] = shown
        if op.kind == "add":
            if await _exists(host, path):
                raise ToolError(f"'{shown}' already exists; use '*** Update File: {op.path}' to change it")
            planned.writes[path] = "\n".join(op.added) + "\n"
            planned.lines.append(f"A {shown}")
            continue
        current = await editor_or_disk_text(host, path, shown)
        if op.kind == "delete":
            planned.writes[path] = None
            planned.lines.append(f"D {shown}")
            continue
        after = 0  # the 0-based line after the previous chunk's change
        for index, chunk in enumerate(op.chunks):
            if not chunk.old:
                raise ToolError(f"'{shown}', chunk {index + 1}: it has no context or removed lines to find it by")
            if strip_line_numbers("\n".join(chunk.old)) is not None and "\n".join(chunk.old) not in current:
                chunk = chunk.unnumbered()
            old, new = "\n".join(chunk.old) + "\n", "\n".join(chunk.new) + "\n" if chunk.new else ""
            try:
                scope = anchor_scope(current.split("\n"), chunk.anchors, shown)
                try:
                    done = _locate(current, old, new, shown, scope, chunk, after)
                except NotFound:
                    if scope is None:
                        raise
                    scope = None  # nothing in the anchor's scope: the whole file, as edit_file
                    done = _locate(current, old, new, shown, None, chunk, after)
                current, after = done.text, done.first_line - 1 + done.new_lines
            except Ambiguous as exc:
                # replace_all is edit_file's; a patch says which place by its '@@' line.
                anchor = (f" (within '@@ {chunk.anchors[-1]}')" if scope is not None
                          else ", or start the chunk with '@@ <the header line of the function or class it is in>'")
                raise ToolError(f"'{shown}', chunk {index + 1}: {exc.where}; include more context lines"
                                + anchor) from None
            except ToolError as exc:
                raise ToolError(f"'{shown}', chunk {index + 1}: {exc}") from None
        if op.move_to:
            target, target_shown = _guard(host, op.move_to)
            if target != path and await _exists(host, target):
                raise ToolError(f"cannot move '{shown}' to '{target_shown}': it already exists")
            planned.writes[path] = None
            planned.writes[target] = current
            planned.shown[target] = target_shown
            planned.lines.append(f"R {shown} -> {target_shown}")
        else:
            planned.writes[path] = current
            planned.lines.append(f"M {shown}")
    return planned


def _locate(text: str, old: str, new: str, shown: str, scope: frozenset[int] | None, chunk: _Chunk,
            after: int) -> Planned:
    """One chunk planned in `text`. Found at several places, the patch's own order decides, as in
    Codex: a chunk closed by '*** End of File' is the one that ends the file, any other the one
    place after the previous chunk's change (chunks come in file order). Still several: Ambiguous."""
    try:
        return plan_edit(text, old, new, shown=shown, starts=scope)
    except Ambiguous as several:
        lines = text.count("\n") + 1
        if chunk.at_end:
            # The old lines end the file, with or without its last newline.
            size = old.count("\n")
            later = frozenset(i for i in (lines - 1 - size, lines - size) if i >= 0)
        else:
            later = frozenset(range(after, lines))
        if scope is not None:
            later &= scope
        try:
            return plan_edit(text, old, new, shown=shown, starts=later)
        except NotFound:
            raise several from None


async def _apply_patch(host: ToolHost, args: ApplyPatchArgs) -> ToolResult:
    planned = await plan_patch(host, args.input)
    for path, new_text in planned.writes.items():
        if new_text is None:
            continue
        create = not await _exists(host, path)
        if create:
            await asyncio.to_thread(workspace_fs.make_dirs, host.root, path.parent)
        if not await host.apply_text(path, new_text, create=create):
            return ToolResult(f"the user rejected the change to '{planned.shown[path]}'; "
                              "files before it in the patch were written", is_error=True)
        seen_files.remember(host, path, new_text)
    for path, new_text in planned.writes.items():
        if new_text is None:
            await asyncio.to_thread(workspace_fs.unlink, host.root, path)
    return ToolResult("applied the patch:\n" + "\n".join(planned.lines))


async def _changes(host: ToolHost, args: dict[str, Any]) -> list[tuple[Path, str | None]]:
    """Every file as the patch would leave it (None: deleted), for the approval's diff."""
    try:
        planned = await plan_patch(host, check_arguments(ApplyPatchArgs, args, "apply_patch").input)
    except (ToolError, OSError):
        return []
    return list(planned.writes.items())


async def _preview(host: ToolHost, args: dict[str, Any]) -> tuple[Path, str] | None:
    """The first written file as the patch would leave it (an editor opens one proposed file)."""
    return next(((p, t) for p, t in await _changes(host, args) if t is not None), None)


class ApplyPatchArgs(msgspec.Struct, forbid_unknown_fields=True):
    input: Annotated[str, Meta(description="The whole patch, from '*** Begin Patch' to '*** End Patch'.")]


def patch_paths(text: object) -> list[str]:
    """The paths a patch names (added, deleted, updated, moved to), as written, from its headers
    alone: for what knows an edit by its paths (checkpoints, ACP locations), valid patch or not."""
    if not isinstance(text, str):
        return []
    found = [line.split(": ", 1)[1].strip() for line in text.splitlines()
             if line.startswith(("*** Add File: ", "*** Delete File: ", "*** Update File: ", "*** Move to: "))]
    return list(dict.fromkeys(p for p in found if p))


def written_paths(tool_name: str, tool_input: object) -> list[str]:
    """The files a write tool's call names, as written: `path` of write_file and edit_file, every
    file of an apply_patch; [] for any other call."""
    if not isinstance(tool_input, dict):
        return []
    if tool_name == "apply_patch":
        return patch_paths(tool_input.get("input"))
    path = tool_input.get("path")
    return [path] if tool_name in ("write_file", "edit_file") and isinstance(path, str) else []


def _summary(args: dict[str, Any]) -> str:
    text = args.get("input")
    if not isinstance(text, str):
        return "apply a patch"
    files = patch_paths(text)
    return "patch " + ", ".join(files[:10]) + (" …" if len(files) > 10 else "")


APPLY_PATCH = Tool(
    name="apply_patch",
    description=(
        "Change files with a patch: '*** Begin Patch', then for each file '*** Add File: <path>' "
        "(its lines each prefixed '+'), '*** Delete File: <path>', or '*** Update File: <path>' "
        "(optionally '*** Move to: <new path>') followed by chunks, each starting with '@@' "
        "(optionally followed by the header line of the function or class the change is in: the "
        "chunk is then looked for there, so text repeated elsewhere is no ambiguity), with ' ' context lines, '-' "
        "removed lines and '+' added lines (3 lines of context around each change); "
        "'*** End Patch' last. Paths relative to the workspace root. All or nothing: if any part "
        "does not apply, nothing is written. The user may reject the change."
    ),
    arguments=ApplyPatchArgs,
    run=_apply_patch,
    approval="edit",
    preview=_preview,
    changes=_changes,
    summary=_summary,
)
