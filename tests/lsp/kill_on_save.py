"""Kill a server while it writes a session file: the SIGKILL fault test's machinery.

`python -m tests.lsp.kill_on_save DIR PREFIX PID` polls DIR until a file named PREFIX… appears
(write_atomic's temp file, `.<uuid>.json.<random>.tmp`) and sends SIGKILL to PID at once. It runs
as its own process so the test's event loop and GIL cannot delay the kill: a save lasts only a
few milliseconds (write, fsync, rename, fsync of the directory).

Whether the kill landed during the save is read off the disk afterwards: a temp file left behind
means the server died between creating it and renaming it (a finished or failed save leaves none).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from pathlib import Path


def temp_files(directory: Path, session_id: str) -> list[Path]:
    """The temp files a save of `session_id` leaves when it is killed mid-write."""
    return sorted(directory.glob(f".{session_id}.json.*.tmp"))


def _watch(directory: str, prefix: str, pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with os.scandir(directory) as entries:
                if any(e.name.startswith(prefix) for e in entries):
                    os.kill(pid, signal.SIGKILL)
                    return 0
        except FileNotFoundError:
            pass
    os.kill(pid, signal.SIGKILL)  # no save seen in time: kill anyway, the round reports a miss
    return 1


async def kill_on_next_save(sessions_dir: Path, session_id: str, pid: int, timeout: float = 10.0) -> None:
    """SIGKILL `pid` the moment its next save of `session_id` creates its temp file."""
    watcher = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "tests.lsp.kill_on_save", str(sessions_dir), f".{session_id}.json.", str(pid), str(timeout)
    )
    await watcher.wait()


if __name__ == "__main__":
    sys.exit(_watch(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])))
