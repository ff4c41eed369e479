"""shiro.chat and shiro.abort: prompts into the session's turn queue, and out of it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcRequestCancelled

from .. import protocol as wire
from ..protocol import AbortResult, ChatArgs, ChatResult, SessionArgs
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.CHAT, ChatArgs)
    async def chat(ls: "ShiroServer", args: ChatArgs) -> ChatResult:
        session, item = ls.service.submit_chat(args)
        request_id = ls.protocol.msg_id
        ls.chat_requests[request_id] = (session.id, item.turn_id)
        try:
            outcome = await asyncio.shield(item.done)
        except asyncio.CancelledError:
            # Shutdown or a cancelled request: the turn ends on its own; answer, never hang.
            raise JsonRpcRequestCancelled(f"{wire.CHAT} was cancelled") from None
        finally:
            ls.chat_requests.pop(request_id, None)
        return ChatResult(session.id, item.turn_id, outcome.status, outcome.text, outcome.error, outcome.refused)

    @command(server, wire.ABORT, SessionArgs)
    async def abort(ls: "ShiroServer", args: SessionArgs) -> AbortResult:
        return ls.service.abort(args)
