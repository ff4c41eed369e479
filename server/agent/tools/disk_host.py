"""A ToolHost without an editor: reads and writes the files on disk.

The language server falls back to it when the client cannot apply edits, and the unit tests use
it directly. Writes go through `agent/workspace_fs.write_bytes` (temp file, fsync, rename inside the
directory opened beneath the root), so a crash or a concurrent reader never sees half a file and a
swapped link never sends the content outside.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from .. import workspace_fs


# Kept for the modules that imported it from here; the mode lives with the writer now.
NEW_FILE_MODE = workspace_fs.NEW_FILE_MODE


class DiskToolHost:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def open_document_text(self, path: Path) -> str | None:
        return None  # no editor, so no buffers

    def open_documents(self) -> list[tuple[Path, str]]:
        """Every open buffer (path, text): grep searches these instead of their files."""
        return []

    async def editor_text(self, path: Path) -> str | None:
        return self.open_document_text(path)  # subclasses with buffers in memory answer at once

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        await asyncio.to_thread(write_atomically, Path(path), new_text, self.root)
        return True  # nobody to ask, so never rejected


def write_atomically(path: Path, text: str, root: Path) -> None:
    """Replace `path`'s content with `text` (UTF-8, newlines as given), keeping its mode.

    Through `agent/workspace_fs.py`: the temp file is created and renamed inside the directory
    opened beneath `root`, so neither a link nor a directory swapped for one during the write can
    put the content outside. Writing through a link inside changes its target."""
    workspace_fs.write_bytes(root, path, text.encode("utf-8"))
