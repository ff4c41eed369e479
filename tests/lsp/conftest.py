"""End-to-end harness: the real server over stdio (pytest-lsp), a real HTTP fake provider, real
files in a temporary SHIRO_NEKO_HOME and workspace. The server reads the client's capabilities only
to decide how an edit reaches the files (lsp/bridge.py: applyEdit, file creation), so a test marked
`every_client` runs with VS Code's and Neovim's capabilities and the others with VS Code's.
"""

from __future__ import annotations

from pathlib import Path
from typing import AsyncIterator

import pytest
import pytest_asyncio

from tests.fake_provider import FakeProvider
from tests.support.lsp import CLIENTS, Harness, start_server, stop


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "capabilities" in metafunc.fixturenames and metafunc.definition.get_closest_marker("every_client"):
        metafunc.parametrize("capabilities", CLIENTS, indirect=True)


@pytest.fixture
def capabilities(request: pytest.FixtureRequest) -> str:
    return getattr(request, "param", CLIENTS[0])


@pytest_asyncio.fixture
async def harness(tmp_path: Path, fake: FakeProvider, workspace: Path, capabilities: str) -> AsyncIterator[Harness]:
    h = await start_server(tmp_path, fake, workspace, capabilities)
    yield h
    await stop(h)
