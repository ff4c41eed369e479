"""`shiro-lsp`: the language server over stdio (default) or TCP."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from typing import Any

from . import __version__


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="shiro-lsp",
        description="shiro-neko language server: a coding agent behind LSP (stdio by default).",
    )
    parser.add_argument("--version", action="version", version=f"shiro-lsp {__version__}")
    parser.add_argument("--stdio", action="store_true", help="speak LSP over stdin/stdout (the default)")
    parser.add_argument("--tcp", action="store_true", help="listen on TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    parser.add_argument(
        "--token-file", metavar="PATH",
        help="TCP: the token a client must send (initializationOptions.authToken) is read from PATH, or written "
             "there (0600) when it does not exist; default: a new token per start in a private runtime "
             "directory (its path is printed); $SHIRO_LSP_TOKEN gives the token itself",
    )
    parser.add_argument(
        "--log-level",
        default=os.environ.get("SHIRO_LOG", "WARNING"),
        help="stderr log level (default $SHIRO_LOG, else WARNING)",
    )
    return parser.parse_args(argv)


class _QuietRefusals(logging.Filter):
    """pygls logs a traceback for every error answer; a refusal we raised on purpose is not one."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        from pygls.exceptions import JsonRpcException

        return not isinstance(exc, JsonRpcException)


def main(argv: list[str] | None = None, prebuilt: Any = None) -> None:
    """`prebuilt`: a never-used server from create_server() (the warm server forks with one ready)."""
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr, format="shiro-lsp %(levelname)s %(name)s: %(message)s")
    for handler in logging.getLogger().handlers:
        handler.addFilter(_QuietRefusals())
    # pygls prints whole messages (InitializeParams at INFO, every message at DEBUG), and settings
    # carry secrets (MCP `env` and `headers`): its own lines stay at WARNING and above.
    logging.getLogger("pygls").setLevel(max(logging.WARNING, logging.getLogger().getEffectiveLevel()))
    from .startup.import_gc import paused
    from .startup.trace import mark, mark_peak_rss

    # The front (server/startup/lsp_front.py) is for a spawned stdio server: a warm server's fork has pygls
    # imported already. SHIRO_LSP_FRONT=0 turns it off (bench/editor_start.py's A/B in one run).
    secret = None
    if args.tcp:  # before the imports: a token that cannot be made or trusted fails at once
        from .tcp_secret import TokenError, load

        try:
            secret = load(args.token_file, args.port, os.environ)
        except TokenError as exc:
            print(f"shiro-lsp: {exc}", file=sys.stderr)
            sys.exit(2)
    if prebuilt is not None or args.tcp or os.environ.get("SHIRO_LSP_FRONT") == "0":
        with paused():  # no full GC passes over the import-time objects (server/startup/import_gc.py)
            from .lsp import create_server  # after argument parsing: --help and --version stay instant

            mark("server-imported")
            server = prebuilt if prebuilt is not None else create_server()
        if secret is not None:
            try:
                server.serve_tcp(args.host, args.port, secret)  # only the token's holder is served (lsp/tcp_guard.py)
            finally:
                secret.forget()
        else:
            server.serve_stdio()
    else:
        server = _serve_stdio_cold()
        if server is None:
            return
    server.after_exit()
    from .startup import codegen_cache

    codegen_cache.save()  # what cattrs compiled for this session's messages, if the cache missed
    mark_peak_rss("server")
    mark("server-exit")


def _serve_stdio_cold() -> Any:
    """A spawned server: the LSP layer imports in a thread while the stdlib front answers
    `initialize` (server/startup/lsp_front.py), then the pygls server takes the stream over. None when the
    input ended or broke before anything could be served."""
    import threading

    from .startup import lsp_front
    from .startup.import_gc import paused
    from .startup.trace import mark

    with paused():  # the front's command names (lsp_front.commands), before the thread competes for the GIL
        from . import protocol  # noqa: F401

    built: list[Any] = []
    failed: list[BaseException] = []

    def load() -> None:
        try:
            with paused():  # no full GC passes over the import-time objects (server/startup/import_gc.py)
                from .agent.tools.sandbox import probe_soon

                probe_soon()  # its process runs while the LSP layer imports (sandbox.py, `_probes`)
                from .lsp import create_server

                mark("server-imported")
                built.append(create_server())
        except BaseException as exc:  # re-raised on the main thread
            failed.append(exc)

    loader = threading.Thread(target=load, name="shiro-lsp-import", daemon=True)
    loader.start()
    handover = lsp_front.answer_initialize(sys.stdin.buffer, sys.stdout.buffer, __version__)
    loader.join()
    if failed:
        raise failed[0]
    from .startup import codegen_cache

    codegen_cache.save_soon()  # what attrs compiled for lsprotocol, if the cache missed
    handover.log_malformed()
    if handover.closed:
        return None
    server = built[0]
    server.serve_stdio(handover)
    return server


if __name__ == "__main__":
    main()
