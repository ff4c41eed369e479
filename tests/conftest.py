"""Fixtures every test folder shares. The helpers themselves live in tests/support (see
docs/architecture.md, "Writing a test"): `fake` is the real HTTP fake provider of
tests/fake_provider.py, `workspace` a folder with one file in the test's tmp_path, `shiro_home`
the test's SHIRO_NEKO_HOME for code run in the test's own process."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fake_provider import FakeProvider


@pytest.fixture
def fake() -> Iterator[FakeProvider]:
    """A started fake provider (script it with `fake.script(...)`), stopped after the test."""
    with FakeProvider() as provider:
        yield provider


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "workspace"
    root.mkdir()
    (root / "hello.py").write_text("print('hello')\n")
    return root


@pytest.fixture
def shiro_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """SHIRO_NEKO_HOME for this test, and an environment that names no real endpoint or model
    (a server started as a subprocess gets its environment from `server_env` instead)."""
    path = tmp_path / "home"
    monkeypatch.setenv("SHIRO_NEKO_HOME", str(path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    for name in ("OPENAI_BASE_URL", "SHIRO_MODEL"):
        monkeypatch.delenv(name, raising=False)
    return path
