"""Permission rules in Emacs (issue 39), batch Emacs against the real server: `f` at an approval
keeps the command's prefix rule for this folder, `shiro-permissions` lists it and removes it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.clients.test_emacs import PLUGIN, _emacs
from tests.fake_provider import Call, Reply
from tests.support.lsp import server_env

SCRIPT = Path(__file__).with_name("emacs_permissions_test.el")


def test_always_in_this_folder_then_shiro_permissions_removes_it(tmp_path, fake):
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    out = tmp_path / "result.json"
    fake.script(Reply(calls=[Call("run_command", {"command": "echo one two"}, "c1")]), Reply(text="ran it"))
    env = server_env(tmp_path / "home", fake.base_url)
    env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN),
               SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]),
               SHIRO_EMACS_WORKSPACE=str(workspace), HOME=str(tmp_path / "emacs-home"))
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert out.exists(), done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    assert result["listed"] == ["allow Bash(echo one two:*) (workspace)"]
    assert not result["after"]  # nil: no rules left
    assert "always allowed (workspace)" in result["chat"] and "[removed Bash(echo one two:*)]" in result["chat"]
    saved = json.loads((tmp_path / "home" / "permissions.json").read_text())
    assert [w.get("allow", []) for w in saved["workspaces"].values()] == [[]]
