"""The scripted provider for loop tests, and a live session over a temp folder.

`ScriptedProvider` answers each request with the next reply of its list (an exception is
raised instead), streaming text (and refusals) word by word; it keeps every request it was sent. Use it where
a test drives `AgentSession` directly; tests through the server use the HTTP fake (`fake`).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path

from shiro_neko.agent.events import EventSink
from tests.support.sink import ListSink
from shiro_neko.agent.provider.base import Completed, OutputStarted, Provider, ProviderEvent, ProviderRequest, RefusalDelta, TextDelta, Usage
from shiro_neko.agent.loop import run_turn
from shiro_neko.agent.session import AgentSession, SessionDeps
from shiro_neko.agent.tools.base import Tool
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import core_tools
from shiro_neko.config import Settings
from shiro_neko.model.session_state import SessionState
from shiro_neko.model.transcript import AssistantMessage, Message, TextPart


class ScriptedProvider:
    name = "scripted"

    def __init__(self, *replies: AssistantMessage | Exception, delay: float = 0.0) -> None:
        self.replies = list(replies)
        self.requests: list[ProviderRequest] = []
        self.delay = delay  # seconds before each streamed word

    async def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]:
        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        yield OutputStarted()
        for part in reply.content:
            if isinstance(part, TextPart):
                for word in part.text.split(" "):
                    await asyncio.sleep(self.delay)
                    yield RefusalDelta(word + " ") if part.refusal else TextDelta(word + " ")
        yield Completed(reply, Usage(10, 2))


def make_session(
    root: Path,
    provider: Provider | ScriptedProvider | None = None,
    sink: EventSink | None = None,
    settings: Settings | None = None,
    *,
    session_id: str = "s1",
    messages: list[Message] | None = None,
    tools: Callable[[AgentSession], list[Tool]] = lambda s: core_tools(),
) -> AgentSession:
    """A session on `root` with the core tools on disk; without a provider it cannot run a turn."""
    chosen = settings or Settings(model="test-model")
    deps = SessionDeps(
        settings=lambda: chosen,
        sink=sink if sink is not None else ListSink(),
        host=DiskToolHost(root),
        provider=lambda s: provider,  # type: ignore[arg-type, return-value]
        run_turn=run_turn,
        tools=tools,
    )
    state = SessionState(id=session_id, cwd=str(root), messages=messages if messages is not None else [])
    return AgentSession(state, deps)
