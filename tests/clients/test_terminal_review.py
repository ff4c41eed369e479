"""Issue 41 in the terminal, under a pseudo-terminal against the real server and the HTTP fake
provider (the `Term` of tests/clients/test_terminal.py): an edit's approval shows its diff and a
denial can carry a reason; Esc at a question denies; the task list is printed once per change;
a command's output is shown under its call; one blank line around code blocks; `/rewind N`
counts from the first turn; `N files changed` after a turn, `/diff`, `/undo`; the first run with
nothing configured; `/effort` and the folded reasoning summary.
"""

from __future__ import annotations

import json
import re
import time

import pexpect

from shiro_neko.client.typed_ahead import QUIET_S
from tests.clients.test_terminal import SHIRO, Term, _terms, run, session_ids, wait_requests
from tests.clients.test_terminal import cold_env, env, term  # noqa: F401 - fixtures
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
GAP = r"(?:\s|\x1b\[[0-9;]*[Cm])+"  # spaces (or prompt_toolkit's cursor-forward for a run of them), colours


def tool_outputs(body: dict) -> list[str]:
    """The tool results the provider was sent (Responses `function_call_output`)."""
    return [str(item.get("output")) for item in body.get("input", []) if item.get("type") == "function_call_output"]


def answer(t: Term, key: str) -> None:
    """A key at a question: after a pause, or it counts as typing (typed_ahead.py)."""
    time.sleep(QUIET_S + 0.1)
    t.type(key, enter=False)


def test_an_edit_is_approved_with_its_diff_and_denied_with_a_reason(workspace, fake, term):
    edit = {"path": "hello.py", "old_text": "print('hello')", "new_text": "print('bye')"}
    fake.script(Reply(calls=[Call("edit_file", edit)]), Reply(text="Left it as it is."))
    t = term("--model", EDIT_FILE_MODEL)
    t.type("change the greeting")
    t.expect(r"\? shiro-neko wants to edit hello\.py")
    t.expect(r"\x1b\[[0-9;]*31m\s*-print\('hello'\)")  # removed: red
    t.expect(r"\x1b\[[0-9;]*32m\s*\+print\('bye'\)")  # added: green
    t.expect(r"\[r\]eason / \[v\]iew diff")
    answer(t, "r")
    t.expect("deny, and")
    t.type("keep the old greeting")
    t.expect("denied: keep the old greeting")
    t.expect("Left it as it is.")
    assert "The user denied this call: keep the old greeting" in tool_outputs(wait_requests(fake, 2)[1].body)
    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    t.leave()


def test_print_on_a_terminal_shows_the_diff_and_denies_with_a_reason(workspace, env, fake):
    edit = {"path": "hello.py", "old_text": "print('hello')", "new_text": "print('bye')"}
    fake.script(Reply(calls=[Call("edit_file", edit)]), Reply(text="Left it as it is."))
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["--model", EDIT_FILE_MODEL, "--approvals", "ask", "-p", "change the greeting"], cwd=str(workspace),
                          env=env, dimensions=(40, 100), encoding="utf-8")
    child.expect(r"\x1b\[[0-9;]*31m\s*-print\('hello'\)", timeout=120)  # removed: red
    child.expect(r"\x1b\[[0-9;]*32m\s*\+print\('bye'\)", timeout=30)  # added: green
    child.expect(r"\[d\]eny / \[r\]eason", timeout=30)
    child.send("r keep the old greeting\r")
    child.expect(pexpect.EOF, timeout=120)
    assert "Left it as it is." in child.before
    assert "The user denied this call: keep the old greeting" in tool_outputs(wait_requests(fake, 2)[1].body)
    assert (workspace / "hello.py").read_text() == "print('hello')\n"


def test_esc_at_an_approval_denies_and_the_turn_goes_on(workspace, fake, term):
    # docs/terminal.md: Esc at a question denies it. It used to abort the whole turn.
    fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"})]), Reply(text="Not run, then."))
    t = term()
    t.type("run it")
    t.expect(r"\? shiro-neko wants to")
    time.sleep(0.3)
    t.child.send("\x1b")
    t.expect("denied")
    t.expect("Not run, then.")
    assert "aborted" not in ANSI.sub("", t.out)
    assert len(wait_requests(fake, 2)) == 2
    t.leave()


def test_tasks_once_per_change_command_output_shown_one_blank_line(workspace, fake, term):
    fake.script(
        Reply(calls=[Call("todo_write", {"todos": [{"content": "fix the boundary", "status": "in_progress"}]})]),
        Reply(calls=[Call("run_command", {"command": "seq 1 20"})]),
        Reply(text="Done.\n\n```python\nprint('fixed')\n```\n\nAll good."),
    )
    t = term()
    t.type("fix it")
    t.expect(r"\[~\] fix the boundary")
    t.expect(r"\[a\]llow")
    answer(t, "a")
    # The command's first and last lines, under its call.
    t.expect(r"│ 1\b")
    t.expect(r"│ … 14 more lines")
    t.expect(r"│ 20")
    t.expect("All good.")

    # Slash commands and prompts do not print the unchanged list again; /todos prints it once.
    start = t.pos
    t.type("/help")
    t.expect("/exit" + GAP + "leave")
    t.type("/cost")
    t.expect("output" + GAP + "tokens")
    assert "fix the boundary" not in t.out[start:t.pos]
    start = t.pos
    t.type("/todos")
    t.expect(r"tasks \.+ 0/1")
    t.type("/cost")
    t.expect("output" + GAP + "tokens")
    assert t.out[start:t.pos].count("fix the boundary") == 1, t.out[start:t.pos]
    t.leave()


