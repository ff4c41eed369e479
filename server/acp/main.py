"""`shiro acp`: the agent over the Agent Client Protocol on stdio.

    shiro acp [--model NAME] [--agent NAME] [--approvals MODE] [--no-memory] [--base-url URL] [--wire-api API]

Settings come from the user settings file (docs/configuration.md), as for the terminal client; the flags
override them for this run. Logging goes to stderr: stdout is the protocol's.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import signal
import sys
from pathlib import Path
from typing import Any

from .. import __version__

log = logging.getLogger("shiro_neko.acp")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="shiro acp", description="shiro-neko for Agent Client Protocol editors (Zed, JetBrains).")
    parser.add_argument("--model", metavar="NAME", help="model name (overrides the settings and SHIRO_MODEL)")
    parser.add_argument("--agent", metavar="NAME", help="agent variant (default, deep)")
    parser.add_argument("--approvals", choices=("ask", "auto-edit", "auto"), help="the starting session mode")
    parser.add_argument("--no-memory", action="store_true", help="neither load nor write project memory")
    parser.add_argument("--base-url", metavar="URL", help="OpenAI-compatible endpoint (overrides OPENAI_BASE_URL)")
    parser.add_argument("--wire-api", choices=("responses", "chat", "auto"), help="API shape the endpoint speaks")
    parser.add_argument("--version", action="version", version=f"shiro acp {__version__}")
    return parser.parse_args(argv)


def flag_settings(args: argparse.Namespace) -> dict[str, Any]:
    settings: dict[str, Any] = {}
    if args.model:
        settings["model"] = args.model
    if args.agent:
        settings["agent"] = args.agent
    if args.approvals:
        settings["approvals"] = args.approvals
    if args.base_url:
        settings["baseUrl"] = args.base_url
    if args.wire_api:
        settings["wireApi"] = args.wire_api
    if args.no_memory:
        settings["memory"] = {"enabled": False}
    return settings


async def serve(args: argparse.Namespace) -> None:
    from ..startup.import_gc import paused

    with paused():  # no full GC passes over the import-time objects (server/startup/import_gc.py)
        import acp  # noqa: PLC0415 - its schema costs ~0.5 s; only this command pays it

        from ..project_settings import describe
        from ..service import ShiroService
        from ..state.home_modes import tighten_soon
        from ..state.paths import shiro_home, workspace_key
        from ..state.trust import TrustStore
        from ..user_settings import load_user_settings
        from .agent import AcpBridge, ShiroAcpAgent
        from .streams import NotAPipe, stdio

    bridge = AcpBridge()
    service = ShiroService(bridge)
    tighten_soon()  # state/home_modes.py: the state home's modes, once, in a thread
    from .. import resume_hints

    service.resume_lines = resume_hints.acp  # the editor loads it: no `shiro -c` in its log
    # Editors start the agent in the project's directory: its project file applies too, as far
    # as the user's trust in it allows (docs/protocol.md "Workspace trust"). ACP has no question of its
    # own for settings: what waits is named in a notice; `shiro trust` in a shell trusts it.
    cwd = Path.cwd().resolve()
    from_files = load_user_settings(cwd, TrustStore(shiro_home()).lookup(workspace_key(cwd), cwd))
    for problem in from_files.problems:
        log.warning("%s", problem)
    for held in from_files.held:
        keys = [k for k in held.keys if not k.startswith("mcpServers.")]  # servers: the MCP notice names them
        if keys:
            why = "you chose not to trust it" if held.decision == "declined" else "this folder is not trusted"
            service.trust_notices.append(f"{held.name} held back ({why}): {describe(keys)}; `shiro trust` in this folder applies them")
    service.update_settings(from_files.settings)
    service.update_settings(flag_settings(args))
    try:
        reader, writer = await stdio()
    except NotAPipe as exc:
        print(f"shiro acp: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None
    # The SDK's Agent protocol lists every optional method; it dispatches only to those defined.
    serving = asyncio.ensure_future(acp.run_agent(ShiroAcpAgent(service, bridge), writer, reader))  # type: ignore[arg-type]
    # An editor that stops the agent with SIGTERM gets the same saved ending as a closed pipe.
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, serving.cancel)
    try:
        await serving
    except asyncio.CancelledError:
        log.info("SIGTERM: saving and leaving")
    finally:
        # The editor closed the pipe: end running turns (a waiting approval stays pending) and save.
        await service.stop()
        await service.flush(log_line=lambda line: print(line, file=sys.stderr, flush=True))


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    level = os.environ.get("SHIRO_LOG_LEVEL", "WARNING").upper()
    logging.basicConfig(stream=sys.stderr, level=getattr(logging, level, logging.WARNING),
                        format="shiro acp %(levelname)s %(name)s: %(message)s")
    try:
        asyncio.run(serve(args))
    except KeyboardInterrupt:
        return 130
    return 0
