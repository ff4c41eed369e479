"""The client process's own edges, stdlib only (imported before asyncio, see clients/terminal/main.py):
the environment its language server gets, the server spawned first thing, and the exit."""

from __future__ import annotations

import os
import sys
from pathlib import Path

TYPE_CHECKING = False  # not typing's (an import this early path does without); mypy knows the name
if TYPE_CHECKING:
    import subprocess


def safe_python(module: str) -> list[str]:
    """`python -P -m module`: the argv of every Python process the client starts.

    A plain `python -m` puts its working directory first on sys.path, and the server runs in the
    workspace: a repository shipping `json.py` or `msgspec.py` would have it imported, unasked, on
    every start (issue 35). `-P` (Python 3.11+, pyproject's floor) leaves the directory out and
    nothing else; `-I` would also drop the user's PYTHONPATH and user site, which an install may
    rely on. Not PYTHONSAFEPATH in the environment: the server hands its environment on to the
    commands the agent runs, where the user's own `python -m pytest` needs its directory."""
    return [sys.executable, "-P", "-m", module]


def server_env(prompt_coming: bool) -> dict[str, str]:
    """The server's environment: ours, plus whether a turn follows (then the server imports the
    SDK while it starts; read by server/__main__.py)."""
    env = dict(os.environ)
    if prompt_coming:
        env["SHIRO_PRELOAD_SDK"] = "1"
    return env


def spawn_early(cwd: Path, env: dict[str, str]) -> "subprocess.Popen[bytes] | None":
    """`python -m shiro_neko` on three pipes, started before the client imports asyncio and the
    wire layer, so its cold start overlaps them (clients/terminal/launch.py links it to asyncio later).
    None if it could not be started: the later spawn tries again and reports why."""
    import subprocess

    try:
        # Its own session: a Ctrl-C at the terminal is the client's to handle (abort), not the server's.
        return subprocess.Popen(
            safe_python("shiro_neko"), cwd=str(cwd), env=env, start_new_session=True, bufsize=0,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
    except OSError:
        return None


def fast_exit(code: int) -> None:
    """End the client process now: streams flushed, no interpreter teardown (tens of ms of module
    and thread clean-up that `shiro -p` would otherwise make a script wait for)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)