def test_one_blank_line_around_a_code_block_and_a_table(workspace, env, fake):
    """rich pads a code block and a table with blank lines; the client adds one between blocks
    (the same rendering, clients/terminal/markdown.py, for `-p` on a terminal and the chat UI)."""
    fake.script(Reply(text="Done.\n\n```python\nprint('fixed')\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nAll good."))
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["-p", "fix it"], cwd=str(workspace), env=env, dimensions=(40, 100), encoding="utf-8")
    child.expect(pexpect.EOF, timeout=120)
    shown = ANSI.sub("", child.before).replace("\r", "")
    lines = "\n".join(line.strip() for line in shown.split("\n"))
    assert "Done.\n\nprint('fixed')\n\na  b\n────\n1  2\n\nAll good." in lines, repr(shown)


def test_rewind_n_counts_from_the_first_turn(workspace, fake, term):
    fake.script(
        Reply(calls=[Call("write_file", {"path": "one.txt", "content": "1\n"})]), Reply(text="Wrote one."),
        Reply(calls=[Call("write_file", {"path": "two.txt", "content": "2\n"})]), Reply(text="Wrote two."),
    )
    t = term("--approvals", "auto-edit")
    t.type("write one")
    t.expect("Wrote one.")
    t.type("write two")
    t.expect("Wrote two.")
    t.type("/rewind")
    t.expect(r"1 .*write one")
    t.expect(r"2 .*write two")
    t.expect(r"before turn N \(1 = the first\)")
    t.type("/rewind 2 files")  # before turn 2: one.txt stays, two.txt goes
    t.expect("restored 1 file")
    assert (workspace / "one.txt").exists() and not (workspace / "two.txt").exists()
    t.leave()


def test_files_changed_line_diff_and_undo(workspace, fake, term):
    calls = [Call("write_file", {"path": "new.py", "content": "x = 1\n"}),
             Call("edit_file", {"path": "hello.py", "old_text": "print('hello')", "new_text": "print('bye')"})]
    fake.script(Reply(calls=calls), Reply(text="Two changes."))
    t = term("--model", EDIT_FILE_MODEL, "--approvals", "auto-edit")
    t.type("change things")
    t.expect("Two changes.")
    t.expect(r"2 files changed: .*(new\.py, hello\.py|hello\.py, new\.py).*/diff to see, /undo to revert")
    t.type("/diff hello.py")
    t.expect(r"\x1b\[[0-9;]*32m\s*\+print\('bye'\)")
    t.type("/undo hello.py")
    t.expect("restored 1 file")
    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    assert (workspace / "new.py").read_text() == "x = 1\n"  # only the one file
    t.type("/undo")
    t.expect(r"restored \d+ file")
    assert not (workspace / "new.py").exists()
    t.leave()


def test_first_run_without_key_or_endpoint_says_what_to_do_and_saves_nothing(tmp_path, workspace):
    env = server_env(tmp_path / "home", None, api_key=None, TERM="xterm")
    terms = _terms(workspace, env)
    start = next(terms)
    t = start()
    t.expect("Set up model")  # asked first (issue 39); Enter twice skips it
    t.expect("endpoint")
    t.type("")
    t.expect("API key")
    t.type("")
    t.expect("no model endpoint is set up")  # at start, before any prompt
    t.expect("OPENAI_API_KEY")
    t.expect("--base-url")
    t.expect(re.escape(env["SHIRO_NEKO_CONFIG"]))
    t.type("hello?")
    t.expect("no model endpoint is set up")
    out = ANSI.sub("", t.out)
    assert "server's environment" not in out and "shiro.baseUrl" not in out
    assert "never written" in t.leave()
    assert session_ids(tmp_path) == []
    next(terms, None)


def test_oneshot_without_key_or_endpoint_says_what_to_do_in_terminal_words_and_saves_nothing(tmp_path, workspace):
    env = server_env(tmp_path / "home", None, api_key=None)
    done = run(["-p", "hello?"], workspace, env, timeout=60)
    assert done.returncode == 1, done
    assert done.stdout == ""
    assert "no model endpoint is set up" in done.stderr and "--base-url" in done.stderr, done.stderr
    assert "OPENAI_API_KEY" in done.stderr and env["SHIRO_NEKO_CONFIG"] in done.stderr, done.stderr
    assert "server's environment" not in done.stderr and "shiro.baseUrl" not in done.stderr, done.stderr
    assert session_ids(tmp_path) == []


def test_effort_and_the_folded_reasoning_summary(workspace, fake, term):
    fake.script(Reply(text="The answer.", reasoning="first I weigh the options"), Reply(text="Again."))
    t = term()
    t.type("/effort high")
    t.expect("reasoning effort high")
    t.type("think")
    t.expect("thinking…")
    t.expect("The answer.")
    assert "weigh the options" not in t.out  # folded
    t.type("/reasoning")
    t.expect("first I weigh the options")
    assert json.dumps(wait_requests(fake, 1)[0].body.get("reasoning")).count('"high"') == 1
    t.leave()
