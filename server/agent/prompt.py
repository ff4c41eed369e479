"""The system prompt: agent variant, workspace facts, tool rules, and the blocks other features add
(task list, project memory, AGENTS.md). Rebuilt on every step so a `todo_write` in step one is in
the request of step two.
"""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import Settings
    from .session import AgentSession

VARIANTS: dict[str, str] = {
    "default": (
        "You are shiro-neko, a coding agent working inside the user's editor. Be direct and brief. "
        "Do the work with your tools rather than describing it; when the task is done, say what "
        "changed in a few lines."
    ),
    "deep": (
        "You are shiro-neko in deep mode, a careful coding agent working inside the user's editor. "
        "Before changing code, read enough of it to understand the design; plan with todo_write; "
        "verify your changes by running the project's tests or commands; explain trade-offs you made."
    ),
}

TOOL_RULES = """\
Rules for tools:
- Paths are relative to the workspace root; file tools refuse anything outside it.
- Read a file before editing it. edit_file replaces text that must occur exactly once: include enough surrounding lines.
- Prefer edit_file for changes to existing files; write_file for new files or full rewrites.
- run_command runs in the workspace root with a timeout; the user may have to approve it.
- Tool output may be truncated; narrow the request (line ranges, a tighter grep) instead of repeating it.
- If the user denies a call, do not retry it unchanged: ask or take another way."""

_GIT_TTL = 10.0
_git_cache: dict[Path, tuple[float, str]] = {}


def _git(root: Path, *args: str) -> str | None:
    try:
        done = subprocess.run(
            ["git", *args], cwd=root, capture_output=True, text=True, timeout=2, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.SubprocessError):
        return None
    # rstrip only: `git status --short` lines start with a meaningful space (" M file").
    return done.stdout.rstrip() if done.returncode == 0 else None


def git_facts(root: Path) -> str:
    """Branch and short status, cached briefly: cheap enough per step, fresh enough per turn."""
    now = time.monotonic()
    cached = _git_cache.get(root)
    if cached and now - cached[0] < _GIT_TTL:
        return cached[1]
    text = ""
    branch = _git(root, "rev-parse", "--abbrev-ref", "HEAD")
    if branch is not None:
        status = _git(root, "status", "--short") or ""
        lines = status.splitlines()
        shown = "\n".join(lines[:20]) + (f"\n... and {len(lines) - 20} more" if len(lines) > 20 else "")
        text = f"Git branch: {branch}\n" + (f"Git status (short):\n{shown}" if lines else "Git status: clean")
    _git_cache[root] = (now, text)
    return text


def workspace_facts(root: Path) -> str:
    facts = [
        f"Workspace root: {root}",
        f"Platform: {platform.system()} {platform.release()} ({platform.machine()})",
        f"Date: {_dt.date.today().isoformat()}",
    ]
    git = git_facts(root)
    if git:
        facts.append(git)
    return "\n".join(facts)


def build_instructions(session: "AgentSession", settings: "Settings") -> str:
    variant = VARIANTS.get(settings.agent, VARIANTS["default"])
    blocks = [variant, workspace_facts(session.root), TOOL_RULES]
    blocks.extend(b for b in session.deps.system_blocks(session) if b)
    return "\n\n".join(blocks)
