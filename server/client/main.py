"""`shiro`: the terminal client of `shiro-lsp`.

    shiro                       interactive chat in this directory
    shiro -p "prompt"           one turn, the answer on stdout (scripts, CI)
    shiro -c [-p ...]           continue the newest session of this directory
    shiro -r PREFIX [-p ...]    continue a session by id or unique prefix
    shiro sessions [--json]     this directory's sessions, newest first
    shiro acp                   the agent over the Agent Client Protocol on stdio (Zed, JetBrains)

The client starts the language server (`python -m shiro_neko`) and speaks LSP to it; the flags
travel as `initializationOptions`. prompt_toolkit is imported only for the interactive UI, and
nothing here talks to the network: only the server contacts the model endpoint.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from .. import __version__
from ..trace import mark, mark_peak_rss
from . import render
from .connection import CommandError, Connection, ServerGone, init_options

EXIT_USAGE = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="shiro",
        usage="shiro [-p PROMPT] [-c | -r ID] [--agent NAME] [--model NAME] [--no-memory] [--approvals MODE]\n"
        "       [--base-url URL] [--wire-api API]\n"
        "       shiro sessions [--json] [--limit N]\n"
        "       shiro acp [--model NAME] [--agent NAME] [--approvals MODE] [--no-memory] [--base-url URL] [--wire-api API]",
        description="shiro-neko in the terminal: a coding agent behind a language server.",
        epilog="Keys: Esc or Ctrl-C abort the turn, Ctrl-C twice or Ctrl-D leave, Up/Down walk the prompt history. "
        "Type /help inside for slash commands.",
    )
    parser.add_argument("-p", "--print", dest="prompt", metavar="PROMPT",
                        help='run one turn and print the answer on stdout ("-" reads the prompt from stdin)')
    which = parser.add_mutually_exclusive_group()
    which.add_argument("-c", "--continue", dest="cont", action="store_true", help="continue the newest session of this directory")
    which.add_argument("-r", "--resume", metavar="ID", help="continue the session with this id or unique id prefix")
    parser.add_argument("--fork", action="store_true",
                        help="with -r: continue a session recorded in another directory as a copy recorded here")
    parser.add_argument("--agent", metavar="NAME", help="agent variant (default, deep)")
    parser.add_argument("--model", metavar="NAME", help="model name (overrides SHIRO_MODEL)")
    parser.add_argument("--no-memory", action="store_true", help="neither load nor write project memory")
    parser.add_argument("--approvals", choices=("ask", "auto-edit", "auto"),
                        help="which tool calls need your yes, for this run (default: the setting, ask)")
    parser.add_argument("--base-url", metavar="URL",
                        help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:11434/v1 for Ollama (overrides OPENAI_BASE_URL)")
    parser.add_argument("--wire-api", choices=("responses", "chat", "auto"),
                        help="API shape the endpoint speaks (chat for most local servers; default: the setting, responses)")
    parser.add_argument("--version", action="version", version=f"shiro {__version__}")
    sub = parser.add_subparsers(dest="command", title="subcommands", metavar="sessions | acp")
    sessions = sub.add_parser("sessions", help="list this directory's sessions, newest first")
    sessions.add_argument("--json", action="store_true", help="print JSON: {sessions: [{id, title, ...}]}")
    sessions.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    sub.add_parser("acp", help="serve Agent Client Protocol editors on stdio (see docs/acp.md)")
    return parser.parse_args(argv)


def _err(message: str) -> None:
    color = sys.stderr.isatty()
    print(render.to_ansi([("red", message)], color), file=sys.stderr, flush=True)


async def _connect(args: argparse.Namespace, cwd: Path, prompt_coming: bool = True) -> Connection:
    from ..user_settings import load_user_settings, merge

    conn = Connection(cwd, prompt_coming=prompt_coming)
    conn.launch()  # the server starts (or a warm one is reached) while the settings file is read
    await asyncio.sleep(0)  # let the launch run up to its first wait: the process exists by then
    loaded = load_user_settings(cwd)
    for problem in loaded.problems:
        _err(f"shiro: settings file {problem}")
    flags = init_options(
        agent=args.agent, model=args.model, no_memory=args.no_memory, approvals=args.approvals,
        base_url=args.base_url, wire_api=args.wire_api,
    )
    conn.init_options = merge(loaded.settings, flags)
    await conn.start()
    return conn


async def _resume(conn: Connection, args: argparse.Namespace) -> dict[str, Any] | None:
    if not (args.cont or args.resume):
        return None
    return await conn.resume(args.resume, fork=args.fork)


async def run_sessions(args: argparse.Namespace, cwd: Path) -> int:
    conn = await _connect(args, cwd, prompt_coming=False)
    try:
        rows = await conn.sessions(max(1, args.limit))
    finally:
        await conn.close()
    if args.json:
        print(json.dumps({"sessions": rows}, indent=2, ensure_ascii=False))
    else:
        for line in render.sessions_lines(rows):
            print(render.to_ansi(line, sys.stdout.isatty()))
    return 0


async def run_oneshot(args: argparse.Namespace, cwd: Path, prompt: str) -> int:
    from .oneshot import OneShot

    conn = await _connect(args, cwd)
    try:
        oneshot = OneShot(conn)  # listening before a resume: it may re-ask a suspended approval
        await _resume(conn, args)
        code = await oneshot.run(prompt)
    finally:
        lines = await conn.close()
    if sys.stderr.isatty():
        for line in render.shutdown_lines(lines):
            print(render.to_ansi([("dim", line)], True), file=sys.stderr)
    return code


async def run_interactive(args: argparse.Namespace, cwd: Path) -> int:
    conn = await _connect(args, cwd)  # the server starts while prompt_toolkit loads
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


def main(argv: list[str] | None = None) -> None:
    mark("client-main")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["acp"]:
        # The ACP front end runs in place of this process (same pid and pipes); the terminal
        # client stays free of the server's internals.
        os.execv(sys.executable, [sys.executable, "-m", "shiro_neko.acp", *argv[1:]])
    args = parse_args(argv)
    logging.basicConfig(level=logging.CRITICAL + 1, handlers=[logging.NullHandler()])  # the terminal is the UI's
    cwd = Path.cwd().resolve()
    try:
        if args.command == "sessions":
            code = asyncio.run(run_sessions(args, cwd))
        elif args.prompt is not None:
            prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
            if not prompt.strip():
                _err("shiro: the prompt is empty")
                sys.exit(EXIT_USAGE)
            code = asyncio.run(run_oneshot(args, cwd, prompt))
        else:
            if not (sys.stdin.isatty() and sys.stdout.isatty()):
                _err('shiro: no terminal here; run one turn with  shiro -p "prompt"')
                sys.exit(EXIT_USAGE)
            code = asyncio.run(run_interactive(args, cwd))
    except (CommandError, ServerGone) as exc:
        _err(f"shiro: {exc}")
        code = 1
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        # The reader went away (`shiro sessions | head`): end quietly, as a tool killed by SIGPIPE
        # would (128 + 13); fast_exit's flush of the dead pipe is ignored.
        code = 141
    mark_peak_rss("client")
    mark("client-exit")
    from .launch import fast_exit

    fast_exit(code)


if __name__ == "__main__":
    main()
