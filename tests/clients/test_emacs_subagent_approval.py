"""Emacs says who asks (clients/emacs/shiro.el): batch Emacs against the real server; the prompt of
a `task` subagent's approval is "shiro-neko's task subagent wants to …" and its chat line says
"(asked by the task subagent)"; the main agent's prompt is "shiro-neko wants to …" (both denied)."""

from __future__ import annotations

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.lsp.test_subagent_approval import script


def test_the_prompt_says_the_task_subagent_asks(tmp_path, fake):
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    script(fake)
    result = run_emacs(emacs, "emacs_subagent_approval_test.el", tmp_path, workspace, fake.base_url)
    sub, main = result["prompts"]
    assert sub.startswith("shiro-neko's task subagent wants to fetch https://example.invalid/page"), sub
    assert main.startswith("shiro-neko wants to run"), main
    assert "(asked by the task subagent)" in result["chat"], result["chat"]
    assert not (workspace / "ran.txt").exists()
