"""Saved sessions, tidied: shiro.renameSession, shiro.deleteSession, shiro.exportSession
(search is shiro.sessions {query}, commands/saved_sessions.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import (
    DeleteSessionResult,
    ExportSessionArgs,
    ExportSessionResult,
    RenameSessionArgs,
    RenameSessionResult,
    SessionIdArgs,
)
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    service = server.service

    @command(server, wire.RENAME_SESSION, RenameSessionArgs)
    async def rename_session(ls: "ShiroServer", args: RenameSessionArgs) -> RenameSessionResult:
        return await service.session_admin.rename(service.workspaces.pick(args.workspace), args.id, args.title)

    @command(server, wire.DELETE_SESSION, SessionIdArgs)
    async def delete_session(ls: "ShiroServer", args: SessionIdArgs) -> DeleteSessionResult:
        return await service.session_admin.delete(service.workspaces.pick(args.workspace), args.id)

    @command(server, wire.EXPORT_SESSION, ExportSessionArgs)
    async def export_session(ls: "ShiroServer", args: ExportSessionArgs) -> ExportSessionResult:
        return await service.session_admin.export(service.workspaces.pick(args.workspace), args.id)
