"""How `shiro` reaches a language server: a warm one over the user's socket when one is up
(server/startup/warm.py, docs/performance.md), else `python -P -m shiro_neko` over stdio (process.safe_python).

Either way the result is a `ServerLink`: the server's stdin/stdout/stderr as asyncio streams and
a handle on the process, so the rest of the client never knows which it got.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

from .process import safe_python

if TYPE_CHECKING:
    import subprocess


class LaunchError(Exception):
    """No server could be reached or started."""


@dataclass
class ServerLink:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    stderr: asyncio.StreamReader | None
    pid: int
    _wait: Callable[[], Awaitable[int]]
    _kill: Callable[[], None]
    _returncode: Callable[[], int | None]
    warm: bool = False
    ahead: Any = None  # chat_ahead.ChatAhead: what main() sent and read before this link existed

    @property
    def returncode(self) -> int | None:
        return self._returncode()

    async def wait(self) -> int:
        return await self._wait()

    def kill(self) -> None:
        self._kill()

    def close_input(self) -> None:
        """EOF on the server's stdin: it ends on its own even if `exit` was lost."""
        try:
            self.writer.close()
        except (OSError, RuntimeError):
            pass


async def spawn(cwd: Path, env: dict[str, str]) -> ServerLink:
    # Its own session: a Ctrl-C at the terminal is the client's to handle (abort), not the server's.
    try:
        process = await asyncio.create_subprocess_exec(
            *safe_python("shiro_neko"), cwd=str(cwd), env=env, start_new_session=True,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )
    except OSError as exc:
        raise LaunchError(str(exc)) from None
    assert process.stdin is not None and process.stdout is not None

    def kill() -> None:
        if process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass

    return ServerLink(process.stdout, process.stdin, process.stderr, process.pid, process.wait, kill,
                      lambda: process.returncode)


async def link_process(process: "subprocess.Popen[bytes]") -> ServerLink:
    """A server main() spawned before asyncio was imported (process.spawn_early), as a link."""
    assert process.stdin is not None and process.stdout is not None and process.stderr is not None
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**24)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), process.stdout)
    err = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(err), process.stderr)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, process.stdin)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    ended: asyncio.Future[int] = loop.create_future()

    def reap() -> None:
        code = process.poll()
        if code is not None and not ended.done():
            loop.remove_reader(pidfd)
            os.close(pidfd)
            ended.set_result(code)

    # A pidfd turns readable when the process ends: its exit is seen without a thread (a waiting
    # thread would hold up asyncio.run's end, and so `shiro -p`'s exit, until the server ended).
    pidfd = os.pidfd_open(process.pid)
    loop.add_reader(pidfd, reap)

    def kill() -> None:
        if process.poll() is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass

    return ServerLink(reader, writer, err, process.pid, lambda: asyncio.shield(ended), kill, process.poll)


NOT_TRIED = "not tried"


async def launch(cwd: Path, env: dict[str, str], early: Any = NOT_TRIED) -> ServerLink:
    """`early`: what main() started before the client's own imports (a warm server's handshake,
    warm_client.Handshake, or a spawned process; None: neither worked), else the warm server is
    tried now. Nothing running yet: spawn a server."""
    import subprocess

    from . import warm_client

    if early == NOT_TRIED:
        early = warm_client.handshake(cwd, env)
    if isinstance(early, warm_client.Handshake):
        return await warm_client.link(early)
    if isinstance(early, subprocess.Popen):
        return await link_process(early)
    return await spawn(cwd, env)
