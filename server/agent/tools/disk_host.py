"""A ToolHost without an editor: reads and writes the files on disk.

The language server falls back to it when the client cannot apply edits, and the unit tests use
it directly. Writes go through `state/atomic.write_atomic` (temp file, fsync, rename), so a crash
or a concurrent reader never sees half a file.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ...state.atomic import write_atomic


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once at import (os.umask can only be read by setting it): a new file gets the mode any
# ordinary file creation would give it.
NEW_FILE_MODE = 0o666 & ~_umask()


class DiskToolHost:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def open_document_text(self, path: Path) -> str | None:
        return None  # no editor, so no buffers

    async def editor_text(self, path: Path) -> str | None:
        return self.open_document_text(path)  # subclasses with buffers in memory answer at once

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        write_atomically(Path(path), new_text)
        return True  # nobody to ask, so never rejected


def write_atomically(path: Path, text: str) -> None:
    """Replace `path`'s content with `text` (UTF-8, newlines as given), keeping its mode."""
    # Writing through a link must change the target, not replace the link with a plain file.
    target = Path(os.path.realpath(path))
    try:
        mode = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = NEW_FILE_MODE
    write_atomic(target, text.encode("utf-8"), mode=mode)
