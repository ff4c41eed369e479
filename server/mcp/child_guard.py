"""Start one stdio MCP server so that it ends with the shiro server, even when that is SIGKILLed.

    python -I -S child_guard.py SHIRO_PID EXECUTABLE ARGV0 [ARG...]

A SIGKILLed shiro server runs none of the SDK's shutdown; the kernel only closes its pipes. A
well-behaved MCP server exits at the end of its stdin, but nothing makes it (a stubborn one ignores
that and SIGTERM), and the SDK's `stdio_client` has no hook to run code in the child before exec.
So the SDK starts this guard, which forks a watcher and then becomes the server (exec): the process
the SDK stops, waits for and signals is still the server itself, and a normal stop is exactly the
SDK's. The watcher waits on two pidfds (Linux): the server's (it exits with it) and shiro's. If
shiro dies first, the watcher plays the SDK's shutdown for it: 2 s for the server to act on the
end of its stdin, SIGTERM to the server's process group (its own children too), 2 s, SIGKILL to
the group, the watcher with it. Only the standard library, run with `-I -S`: milliseconds.
"""

from __future__ import annotations

import os
import select
import signal
import sys

# The SDK's own timings (mcp.client.stdio): end of stdin, then SIGTERM, then SIGKILL.
EOF_GRACE = 2.0
TERM_GRACE = 2.0


def _ended(pidfd: int, seconds: float | None) -> bool:
    """Whether the process behind `pidfd` ended within `seconds` (None: wait for it)."""
    return bool(select.select([pidfd], [], [], seconds)[0])


def _watch(shiro_fd: int, server: int) -> None:
    """The watcher: lives beside the server, in its process group, holding none of its pipes."""
    # The group's signals are the SDK's to the server; the watcher leaves when the server does.
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # stdout's and stderr's ends must come when the server's do
        os.dup2(devnull, fd)
    os.close(devnull)
    try:
        server_fd = os.pidfd_open(server)
    except OSError:
        return
    if os.getppid() != server:  # the server ended before we could watch it
        return
    ready = select.select([shiro_fd, server_fd], [], [])[0]
    if server_fd in ready:
        return  # a normal stop (or a crash): the SDK sees to the rest
    # shiro is gone, and with it the write end of the server's stdin.
    group = os.getpgrp()
    if not _ended(server_fd, EOF_GRACE):
        os.killpg(group, signal.SIGTERM)
        _ended(server_fd, TERM_GRACE)
    os.killpg(group, signal.SIGKILL)  # whatever is left of the group, the watcher included


def main(argv: list[str]) -> int:
    shiro, executable, args = int(argv[1]), argv[2], argv[3:]
    try:
        shiro_fd: int | None = os.pidfd_open(shiro)  # before the check: no window for a pid reuse
    except OSError:  # a kernel without pidfds (< 5.3): run the server unguarded
        shiro_fd = None
    if shiro_fd is not None and os.getppid() != shiro:
        return 1  # shiro died while this process started: there is no one to serve
    if shiro_fd is not None:
        server = os.getpid()
        if os.fork() == 0:
            try:
                _watch(shiro_fd, server)
            finally:
                os._exit(0)
        os.close(shiro_fd)
    try:
        os.execv(executable, args)
    except OSError as exc:
        print(f"{executable}: {exc.strerror}", file=sys.stderr, flush=True)
    return 127


if __name__ == "__main__":
    sys.exit(main(sys.argv))
