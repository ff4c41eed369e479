"""The checkpoint store's daily clean-up (server/state/checkpoint_store.py `prune_if_due`,
docs/checkpoints.md "Clean-up") on a realistic store: its size before and after, and how long
the clean-up holds the store's lock.

A workspace of --files text files (--mb MB); session A runs --turns turns that each change three
files and write a 1 MB incompressible build output (the one before removed); session B runs
--turns turns that each change three files. Every turn records before and after, as a turn with
tools does. Then:

- size_before:     the store as the turns left it (one fast-import pack per checkpoint);
- repack_only:     a copy of it after the clean-up with nothing deleted (every object reachable):
                   what the daily repack alone gives, and how long it takes (gc_ms);
- after_delete:    the store after A is deleted, every object older than the grace (their files'
                   mtimes moved back 30 days), and the clean-up: what the prune frees, gc_ms;
- young_delete:    the same, the objects a day old only: nothing of A's is dropped yet (they go
                   to a cruft pack and wait out the grace).

Writes bench/results/checkpoint_prune.json. Run: python bench/checkpoint_prune.py [--quick]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from shiro_neko.state.checkpoint_store import PRUNE_EVERY, CheckpointStore

RESULTS = Path(__file__).resolve().parent / "results"
DAY = 24 * 3600.0


def _size(store: CheckpointStore) -> dict[str, int]:
    files = [p for p in (store.git_dir / "objects").rglob("*") if p.is_file()]
    return {"bytes": sum(p.stat().st_size for p in files), "packs": sum(p.suffix == ".pack" for p in files),
            "loose": sum(len(p.parent.name) == 2 for p in files)}


def _age(store: CheckpointStore, seconds: float) -> None:
    for path in (store.git_dir / "objects").rglob("*"):
        if path.is_file():
            st = path.stat()
            os.utime(path, (st.st_atime - seconds, st.st_mtime - seconds))


def _turns(store: CheckpointStore, root: Path, paths: list[Path], ref: str, turns: int, build: bool, rng: random.Random) -> None:
    for turn in range(turns):
        with store.locked():
            store.snapshot(ref, f"before turn {turn}")
        for path in rng.sample(paths, 3):
            path.write_bytes(path.read_bytes()[:-40] + rng.randbytes(20).hex().encode())
        if build:
            (root / "out").mkdir(exist_ok=True)
            for old in (root / "out").iterdir():
                old.unlink()
            (root / "out" / f"build-{turn}.bin").write_bytes(rng.randbytes(1024 * 1024))
        with store.locked():
            store.snapshot(ref, f"after turn {turn}")


def _clean_up(store: CheckpointStore, now: float) -> float:
    """One clean-up that runs (the store's clock started a day before), in ms."""
    store.prune_if_due(now - PRUNE_EVERY - 60)  # starts the clock, if not started
    started = time.perf_counter()
    ran = store.prune_if_due(now)
    elapsed = (time.perf_counter() - started) * 1000
    assert ran, "the clean-up did not run"
    return elapsed


def _copy(base: Path, name: str, root: Path) -> CheckpointStore:
    shutil.copytree(base / "home", base / name, symlinks=True)
    return CheckpointStore(base / name, "k", root)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--mb", type=int, default=20)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS / "checkpoint_prune.json")
    args = parser.parse_args()
    if args.quick:
        args.files, args.mb, args.turns, args.runs = 500, 5, 10, 1
    rng = random.Random(7)
    runs: dict[str, list[float]] = {"repack_only": [], "after_delete": [], "young_delete": []}
    sizes: dict[str, dict[str, int]] = {}
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="prune-bench-") as tmp:
            base = Path(tmp)
            root = base / "ws"
            size = args.mb * 1024 * 1024 // args.files
            paths = []
            for i in range(args.files):
                path = root / f"pkg{i % 50:02d}" / f"file{i:05d}.txt"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(rng.randbytes(size // 2).hex().encode())
                paths.append(path)
            store = CheckpointStore(base / "home", "k", root)
            _turns(store, root, paths, "refs/sessions/a", args.turns, True, rng)
            for old in (root / "out").iterdir():
                old.unlink()
            _turns(store, root, paths, "refs/sessions/b", args.turns, False, rng)
            sizes["size_before"] = _size(store)
            now = time.time()

            control = _copy(base, "control", root)
            runs["repack_only"].append(_clean_up(control, now))
            sizes["repack_only"] = _size(control)

            young = _copy(base, "young", root)
            young.drop_ref("refs/sessions/a")
            _age(young, DAY)
            runs["young_delete"].append(_clean_up(young, now))
            sizes["young_delete"] = _size(young)

            store.drop_ref("refs/sessions/a")
            _age(store, 30 * DAY)
            runs["after_delete"].append(_clean_up(store, now))
            sizes["after_delete"] = _size(store)
            b = store.resolve("refs/sessions/b")
            assert len(store.files(b)) == args.files, "session B lost files"
    result = {
        "workspace": {"files": args.files, "mb": args.mb, "turns_per_session": args.turns},
        "sizes": sizes,
        "gc_ms": {k: {"median_ms": round(statistics.median(v), 1), "min_ms": round(min(v), 1),
                      "max_ms": round(max(v), 1), "n": len(v)} for k, v in runs.items()},
        "environment": {"python": sys.version.split()[0], "platform": platform.platform(),
                        "cpus": os.cpu_count(), "load": os.getloadavg()[0]},
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
