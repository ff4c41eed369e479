"""Reasoning effort for a session: shiro.effort."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import protocol as wire
from ..agent.status import emit_status
from ..config import EFFORTS
from ..errors import InvalidArguments
from ..protocol import EffortArgs, EffortResult
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.EFFORT, EffortArgs)
    async def effort(ls: "ShiroServer", args: EffortArgs) -> EffortResult:
        service = ls.service
        session = service.session_for(args.sessionId, args.workspace)
        if args.effort == "default":
            service.efforts.pop(session.id, None)
        elif args.effort is not None:
            chosen = next((e for e in EFFORTS if e == args.effort.strip().lower()), None)
            if chosen is None:
                raise InvalidArguments(
                    f"unknown effort {args.effort!r}: use one of {', '.join(EFFORTS)}, or \"default\" for the "
                    "reasoningEffort setting")
            service.efforts[session.id] = chosen
        settings = service.settings_for(session.id)
        if args.effort is not None:
            emit_status(session)
        return EffortResult(effort=settings.reasoningEffort, model=settings.effective_model)
