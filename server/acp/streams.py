"""stdio for ACP: the protocol owns fd 1, and a malformed frame gets a JSON-RPC error.

The `agent-client-protocol` package does the framing; two things are ours. fd 1 is moved to a
private descriptor and fd 1 itself pointed at stderr, so a stray `print` or a child process that
inherits stdout cannot corrupt the stream. And the package logs and skips a
line that is not JSON without answering; JSON-RPC says such a line gets a Parse error (-32700), so
lines that are not one JSON object are answered here and never reach it.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys

log = logging.getLogger(__name__)

LINE_LIMIT = 50 * 1024 * 1024  # the package's own default: prompts may embed whole files
_running: set[asyncio.Task[None]] = set()


def _error(code: int, message: str) -> bytes:
    return (json.dumps({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}) + "\n").encode()


class NotAPipe(Exception):
    """stdin or stdout is a file or /dev/null: asyncio's pipe transports cannot serve it."""


def _check_streamable(name: str, fd: int) -> None:
    mode = os.fstat(fd).st_mode
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(fd)):
        raise NotAPipe(f"{name} must be a pipe, a socket or a terminal (an editor starts `shiro acp` with pipes)")


async def stdio() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    _check_streamable("stdin", sys.stdin.fileno())
    _check_streamable("stdout", sys.stdout.fileno())
    loop = asyncio.get_running_loop()
    raw = asyncio.StreamReader(limit=LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(raw), sys.stdin)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb", buffering=0)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    sys.stdout = sys.stderr
    transport, protocol = await loop.connect_write_pipe(lambda: asyncio.StreamReaderProtocol(asyncio.StreamReader()), out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    checked = asyncio.StreamReader(limit=LINE_LIMIT)
    _running.add(loop.create_task(_check_frames(raw, checked, writer)))  # held: the loop keeps only weak refs
    return checked, writer


async def _check_frames(raw: asyncio.StreamReader, checked: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while line := await raw.readline():
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                log.warning("not JSON, answered with a parse error: %.200r", line)
                writer.write(_error(-32700, "Parse error: a frame must be one JSON object on one line"))
                continue
            if not isinstance(message, dict):
                writer.write(_error(-32600, "Invalid request: a frame must be a JSON object"))
                continue
            checked.feed_data(line if line.endswith(b"\n") else line + b"\n")
    except Exception:  # too long a line, or the pipe broke: end the session as EOF would
        log.exception("reading stdin failed")
    finally:
        checked.feed_eof()
