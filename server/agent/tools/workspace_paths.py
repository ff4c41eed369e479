"""Turn a path the model wrote into a real path inside the workspace, or refuse it.

The model may write paths relative to the workspace root or absolute. Every file tool goes through
`resolve_workspace_path` so that `..`, absolute paths elsewhere and symbolic links that lead out of
the workspace are refused in one place, with a message the model can act on.
"""

from __future__ import annotations

import os
from pathlib import Path

from .base import ToolError


def _inside(path: str, root: str) -> bool:
    # Compare whole components: "/work/ab" is not inside "/work/a".
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _outside_message(raw: str, root: str) -> str:
    return f"path '{raw}' is outside the workspace {root}; file tools only work inside it"


def resolve_workspace_path(root: Path, raw: str) -> Path:
    """The path `raw` names, with symbolic links resolved, spelled under `root`.

    Raises ToolError when the path (or what its links point to) lies outside the workspace.
    The result keeps `root`'s own spelling (the editor knows the workspace by that name, even when
    the root itself is reached through a link); every part below the root is resolved.
    """
    if "\x00" in raw:
        raise ToolError(f"path {raw!r} contains a NUL character")
    root_abs = os.path.abspath(root)
    try:
        root_real = os.path.realpath(root_abs)
    except (OSError, RuntimeError) as exc:  # pragma: no cover - a broken root is the host's bug
        raise ToolError(f"the workspace root {root} cannot be resolved: {exc}") from exc

    # Lexical check first: catches `../x` and absolute paths elsewhere without touching the disk,
    # and lets the symlink check below say specifically that a link is to blame.
    # "~/x" means the home directory to the model, as in a shell; expanding it makes the refusal
    # say "outside the workspace" instead of a puzzling "not found".
    written = os.path.expanduser(raw) if raw == "~" or raw.startswith("~/") else raw
    lexical = os.path.normpath(os.path.join(root_abs, written))
    if not (_inside(lexical, root_abs) or _inside(lexical, root_real)):
        raise ToolError(_outside_message(raw, root_abs))

    try:
        # realpath resolves every existing link (a linked parent directory included); a missing
        # tail is kept as written, so new files can be checked before they exist.
        resolved = os.path.realpath(lexical)
    except (OSError, RuntimeError) as exc:
        raise ToolError(f"path '{raw}' cannot be resolved: {exc}") from exc
    if not _inside(resolved, root_real):
        raise ToolError(
            f"path '{raw}' leads through a symbolic link to {resolved}, which is outside the "
            f"workspace {root_abs}; file tools only work inside it"
        )
    rel = os.path.relpath(resolved, root_real)
    return Path(root_abs) if rel == "." else Path(root_abs) / rel


def workspace_relative(root: Path, path: Path) -> str:
    """`path` as the model should see it: relative to the root, with forward slashes."""
    try:
        rel = Path(os.path.abspath(path)).relative_to(os.path.abspath(root))
    except ValueError:
        return path.as_posix()
    text = rel.as_posix()
    return text if text else "."
