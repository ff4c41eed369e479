"""File access for the tools in an ACP editor: `fs/read_text_file` and `fs/write_text_file`.

When the client offers them, the agent reads the editor's buffers (unsaved edits included) and
its edits land in the editor; otherwise the disk, as the plain `DiskToolHost` does. Every write
also leaves its whole-file diff for the sink, which shows it as the call's diff content.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Awaitable, Callable

from ..service import DiskToolHost, read_workspace_text, workspace_path

if TYPE_CHECKING:
    from acp.interfaces import Client

log = logging.getLogger(__name__)


@dataclass
class Editor:
    """The connected editor: its connection, once there, and what it said it can do."""

    client: "Client | None" = None
    can_read: bool = False
    can_write: bool = False
    # Awaited before a request to the editor: the updates sent so far go first, so the editor
    # has seen the tool call before it is asked for a file (the sink's drain).
    before_request: "Callable[[], Awaitable[None]] | None" = None

    async def settle(self) -> None:
        if self.before_request is not None:
            await self.before_request()

Diff = tuple[str, str | None, str]  # absolute path, old text (None for a new file), new text


class AcpToolHost(DiskToolHost):
    def __init__(self, root: Path, session_id: str, editor: Editor) -> None:
        super().__init__(root)
        self.session_id = session_id
        self.editor = editor
        self._diffs: dict[str, Diff] = {}
        self._last_read: tuple[str, str] | None = None  # (path, text) of the latest editor read

    async def editor_text(self, path: Path) -> str | None:
        client = self.editor.client
        if not self.editor.can_read or client is None or not path.is_file():
            return None  # a missing file is the disk's clear error, not the editor's
        await self.editor.settle()
        try:
            answer = await client.read_text_file(session_id=self.session_id, path=str(path))
        except Exception as exc:  # the editor could not read it: the disk still can
            log.info("fs/read_text_file %s failed (%s); reading the disk", path, exc)
            return None
        # An edit writes what it planned from this text: its diff's old side needs no second read.
        self._last_read = (str(path), answer.content)
        return answer.content

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        old_text = None if create else await self._old_text(path)
        client = self.editor.client
        if self.editor.can_write and client is not None:
            # The editor writes it (its buffer follows, with undo); an error is the editor saying no.
            await self.editor.settle()
            try:
                await client.write_text_file(session_id=self.session_id, path=str(path), content=new_text)
            except Exception as exc:
                log.warning("fs/write_text_file %s failed: %s", path, exc)
                return False
        else:
            await super().apply_text(path, new_text, create=create)
        self._diffs[str(path)] = (str(path), old_text, new_text)
        return True

    async def _old_text(self, path: Path) -> str | None:
        last, self._last_read = self._last_read, None
        if last is not None and last[0] == str(path):
            return last[1]  # the text this edit was planned from, read a moment ago
        text = await self.editor_text(path)
        if text is not None:
            return text
        return read_workspace_text(self.root, path)

    def take_diff(self, path: str) -> Diff | None:
        """The diff of the last write to `path` (as the model gave it), once."""
        absolute = workspace_path(self.root, path)
        return self._diffs.pop(str(absolute), None) if absolute is not None else None
