"""The terminal client says who asks (clients/terminal/approval_text.py `request_text`): an approval
raised by a `task` subagent's call reads "shiro-neko's task subagent wants to …", the main agent's
"shiro-neko wants to …"; at the interactive prompt and in `shiro -p` (no terminal: denied, said)."""

from __future__ import annotations

import time

from shiro_neko.client.typed_ahead import QUIET_S
from tests.clients.test_terminal import Term, run
from tests.clients.test_terminal import cold_env, env, term  # noqa: F401 - fixtures
from tests.lsp.test_subagent_approval import script

SUB_ASKS = "shiro-neko's task subagent wants to fetch https://example.invalid/page"


def _deny(t: Term) -> None:
    time.sleep(QUIET_S + 0.1)  # a key at a question counts after a pause (typed_ahead.py)
    t.type("d", enter=False)


def test_the_prompt_says_the_task_subagent_asks(workspace, env, fake, term):  # noqa: F811
    script(fake)
    t = term("--approvals", "ask")
    t.type("what does the page say?")
    t.expect(SUB_ASKS.replace(".", r"\.").replace("?", r"\?"))
    _deny(t)
    t.expect(r"shiro-neko wants to run")
    _deny(t)
    t.expect("done")
    assert not (workspace / "ran.txt").exists()
    t.leave()


def test_print_says_the_task_subagent_asks(workspace, env, fake):  # noqa: F811
    script(fake)
    done = run(["-p", "what does the page say?"], workspace, env)
    assert done.returncode == 0, done.stderr
    assert f"denied, no terminal to ask: {SUB_ASKS}" in done.stderr, done.stderr
    assert "denied, no terminal to ask: shiro-neko wants to run" in done.stderr, done.stderr
    assert not (workspace / "ran.txt").exists()
