"""A test's language-server process, served by the test process's warm server (warm_pool.py).

Run as a script: the standard library and the client's stdlib-only warm_client, so it starts in
milliseconds. It hands its own stdin, stdout and stderr, its directory, environment and umask to
the warm server over its socket (`hand_over`, what `shiro`'s handshake sends), then stays as the
forked server's stand-in: SIGTERM and SIGINT are passed on to it, and this process exits with the
server's exit status once the server reports it. If the warm server cannot be reached it becomes
a cold `python -m shiro_neko` instead, so a test never depends on it.
"""

from __future__ import annotations

import os
import signal
import socket
import sys


def _cold() -> None:
    os.execv(sys.executable, [sys.executable, "-m", "shiro_neko"])


def main() -> None:
    from shiro_neko.client.warm_client import exit_status, hand_over  # stdlib only, as `shiro`'s first step

    path = os.environ.pop("SHIRO_TEST_WARM_SOCKET", "")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(30)
        sock.connect(path)
        pid = hand_over(sock, os.getcwd(), dict(os.environ), [0, 1, 2])
    except (OSError, ValueError, KeyError, TypeError):
        sock.close()
        _cold()
        return
    # Ours no longer: the server holds its own copies, and EOF on them must reach it alone.
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)

    def forward(signum: int, _frame: object) -> None:
        try:
            os.kill(pid, signum)
        except ProcessLookupError:
            pass

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    sock.settimeout(None)
    data = b""
    while True:
        try:
            more = sock.recv(4096)
        except InterruptedError:
            continue
        if not more:
            break
        data += more
    os._exit(exit_status(data, unknown=1))


if __name__ == "__main__":
    main()
