"""The system prompt: the agent variant's working procedure for the model's family, the tool
rules, and the workspace facts that never change in a session (root, platform).

Static for a session: the same settings give byte-identical instructions on every request, so the
provider's prompt cache keeps them. What changes between steps (date, git status, the task list,
AGENTS.md, project memory) goes into the conversation as context messages
(agent/context_messages.py). The texts are in agent/prompt_text.py; docs/prompt.md says why.
"""

from __future__ import annotations

import platform
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING

from .model_family import model_family
from .prompt_text import INTRO, procedure

if TYPE_CHECKING:
    from ..config import Settings
    from .session import AgentSession

# The agent variants (`agent` setting); an unknown one runs as "default" with a notice (loop.py).
VARIANTS: dict[str, str] = INTRO

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


def git_facts(root: Path, fresh: bool = False) -> str:
    """Branch and short status, cached briefly (cheap enough per step); `fresh` asks git again,
    after a tool step that may have changed the status."""
    now = time.monotonic()
    cached = _git_cache.get(root)
    if cached and now - cached[0] < _GIT_TTL and not fresh:
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
    """What the instructions say about the workspace: nothing here changes within a session."""
    return "\n".join([
        f"Workspace root: {root}",
        f"Platform: {platform.system()} {platform.release()} ({platform.machine()})",
    ])


def build_instructions(session: "AgentSession", settings: "Settings", tool_names: list[str]) -> str:
    family = model_family(settings.effective_model, settings.promptFamily)
    return "\n\n".join([procedure(settings.agent, family, tool_names), workspace_facts(session.root)])
