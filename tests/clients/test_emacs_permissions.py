"""Permission rules in Emacs (issue 39), batch Emacs against the real server: `f` at an approval
keeps the command's prefix rule for this folder, `shiro-permissions` lists it and removes it."""

from __future__ import annotations

import json

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.fake_provider import Call, Reply


def test_always_in_this_folder_then_shiro_permissions_removes_it(tmp_path, fake):
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    fake.script(Reply(calls=[Call("run_command", {"command": "echo one two"}, "c1")]), Reply(text="ran it"))
    result = run_emacs(emacs, "emacs_permissions_test.el", tmp_path, workspace, fake.base_url)
    assert result["listed"] == ["allow Bash(echo one two:*) (workspace)"]
    assert not result["after"]  # nil: no rules left
    assert "always allowed (workspace)" in result["chat"] and "[removed Bash(echo one two:*)]" in result["chat"]
    saved = json.loads((tmp_path / "home" / "permissions.json").read_text())
    assert [w.get("allow", []) for w in saved["workspaces"].values()] == [[]]
