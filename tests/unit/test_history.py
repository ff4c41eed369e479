"""Prompt history: cap, dedup against the previous entry, corrupt files, two processes appending."""

from __future__ import annotations

import json
import logging
import multiprocessing
from pathlib import Path

import pytest

from shiro_neko.state import atomic
from shiro_neko.state.history import CAP, PromptHistory
from shiro_neko.state.paths import history_file, workspace_key

SPAWN = multiprocessing.get_context("spawn")


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(atomic, "_warned", set())


@pytest.fixture
def key(tmp_path: Path) -> str:
    return workspace_key(tmp_path)


def test_add_and_load_newest_last(tmp_path: Path, key: str) -> None:
    history = PromptHistory(tmp_path, key)
    assert history.load() == []
    for prompt in ("first", "second\nwith a newline", "third"):
        history.add(prompt)
    assert history.load() == ["first", "second\nwith a newline", "third"]
    path = history_file(tmp_path, key)
    assert json.loads(path.read_bytes()) == history.load()
    assert PromptHistory(tmp_path, key).load() == history.load()


def test_dedup_against_previous_entry_only(tmp_path: Path, key: str) -> None:
    history = PromptHistory(tmp_path, key)
    for prompt in ("a", "a", "b", "a", "a", "   ", ""):
        history.add(prompt)
    assert history.load() == ["a", "b", "a"]


def test_cap_keeps_the_newest(tmp_path: Path, key: str) -> None:
    history = PromptHistory(tmp_path, key)
    for i in range(CAP + 37):
        history.add(f"p{i}")
    assert CAP == 200
    assert history.load() == [f"p{i}" for i in range(37, CAP + 37)]
    assert len(json.loads(history_file(tmp_path, key).read_bytes())) == CAP


def test_workspaces_have_separate_histories(tmp_path: Path) -> None:
    PromptHistory(tmp_path, "a" * 16).add("in a")
    PromptHistory(tmp_path, "b" * 16).add("in b")
    assert PromptHistory(tmp_path, "a" * 16).load() == ["in a"]
    assert PromptHistory(tmp_path, "b" * 16).load() == ["in b"]


@pytest.mark.parametrize("bad", [b"", b'["trunc', b"\x00\x00\x00", b'["ok", 3]', b'{"not": "a list"}', b"nope"])
def test_corrupt_history_copied_aside_before_it_is_replaced(
    bad: bytes, tmp_path: Path, key: str, caplog: pytest.LogCaptureFixture
) -> None:
    path = history_file(tmp_path, key)
    path.parent.mkdir(parents=True)
    path.write_bytes(bad)
    caplog.set_level(logging.WARNING, logger="shiro_neko.state")
    history = PromptHistory(tmp_path, key)
    assert history.load() == []
    assert history.load() == []
    assert path.read_bytes() == bad  # reading never rewrites it
    copies = list(path.parent.glob(f"{path.name}.corrupt-*"))
    assert [c.read_bytes() for c in copies] == [bad]
    history.add("fresh start")
    assert history.load() == ["fresh start"]
    assert len(list(path.parent.glob(f"{path.name}.corrupt-*"))) == 1
    assert len([r for r in caplog.records if r.levelno == logging.WARNING]) == 1


def _append_many(home: str, key: str, tag: str, n: int) -> None:
    history = PromptHistory(Path(home), key)
    for i in range(n):
        history.add(f"{tag} {i}")


def test_two_processes_appending_lose_nothing(tmp_path: Path, key: str) -> None:
    procs = [SPAWN.Process(target=_append_many, args=(str(tmp_path), key, tag, 90)) for tag in ("one", "two")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    prompts = PromptHistory(tmp_path, key).load()
    assert len(prompts) == 180
    for tag in ("one", "two"):
        assert [p for p in prompts if p.startswith(tag)] == [f"{tag} {i}" for i in range(90)]
