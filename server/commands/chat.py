"""shiro.chat and shiro.abort: prompts into the session's turn queue, and out of it."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcRequestCancelled

from .. import protocol as wire
from ..agent.turns import QueuedPrompt
from ..protocol import AbortResult, ChatArgs, ChatResult, SessionArgs
from . import command

if TYPE_CHECKING:
    from ..lsp.server import ShiroServer


def register(server: "ShiroServer") -> None:
    @command(server, wire.CHAT, ChatArgs)
    async def chat(ls: "ShiroServer", args: ChatArgs) -> ChatResult:
        session, item = await ls.service.submit_prompt(args)
        if not args.wait:
            # The client follows the turn by its events and its `turn_end`; `$/cancelRequest` of
            # this request has nothing left to cancel (shiro.abort does).
            item.done.add_done_callback(lambda _: _end_if_never_started(ls, session.id, item))
            return ChatResult(session.id, item.turn_id, "started", "")
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


def _end_if_never_started(ls: "ShiroServer", session_id: str, item: QueuedPrompt) -> None:
    """A `wait: false` prompt cleared from the queue (shiro.abort) never ran, so its loop never
    sent a `turn_end`: this one tells the client that waits for it."""
    if item.started or item.done.cancelled():
        return
    outcome = item.done.result()
    ls.sink.event(wire.TurnEndEvent(sessionId=session_id, turnId=item.turn_id, status=outcome.status,
                                    text=outcome.text, error=outcome.error))
