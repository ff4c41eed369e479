"""A ToolHost without an editor: reads and writes the files on disk.

The language server falls back to it when the client cannot apply edits, and the unit tests use
it directly. Writes are atomic (a temporary file in the same directory, fsync, rename) so a crash
or a concurrent reader never sees half a file.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path


class DiskToolHost:
    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    def open_document_text(self, path: Path) -> str | None:
        return None  # no editor, so no buffers

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        write_atomically(Path(path), new_text)
        return True  # nobody to ask, so never rejected


def write_atomically(path: Path, text: str) -> None:
    """Replace `path`'s content with `text` (UTF-8, newlines as given), keeping its mode."""
    # Writing through a link must change the target, not replace the link with a plain file.
    target = Path(os.path.realpath(path))
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode: int | None = stat.S_IMODE(target.stat().st_mode)
    except FileNotFoundError:
        mode = None
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    # O_EXCL: never clobber a stranger's file; 0o666 lets the umask decide a new file's mode,
    # as it would for any ordinary file creation.
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    # The rename is durable only once the directory entry is; not every platform allows this.
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
