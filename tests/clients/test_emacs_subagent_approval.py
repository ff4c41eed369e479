"""Emacs says who asks (clients/emacs/shiro.el): batch Emacs against the real server; the prompt of
a `task` subagent's approval is "shiro-neko's task subagent wants to …" and its chat line says
"(asked by the task subagent)"; the main agent's prompt is "shiro-neko wants to …" (both denied)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.clients.test_emacs import PLUGIN, _emacs
from tests.lsp.test_subagent_approval import script
from tests.support.lsp import server_env

SCRIPT = Path(__file__).with_name("emacs_subagent_approval_test.el")


def test_the_prompt_says_the_task_subagent_asks(tmp_path, fake):
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    out = tmp_path / "result.json"
    script(fake)
    env = server_env(tmp_path / "home", fake.base_url)
    env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN),
               SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]),
               SHIRO_EMACS_WORKSPACE=str(workspace), HOME=str(tmp_path / "emacs-home"))
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=240, stdin=subprocess.DEVNULL)
    assert out.exists(), done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    sub, main = result["prompts"]
    assert sub.startswith("shiro-neko's task subagent wants to fetch https://example.invalid/page"), sub
    assert main.startswith("shiro-neko wants to run"), main
    assert "(asked by the task subagent)" in result["chat"], result["chat"]
    assert not (workspace / "ran.txt").exists()
