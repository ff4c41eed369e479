"""A workspace's git metadata (`.git`): what the sandbox mounts read-only and which edits always ask.

Why it is special: git runs programs that `.git/config` names (`core.fsmonitor`, `core.pager`,
aliases, filters) and the hooks in `.git/hooks`, and it runs them at the user's next `git status`,
outside any sandbox. A change there is code execution on the user's machine, later, so a
sandboxed command may not make it (the sandbox binds these paths read-only, `read_only_git_paths`)
and an edit tool may not make it without a yes, whatever the approval mode
(`git_metadata_reason`, used by agent/tool_calls.py). The checkpoints do not record `.git`
(docs/checkpoints.md), so nothing could take such a change back.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from .base import ToolError
from .workspace_paths import resolve_workspace_path

GIT = ".git"
# The first bytes of a gitfile (a worktree's or a submodule's `.git` file): "gitdir: <path>".
_GITFILE_PREFIX = b"gitdir:"
_GITFILE_MAX = 4096


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _gitfile_dirs(gitfile: str) -> list[str]:
    """The repository a gitfile points to, and its common directory (a worktree's shares the main
    repository's config and hooks), both resolved; [] when it is not a readable gitfile."""
    try:
        with open(gitfile, "rb") as f:
            head = f.read(_GITFILE_MAX)
    except OSError:
        return []
    if not head.startswith(_GITFILE_PREFIX):
        return []
    target = head[len(_GITFILE_PREFIX):].strip().decode("utf-8", "replace")
    gitdir = os.path.realpath(os.path.join(os.path.dirname(gitfile), target))
    found = [gitdir]
    try:
        with open(os.path.join(gitdir, "commondir"), "rb") as f:
            common = f.read(_GITFILE_MAX).strip().decode("utf-8", "replace")
        found.append(os.path.realpath(os.path.join(gitdir, common)))
    except OSError:
        pass
    return found


def _metadata_of(directory: str) -> list[str]:
    """`directory/.git` (a repository or a gitfile) and, for a gitfile, where it points."""
    path = os.path.join(directory, GIT)
    if not os.path.lexists(path):
        return []
    real = os.path.realpath(path)
    found = [real]
    if os.path.isfile(real):
        found += _gitfile_dirs(real)
    return found


def read_only_git_paths(root: str) -> list[str]:
    """Every git metadata path inside the workspace `root` (resolved) that a sandboxed command must
    not change: the root's `.git` (directory or gitfile), where a gitfile points when that is inside
    the workspace (a worktree or a `.bare` layout), and the same for each folder directly below the
    root (nested repositories one level down). Deeper nested repositories are not looked for: the
    walk runs before every command and must stay a few system calls (docs/security.md says so)."""
    root = os.path.realpath(root)
    found = _metadata_of(root)
    try:
        with os.scandir(root) as entries:
            children = [e.path for e in entries if e.name != GIT and e.is_dir(follow_symlinks=False)]
    except OSError:
        children = []
    for child in children:
        found += _metadata_of(child)
    seen: dict[str, None] = {}
    for path in found:
        if path != root and _within(path, root) and os.path.exists(path):
            seen.setdefault(path, None)
    return list(seen)


def _names_git(parts: tuple[str, ...]) -> bool:
    # Case-folded: on a case-insensitive file system (macOS, a casefold ext4 folder) `.GIT` is `.git`.
    return any(part.casefold() == GIT for part in parts)


_BARE_PARTS = ("HEAD", "objects", "refs")


def _bare_repository_part(path: str, root: str) -> str | None:
    """The folder (relative) that writing `path` helps make a bare repository, or None.

    git takes a folder holding `HEAD`, `objects/` and `refs/` for a repository of its own (no `.git`
    in any name: `docs/HEAD`, `docs/config`, ...), and runs what its `config` names when the user
    or a git-aware shell prompt is in it. Asked: a write of one of those parts, or of `config`, into
    a folder that (with this write) holds `HEAD` and `objects/` or `refs/`."""
    if not _within(path, root) or path == root:
        return None
    rel = os.path.relpath(path, root).split(os.sep)
    for depth in range(len(rel)):
        folder = os.path.join(root, *rel[:depth])
        part = rel[depth]
        if part not in (*_BARE_PARTS, "config"):
            continue
        present = {name for name in _BARE_PARTS if os.path.lexists(os.path.join(folder, name))} | {part}
        if "HEAD" in present and present & {"objects", "refs"}:
            return os.path.relpath(folder, root) if folder != root else "the workspace root"
    return None


def git_metadata_reason(root: Path, raw: object) -> str | None:
    """Why writing the path `raw` (an edit tool's `path` argument) touches git metadata, or None.

    Robust to spelling: the path is compared once as written (normalised: `./.git/config`,
    `sub/../.git/hooks/x`) and once resolved (a symlink in the workspace leading into `.git`);
    any `.git` component counts (a nested repository's too, or a new one being made), in any
    case; and a path inside the repository a root gitfile points to counts too."""
    if not isinstance(raw, str):
        return None
    try:
        return _reason(root, raw)
    except (OSError, ValueError):
        # The path cannot be resolved right now (a folder swapped for a link while we look:
        # realpath's readlink fails with EINVAL): asked, never waved through, never a failed turn.
        return "where it leads could not be checked for git metadata (.git), which git runs programs from"


def _reason(root: Path, raw: str) -> str | None:
    root_abs = os.path.abspath(root)
    lexical = os.path.normpath(os.path.join(root_abs, raw))
    candidates = [os.path.relpath(lexical, root_abs)]
    try:
        resolved = str(resolve_workspace_path(root, raw))
    except (ToolError, OSError, ValueError):
        resolved = None  # refused by the tool itself; the lexical form still decides
    if resolved is not None:
        candidates.append(os.path.relpath(os.path.realpath(resolved), os.path.realpath(root_abs)))
    for rel in candidates:
        if _names_git(Path(rel).parts):
            return "it changes git metadata (.git), which git runs programs from outside any sandbox"
    bare = _bare_repository_part(os.path.realpath(resolved) if resolved is not None else lexical, os.path.realpath(root_abs))
    if bare:
        return f"it makes {bare} a git repository (HEAD, objects, refs), which git runs programs from"
    if resolved is not None:
        real = os.path.realpath(resolved)
        for gitdir in read_only_git_paths(root_abs):
            if _within(real, gitdir):
                return "it changes git metadata (where .git points), which git runs programs from outside any sandbox"
    return None


# The submodules of the last index read: (index path, mtime_ns, size, inode) -> the folders.
_gitlink_cache: dict[tuple[str, int, int, int], list[str]] = {}
_GITLINK_TIMEOUT = 5.0


def submodule_dirs(root: str) -> list[str]:
    """The folders the root repository records as submodules (gitlinks), at any depth, resolved.

    git at the root recurses into each populated submodule (`git status` runs git inside it, with
    that repository's own config): a command that planted a repository there, or moved one aside
    and made another, would run a program at the user's next `git status`. Read from the index by
    `git ls-files --stage` with the repository's own programs off (`core.fsmonitor=false`; it
    refreshes nothing and runs no hook), once per index change."""
    root = os.path.realpath(root)
    dot_git = os.path.join(root, GIT)
    gitdir = dot_git if os.path.isdir(dot_git) else next(iter(_gitfile_dirs(dot_git)), "")
    index = os.path.join(gitdir, "index") if gitdir else ""
    try:
        st = os.stat(index) if index else None
    except OSError:
        st = None
    if st is None:
        return []
    key = (index, st.st_mtime_ns, st.st_size, st.st_ino)
    if key not in _gitlink_cache:
        env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
        env.update(GIT_DIR=gitdir, GIT_CONFIG_NOSYSTEM="1", LC_ALL="C")
        try:
            done = subprocess.run(
                ["git", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false", "ls-files", "--stage", "-z"],
                cwd=root, env=env, capture_output=True, timeout=_GITLINK_TIMEOUT, check=False,
            )
            listed = done.stdout.split(b"\0") if done.returncode == 0 else []
        except (OSError, subprocess.TimeoutExpired):
            listed = []
        found = []
        for entry in listed:
            meta, _, name = entry.partition(b"\t")
            if meta.startswith(b"160000 ") and name:
                found.append(os.path.join(root, os.fsdecode(name)))
        _gitlink_cache.clear()  # one workspace's at a time is plenty; never grows
        _gitlink_cache[key] = found
    return list(_gitlink_cache[key])


def git_mount_args(root: str) -> list[str]:
    """bubblewrap arguments that keep a sandboxed command off git metadata (after the workspace's
    own `--bind`): each nested repository's folder (one level down, and every submodule at any
    depth) becomes a mount point of its own, so it cannot be moved aside and replaced by a planted
    one; an empty, uninitialised submodule folder is read-only, so no repository can be made in it;
    then every metadata path is read-only (`read_only_git_paths`, and each submodule's `.git`)."""
    root = os.path.realpath(root)
    nested: dict[str, None] = {}
    try:
        with os.scandir(root) as entries:
            for e in entries:
                if e.name != GIT and e.is_dir(follow_symlinks=False) and os.path.lexists(os.path.join(e.path, GIT)):
                    nested.setdefault(e.path, None)
    except OSError:
        pass
    for folder in submodule_dirs(root):
        nested.setdefault(folder, None)
    args: list[str] = []
    metadata = read_only_git_paths(root)
    for folder in sorted(nested, key=lambda f: f.count("/")):  # outer folders first
        if os.path.islink(folder) or not os.path.isdir(folder) or not _within(folder, root) or folder == root:
            continue
        populated = os.path.lexists(os.path.join(folder, GIT))
        args += ["--bind" if populated else "--ro-bind", folder, folder]
        metadata += [m for m in _metadata_of(folder) if _within(m, root) and os.path.exists(m)]
    for path in dict.fromkeys(metadata):
        args += ["--ro-bind", path, path]
    return args
