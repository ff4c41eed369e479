"""The user settings file (docs/configuration.md): user file, project file over it, broken files named."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shiro_neko.user_settings import ENV_VAR, SettingsFileError, load_user_settings, save_user_setting, user_settings_path


@pytest.fixture
def user_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config" / "settings.json"
    path.parent.mkdir()
    monkeypatch.setenv(ENV_VAR, str(path))
    return path


def test_missing_files_are_no_problem(user_file: Path, tmp_path: Path) -> None:
    loaded = load_user_settings(tmp_path)
    assert loaded.settings == {} and loaded.problems == [] and loaded.files == []
    assert user_settings_path() == user_file


def test_default_path_is_the_platform_config_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    import platformdirs

    monkeypatch.delenv(ENV_VAR, raising=False)
    assert user_settings_path() == platformdirs.user_config_path("shiro-neko") / "settings.json"


def test_project_keys_override_the_users_and_nested_keys_merge(user_file: Path, tmp_path: Path) -> None:
    user_file.write_text(json.dumps({"model": "a", "approvals": "auto-edit", "memory": {"enabled": False}, "shortTermMemory": {"depth": 3}}))
    project = tmp_path / "ws" / ".shiro-neko"
    project.mkdir(parents=True)
    (project / "settings.json").write_text(json.dumps({"model": "b", "shortTermMemory": {"nudgeDepth": 1}}))
    loaded = load_user_settings(tmp_path / "ws")
    assert loaded.settings == {
        "model": "b", "approvals": "auto-edit", "memory": {"enabled": False}, "shortTermMemory": {"depth": 3, "nudgeDepth": 1},
    }
    assert loaded.files == [user_file, project / "settings.json"] and loaded.problems == []


def test_project_mcp_servers_are_handed_back_apart(user_file: Path, tmp_path: Path) -> None:
    user_file.write_text(json.dumps({"mcpServers": {"mine": {"command": "my-server"}}}))
    project = tmp_path / ".shiro-neko"
    project.mkdir()
    (project / "settings.json").write_text(json.dumps({"mcpServers": {"theirs": {"command": "rm"}}}))
    loaded = load_user_settings(tmp_path)
    assert loaded.settings == {"mcpServers": {"mine": {"command": "my-server"}}}
    assert [(h.name, h.keys) for h in loaded.held] == [(".shiro-neko/settings.json", ["mcpServers.theirs"])]


@pytest.mark.parametrize("text, why", [("{not json", "not valid JSON"), ("[1, 2]", "holds list"), (b"\xff\xfe", "cannot be read")])
def test_a_broken_file_is_named_and_ignored(user_file: Path, tmp_path: Path, text: str | bytes, why: str) -> None:
    project = tmp_path / ".shiro-neko"
    project.mkdir()
    (project / "settings.json").write_text(json.dumps({"model": "p"}))
    if isinstance(text, bytes):
        user_file.write_bytes(text)
    else:
        user_file.write_text(text)
    loaded = load_user_settings(tmp_path)
    assert loaded.settings == {"model": "p"}  # the other file still counts
    assert len(loaded.problems) == 1 and str(user_file) in loaded.problems[0] and why in loaded.problems[0]
    assert user_file.read_bytes() == (text if isinstance(text, bytes) else text.encode())  # left as it was


def test_save_user_setting_keeps_the_other_keys_and_never_replaces_a_broken_file(user_file: Path, tmp_path: Path) -> None:
    # The terminal's first run keeps its model pick this way (clients/terminal/first_run.py).
    assert save_user_setting("model", "llama3.2") == user_file  # no file yet: made
    assert json.loads(user_file.read_text()) == {"model": "llama3.2"}
    user_file.write_text(json.dumps({"approvals": "auto", "permissions": {"deny": ["Bash(rm *)"]}, "model": "x"}))
    user_file.chmod(0o640)
    save_user_setting("model", "qwen2.5-coder:7b")
    assert json.loads(user_file.read_text()) == {"approvals": "auto", "permissions": {"deny": ["Bash(rm *)"]},
                                                 "model": "qwen2.5-coder:7b"}
    assert user_file.stat().st_mode & 0o777 == 0o640
    broken = '{"approvals": "auto",'
    user_file.write_text(broken)
    with pytest.raises(SettingsFileError, match="not valid JSON"):
        save_user_setting("model", "llama3.2")
    assert user_file.read_text() == broken
    # A settings file linked from a dotfiles folder: written where it points, the link kept.
    real = tmp_path / "dotfiles" / "settings.json"
    real.parent.mkdir()
    real.write_text("{}")
    user_file.unlink()
    user_file.symlink_to(real)
    save_user_setting("model", "llama3.2")
    assert user_file.is_symlink() and json.loads(real.read_text()) == {"model": "llama3.2"}
