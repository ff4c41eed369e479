"""Workspaces: every folder of `workspaceFolders` is one, with its own key, state and file boundary.

Without folders, `rootUri`, else the server's working directory (docs/protocol.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from .errors import InvalidArguments, Refused
from .state.paths import workspace_key

if TYPE_CHECKING:
    from .agent.session import AgentSession


def uri_to_path(uri: str) -> Path:
    # The stdlib rather than pygls' helper: the service stays free of pygls.
    parts = urlsplit(uri)
    if parts.scheme != "file" or not parts.path:
        raise InvalidArguments(f"workspace {uri!r} is not a file URI")
    if os.name == "nt":  # drive letters; urllib.request costs http.client and email to import
        from urllib.request import url2pathname

        return Path(url2pathname(parts.path))
    return Path(unquote(parts.path))  # what url2pathname does on POSIX


@dataclass
class Workspace:
    root: Path
    key: str
    current: "AgentSession | None" = None

    @property
    def uri(self) -> str:
        return self.root.as_uri()


class Workspaces:
    def __init__(self) -> None:
        self._by_root: dict[Path, Workspace] = {}

    def set_folders(self, roots: list[Path]) -> None:
        """Replace the folder list, keeping state of folders that stay."""
        kept: dict[Path, Workspace] = {}
        for root in roots:
            resolved = root.resolve()
            kept[resolved] = self._by_root.get(resolved) or Workspace(resolved, workspace_key(resolved))
        self._by_root = kept

    def add(self, root: Path) -> None:
        resolved = root.resolve()
        self._by_root.setdefault(resolved, Workspace(resolved, workspace_key(resolved)))

    def remove(self, root: Path) -> None:
        self._by_root.pop(root.resolve(), None)

    def all(self) -> list[Workspace]:
        return list(self._by_root.values())

    def pick(self, uri: str | None) -> Workspace:
        """The folder a command names, else the first one."""
        if not self._by_root:
            self.add(Path.cwd())
        if uri is None:
            return next(iter(self._by_root.values()))
        root = uri_to_path(uri).resolve()
        found = self._by_root.get(root)
        if found is None:
            known = ", ".join(w.uri for w in self._by_root.values())
            raise Refused(f"{uri} is not a workspace folder of this server (folders: {known})")
        return found
