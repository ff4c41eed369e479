"""`shiro -p` and interactive `shiro`: connect to a language server, then run one turn or the chat UI.

Imported by clients/terminal/main.py only once it knows a server is needed (and after the warm server's
handshake is on its way): this is where asyncio and the wire layer come in.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from . import render
from .connection import Connection
from .main import err


def _connection(cwd: Path, early: Any, options: dict[str, Any], sent: bool, key: str | None = None) -> Connection:
    """`early`, `options`, `sent`: what main() started, the settings it read (file and flags),
    whether it already wrote `initialize`; `key`: the API key a first run kept (clients/terminal/first_run.py)."""
    return Connection(cwd, init_options=options, prompt_coming=True, early=early, initialize_sent=sent, api_key=key)


async def _resume(conn: Connection, args: argparse.Namespace) -> dict[str, Any] | None:
    if getattr(args, "private", False):
        return await conn.new_session(private=True)  # `shiro --private`: a new private session
    if not (args.cont or args.resume):
        return None
    return await conn.resume(args.resume, fork=args.fork)


async def run_oneshot(args: argparse.Namespace, cwd: Path, prompt: str, *started: Any,
                      images: list[dict[str, Any]] | None = None) -> int:
    from .oneshot import OneShot

    conn = _connection(cwd, *started)
    # Listening before the connection starts: the turn may already run (chat_ahead.py), and a
    # resume may re-ask a suspended approval.
    oneshot = OneShot(conn, approvals=conn.init_options.get("approvals"), output_format=args.output_format,
                      resumed=bool(args.cont or args.resume))
    await conn.start()
    try:
        await _resume(conn, args)
        code = await oneshot.run(prompt, images)
    finally:
        lines = await conn.close()
    if sys.stderr.isatty():
        for line in render.shutdown_lines(lines):
            print(render.to_ansi([("dim", line)], True), file=sys.stderr)
    return code


async def run_interactive(args: argparse.Namespace, cwd: Path, *started: Any) -> int:
    conn = _connection(cwd, *started)
    await conn.start()  # the server gets ready while prompt_toolkit loads
    from .interactive import Interactive

    try:
        ui = Interactive(conn, cwd)  # listening before a resume: it may re-ask a suspended approval
        resumed = await _resume(conn, args)
        lines = await ui.run(resumed)
    except BaseException:
        await conn.close()
        raise
    if render.shutdown_lines(lines):
        print(render.goodbye_text(lines), flush=True)
        return 0
    tail = "\n".join(list(conn.stderr_tail)[-5:])
    why = "The language server stopped before saying whether the session was saved." + (f"\n{tail}" if tail else "")
    print(render.goodbye_text(lines, why), flush=True)
    return 1


def run(args: argparse.Namespace, cwd: Path, prompt: str | None, early: Any, options: dict[str, Any],
        sent: bool, key: str | None = None, images: list[dict[str, Any]] | None = None) -> int:
    """Exit status of the run; a server that failed or went away is reported here. `images`: the
    `--image` files of `shiro -p`, read and checked (clients/terminal/image_attach.py)."""
    from .connection import CommandError, ServerGone

    try:
        if prompt is not None:
            return asyncio.run(run_oneshot(args, cwd, prompt, early, options, sent, key, images=images))
        return asyncio.run(run_interactive(args, cwd, early, options, sent, key))
    except (CommandError, ServerGone) as exc:
        err(f"shiro: {exc}")
        return 1
