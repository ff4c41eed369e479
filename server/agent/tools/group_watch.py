"""A command's process group dies with the server, even when the server is SIGKILLed.

A SIGKILLed server runs no code, so someone else must end what its commands left running. The
options, and why this one:
- PR_SET_PDEATHSIG on the command (a preexec hook) reaches only that one process: the shell dies,
  and its background children, reparented to init, live on. (bubblewrap's `--die-with-parent` is
  the same signal, but there the shell is the init of its own pid namespace, whose death ends
  every process in it; `sandbox: "off"` has no pid namespace.)
- The server as a child subreaper (PR_SET_CHILD_SUBREAPER) collects orphans only while it lives.
- So one small watcher process per server (the interpreter with only the standard library, a
  few milliseconds, started with the first command) reads `+pgid` / `-pgid` lines on a pipe from
  the server. The kernel closes the pipe however the server dies; on end of file the watcher
  SIGKILLs every group still registered. It runs in a session of its own, so a Ctrl-C in the
  user's terminal does not reach it.

A group is registered from its spawn until the call has stopped it; a pgid is reused by the
kernel only after the whole group is gone, so a group killed by the watcher is one of ours.

Registering after the spawn left a window: the shell runs while asyncio still connects its pipes,
and a server killed then (a loaded machine, tests/unit/test_sandbox.py) left a group nobody knew
of. So an unsandboxed command's shell registers itself first (`self_registering`), writing its own
pid on the watcher's pipe and closing it before the command runs. In the sandbox bubblewrap's
`--die-with-parent` covers that window.
"""

from __future__ import annotations

import logging
import subprocess
import sys

log = logging.getLogger(__name__)

_WATCHER = r"""
import os, signal, sys
for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGPIPE):
    signal.signal(sig, signal.SIG_IGN)
groups = set()
for line in sys.stdin:
    try:
        pgid = int(line[1:])
    except ValueError:
        continue
    if line[0] == "+":
        groups.add(pgid)
    else:
        groups.discard(pgid)
for pgid in groups:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except OSError:
        pass
"""

_watcher: subprocess.Popen[bytes] | None = None


def _started() -> subprocess.Popen[bytes] | None:
    global _watcher
    if _watcher is None or _watcher.poll() is not None:
        try:
            # -I -S: no site, no user paths, no environment: nothing the workspace can steer.
            _watcher = subprocess.Popen(
                [sys.executable, "-I", "-S", "-c", _WATCHER],
                stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True, close_fds=True,
            )
        except OSError as exc:
            log.warning("the command watcher could not start (%s); commands may outlive a killed server", exc)
            _watcher = None
    return _watcher


def _send(line: str) -> None:
    for _ in range(2):  # a watcher that died is started again once
        watcher = _started()
        if watcher is None or watcher.stdin is None:
            return
        try:
            watcher.stdin.write(line.encode())
            watcher.stdin.flush()
            return
        except OSError:
            watcher.kill()
            watcher.wait()


def self_registering(argv: list[str]) -> tuple[list[str], tuple[int, ...]]:
    """`argv` (a `shell -c command`) made to register its group before the command runs, and the
    file descriptor to pass it; unchanged when there is no watcher. The command still runs as
    `shell -c command` (one exec more, about a millisecond); the pipe is closed first, so a
    command that lives on cannot keep the watcher from seeing the server die. SIGPIPE is ignored
    only around the write (a watcher that just died must not stop the command) and put back
    before the command runs."""
    watcher = _started()
    if watcher is None or watcher.stdin is None or len(argv) != 3 or argv[1] != "-c":
        return argv, ()
    fd = watcher.stdin.fileno()
    if fd > 9 and not argv[0].endswith("bash"):
        return argv, ()  # a POSIX sh (dash) redirects only descriptors 0-9
    prefix = f"trap '' PIPE; printf '+%s\\n' \"$$\" >&{fd} 2>/dev/null; exec {fd}>&-; trap - PIPE; exec \"$0\" -c \"$1\""
    return [argv[0], "-c", prefix, argv[0], argv[2]], (fd,)


def watch(pgid: int) -> None:
    """The group dies with this process from now on."""
    _send(f"+{pgid}\n")


def unwatch(pgid: int) -> None:
    """The group has been stopped."""
    if _watcher is not None:
        _send(f"-{pgid}\n")
