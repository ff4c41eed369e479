"""State-file primitives: atomic replace, corrupt files copied aside once, leases, the file lock."""

from __future__ import annotations

import errno
import logging
import multiprocessing
import os
import re
import signal
import time
from pathlib import Path

import msgspec
import pytest

from shiro_neko.state import atomic
from shiro_neko.state.atomic import (
    CorruptFile,
    FileLease,
    copy_aside_corrupt,
    file_lock,
    read_json_or_corrupt,
    read_lease_pid,
    write_atomic,
)

SPAWN = multiprocessing.get_context("spawn")
LIST_OF_STR = msgspec.json.Decoder(list[str])

CORRUPT_KINDS = {
    "empty": b"",
    "truncated": b'["one", "tw',
    "null bytes": b"\x00" * 64,
    "trailing null bytes": b'["one"]' + b"\x00" * 16,
    "wrong types": b'["one", 2, {"three": 3}]',
    "not json": b"this is not json at all",
}


@pytest.fixture(autouse=True)
def fresh_warnings(monkeypatch: pytest.MonkeyPatch) -> None:
    # "Once per process" is module state; each test starts as a fresh process would.
    monkeypatch.setattr(atomic, "_warned", set())


def corrupt_copies(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.corrupt-*"))


def test_write_atomic_round_trip_creates_parents_and_leaves_no_temp(tmp_path: Path) -> None:
    target = tmp_path / "a" / "b" / "state.json"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert sorted(p.name for p in target.parent.iterdir()) == ["state.json"]


def test_write_atomic_failure_keeps_old_file_and_removes_temp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "state.json"
    write_atomic(target, b"old")

    def broken_replace(src: str, dst: str) -> None:
        raise OSError(errno.EIO, "disk on fire")

    monkeypatch.setattr(os, "replace", broken_replace)
    with pytest.raises(OSError):
        write_atomic(target, b"new")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


@pytest.mark.parametrize("kind", sorted(CORRUPT_KINDS))
def test_corrupt_file_copied_aside_once_warned_once_left_as_is(
    kind: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "history.json"
    bad = CORRUPT_KINDS[kind]
    path.write_bytes(bad)
    caplog.set_level(logging.WARNING, logger="shiro_neko.state")
    for _ in range(3):
        with pytest.raises(CorruptFile) as info:
            read_json_or_corrupt(path, LIST_OF_STR)
    assert path.read_bytes() == bad
    copies = corrupt_copies(path)
    assert len(copies) == 1
    assert re.fullmatch(r"history\.json\.corrupt-\d{14}", copies[0].name)
    assert copies[0].read_bytes() == bad
    assert info.value.copy == copies[0]
    assert str(path) in str(info.value)
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and str(path) in warnings[0].getMessage()


def test_read_missing_is_none_and_good_file_decodes(tmp_path: Path) -> None:
    assert read_json_or_corrupt(tmp_path / "nope.json", LIST_OF_STR) is None
    write_atomic(tmp_path / "ok.json", b'["a", "b"]')
    assert read_json_or_corrupt(tmp_path / "ok.json", LIST_OF_STR) == ["a", "b"]


def test_copy_aside_new_content_gets_a_new_copy(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    first = copy_aside_corrupt(path, b"bad one")
    assert copy_aside_corrupt(path, b"bad one") == first
    second = copy_aside_corrupt(path, b"bad two")
    assert second != first and second.read_bytes() == b"bad two"
    assert first.read_bytes() == b"bad one"


# -- leases -------------------------------------------------------------------------------------


def test_lease_is_exclusive_until_released(tmp_path: Path) -> None:
    path = tmp_path / "s.lock"
    lease = FileLease.try_acquire(path)
    assert lease is not None
    assert read_lease_pid(path) == os.getpid()
    assert FileLease.try_acquire(path) is None  # flock conflicts between open files of one process too
    lease.release()
    assert not path.exists()
    again = FileLease.try_acquire(path)
    assert again is not None
    again.release()


def _hold_lease(path: str, ready: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    lease = FileLease.try_acquire(Path(path))
    assert lease is not None
    ready.set()
    time.sleep(60)


def test_lease_of_a_killed_process_is_free(tmp_path: Path) -> None:
    path = tmp_path / "s.lock"
    ready = SPAWN.Event()
    child = SPAWN.Process(target=_hold_lease, args=(str(path), ready))
    child.start()
    assert ready.wait(30)
    assert FileLease.try_acquire(path) is None
    assert read_lease_pid(path) == child.pid
    os.kill(child.pid, signal.SIGKILL)
    child.join()
    lease = FileLease.try_acquire(path)
    assert lease is not None and read_lease_pid(path) == os.getpid()
    lease.release()


def dead_pid() -> int:
    child = SPAWN.Process(target=time.sleep, args=(0,))
    child.start()
    child.join()
    assert child.pid is not None
    return child.pid


def test_lock_file_naming_a_dead_pid_is_cleared(tmp_path: Path) -> None:
    path = tmp_path / "s.lock"
    path.write_text(f"{dead_pid()}\nsomehost\n")
    lease = FileLease.try_acquire(path)
    assert lease is not None and read_lease_pid(path) == os.getpid()
    lease.release()


def test_pid_fallback_without_flock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def no_flock(fd: int, op: int) -> None:
        raise OSError(errno.ENOLCK, "no locks on this filesystem")

    monkeypatch.setattr(atomic.fcntl, "flock", no_flock)
    path = tmp_path / "s.lock"
    path.write_text(f"{dead_pid()}\n")
    lease = FileLease.try_acquire(path)
    assert lease is not None and read_lease_pid(path) == os.getpid()
    assert FileLease.try_acquire(path) is None  # held by this process already
    lease.release()
    assert not path.exists()
    path.write_text(f"{os.getppid()}\n")  # a live process
    assert FileLease.try_acquire(path) is None


def _count_under_lock(counter: str, lock: str, times: int) -> None:
    for _ in range(times):
        with file_lock(Path(lock)):
            value = int(Path(counter).read_text())
            write_atomic(Path(counter), str(value + 1).encode())


def test_file_lock_serialises_read_modify_write_across_processes(tmp_path: Path) -> None:
    counter = tmp_path / "n"
    counter.write_text("0")
    procs = [SPAWN.Process(target=_count_under_lock, args=(str(counter), str(tmp_path / "lock"), 100)) for _ in range(2)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert counter.read_text() == "200"
