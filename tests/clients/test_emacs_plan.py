"""Plan mode in the Emacs client (clients/emacs/shiro-plan.el) in a real batch Emacs against the
real server (issue 39): `shiro-plan-mode' switches the server's mode, the mode line says "plan", a
write in plan mode is refused, the plan-ready offer follows the turn, `shiro-start-plan' with
auto-edit carries the plan out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.clients.test_emacs import PLUGIN, _emacs
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env

SCRIPT = Path(__file__).with_name("emacs_plan_test.el")


def test_emacs_plan_mode_and_start(tmp_path, fake):
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    out = tmp_path / "result.json"
    fake.script(
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"}, "call_w")]),
        Reply(text="The plan: add new.txt."),
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"}, "call_w2")]),
        Reply(text="Done."),
    )
    env = server_env(tmp_path / "home", fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL)
    env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN), SHIRO_EMACS_WORKSPACE=str(workspace),
               SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]), HOME=str(tmp_path / "emacs-home"))
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240)
    assert out.exists(), done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    assert result["modeAfterToggle"] == "plan"
    assert " plan" in result["modeLine"] and " plan" not in result["modeLineAct"]
    assert result["existsAfterPlan"] == "no"
    chat = result["chatAfterPlan"]
    assert "plan mode is on" in chat and "The plan: add new.txt." in chat
    assert "[plan ready: M-x shiro-start-plan" in chat
    assert "write_file" not in [t["name"] for t in fake.requests[0].body["tools"]]
    assert "[act mode: approvals auto-edit]" in result["chatAfterStart"] and "Done." in result["chatAfterStart"]
    assert result["newTxt"] == "x\n"
