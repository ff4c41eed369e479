"""Core behaviour in-process: the service (server/service.py) driven through the same command
glue the server runs (server/commands/), with the real HTTP fake provider and real files in the
test's SHIRO_NEKO_HOME, and no subprocess (tests/support/service.py::service_harness). What only
an editor or the wire shows stays end to end in tests/lsp, tests/acp and tests/clients."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from tests.fake_provider import FakeProvider
from tests.support.service import ServiceHarness, service_harness


@pytest_asyncio.fixture
async def harness(shiro_home: Path, fake: FakeProvider, workspace: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[ServiceHarness]:
    # The settings file the terminal and ACP front ends read: this test's, as server_env does.
    monkeypatch.setenv("SHIRO_NEKO_CONFIG", str(shiro_home.parent / "user-settings.json"))
    async with service_harness(fake, shiro_home, workspace) as h:
        yield h
