"""The `initialize` request the client opens with, built and (on a warm server) sent before
asyncio and the wire layer are imported: stdlib only (clients/terminal/main.py, docs/performance.md).

Only `initialize` goes early: LSP lets nothing else be sent before its answer, so `initialized`
and the first command still wait for it (clients/terminal/connection.py). What it saves is the time the
server takes to answer, which now overlaps the client's own imports.
"""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import Any

from .. import __version__
from ..model.lsp_framing import frame as frame_body

INITIALIZE_ID = 1  # the first request of the connection (JsonRpc numbers the rest after it)


def init_options(
    *, agent: str | None, model: str | None, no_memory: bool, approvals: str | None,
    base_url: str | None = None, wire_api: str | None = None,
) -> dict[str, Any]:
    """The flags, as the `shiro` settings section (sent over the user settings file's)."""
    options: dict[str, Any] = {}
    if base_url:
        options["baseUrl"] = base_url
    if wire_api:
        options["wireApi"] = wire_api
    if agent:
        options["agent"] = agent
    if model:
        options["model"] = model
    if no_memory:
        options["memory"] = {"enabled": False}
    if approvals:
        options["approvals"] = approvals
    return options


def unconfigured(options: dict[str, Any]) -> bool:
    """No key and no endpoint: the server would refuse the first prompt (its provider needs one)."""
    return not (os.environ.get("OPENAI_API_KEY") or options.get("baseUrl") or os.environ.get("OPENAI_BASE_URL"))


def setup_text(then: str) -> list[str]:
    """What to do when nothing is configured, in terminal words (docs/terminal.md "First run"):
    a flag, a variable or the settings file, never the editor's setting names."""
    from ..user_settings import user_settings_path  # noqa: PLC0415 - only on a first run

    return [
        f"! no model endpoint is set up yet, so a prompt cannot be answered. {then}",
        "    shiro setup".ljust(48) + "asks for the endpoint and key and keeps them (Set up model)",
        "    export OPENAI_API_KEY=sk-…".ljust(48) + "for OpenAI",
        "    shiro --base-url http://127.0.0.1:11434/v1".ljust(48) + "an OpenAI-compatible server (Ollama, LiteLLM…)",
        f'    or write {{"baseUrl": "…"}} into {user_settings_path()}',
    ]


def settings_with_flags(args: argparse.Namespace, cwd: Path, report: Any, loaded: Any = None) -> dict[str, Any]:
    """The user settings file merged under the flags; `report(text)` names each problem of the file.
    `loaded`: the files as clients/terminal/trust.py read them (with the user's trust); else read here,
    trusting nothing of the project's."""
    from ..user_settings import load_user_settings, merge

    if loaded is None:
        loaded = load_user_settings(cwd)
    for problem in loaded.problems:
        report(f"shiro: settings file {problem}")
    flags = init_options(
        agent=args.agent, model=args.model, no_memory=args.no_memory, approvals=args.approvals,
        base_url=args.base_url, wire_api=args.wire_api,
    )
    if getattr(args, "max_cost_usd", None) is not None:
        flags["maxCostUsd"] = args.max_cost_usd
    return merge(loaded.settings, flags)


def capabilities() -> dict[str, Any]:
    return {
        "workspace": {
            "applyEdit": False,  # the server writes files itself
            "workspaceFolders": True,
            "configuration": False,  # settings travel as initializationOptions
        },
        "window": {
            "workDoneProgress": False,
            "showMessage": {"messageActionItem": {"additionalPropertiesSupport": False}},
        },
        # shiro/approve: an edit's approval comes with its diff, a denial can carry a reason.
        "experimental": {"shiro": {"approvals": True}},
    }


def initialize_params(cwd: Path, options: dict[str, Any]) -> dict[str, Any]:
    folder = {"uri": cwd.as_uri(), "name": cwd.name or str(cwd)}
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "shiro", "version": __version__},
        "capabilities": capabilities(),
        "rootUri": folder["uri"],
        "workspaceFolders": [folder],
        "initializationOptions": options or None,
    }


def frame(message: dict[str, Any]) -> bytes:
    """One message, framed by server/model/lsp_framing.py as clients/terminal/jsonrpc.py frames it (stdlib json:
    msgspec is not loaded yet)."""
    return frame_body(json.dumps(message, ensure_ascii=False, separators=(",", ":")).encode())


def initialize_frame(cwd: Path, options: dict[str, Any]) -> bytes:
    """The whole `initialize` message."""
    return frame({"jsonrpc": "2.0", "id": INITIALIZE_ID, "method": "initialize", "params": initialize_params(cwd, options)})


def send_early(fd: int, frame: bytes) -> bool:
    """Write the frame to the server's stdin pipe now (a blocking pipe, and the frame is far
    smaller than its buffer: this does not wait on the server). False when the pipe is broken:
    the server is gone, which the connection then reports."""
    view = memoryview(frame)
    try:
        while view:
            view = view[os.write(fd, view):]
    except OSError:
        return False
    return True
