"""Fixtures every test folder shares. The helpers themselves live in tests/support (see
docs/architecture.md, "Writing a test"): `fake` is the real HTTP fake provider of
tests/fake_provider.py, `workspace` a folder with one file in the test's tmp_path."""

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
