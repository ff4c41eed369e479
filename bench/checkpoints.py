"""Checkpoints: the shadow git store (server/state/checkpoint_store.py) on a large workspace.

- record_ms:  one checkpoint (`snapshot`) of a workspace of --files files / --mb MB when one file
              changed since the last (median of --runs); also the first checkpoint (everything hashed);
- growth:     the store's size on disk over --turns turns that each change one file (before and
              after snapshot per turn, as a turn with tools records);
- rewind_ms:  a rewind of --rewind-files changed files, through the feature (plan in the store,
              files written, the rewind's own checkpoint), median of --runs.

Writes bench/results/checkpoints.json (or --output). Run: python bench/checkpoints.py [--quick]

Before and after a change to the store, in one sitting (the machine is shared: compare the two
files of one sitting, not figures from different days): put the old `server/` tree, as package
`shiro_neko`, in a folder and run `PYTHONPATH=<folder> python bench/checkpoints.py --output
bench/results/checkpoints_before.json`, then this script as is. `git_processes` counts the git
commands one checkpoint ran.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from shiro_neko.state.checkpoint_store import CheckpointStore

RESULTS = Path(__file__).resolve().parent / "results"


def _dir_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def _make_workspace(root: Path, files: int, total_mb: int) -> list[Path]:
    rng = random.Random(7)
    size = total_mb * 1024 * 1024 // files
    paths = []
    for i in range(files):
        path = root / f"pkg{i % 100:02d}" / f"sub{i % 7}" / f"file{i:05d}.txt"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(rng.randbytes(size // 2).hex().encode()[:size])
        paths.append(path)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    return paths


def _median(values: list[float]) -> dict[str, float | int]:
    return {"median_ms": round(statistics.median(values), 1), "min_ms": round(min(values), 1),
            "max_ms": round(max(values), 1), "n": len(values)}


def _record(store: CheckpointStore, message: str) -> float:
    start = time.perf_counter()
    with store.locked():
        store.snapshot("refs/sessions/bench", message)
    return (time.perf_counter() - start) * 1000


def _count_git(store: CheckpointStore, path: Path) -> dict[str, int]:
    """The git commands of one checkpoint with `path` changed, then of one with nothing changed."""
    commands: list[str] = []
    real = store.git

    def counted(*args: str, **kwargs: object) -> bytes:
        commands.append(args[0])
        return real(*args, **kwargs)  # type: ignore[arg-type]

    store.git = counted  # type: ignore[method-assign]
    try:
        path.write_bytes(path.read_bytes() + b"y")
        _record(store, "counted one")
        one = len(commands)
        time.sleep(2.1)  # past the racy window: the file just changed is trusted by its stat again
        commands.clear()
        _record(store, "counted unchanged")
        return {"one_changed": one, "unchanged": len(commands)}
    finally:
        store.git = real  # type: ignore[method-assign]


async def _rewind_bench(root: Path, home: Path, paths: list[Path], changed: int, runs: int) -> list[float]:
    """A real service, a session whose turn changed `changed` files; rewind files-only, timed."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test-only sink, tests/support
    from tests.support.sink import ListSink
    from shiro_neko.agent.tools.disk_host import DiskToolHost
    from shiro_neko.protocol import RewindArgs
    from shiro_neko.service import ShiroService

    class Bridge:
        sink = ListSink()

        def host_for(self, root: Path, session_id: str) -> DiskToolHost:
            return DiskToolHost(root)

        async def ask(self, message: str, actions: list[str]) -> str | None:
            return None

    service = ShiroService(Bridge())  # type: ignore[arg-type]
    service.workspaces.set_folders([root])
    session = service.session_for(None, None)
    times = []
    for run in range(runs):
        turn = f"turn{run}"
        session.messages.append(__import__("shiro_neko.model.transcript", fromlist=["user_text"]).user_text(turn))
        service.checkpoints.turn_started(session, turn, turn)
        await service.checkpoints.before_tools(session, turn)
        for path in paths[:changed]:
            path.write_bytes(path.read_bytes()[::-1])
        await service.checkpoints.turn_ended(session, turn)
        start = time.perf_counter()
        result = await service.checkpoints.rewind(session, RewindArgs(turnId=turn, conversation=False))
        times.append((time.perf_counter() - start) * 1000)
        assert len(result.restored) == changed, (len(result.restored), result.conflicts[:3])
    await service.stop()
    return times


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--turns", type=int, default=100)
    parser.add_argument("--rewind-files", type=int, default=50)
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS / "checkpoints.json")
    args = parser.parse_args()
    if args.quick:
        args.files, args.mb, args.runs, args.turns = 1000, 20, 5, 10
    with tempfile.TemporaryDirectory() as tmp:
        root, home = Path(tmp) / "ws", Path(tmp) / "home"
        root.mkdir()
        os.environ["SHIRO_NEKO_HOME"] = str(home)
        paths = _make_workspace(root, args.files, args.mb)
        store = CheckpointStore(home, "bench", root)
        first = _record(store, "first")
        time.sleep(2.1)  # past the racy-clean window: later records trust the stat of unchanged files
        unchanged = [_record(store, "unchanged") for _ in range(3)]
        one_changed = []
        for i in range(args.runs):
            paths[i].write_bytes(paths[i].read_bytes() + b"x")
            one_changed.append(_record(store, f"one {i}"))
        processes = _count_git(store, paths[args.runs])
        size_before = _dir_size(store.git_dir)
        sizes = []
        for turn in range(args.turns):
            _record(store, f"before {turn}")
            paths[turn % len(paths)].write_bytes(paths[turn % len(paths)].read_bytes() + b"turn")
            _record(store, f"after {turn}")
            sizes.append(_dir_size(store.git_dir))
        rewind = asyncio.run(_rewind_bench(root, home, paths[500:], args.rewind_files, args.runs))
    result = {
        "workspace": {"files": args.files, "mb": args.mb},
        "first_record_ms": round(first, 1),
        "record_unchanged_ms": _median(unchanged),
        "record_one_changed_ms": _median(one_changed),
        "git_processes": processes,
        "growth": {
            "turns": args.turns, "store_before_kb": size_before // 1024, "store_after_kb": sizes[-1] // 1024,
            "kb_per_turn": round((sizes[-1] - size_before) / 1024 / args.turns, 1),
            "file_size_kb": round(args.mb * 1024 / args.files, 1),
        },
        "rewind_ms": {**_median(rewind), "files": args.rewind_files},
        "targets": {"record_one_changed_median_ms": 100, "rewind_median_ms": 500},
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count()},
    }
    result["store_module"] = sys.modules[CheckpointStore.__module__].__file__  # which store was measured
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
