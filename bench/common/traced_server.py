"""`python bench/common/traced_server.py`: the real server (`python -m shiro_neko`) with a sampling
hook, for bench/memory.py's "where does it go" report. Nothing in the server knows about it.

On SIGUSR1 it collects garbage and writes $SHIRO_BENCH_SNAPSHOT_DIR/<n>.pickle (atomically: the
bench waits for the file): RSS, open files, threads and asyncio tasks, RSS again after glibc's
`malloc_trim(0)` (what the C allocator held free: RSS that is no live data), and with
SHIRO_BENCH_TRACEMALLOC=1 a tracemalloc snapshot and gc.get_objects() type counts.
"""

from __future__ import annotations

import asyncio
import collections
import ctypes
import gc
import os
import pickle
import runpy
import signal
import sys
import threading
import tracemalloc
from types import FrameType
from typing import Any

FRAMES = 12
_count = 0


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fp:
        for line in fp:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _fd_kind(fd: str) -> str:
    try:
        target = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return "?"
    return target.split("[")[0] if "[" in target else os.path.splitext(target)[1] or target


def _pymalloc() -> dict[str, int]:
    """sys._debugmallocstats() (it prints to the C stderr): Python's small-object allocator, whose
    free blocks and pools stay in its arenas (malloc_trim cannot give those back)."""
    import tempfile

    wanted = {"# arenas allocated current": "arenas", "# bytes in allocated blocks": "allocated_bytes",
              "# bytes in available blocks": "available_bytes", "Total": "total_bytes"}
    saved = os.dup(2)
    with tempfile.TemporaryFile("w+") as out:
        try:
            sys.stderr.flush()
            os.dup2(out.fileno(), 2)
            sys._debugmallocstats()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        out.seek(0)
        found: dict[str, int] = {}
        for line in out:
            name, _, value = line.partition("=")
            key = wanted.get(name.strip())
            if key is not None and key not in found:
                found[key] = int(value.strip().replace(",", ""))
    return found


def _dump(signum: int, frame: FrameType | None) -> None:
    global _count
    _count += 1
    gc.collect()
    sample: dict[str, Any] = {}
    if tracemalloc.is_tracing():
        sample["types"] = dict(collections.Counter(f"{type(o).__module__}.{type(o).__qualname__}" for o in gc.get_objects()))
        sample["snapshot"] = tracemalloc.take_snapshot()
        sample["traced"] = tracemalloc.get_traced_memory()
    loop = asyncio._get_running_loop()  # the handler runs on the loop's thread, between its callbacks
    tasks = list(asyncio.all_tasks(loop)) if loop else []
    sample.update(rss_kb=_status_kb("VmRSS"), fds=len(os.listdir("/proc/self/fd")), threads=threading.active_count(),
                  tasks=len(tasks) if loop else None,
                  task_kinds=dict(collections.Counter(getattr(t.get_coro(), "__qualname__", "?") for t in tasks)),
                  fd_kinds=dict(collections.Counter(_fd_kind(fd) for fd in os.listdir("/proc/self/fd"))))
    sample["pymalloc"] = _pymalloc()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
        sample["rss_after_trim_kb"] = _status_kb("VmRSS")
    except (OSError, AttributeError):  # not glibc
        sample["rss_after_trim_kb"] = None
    path = os.path.join(os.environ["SHIRO_BENCH_SNAPSHOT_DIR"], f"{_count}.pickle")
    with open(path + ".tmp", "wb") as fp:
        pickle.dump(sample, fp)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    if os.environ.get("SHIRO_BENCH_TRACEMALLOC") == "1":
        # Imported before tracing starts: tracing every import allocation makes the start take
        # minutes on a loaded machine, and only what the turns add is compared.
        import openai  # noqa: F401
        import shiro_neko.agent.loop  # noqa: F401
        import shiro_neko.lsp  # noqa: F401

        tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR1, _dump)
    sys.argv = ["shiro_neko"]
    runpy.run_module("shiro_neko", run_name="__main__", alter_sys=True)
