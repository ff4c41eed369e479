"""The system prompt's workspace facts, from a real git repository."""

from __future__ import annotations

import subprocess
from pathlib import Path

from shiro_neko.agent.prompt import VARIANTS, git_facts, workspace_facts


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


def test_git_branch_and_short_status(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "feature/pagination")
    (tmp_path / "a.py").write_text("x = 1\n")
    _git(tmp_path, "add", "a.py")
    _git(tmp_path, "-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-qm", "one")
    (tmp_path / "a.py").write_text("x = 2\n")
    (tmp_path / "new.txt").write_text("new\n")
    assert f"Workspace root: {tmp_path}" in workspace_facts(tmp_path)
    facts = git_facts(tmp_path)
    assert "Git branch: feature/pagination" in facts
    assert " M a.py" in facts and "?? new.txt" in facts


def test_not_a_git_repository(tmp_path: Path) -> None:
    assert git_facts(tmp_path) == ""
    assert "Git" not in workspace_facts(tmp_path)  # git is never in the static instructions


def test_variants() -> None:
    assert set(VARIANTS) == {"default", "deep"}
