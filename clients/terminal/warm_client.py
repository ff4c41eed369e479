"""The client's half of the warm server (server/startup/warm.py): attach when one is up, start one for
next time when none was.

Attaching is two halves. `handshake` is synchronous and stdlib only, so `shiro` runs it first
thing, before importing asyncio and the rest of the client: the warm server forks and the
child gets ready while the client is still importing. `link` then wraps the pipes in asyncio
streams. The handshake: connect to the socket in the user's private runtime directory (refused unless that
directory is this user's alone), check that the peer runs as this user (SO_PEERCRED), hand over
the server ends of three fresh pipes with our directory, environment and umask, and read back
the pid of the forked server. Any failure on the way means "no warm server": the caller spawns
one as before, so the warm server can only make a start faster, never break it.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys
from pathlib import Path

from ..startup.warm_socket import PROTOCOL_VERSION, UnsafeDirectory, enabled, peer_uid, socket_path
from .process import safe_python

TYPE_CHECKING = False  # not typing's: importing typing costs the early path milliseconds (mypy knows the name)
if TYPE_CHECKING:
    from .chat_ahead import ChatAhead
    from .launch import ServerLink

HANDSHAKE_TIMEOUT_S = 5.0


class Handshake:
    """A forked warm child: its pid, the connection it reports its exit on, our pipe ends. (A
    plain class: dataclasses would import inspect, which this early path avoids.)"""

    def __init__(self, sock: socket.socket, pid: int, stdin_w: int, stdout_r: int, stderr_r: int) -> None:
        self.sock, self.pid = sock, pid
        self.stdin_w, self.stdout_r, self.stderr_r = stdin_w, stdout_r, stderr_r
        self.ahead: ChatAhead | None = None  # `shiro -p`: the thread that sends the chat early


def handshake(cwd: Path, env: dict[str, str]) -> Handshake | None:
    if not enabled(env):
        return None
    try:
        path = socket_path(env)
    except UnsafeDirectory:
        return None
    if not path.exists():
        return None
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ours: list[int] = []
    theirs: list[int] = []
    try:
        sock.settimeout(HANDSHAKE_TIMEOUT_S)
        sock.connect(str(path))
        if peer_uid(sock) != os.getuid():
            raise OSError("the warm server runs as another user")
        pipes = [os.pipe2(os.O_CLOEXEC) for _ in range(3)]  # (read end, write end) each
        theirs = [pipes[0][0], pipes[1][1], pipes[2][1]]  # the server's stdin, stdout, stderr
        ours = [pipes[0][1], pipes[1][0], pipes[2][0]]
        pid = hand_over(sock, str(cwd), env, theirs)
        for fd in theirs:
            os.close(fd)
        theirs = []
    except (OSError, ValueError, KeyError, TypeError):
        for fd in ours + theirs:
            try:
                os.close(fd)
            except OSError:
                pass
        sock.close()
        return None
    return Handshake(sock, pid, ours[0], ours[1], ours[2])


def hand_over(sock: socket.socket, cwd: str, env: dict[str, str], stdio: list[int]) -> int:
    """Send the warm server our directory, environment and umask with the three fds its child
    takes as stdin, stdout and stderr; the forked child's pid. Raises OSError or ValueError."""
    umask = os.umask(0)
    os.umask(umask)
    body = json.dumps({"v": PROTOCOL_VERSION, "cwd": cwd, "env": env, "umask": umask}).encode()
    socket.send_fds(sock, [struct.pack("!I", len(body)) + body], stdio)
    line = b""
    while not line.endswith(b"\n"):
        more = sock.recv(256)
        if not more:
            raise OSError("the warm server closed the connection")
        line += more
    return int(json.loads(line)["pid"])


def exit_status(reported: bytes, unknown: int = -9) -> int:
    """The exit status a warm child wrote last on its connection (`{"exit": n}`), or `unknown`
    when it ended without one (killed)."""
    code = unknown
    for line in reported.splitlines():
        try:
            code = int(json.loads(line).get("exit", code))
        except (ValueError, AttributeError):
            pass
    return code


async def link(shake: Handshake) -> ServerLink:
    import asyncio

    from .launch import LaunchError, ServerLink

    sock, pid, stdin_w, stdout_r, stderr_r = shake.sock, shake.pid, shake.stdin_w, shake.stdout_r, shake.stderr_r
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    if shake.ahead is not None:
        # Its bytes come first, and the pipe is the reader's alone from here on.
        if not shake.ahead.join(HANDSHAKE_TIMEOUT_S * 6):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
            raise LaunchError("the warm server did not answer initialize")
        reader.feed_data(shake.ahead.read)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(stdout_r, "rb", 0))
    err = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(err), os.fdopen(stderr_r, "rb", 0))
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, os.fdopen(stdin_w, "wb", 0))
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    sock.setblocking(False)
    status: list[int] = []

    async def watch() -> int:
        # The child keeps this connection until it ends and writes its exit status there last.
        data = b""
        try:
            while True:
                more = await loop.sock_recv(sock, 256)
                if not more:
                    break
                data += more
        except OSError:
            pass
        sock.close()
        code = exit_status(data)
        status.append(code)
        return code

    watcher = asyncio.ensure_future(watch())

    def kill() -> None:
        if not status:
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass

    return ServerLink(reader, writer, err, pid, lambda: asyncio.shield(watcher), kill,
                      lambda: status[0] if status else None, warm=True, ahead=shake.ahead)


def start_warm_later(env: dict[str, str]) -> None:
    """Start a warm server for the next run, detached (it lives on its own after we exit)."""
    if not enabled(env):
        return
    import subprocess

    try:
        subprocess.Popen(
            safe_python("shiro_neko.startup.warm"), cwd="/", env=env, start_new_session=True,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, close_fds=True,
        )
    except OSError:
        pass
