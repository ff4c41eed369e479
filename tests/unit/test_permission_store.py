"""state/permission_store.py: the workspace's rules and the user file's `permissions`, changed by
two processes at once (each read-modify-write under the lock: no rule lost), atomically, with
the user file's other keys kept and a broken file refused untouched."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import pytest

from shiro_neko.state.permission_store import UserRuleFile, WorkspaceRuleStore

RULES = 60


def _add_many(kind: str, path: str, tag: str) -> None:
    for i in range(RULES):
        rule = f"Bash({tag} {i}:*)"
        if kind == "user":
            UserRuleFile(Path(path)).add("allow", [rule])
        else:
            WorkspaceRuleStore(Path(path)).add("key", Path("/w"), "allow", [rule])


@pytest.mark.parametrize("kind", ["user", "workspace"])
def test_two_processes_adding_at_once_lose_no_rule(tmp_path: Path, kind: str) -> None:
    path = tmp_path / ("settings.json" if kind == "user" else "home")
    if kind == "user":
        path.write_text(json.dumps({"model": "m"}))
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_add_many, args=(kind, str(path), tag)) for tag in ("one", "two")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    rules = UserRuleFile(path).rules().allow if kind == "user" else WorkspaceRuleStore(path).rules("key").allow
    assert sorted(rules) == sorted(f"Bash({t} {i}:*)" for t in ("one", "two") for i in range(RULES))
    if kind == "user":
        assert json.loads(path.read_text())["model"] == "m"


def test_a_changed_file_is_read_again_and_a_broken_one_is_left_alone(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    user = UserRuleFile(path)
    assert user.rules().allow == []
    path.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"], "allow": "not a list"}}))
    read = user.rules()
    assert read.deny == ["Bash(rm:*)"], read
    assert read.allow == []  # what is not a list is skipped
    with pytest.raises(ValueError, match="permissions.allow is not a list"):
        user.add("allow", ["Bash(ls:*)"])
    path.write_text("{broken")
    with pytest.raises(ValueError, match="not valid JSON"):
        user.add("allow", ["Bash(ls:*)"])
    assert path.read_text() == "{broken"
    path.write_text("{}")
    assert user.remove(("allow",), "Bash(ls:*)") is False


def test_a_symlinked_settings_file_stays_a_link_and_its_target_gets_the_rule(tmp_path: Path) -> None:
    # Dotfiles: ~/.config/shiro-neko/settings.json is often a link into a repository of them.
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    target = dotfiles / "shiro.json"
    target.write_text(json.dumps({"model": "m"}))
    link = tmp_path / "config" / "settings.json"
    link.parent.mkdir()
    link.symlink_to(target)
    user = UserRuleFile(link)
    assert user.rules().allow == []
    user.add("allow", ["Bash(npm test:*)"])
    assert link.is_symlink() and link.resolve() == target
    assert json.loads(target.read_text()) == {"model": "m", "permissions": {"allow": ["Bash(npm test:*)"]}}
    assert user.rules().allow == ["Bash(npm test:*)"]
