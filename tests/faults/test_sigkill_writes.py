"""state/atomic.py under SIGKILL: a writer killed at random instants, again and again, leaves the
old bytes or the new ones, never a mix (a soak, not a unit test: each round starts an interpreter).
SHIRO_FULL_FAULTS=1 runs 50 rounds instead of 8."""

from __future__ import annotations

import multiprocessing
import os
import random
import signal
import time
from pathlib import Path

import pytest

from shiro_neko.state.atomic import write_atomic

SPAWN = multiprocessing.get_context("spawn")
ROUNDS = 50 if os.environ.get("SHIRO_FULL_FAULTS") == "1" else 8
pytestmark = pytest.mark.xdist_group("heavy")


def _write_forever(path: str, payloads: list[bytes]) -> None:
    n = 0
    while True:
        write_atomic(Path(path), payloads[n % len(payloads)])
        n += 1


def test_sigkill_during_writes_leaves_old_or_new_bytes(tmp_path: Path) -> None:
    target = tmp_path / "big.json"
    payloads = [bytes([65 + i]) * (3_000_000 + i) for i in range(3)]  # big enough to be caught mid-write
    write_atomic(target, payloads[0])
    rng = random.Random(7)
    for _ in range(ROUNDS):
        child = SPAWN.Process(target=_write_forever, args=(str(target), payloads))
        child.start()
        time.sleep(0.3 + rng.random() * 0.2)  # interpreter start-up, then somewhere in the loop
        os.kill(child.pid, signal.SIGKILL)
        child.join()
        assert target.read_bytes() in payloads
    json_files = [p for p in tmp_path.iterdir() if not p.name.startswith(".")]
    assert json_files == [target]  # only dot-prefixed temp files may be left by a kill
