"""`python bench/common/traced_server.py`: the real server (`python -m shiro_neko`) with tracemalloc on,
for bench/memory.py's "where does it go" report. SIGUSR1 makes it collect garbage and write, to
$SHIRO_BENCH_SNAPSHOT_DIR/<n>.pickle, a tracemalloc snapshot plus gc.get_objects() type counts
(written atomically: the bench waits for the file). Nothing in the server knows about this.
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

FRAMES = 12
_count = 0


def _status_kb(field: str) -> int:
    with open("/proc/self/status") as fp:
        for line in fp:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    return 0


def _dump(signum: int, frame: FrameType | None) -> None:
    global _count
    _count += 1
    gc.collect()
    types = collections.Counter(type(o).__qualname__ + "@" + (type(o).__module__ or "") for o in gc.get_objects())
    snapshot = tracemalloc.take_snapshot()
    loop = asyncio._get_running_loop()  # the handler runs on the loop's thread, between its callbacks
    process = {"rss_kb": _status_kb("VmRSS"), "fds": len(os.listdir("/proc/self/fd")),
               "threads": threading.active_count(), "tasks": len(asyncio.all_tasks(loop)) if loop else None}
    # What the C allocator holds free (glibc's malloc_trim gives it back): RSS that is no live data.
    ctypes.CDLL("libc.so.6").malloc_trim(0)
    process["rss_after_trim_kb"] = _status_kb("VmRSS")
    folder = os.environ["SHIRO_BENCH_SNAPSHOT_DIR"]
    path = os.path.join(folder, f"{_count}.pickle")
    with open(path + ".tmp", "wb") as fp:
        pickle.dump({"snapshot": snapshot, "types": dict(types),
                     "traced": tracemalloc.get_traced_memory(), "process": process}, fp)
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    import faulthandler
    _stacks = open(os.path.join(os.environ["SHIRO_BENCH_SNAPSHOT_DIR"], "stacks.txt"), "w")
    faulthandler.register(signal.SIGUSR2, file=_stacks, all_threads=True)
    # Imported before tracing starts: tracing every import allocation makes the start take minutes
    # on a loaded machine, and only what the turns add is compared.
    import openai  # noqa: F401
    import shiro_neko.lsp  # noqa: F401
    import shiro_neko.agent.loop  # noqa: F401

    tracemalloc.start(FRAMES)
    signal.signal(signal.SIGUSR1, _dump)
    sys.argv = ["shiro_neko"]
    runpy.run_module("shiro_neko", run_name="__main__", alter_sys=True)
