"""State files that are not files: a FIFO or a link to /dev/zero where a session, memory, trust
or settings file should be. Each is read without blocking or filling the memory, moved aside,
and the command answers (state/atomic.read_state_file)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.state.trust import TrustStore
from shiro_neko.state.atomic import DamagedFile, read_state_file
from shiro_neko.state.memory.store import ProjectMemory
from shiro_neko.state.paths import memory_file, workspace_key
from shiro_neko.state.session_store import SessionStore
from shiro_neko.user_settings import load_user_settings

SESSION_ID = "01a23445-bc6a-7749-9a42-8440c0af82c4"


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _zero(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


BAD = {"fifo": _fifo, "link to /dev/zero": _zero}


async def _answers(op: Callable[[], Any], bad: Path) -> Any:
    """`op`'s result, which must come within 10 s; a reader stuck on the FIFO is let go after."""
    try:
        return await asyncio.wait_for(asyncio.to_thread(op), 10)
    finally:
        for candidate in [bad, *bad.parent.glob(bad.name + ".damaged-*")]:
            try:  # a reader blocked in open() on a FIFO returns once a writer comes and goes
                os.close(os.open(candidate, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass


def _moved_aside(bad: Path) -> None:
    assert not os.path.lexists(bad), f"{bad} was left where it was"
    assert list(bad.parent.glob(bad.name + ".damaged-*")), "no copy aside"


@pytest.mark.parametrize("kind", BAD)
async def test_a_session_file_that_is_not_a_file(tmp_path: Path, kind: str) -> None:
    home, root = tmp_path / "home", tmp_path / "ws"
    root.mkdir()
    bad = BAD[kind](home / "sessions" / f"{SESSION_ID}.json")
    store = SessionStore(home)
    assert await _answers(lambda: store.list(root), bad) == []
    _moved_aside(bad)


@pytest.mark.parametrize("kind", BAD)
async def test_a_memory_file_that_is_not_a_file(tmp_path: Path, kind: str) -> None:
    root = tmp_path / "ws"
    bad = BAD[kind](memory_file(tmp_path / "home", workspace_key(root)))
    assert await _answers(lambda: ProjectMemory(bad).entries(), bad) == []
    _moved_aside(bad)


@pytest.mark.parametrize("name", ["trust.json", "mcp-trust.json"])  # the record, and the one it carries over
@pytest.mark.parametrize("kind", BAD)
async def test_a_trust_record_that_is_not_a_file(tmp_path: Path, kind: str, name: str) -> None:
    home = tmp_path / "home"
    bad = BAD[kind](home / name)
    assert await _answers(lambda: TrustStore(home).lookup("k", tmp_path / "ws")(".mcp.json", "0" * 64), bad) is None
    _moved_aside(bad)


@pytest.mark.parametrize("kind", BAD)
async def test_a_settings_file_that_is_not_a_file(tmp_path: Path, kind: str, monkeypatch: pytest.MonkeyPatch) -> None:
    bad = BAD[kind](tmp_path / "settings.json")
    monkeypatch.setenv("SHIRO_NEKO_CONFIG", str(bad))
    loaded = await _answers(lambda: load_user_settings(tmp_path / "ws"), bad)
    assert loaded is not None


def test_an_oversized_state_file_is_damaged_and_a_good_one_is_read(tmp_path: Path) -> None:
    good, big = tmp_path / "good.json", tmp_path / "big.json"
    good.write_bytes(b"{}")
    big.write_bytes(b" " * 5000)
    data, st = read_state_file(good, 4096) or (b"", None)
    assert data == b"{}" and st is not None
    with pytest.raises(DamagedFile, match="over the"):
        read_state_file(big, 4096)
    assert read_state_file(tmp_path / "missing.json") is None
