"""The one walk of a workspace's files: the agent's `list_files`/`grep` and the terminal client's
@path completion see the same files (tooling state such as .git or node_modules skipped)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterator

# Directories that are tooling state, never what the user means by "the code".
SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".jj",
        "node_modules", "bower_components",
        ".venv", "venv", ".tox", ".nox", ".eggs",
        "__pycache__", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis",
        ".cache", ".next", ".nuxt", ".turbo", ".parcel-cache", ".gradle", ".idea", ".vs",
    }
)


def _skipped(name: str) -> bool:
    return name in SKIP_DIRS or name.endswith(".egg-info")


def walk_files(start: Path) -> Iterator[Path]:
    """Every file below `start` (links to files included, linked directories not followed)."""
    if start.is_file():
        yield start
        return
    # Skipping applies below the start only: asking for node_modules/x by name still works.
    for dirpath, dirnames, filenames in os.walk(start, onerror=lambda _err: None):
        dirnames[:] = sorted(d for d in dirnames if not _skipped(d))
        for name in sorted(filenames):
            yield Path(dirpath) / name
