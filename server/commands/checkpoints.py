"""Checkpoints and rewind: shiro.checkpoints, shiro.rewind, shiro.turnDiff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..protocol import CheckpointsResult, RewindArgs, RewindResult, SessionArgs, TurnDiffArgs, TurnDiffResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.CHECKPOINTS, SessionArgs)
    async def checkpoints(ls: "ShiroServer", args: SessionArgs) -> CheckpointsResult:
        return await ls.service.checkpoints.list(ls.service.session_for(args.sessionId, args.workspace))

    @command(server, wire.REWIND, RewindArgs)
    async def rewind(ls: "ShiroServer", args: RewindArgs) -> RewindResult:
        return await ls.service.checkpoints.rewind(ls.service.session_for(args.sessionId, args.workspace), args)

    @command(server, wire.TURN_DIFF, TurnDiffArgs)
    async def turn_diff(ls: "ShiroServer", args: TurnDiffArgs) -> TurnDiffResult:
        return await ls.service.checkpoints.turn_diff(ls.service.session_for(args.sessionId, args.workspace), args)
