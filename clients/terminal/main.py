"""`shiro`: the terminal client of `shiro-lsp`.

    shiro                       interactive chat in this directory
    shiro -p "prompt"           one turn, the answer on stdout (scripts, CI)
    shiro -c [-p ...]           continue the newest session of this directory
    shiro -r PREFIX [-p ...]    continue a session by id or unique prefix
    shiro sessions [--json]     this directory's sessions, newest first
    shiro trust [DIR]           trust this directory's project settings as they are now
    shiro acp                   the agent over the Agent Client Protocol on stdio (Zed, JetBrains)

The client starts the language server (`python -m shiro_neko`) or attaches to a warm one, and
speaks LSP to it; the flags travel as `initializationOptions`. `shiro sessions` needs no server:
it reads the session store in this process (clients/terminal/local_sessions.py). Nothing here talks to the
network but the first run's (and `shiro setup`'s) model question, which lists the endpoint's
models before any server runs (clients/terminal/first_run.py); otherwise only the server contacts
the model endpoint.

This module is the entry point and stays small (docs/performance.md): it imports argparse and
nothing heavy, makes the warm server's handshake (stdlib only) before anything else is imported,
so the forked server gets ready while the client imports the rest, and only then loads what
the command needs: asyncio and the wire layer for a turn (clients/terminal/turns.py), prompt_toolkit only
for the interactive UI, the session store only for `shiro sessions`.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__
from ..startup.trace import mark, mark_peak_rss

EXIT_USAGE = 2


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="shiro",
        usage="shiro [-p PROMPT] [-c | -r ID] [--agent NAME] [--model NAME] [--no-memory] [--approvals MODE]\n"
        "       [--base-url URL] [--wire-api API] [--output-format text|json|stream-json] [--max-cost-usd N]\n"
        "       [--image PATH]...\n"
        "       shiro sessions [--json] [--limit N]\n"
        "       shiro trust [DIR]\n"
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
    which.add_argument("--private", action="store_true",
                       help="start a private session: its short-term memory stays out of other sessions")
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
    parser.add_argument("--image", action="append", default=[], metavar="PATH",
                        help="with -p: send this image with the prompt (PNG, JPEG, GIF, WebP; repeatable)")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text",
                        help="with -p: text (the answer), json (one result object), stream-json (one event per line, "
                        "then the result); docs/terminal.md")
    parser.add_argument("--max-cost-usd", type=float, metavar="N",
                        help="stop a turn before a request that would make it cost more than N US dollars (maxCostUsd)")
    parser.add_argument("--version", action="version", version=f"shiro {__version__}")
    sub = parser.add_subparsers(dest="command", title="subcommands", metavar="sessions | trust | acp")
    sessions = sub.add_parser("sessions", help="list this directory's sessions, newest first")
    sessions.add_argument("--json", action="store_true", help="print JSON: {sessions: [{id, title, ...}]}")
    sessions.add_argument("--limit", type=int, default=50, help="at most this many (default 50)")
    trust = sub.add_parser("trust", help="trust a directory's project settings (.shiro-neko/settings.json, .mcp.json) as they are now")
    trust.add_argument("dir", nargs="?", metavar="DIR", help="the directory (default: this one)")
    sub.add_parser("acp", help="serve Agent Client Protocol editors on stdio (see docs/acp.md)")
    sub.add_parser("setup", help="set up the model: ask for the endpoint, API key and model and keep them (the OS keyring; docs/models.md)")
    return parser.parse_args(argv)


def err(message: str) -> None:
    from . import render

    color = sys.stderr.isatty()
    print(render.to_ansi([("red", message)], color), file=sys.stderr, flush=True)


def _quiet_logging() -> None:
    import logging  # after the warm handshake: it is not the quickest import

    logging.basicConfig(level=logging.CRITICAL + 1, handlers=[logging.NullHandler()])  # the terminal is the UI's


def _dispatch(args: argparse.Namespace, cwd: Path) -> int:
    if args.command == "sessions":
        _quiet_logging()
        from .local_sessions import run_sessions

        return run_sessions(args, cwd)
    if args.command == "trust":
        from .trust import run_trust

        return run_trust(args, cwd)
    if args.command == "setup":
        from .first_run import run_setup

        return run_setup()
    prompt: str | None = None
    if args.output_format != "text" and args.prompt is None:
        err("shiro: --output-format is for one turn: shiro -p \"prompt\" --output-format json")
        return EXIT_USAGE
    if args.max_cost_usd is not None and args.max_cost_usd < 0:
        err("shiro: --max-cost-usd takes a number of US dollars, 0 or more")
        return EXIT_USAGE
    if args.prompt is not None:
        prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
        if not prompt.strip():
            err("shiro: the prompt is empty")
            return EXIT_USAGE
    elif not (sys.stdin.isatty() and sys.stdout.isatty()):
        err('shiro: no terminal here; run one turn with  shiro -p "prompt"')
        return EXIT_USAGE
    images: list[dict[str, object]] = []
    if args.image:
        if prompt is None:
            err('shiro: --image is for one turn: shiro -p "prompt" --image shot.png (in the chat, type @shot.png)')
            return EXIT_USAGE
        from .image_attach import ImageFlagError, flag_images

        try:
            images = flag_images(args.image)  # read and checked before a server starts: nothing is sent
        except ImageFlagError as exc:
            err(f"shiro: --image {exc}")
            return EXIT_USAGE
    if prompt is None:
        from . import trust

        # Before the server starts: the settings it gets depend on the answer (docs/security.md).
        loaded = trust.ask_at_start(cwd)
        for line in trust.held_lines(loaded):
            print(line, flush=True)
    from .process import server_env, spawn_early
    from .warm_client import handshake

    # The server first (a warm one forks at once; else a cold one starts its imports): it gets
    # ready while this process imports asyncio and the wire layer (clients/terminal/turns.py).
    # Interactive: the SDK is imported while the user types. `-p`: not before the request, which
    # leaves without it (server/agent/provider/early_request.py); the import would only delay it.
    env = server_env(prompt_coming=prompt is None)
    shake = handshake(cwd, env)
    early: object = shake if shake is not None else spawn_early(cwd, env)
    from .initialize import initialize_frame, send_early, settings_with_flags, setup_text, unconfigured

    if prompt is not None:
        # After the spawn: the trust record and the settings' parser are ~15 ms the server need not wait for.
        from . import trust

        loaded = trust.load(cwd)  # `shiro -p` never asks: it names what waits
        for line in trust.held_lines(loaded):
            err(line)
    options = settings_with_flags(args, cwd, err, loaded)
    from .first_run import apply, ask, stored

    # The endpoint and key a first run kept (docs/models.md); none anywhere: asked now, on a terminal.
    kept = stored(options)
    if kept is None and prompt is None and unconfigured(options):
        answers = ask()
        kept = answers.credentials if answers is not None else None
        if answers is not None and answers.model and not args.model:
            options = {**options, "model": answers.model}  # kept in the settings file for the next runs too
    options = apply(options, kept)
    key = kept.api_key if kept is not None else None
    if prompt is not None and unconfigured(options) and key is None:
        # Not sent: it would fail, and be saved as a session of one failed prompt (docs/terminal.md).
        for line in setup_text("Run it again after one of:"):
            err(line)
        return 1
    # A cold server reads its `initialize` long after asyncio has the pipes: only a warm one's goes now.
    sent = shake is not None and send_early(shake.stdin_w, initialize_frame(cwd, options))
    # A kept key goes to the server (shiro.setCredentials) before the first chat: no chat ahead then.
    if sent and shake is not None and prompt is not None and key is None and not (args.cont or args.resume or args.private):
        from .chat_ahead import ChatAhead

        shake.ahead = ChatAhead(shake.stdout_r, shake.stdin_w, prompt, images)  # the turn starts now
        from .. import protocol  # noqa: F401 - first of the client's imports: the chat needs its command name
    _quiet_logging()
    from .turns import run

    return run(args, cwd, prompt, early, options, sent, key, images)


def main(argv: list[str] | None = None) -> None:
    mark("client-main")
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["acp"]:
        # The ACP front end runs in place of this process (same pid and pipes); the terminal
        # client stays free of the server's internals.
        from .process import safe_python  # -P: the editor starts us in the project folder (process.py)

        os.execv(sys.executable, [*safe_python("shiro_neko.acp"), *argv[1:]])
    args = parse_args(argv)
    cwd = Path.cwd().resolve()
    try:
        code = _dispatch(args, cwd)
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        # The reader went away (`shiro sessions | head`): end quietly, as a tool killed by SIGPIPE
        # would (128 + 13); fast_exit's flush of the dead pipe is ignored.
        code = 141
    mark_peak_rss("client")
    mark("client-exit")
    from .process import fast_exit

    fast_exit(code)


if __name__ == "__main__":
    main()
