"""Workspace trust in the terminal (docs/protocol.md "Workspace trust"): the one question before the
first turn, `shiro trust [DIR]`, and the settings the client sends once that is settled.

The question covers every project file that holds something back (`.shiro-neko/settings.json`'s
keys, `.mcp.json`'s servers) and records one answer for all of them in the trust record
(state/trust.py), which the server reads for the same files: the server never asks again about
what was answered here. `shiro -p` never asks; what it holds back is named on stderr.

This module and local_sessions.py are the client's only readers of state/ (the record is
written before the server starts, tests/unit/test_architecture.py). state/ is imported only when
a project file exists, so a folder without one pays nothing at start.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, Callable

from ..project_settings import HeldFile, describe
from ..model.visible_text import visible
from ..user_settings import UserSettings, load_user_settings

YES, NEVER, NOT_NOW = "trusted", "declined", None
QUESTION_KEYS = "[y] trust  [n] never (until these files change)  [Enter] not now"
TRUST_HINT = "`shiro trust` in this folder applies them"

# (file, sha256) the user answered "not now" about before the server started: the server's own
# question about those same contents is answered the same way, without asking twice.
not_now: set[tuple[str, str]] = set()


def already_answered(cwd: Path) -> bool:
    """The server asks about the project files: True when every one it can be asking about is
    one the user said "not now" to at start (a file changed since is asked about again)."""
    unasked = {(h.name, h.sha256) for h in load(cwd).held if h.decision is None}
    return bool(not_now) and unasked <= not_now


def _store() -> Any:
    from ..state.paths import shiro_home
    from ..state.trust import TrustStore

    return TrustStore(shiro_home())


def _lookup(cwd: Path) -> Callable[[str, str], str | None]:
    cached: list[Callable[[str, str], str | None]] = []

    def decision(name: str, sha: str) -> str | None:
        if not cached:  # the record is read once, and only when a project file holds something back
            from ..state.paths import workspace_key

            cached.append(_store().lookup(workspace_key(cwd), cwd))
        return cached[0](name, sha)

    return decision


def load(cwd: Path) -> UserSettings:
    """The settings files with the user's recorded trust applied."""
    return load_user_settings(cwd, _lookup(cwd))


def record(cwd: Path, files: list[HeldFile], decision: str) -> None:
    from ..state.paths import workspace_key

    _store().record(workspace_key(cwd), cwd, {f.name: f.sha256 for f in files}, decision)


def held_lines(loaded: UserSettings, with_servers: bool = False) -> list[str]:
    """One line per project file naming what it holds back. Without `with_servers`, the MCP
    servers are left to the server's own notice (it names them when a turn starts)."""
    out = []
    for held in loaded.held:
        keys = held.keys if with_servers else [k for k in held.keys if not k.startswith("mcpServers.")]
        if keys:
            why = "you chose not to trust it" if held.decision == NEVER else "this folder is not trusted"
            # visible(): the keys and server names are the workspace's own text (model/visible_text.py)
            out.append(visible(f"shiro: {held.name} held back ({why}): {describe(keys)}; {TRUST_HINT}"))
    return out


def question(cwd: Path, files: list[HeldFile]) -> str:
    listed = "\n".join(f"  {f.line()}" for f in files)
    return visible(  # the folder's name and the files' keys are the workspace's text (model/visible_text.py)
        f"shiro-neko: trust this folder's settings? {cwd}\n"
        f"Until you do, these are held back (they could send your API key elsewhere, run commands or loosen approvals):\n"
        f"{listed}\n{QUESTION_KEYS}: "
    )


def answer_of(text: str) -> str | None:
    key = text.strip().lower()[:1]
    return YES if key == "y" else NEVER if key == "n" else NOT_NOW


def ask_at_start(cwd: Path, ask: Callable[[str], str] | None = None) -> UserSettings:
    """Interactive `shiro`, before the server starts: asks about what was never answered and
    records the answer. Returns the settings to send."""
    loaded = load(cwd)
    unasked = [h for h in loaded.held if h.decision is None]
    if not unasked:
        return loaded
    answer = answer_of((ask or _read_answer)(question(cwd, unasked)))
    if answer is None:
        not_now.update((h.name, h.sha256) for h in unasked)
        return loaded
    try:
        record(cwd, unasked, answer)
    except Exception as exc:  # a state home that cannot be written: nothing changes, said so
        print(visible(f"shiro: could not remember the answer ({exc}); nothing was trusted"), file=sys.stderr, flush=True)
        not_now.update((h.name, h.sha256) for h in unasked)
        return loaded
    return load(cwd)


def _read_answer(text: str) -> str:
    print(text, end="", flush=True)
    try:
        return sys.stdin.readline()
    except OSError:
        return ""  # Ctrl-C is not caught: it leaves, as anywhere else in `shiro`


def run_trust(args: argparse.Namespace, cwd: Path) -> int:
    """`shiro trust [DIR]`: trust the project files of DIR as they are now."""
    from .main import err

    root = Path(args.dir).expanduser().resolve() if args.dir else cwd
    if not root.is_dir():
        err(f"shiro trust: {root} is not a directory")
        return 2
    loaded = load(root)
    for problem in loaded.problems:
        err(f"shiro: settings file {problem}")
    if not loaded.held:
        print(visible(f"nothing held back in {root}: its project settings are trusted or it has none"))
        return 0
    record(root, loaded.held, YES)
    print(visible(f"trusted {root}:"))
    for held in loaded.held:
        print(visible(f"  {held.line()}"))
    print("they apply from the next `shiro` in that folder; a changed file is asked about again")
    return 0
