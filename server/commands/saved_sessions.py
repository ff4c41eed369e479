"""Sessions on disk: shiro.sessions, shiro.resume, shiro.save."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import ResumeArgs, ResumeResult, SaveResult, SessionArgs, SessionsArgs, SessionsResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    service = server.service

    @command(server, wire.SESSIONS, SessionsArgs)
    async def sessions(ls: "ShiroServer", args: SessionsArgs) -> SessionsResult:
        workspace = service.workspaces.pick(args.workspace)
        if args.query is not None and args.query.strip():
            return await service.session_admin.search(workspace, args.query, args.limit)
        return await service.persistence.list_saved(workspace, args.limit)

    @command(server, wire.RESUME, ResumeArgs)
    async def resume(ls: "ShiroServer", args: ResumeArgs) -> ResumeResult:
        return await service.persistence.resume(service.workspaces.pick(args.workspace), args.id, args.latest, args.fork)

    @command(server, wire.SAVE, SessionArgs)
    async def save(ls: "ShiroServer", args: SessionArgs) -> SaveResult:
        return await service.persistence.save_command(service.session_for(args.sessionId, args.workspace))
