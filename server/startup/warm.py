"""The warm server: `python -m shiro_neko.warm`, one per user (and state home and code version),
so a repeat `shiro` does not pay the cold start again (docs/performance.md).

It imports everything a language server needs (pygls, lsprotocol, openai, our modules), then
waits on a Unix socket in the user's private runtime directory (server/startup/warm_socket.py). A
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
    from ..lsp import create_server
    from ..agent.provider.openai_provider import import_sdk_now
    from ..agent.tools.sandbox import sandbox_status

    import_sdk_now()  # imports openai and the HTTP stack; opens no connection
    # What else a first turn imports lazily (function-level imports), so a fork pays none of it.
    import platformdirs  # noqa: F401 - state/paths.py, when no SHIRO_NEKO_HOME is set
    import filelock  # noqa: F401 - state/atomic.py, at the first save
    import tempfile  # noqa: F401 - state/atomic.py, at the first save
    from ..agent import loop  # noqa: F401
    from ..agent.provider import pricing  # noqa: F401
    from ..lsp import pipe_writer  # noqa: F401
    from ..state.memory import compaction  # noqa: F401

    server = create_server()
    _warm_codecs(server)
    from . import codegen_cache

    codegen_cache.save()  # here, not in a thread: none may be running at the first fork
    # The bubblewrap probe (agent/tools/sandbox.py), which the service started in a thread: waited
    # for here, so the forks inherit its answer and no thread is left running at the first fork.
    sandbox_status("read-only")
    return server


def _warm_codecs(server: Any) -> None:
    """Meet, once here, every LSP message type a `shiro` session decodes and encodes.

    pygls converts messages with cattrs, which writes and compiles an (un)structure function per
    attrs class the first time it meets the class, and keeps it in that converter. The forks
    share this server's converter, so without this each child compiled the code for
    InitializeParams, InitializeResult and the whole ServerCapabilities tree again on its first
    `initialize` (about a quarter of a fork's CPU up to its first provider request). Nothing is
    sent or handled: the messages are only converted, and the server keeps no state of them.
    Best effort: a pygls that differs here only makes the forks do this themselves."""
    from lsprotocol import types

    hello = {
        "jsonrpc": "2.0", "id": 1, "method": types.INITIALIZE,
        "params": {
            "processId": os.getpid(), "clientInfo": {"name": "shiro", "version": "0"}, "rootUri": "file:///",
            "workspaceFolders": [{"uri": "file:///", "name": "/"}], "initializationOptions": {"model": "warm-up"},
            "capabilities": {
                "workspace": {"applyEdit": False, "workspaceFolders": True, "configuration": False},
                "window": {"workDoneProgress": False,
                           "showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}}},
            },
        },
    }
    try:
        for _ in range(2):  # measured: cattrs generated 28 functions at the first pass, 22 at the second, none after
            _convert_once(server, hello)
    except Exception:  # noqa: BLE001 - an optimisation only: never a reason not to serve
        pass


def _convert_once(server: Any, hello: dict[str, Any]) -> None:
    """Decode what the client sends and encode what the server answers, as pygls does."""
    from lsprotocol import types

    from .. import protocol as wire
    from ..lsp.pygls_overrides import encode_message, server_capabilities

    proto = server.protocol
    params = proto.structure_message(hello).params
    for message in (
        {"jsonrpc": "2.0", "method": types.INITIALIZED, "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": types.WORKSPACE_EXECUTE_COMMAND,
         "params": {"command": wire.CHAT, "arguments": [{"prompt": "warm-up"}]}},
        {"jsonrpc": "2.0", "id": 3, "method": types.SHUTDOWN},
        {"jsonrpc": "2.0", "method": types.EXIT},
        {"jsonrpc": "2.0", "id": 4, "result": {"title": "Allow"}},
    ):
        proto.structure_message(message)
    capabilities = server_capabilities(server, params.capabilities)  # pygls's internals, reached there only
    result = types.InitializeResult(capabilities=capabilities, server_info=proto.server_info)
    info = types.MessageType.Info
    for out in (
        types.InitializeResponse(id=1, result=result),
        types.ExecuteCommandResponse(id=2, result={"status": "completed"}),
        types.ShutdownResponse(id=3, result=None),
        types.LogMessageNotification(params=types.LogMessageParams(type=info, message="")),
        types.ShowMessageNotification(params=types.ShowMessageParams(type=info, message="")),
        types.ShowMessageRequest(id=4, params=types.ShowMessageRequestParams(
            type=info, message="", actions=[types.MessageActionItem(title="Allow")])),
    ):
        encode_message(proto, out)


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
        # The prebuilt server holds its state home (the sessions and short-term memory stores are
        # opened on it: features/sessions.py, short_term_memory.py). The socket's key names the
        # home, so a client always has the same one; should it not, a new server is built.
        same_home = warm_socket.home_of(os.environ) == warm_socket.home_of(dict(header["env"]))
        os.environ.clear()
        os.environ.update({str(k): str(v) for k, v in dict(header["env"]).items()})
        if not same_home:
            from ..lsp import create_server

            server = create_server()
        os.umask(int(header.get("umask", 0o022)))
        conn.sendall(json.dumps({"pid": os.getpid()}).encode() + b"\n")
        from .trace import mark

        mark("warm-child")
        from ..cli import main

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
