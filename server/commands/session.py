"""shiro.newSession, shiro.status, shiro.history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import protocol as wire
from ..protocol import HistoryResult, NewSessionArgs, NewSessionResult, SessionArgs, WorkspaceArgs
from . import command

if TYPE_CHECKING:
    from ..lsp import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.NEW_SESSION, NewSessionArgs)
    async def new_session(ls: "ShiroServer", args: NewSessionArgs) -> NewSessionResult:
        return ls.service.new_session_command(args.workspace, args.private)

    @command(server, wire.STATUS, SessionArgs)
    async def status(ls: "ShiroServer", args: SessionArgs) -> dict[str, Any]:
        return ls.service.status(args)

    @command(server, wire.HISTORY, WorkspaceArgs)
    async def history(ls: "ShiroServer", args: WorkspaceArgs) -> HistoryResult:
        prompts = await ls.service.history.load(ls.service.workspaces.pick(args.workspace))
        return HistoryResult(prompts=prompts)
