"""Plan mode: shiro.setMode (agent/plan_mode.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import SetModeArgs, SetModeResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.SET_MODE, SetModeArgs)
    async def set_mode(ls: "ShiroServer", args: SetModeArgs) -> SetModeResult:
        service = ls.service
        return service.set_mode(service.session_for(args.sessionId, args.workspace), args.mode, args.approvals)
