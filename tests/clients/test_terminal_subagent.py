"""`shiro -p` with a `task` subagent (issue 40): the subagent's text never reaches stdout (the answer
is the main model's alone); its calls are noted on stderr, indented under the task call."""

from __future__ import annotations

from tests.clients.test_terminal import cold_env, env, run  # noqa: F401 - fixtures
from tests.fake_provider import Call, Reply


def test_print_keeps_the_subagents_text_off_stdout(workspace, env, fake):  # noqa: F811
    fake.script(
        Reply(calls=[Call("task", {"description": "look", "prompt": "look around"})]),
        Reply(calls=[Call("list_files", {})]),
        Reply(text="SUBAGENT REPORT"),
        Reply(text="The main answer."),
    )
    done = run(["-p", "look around for me"], workspace, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The main answer.\n"
    assert "┆ → list_files" in done.stderr and "SUBAGENT REPORT" in done.stderr  # the task's result line

