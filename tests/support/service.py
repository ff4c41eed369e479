"""A `ShiroService` without LSP, for the service and feature tests (tests/unit/test_service.py,
tests/unit/test_features_*.py): events in a `ListSink`, files through `DiskToolHost`, MCP trust
questions answered "no", the provider the real HTTP fake, state in the test's SHIRO_NEKO_HOME."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from shiro_neko.agent.events import ListSink
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.protocol import ChatArgs
from shiro_neko.service import ShiroService
from tests.fake_provider import FakeProvider


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
async def running_service(fake: FakeProvider, *roots: Path, **settings: Any) -> AsyncIterator[ShiroService]:
    """A service on `roots` talking to `fake`; stopped at the end (turns ended, leases released).

    Request the `shiro_home` fixture first (the service reads SHIRO_NEKO_HOME as it starts). Call
    `await service.flush(...)` inside the block to test the shutdown lines."""
    service = ShiroService(DiskBridge())
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

