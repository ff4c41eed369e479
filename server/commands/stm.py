"""shiro.stm and shiro.stmClear: short-term memory as the next turn would see it, and curation."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import SessionArgs, StmClearResult, StmResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    service = server.service
    feature = service.short_term_memory

    @command(server, wire.STM, SessionArgs)
    async def stm(ls: "ShiroServer", args: SessionArgs) -> StmResult:
        return await feature.show(service.session_for(args.sessionId, args.workspace))

    @command(server, wire.STM_CLEAR, SessionArgs)
    async def stm_clear(ls: "ShiroServer", args: SessionArgs) -> StmClearResult:
        # Any session's memory may be cleared by id (the user curates what other sessions see),
        # open on this server or not.
        session_id = args.sessionId or service.session_for(None, args.workspace).id
        return await feature.clear(session_id)
