"""Reasoning effort for a session: shiro.effort."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import EffortArgs, EffortResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.EFFORT, EffortArgs)
    async def effort(ls: "ShiroServer", args: EffortArgs) -> EffortResult:
        service = ls.service
        return service.set_effort(service.session_for(args.sessionId, args.workspace), args.effort)
