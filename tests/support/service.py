"""A `ShiroService` without LSP, for the service and feature tests (tests/unit/test_service.py,
tests/unit/test_features_*.py, tests/core/): events in a `ListSink`, files through `DiskToolHost`, MCP trust
questions answered "no", the provider the real HTTP fake, state in the test's SHIRO_NEKO_HOME."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.support.sink import ListSink
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.protocol import ChatArgs, plain
from shiro_neko.service import ShiroService
from tests.fake_provider import FakeProvider
from tests.support.waits import EventWaits


class DiskBridge:
    """The editor side of the service when there is no editor."""

    def __init__(self) -> None:
        self.sink = ListSink()
        self.questions: list[str] = []

    def host_for(self, root: Path, session_id: str) -> DiskToolHost:
        return DiskToolHost(root)

    async def ask(self, message: str, actions: list[str]) -> str | None:
        self.questions.append(message)
        return None


@asynccontextmanager
async def running_service(
    fake: FakeProvider, *roots: Path, bridge: DiskBridge | None = None, **settings: Any
) -> AsyncIterator[ShiroService]:
    """A service on `roots` talking to `fake`; stopped at the end (turns ended, leases released).

    Request the `shiro_home` fixture first (the service reads SHIRO_NEKO_HOME as it starts). Call
    `await service.flush(...)` inside the block to test the shutdown lines."""
    service = ShiroService(bridge or DiskBridge())
    service.update_settings({"baseUrl": fake.base_url, "model": "fake-model", **settings})
    service.workspaces.set_folders(list(roots))
    try:
        yield service
    finally:
        await service.stop()
        await service.flush(lambda line: None)


async def chat(service: ShiroService, prompt: str, **args: Any) -> Any:
    """One prompt through `submit_chat`, awaited to its end: (session, outcome)."""
    session, queued = service.submit_chat(ChatArgs(prompt=prompt, **args))
    return session, await queued.done



class _CommandServer:
    """What `commands.register_all` registers on: here it only keeps each handler by name."""

    def __init__(self, service: ShiroService) -> None:
        self.service = service  # some modules take it as they register
        self.handlers: dict[str, Callable[..., Awaitable[Any]]] = {}
        # register_all orders pygls's command dict (server/commands/__init__.py); here there is none.
        self.protocol = SimpleNamespace(fm=SimpleNamespace(_commands={}))

    def command(self, name: str) -> Callable[[Callable[..., Awaitable[Any]]], Callable[..., Awaitable[Any]]]:
        def keep(handler: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            self.handlers[name] = handler
            return handler

        return keep


class _Ls:
    """The part of `lsp.server.ShiroServer` the command glue (server/commands/) reads."""

    def __init__(self, service: ShiroService, sink: ListSink) -> None:
        self.service = service
        self.sink = sink
        self.chat_requests: dict[Any, tuple[str, str]] = {}
        self.protocol = SimpleNamespace(msg_id=None)

    async def settings_ready(self) -> None:
        return None


@dataclass
class ServiceHarness(EventWaits):
    """The `harness` of tests/lsp without the subprocess: the same commands (server/commands/,
    decoded and answered as on the wire), the real service and fake provider, events as the
    server would send them (plain dicts). For core behaviour; what only an editor shows (LSP
    framing, dialogs, edits through the editor) stays in tests/lsp."""

    service: ShiroService
    fake: FakeProvider
    home: Path
    root: Path
    handlers: dict[str, Callable[..., Awaitable[Any]]]
    ls: _Ls

    @property
    def sink(self) -> ListSink:
        return self.ls.sink

    @property
    def events(self) -> list[dict[str, Any]]:
        return self.sink.events

    @property
    def asked(self) -> list[str]:
        """What the user was asked: approvals (their summaries) and the service's questions."""
        bridge = self.service.bridge
        return [summary for _, summary in self.sink.asked] + list(getattr(bridge, "questions", []))

    @property
    def todos(self) -> list[dict[str, Any]]:
        return self.sink.todo_updates

    @property
    def statuses(self) -> list[dict[str, Any]]:
        return self.sink.statuses

    async def close(self) -> None:
        """Set by `start_service_harness`."""

    async def command(self, name: str, *arguments: Any) -> Any:
        return plain(await self.handlers[name](self.ls, *arguments))

    async def chat(self, prompt: str, **extra: Any) -> dict[str, Any]:
        return await self.command("shiro.chat", {"prompt": prompt, **extra})

    def start_chat(self, prompt: str, **extra: Any) -> asyncio.Future[Any]:
        return asyncio.ensure_future(self.chat(prompt, **extra))


@asynccontextmanager
async def service_harness(
    fake: FakeProvider, home: Path, root: Path, folders: list[Path] | None = None, **settings: Any
) -> AsyncIterator[ServiceHarness]:
    """A `ServiceHarness` on `folders` (default `[root]`), state in `home`: the `shiro_home`
    fixture's SHIRO_NEKO_HOME (request it first). Settings as a client's initializationOptions;
    the model is the server's default unless given. Stopped at the end as `shutdown` does."""
    from shiro_neko.commands import register_all

    bridge = DiskBridge()
    settings.setdefault("model", None)  # as tests/lsp's servers: no model set, the default one
    async with running_service(fake, *(folders or [root]), bridge=bridge, **settings) as service:
        server = _CommandServer(service)
        register_all(server)  # type: ignore[arg-type]
        yield ServiceHarness(service, fake, home, root, server.handlers, _Ls(service, bridge.sink))


async def start_service_harness(fake: FakeProvider, home: Path, root: Path, **kw: Any) -> ServiceHarness:
    """`service_harness` for a test that starts and stops several in turn: `await h.close()`."""
    stack = AsyncExitStack()
    h = await stack.enter_async_context(service_harness(fake, home, root, **kw))
    h.close = stack.aclose  # type: ignore[method-assign]
    return h
