"""How `shiro` reaches a language server: a warm one over the user's socket when one is up
(server/warm.py, docs/performance.md), else `sys.executable -m shiro_neko` over stdio.

Either way the result is a `ServerLink`: the server's stdin/stdout/stderr as asyncio streams and
a handle on the process, so the rest of the client never knows which it got.
"""

from __future__ import annotations

import asyncio
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Awaitable, Callable


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
            sys.executable, "-m", "shiro_neko", cwd=str(cwd), env=env, start_new_session=True,
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


async def launch(cwd: Path, env: dict[str, str]) -> ServerLink:
    from . import warm_client

    link: Any = await warm_client.attach(cwd, env)
    if link is not None:
        return link
    return await spawn(cwd, env)


def fast_exit(code: int) -> None:
    """End the client process now: streams flushed, no interpreter teardown (tens of ms of module
    and thread clean-up that `shiro -p` would otherwise make a script wait for)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
