"""Opt-in timing marks for the benches: with `SHIRO_TRACE=/path`, `mark(name)` appends one line
`<CLOCK_MONOTONIC ns> <pid> <name>` to that file; without it, `mark` does nothing.

CLOCK_MONOTONIC is one clock for every process on the machine, so the client's, the server's and
the bench's marks (bench/oneshot.py) line up on one time axis. Stdlib only, imported first thing
by both entry points: it must cost nothing when tracing is off.
"""

from __future__ import annotations

import os
import time



def _path() -> str | None:
    # Read at each mark, not at import: a warm server's child (server/startup/warm.py) gets its
    # environment after the modules were imported.
    return os.environ.get("SHIRO_TRACE") or None


def mark(name: str) -> None:
    path = _path()
    if path is None:
        return
    line = f"{time.monotonic_ns()} {os.getpid()} {name}\n".encode()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)  # one write per line with O_APPEND: lines of two processes never interleave
        finally:
            os.close(fd)
    except OSError:
        pass


def mark_peak_rss(who: str) -> None:
    """The process's peak resident set (VmHWM, kB) and CPU time so far, as marks
    `<who>-peak-rss-kb=<n>` and `<who>-cpu-ms=<n>`."""
    if _path() is None:
        return
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    mark(f"{who}-peak-rss-kb={line.split()[1]}")
                    break
        times = os.times()
        mark(f"{who}-cpu-ms={round((times.user + times.system) * 1000)}")
    except OSError:
        pass
