"""The images of every session, one file each under `<home>/images/` (docs/state-files.md).

A file is named by the SHA-256 of its bytes and its format's extension, so the same screenshot
pasted twice, or kept by a fork of its session, is one file, and a session record only names it
(model/transcript.py `ImageRef`). Bounded: past `MAX_TOTAL_BYTES` the least recently written
files go first; a session whose image went that way shows and sends a line saying so.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import threading
from pathlib import Path
from typing import Callable

from .atomic import read_state_file, write_atomic

log = logging.getLogger("shiro_neko.state")

#: All images together; the oldest are deleted past it (a few hundred screenshots).
MAX_TOTAL_BYTES = 256 * 1024 * 1024
#: One image as stored (agent/images.py keeps them far smaller).
MAX_FILE_BYTES = 16 * 1024 * 1024
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
# Only names this store made are ever opened: a record names a file, and a record is a file a
# hand or another program may have edited ("../../.ssh/id_rsa" is no image name).
_NAME = re.compile(r"[0-9a-f]{64}\.(png|jpg|gif|webp)")


class ImageStore:
    def __init__(self, home: Callable[[], Path]) -> None:
        self._home = home
        self._lock = threading.Lock()  # put and prune from worker threads

    @property
    def directory(self) -> Path:
        return self._home() / "images"

    def put(self, data: bytes, media_type: str) -> str:
        """Store `data` (already checked and downscaled) and return its name. Blocking: call in a thread."""
        name = f"{hashlib.sha256(data).hexdigest()}.{EXTENSIONS[media_type]}"
        path = self.directory / name
        with self._lock:
            if path.exists():
                os.utime(path)  # written again: the newest, last to be pruned
                return name
            write_atomic(path, data)
            self._prune(keep=name)
        return name

    def get(self, name: str) -> bytes | None:
        """The bytes of `name`; None when the name is not one of ours or the file is gone. Blocking."""
        if not _NAME.fullmatch(name):
            return None
        try:
            found = read_state_file(self.directory / name, MAX_FILE_BYTES)
        except OSError as exc:
            log.warning("image %s unreadable: %s", name, exc)
            return None
        return None if found is None else found[0]

    def _prune(self, keep: str) -> None:
        entries: list[tuple[float, int, Path]] = []
        with os.scandir(self.directory) as scan:
            for entry in scan:
                if _NAME.fullmatch(entry.name) and entry.is_file(follow_symlinks=False):
                    st = entry.stat(follow_symlinks=False)
                    entries.append((st.st_mtime, st.st_size, Path(entry.path)))
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= MAX_TOTAL_BYTES:
                break
            if path.name == keep:
                continue
            try:
                path.unlink()
                total -= size
            except OSError:
                pass
