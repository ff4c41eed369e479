"""The workspace's current session: shiro.newSession, shiro.status, shiro.compact."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import CompactArgs, CompactResult, NewSessionArgs, NewSessionResult, SessionArgs, StatusPayload
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.NEW_SESSION, NewSessionArgs)
    async def new_session(ls: "ShiroServer", args: NewSessionArgs) -> NewSessionResult:
        return ls.service.new_session_command(args.workspace, args.private)

    @command(server, wire.STATUS, SessionArgs)
    async def status(ls: "ShiroServer", args: SessionArgs) -> StatusPayload:
        return ls.service.status(args)

    @command(server, wire.COMPACT, CompactArgs)
    async def compact(ls: "ShiroServer", args: CompactArgs) -> CompactResult:
        return await ls.service.compaction.compact(args)
