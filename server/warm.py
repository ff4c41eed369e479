"""The warm server: `python -m shiro_neko.warm`, one per user (and state home and code version),
so a repeat `shiro` does not pay the cold start again (docs/performance.md).

It imports everything a language server needs (pygls, lsprotocol, openai, our modules), then
waits on a Unix socket in the user's private runtime directory (server/warm_socket.py). A
client connects, passes the three ends of its stdio pipes (SCM_RIGHTS) with its working
directory, environment and umask; the warm server checks the client's uid (SO_PEERCRED) and
forks. The child becomes exactly what `shiro` would otherwise have spawned: a new session,
those pipes on fds 0-2, that directory and environment, then the ordinary `shiro-lsp` main.
So every guarantee of two windows on one workspace holds unchanged: each client still gets its
own server process; only the imports are shared (copy-on-write).

The child tells the client its pid, keeps the connection open while it lives and writes its exit
status there last; the client learns of its end from that connection.

It ends after SHIRO_WARM_IDLE seconds (default 600) without a client, when its socket file is
removed or replaced, or when its state home is gone. The one-per-key rule is a flock on
`<socket>.lock`, taken before the imports, so a second starter leaves at once.
"""

from __future__ import annotations

import fcntl
import gc
import json
import os
import select
import signal
import socket
import struct
import sys
import time
from typing import Any

from . import warm_socket

MAX_HEADER = 1 << 20


def _preload() -> Any:
    """What a first turn would import lazily, imported once here, and a server built (never
    started: no thread, loop or file is open yet, so each child's copy is as new as a spawned one)."""
    from .lsp import create_server
    from .agent.provider.openai_provider import import_sdk_now

    import_sdk_now()  # imports openai and the HTTP stack; opens no connection
    # What else a first turn imports lazily (function-level imports), so a fork pays none of it.
    import platformdirs  # noqa: F401 - state/paths.py, when no SHIRO_NEKO_HOME is set
    from .agent import loop  # noqa: F401
    from .agent.provider import pricing  # noqa: F401
    from .lsp import pipe_writer  # noqa: F401
    from .state import memory_compaction  # noqa: F401

    return create_server()


def _recv_header(conn: socket.socket) -> tuple[dict[str, Any], list[int]]:
    data, fds, _flags, _addr = socket.recv_fds(conn, 65536, 3)
    fds = list(fds)
    if len(data) < 4:
        raise ValueError("short header")
    (length,) = struct.unpack("!I", data[:4])
    if length > MAX_HEADER:
        raise ValueError("header too long")
    body = data[4:]
    while len(body) < length:
        more = conn.recv(length - len(body))
        if not more:
            raise ValueError("header cut short")
        body += more
    header = json.loads(body)
    if not isinstance(header, dict) or header.get("v") != warm_socket.PROTOCOL_VERSION or len(fds) != 3:
        raise ValueError("bad header")
    return header, fds


def _child(conn: socket.socket, header: dict[str, Any], fds: list[int], keep: list[int], server: Any) -> None:
    """In the forked child: become the client's language server. Never returns."""
    code = 1
    try:
        for fd in keep:
            os.close(fd)
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # asyncio's subprocesses need their exit status
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        os.setsid()
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
            os.close(fd)
        os.chdir(str(header["cwd"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(header["env"]).items()})
        os.umask(int(header.get("umask", 0o022)))
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        from .trace import mark

        mark("warm-child")
        from .cli import main

        try:
            main([], prebuilt=server)
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException as exc:  # anything at all: report it on the client's stderr, then end
        try:
            os.write(2, f"shiro-lsp (warm): {type(exc).__name__}: {exc}\n".encode())
        except OSError:
            pass
    finally:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        try:
            conn.sendall(json.dumps({"exit": code}).encode() + b"\n")
        except OSError:
            pass
        os._exit(code)


def serve(listener: socket.socket, lock_fd: int, path: str, inode: int, idle: float, home: str | None,
          server: Any) -> None:
    last = time.monotonic()
    while True:
        ready, _, _ = select.select([listener], [], [], 1.0)
        if not ready:
            try:
                moved = os.stat(path).st_ino != inode
            except OSError:
                moved = True
            if moved or time.monotonic() - last > idle or (home is not None and not os.path.isdir(home)):
                return
            continue
        try:
            conn, _ = listener.accept()
        except OSError:
            continue
        last = time.monotonic()
        fds: list[int] = []
        try:
            conn.settimeout(5)
            if warm_socket.peer_uid(conn) != os.getuid():
                continue  # another user's process: refused before anything runs
            header, fds = _recv_header(conn)
            pid = os.fork()
            if pid == 0:
                _child(conn, header, fds, [listener.fileno(), lock_fd], server)
        except (OSError, ValueError, KeyError, TypeError):
            pass
        finally:
            for fd in fds:
                try:
                    os.close(fd)
                except OSError:
                    pass
            conn.close()


def main() -> None:
    env = os.environ
    if not warm_socket.enabled(env):
        return
    try:
        path = str(warm_socket.socket_path(env, create=True))
    except warm_socket.UnsafeDirectory as exc:
        print(f"shiro-lsp (warm): not started: {exc}", file=sys.stderr)
        return
    lock_fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another warm server holds this key
    os.ftruncate(lock_fd, 0)
    os.write(lock_fd, f"{os.getpid()}\n".encode())  # who holds it: for `kill` and the tests
    server = _preload()
    gc.collect()
    gc.freeze()  # the imports' objects stay out of every child's collections: their pages stay shared
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    old = os.umask(0o177)  # the socket is born 0600
    try:
        listener.bind(path)
    finally:
        os.umask(old)
    listener.listen(16)
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    inode = os.stat(path).st_ino
    home = env.get("SHIRO_NEKO_HOME")
    watched = os.path.abspath(home) if home and os.path.isdir(home) else None
    try:
        serve(listener, lock_fd, path, inode, warm_socket.idle_seconds(env), watched, server)
    finally:
        try:
            if os.stat(path).st_ino == inode:
                os.unlink(path)
        except OSError:
            pass
        listener.close()


if __name__ == "__main__":
    main()
