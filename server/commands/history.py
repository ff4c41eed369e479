"""Prompt history: shiro.history."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import HistoryResult, WorkspaceArgs
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.HISTORY, WorkspaceArgs)
    async def history(ls: "ShiroServer", args: WorkspaceArgs) -> HistoryResult:
        return await ls.service.history.load(ls.service.workspaces.pick(args.workspace))
