"""The `shiro` terminal client end to end: the real console script, the real server it starts, the
real HTTP fake provider. `-p` runs with stdin at /dev/null and no terminal; the interactive UI runs
under a pseudo-terminal (pexpect, fixed window size, TERM=xterm).

What the user sees is checked on whole printed lines (streamed text is printed a line at a time);
what was typed is checked where it lands, in the requests the fake provider received.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pexpect
import pytest

from shiro_neko.client.typed_ahead import QUIET_S
from tests.fake_provider import Call, FakeProvider, HttpError, Reply
from tests.support import warm_pool
from tests.support.lsp import server_env

_SCRIPT = Path(sys.executable).with_name("shiro")
SHIRO = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-c", "from shiro_neko.client.main import main; main()"]


@pytest.fixture
def cold_env(tmp_path: Path, fake: FakeProvider) -> dict[str, str]:
    """`shiro` spawns its server cold (`python -m shiro_neko`), as a user's first run does."""
    return server_env(tmp_path / "home", fake.base_url, TERM="xterm")


@pytest.fixture
def env(cold_env: dict[str, str]) -> dict[str, str]:
    """`shiro` attaches to a warm server (the test process's: tests/support/warm_pool.py), as a
    user's repeat run does: the imports are not paid again."""
    return warm_pool.shiro_env(cold_env)


def run(args: list[str], workspace: Path, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        SHIRO + args, cwd=workspace, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout
    )


_CONTEXT = re.compile(r"<(environment_context|todos|project_memory|project_instructions)\b")


def user_texts(body: dict[str, Any]) -> list[str]:
    """Every user text the provider was sent (Responses `input`), context messages left out (the
    date, git status, task list… the server appends: server/agent/context_messages.py)."""
    out = []
    for item in body.get("input", []):
        if item.get("role") == "user":
            content = item.get("content")
            if isinstance(content, str):
                out.append(content)
            else:
                out += [part.get("text", "") for part in content or []]
    return [text for text in out if not _CONTEXT.match(text)]


def sent(fake: FakeProvider, body: dict[str, Any]) -> str:
    """The whole input as JSON, with `item_reference`s replaced by the items they point at."""
    items = [fake.stored.get(i["id"], i) if i.get("type") == "item_reference" else i for i in body.get("input", [])]
    return json.dumps(items)


def session_ids(tmp_path: Path) -> list[str]:
    return sorted(p.stem for p in (tmp_path / "home" / "sessions").glob("*.json"))


# -- -p: scripts and CI ---------------------------------------------------------------------
def test_print_answers_on_stdout_without_a_terminal(workspace, cold_env, fake):
    fake.script(Reply(text="The answer is 42.", chunks=4))
    done = run(["-p", "what is the answer?"], workspace, cold_env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The answer is 42.\n"
    assert user_texts(fake.requests[0].body) == ["what is the answer?"]
    assert {t["name"] for t in fake.requests[0].body["tools"]} >= {"remember", "recall"}


def test_private_flag_starts_a_private_session(tmp_path, workspace, env, fake):
    fake.script(Reply(text="kept to itself"))
    done = run(["--private", "-p", "a secret task"], workspace, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "kept to itself\n"
    [sid] = session_ids(tmp_path)
    record = json.loads((tmp_path / "home" / "sessions" / f"{sid}.json").read_text())
    assert record["private"] is True and record["title"] == "a secret task"


def test_print_flags_become_the_runs_settings(workspace, env, fake):
    fake.script(Reply(text="deep answer"))
    done = run(["--agent", "deep", "--model", "other-model", "--no-memory", "-p", "hi"], workspace, env)
    assert done.returncode == 0 and done.stdout == "deep answer\n", done.stderr
    body = fake.requests[0].body
    assert body["model"] == "other-model"
    assert "deep" in body["instructions"]  # the variant's prompt
    assert not {t["name"] for t in body["tools"]} & {"remember", "recall", "forget"}  # memory off


def test_settings_file_then_project_file_then_flags(tmp_path, workspace, env, fake):
    """The user settings file (docs/configuration.md) is the terminal client's settings; flags go on top."""
    env = {k: v for k, v in env.items() if k != "OPENAI_BASE_URL"}  # the endpoint comes from the file
    Path(env["SHIRO_NEKO_CONFIG"]).write_text(json.dumps({"baseUrl": fake.base_url, "model": "user-model", "agent": "deep"}))
    fake.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    done = run(["-p", "hi"], workspace, env)
    assert done.returncode == 0 and done.stdout == "one\n", done.stderr
    assert fake.requests[-1].body["model"] == "user-model" and "deep" in fake.requests[-1].body["instructions"]
    (workspace / ".shiro-neko").mkdir()
    (workspace / ".shiro-neko" / "settings.json").write_text(json.dumps({"model": "project-model"}))
    done = run(["-p", "hi"], workspace, env)
    assert done.returncode == 0 and fake.requests[-1].body["model"] == "project-model", done.stderr
    assert "deep" in fake.requests[-1].body["instructions"]  # the user's other keys stay
    done = run(["--model", "flag-model", "--wire-api", "chat", "-p", "hi"], workspace, env)
    assert done.returncode == 0 and done.stdout == "three\n", done.stderr
    assert fake.requests[-1].body["model"] == "flag-model" and fake.requests[-1].api == "chat"


def test_a_broken_settings_file_is_named_and_ignored(tmp_path, workspace, env, fake):
    Path(env["SHIRO_NEKO_CONFIG"]).write_text('{"model": ')
    fake.script(Reply(text="still works"))
    done = run(["--base-url", fake.base_url, "-p", "hi"], workspace, env)
    assert done.returncode == 0 and done.stdout == "still works\n", done.stderr
    assert env["SHIRO_NEKO_CONFIG"] in done.stderr and "not valid JSON" in done.stderr


@pytest.mark.parametrize("args", [["sessions"], ["sessions", "--json"], ["-p", "hi"]])
def test_output_into_a_closed_pipe_ends_quietly(tmp_path, workspace, env, fake, args):
    fake.script(Reply(text="an answer that goes nowhere\n" * 50), Reply(text="x"))
    assert run(["-p", "make a session"], workspace, env).returncode == 0
    proc = subprocess.Popen(SHIRO + args, cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    proc.stdout.close()  # like `| head` that has already exited
    _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "BrokenPipe" not in err, err
    assert proc.returncode in (0, 141)


def test_without_key_or_endpoint_shiro_says_what_to_set(tmp_path, workspace):
    """README's first command ends in `shiro`: with nothing configured it names what to set."""
    env = server_env(tmp_path / "home", None, api_key=None)
    done = run(["-p", "hi"], workspace, env)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert "OPENAI_API_KEY" in done.stderr and "baseUrl" in done.stderr, done.stderr


def test_print_fails_clearly_when_the_provider_fails(workspace, cold_env, fake):
    fake.script(*[HttpError(500, "the fake is down") for _ in range(4)])
    done = run(["-p", "hello"], workspace, cold_env)
    assert done.returncode == 1
    assert done.stdout == ""
    assert "error" in done.stderr and "the fake is down" in done.stderr
    assert len(fake.requests) == 4  # the server's own retries, then the turn ends


def test_print_denies_approvals_without_a_terminal_unless_told(workspace, env, fake):
    write = {"path": "new.txt", "content": "made by shiro\n"}
    fake.script(Reply(calls=[Call("write_file", write)]), Reply(text="could not write it"))
    done = run(["-p", "write new.txt"], workspace, env)
    assert done.returncode == 0 and done.stdout == "could not write it\n"
    assert "--approvals" in done.stderr and "denied" in done.stderr
    assert not (workspace / "new.txt").exists()

    fake.script(Reply(calls=[Call("write_file", write)]), Reply(text="written"))
    done = run(["--approvals", "auto-edit", "-p", "write new.txt"], workspace, env)
    assert done.returncode == 0 and done.stdout == "written\n", done.stderr
    assert (workspace / "new.txt").read_text() == "made by shiro\n"
    assert "→ write_file new.txt" in done.stderr


def test_sessions_lists_without_a_server_and_names_a_corrupt_file(tmp_path, workspace, env, fake):
    """`shiro sessions` reads the store in its own process (docs/performance.md): no language
    server starts, the rows are what the server lists, and a damaged file is named on stderr,
    copied aside and left out, as a server's listing does."""
    fake.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    for prompt in ("first", "second", "third"):
        assert run(["-p", prompt], workspace, env).returncode == 0
    ids = session_ids(tmp_path)
    trace = tmp_path / "trace"
    listed = run(["sessions", "--json"], workspace, {**env, "SHIRO_TRACE": str(trace)})
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    rows = json.loads(listed.stdout)["sessions"]
    assert [r["title"] for r in rows] == ["third", "second", "first"] and sorted(r["id"] for r in rows) == ids
    assert set(rows[0]) == {"id", "title", "createdAt", "updatedAt", "messageCount", "cwd", "shortId"}
    marks = trace.read_text().split("\n")
    assert any(m.endswith(" client-main") for m in marks) and not any(m.endswith(" server-main") for m in marks)

    damaged = tmp_path / "home" / "sessions" / f"{rows[0]['id']}.json"
    damaged.write_bytes(damaged.read_bytes()[:40])  # truncated in place
    listed = run(["sessions"], workspace, env)
    assert listed.returncode == 0, listed.stderr
    assert "corrupt state file" in listed.stderr and str(damaged) in listed.stderr and "Traceback" not in listed.stderr
    assert rows[0]["shortId"] not in listed.stdout and rows[1]["shortId"] in listed.stdout and rows[2]["shortId"] in listed.stdout
    assert list(damaged.parent.glob(f"{damaged.name}.corrupt-*")), "the damaged file was not copied aside"


def test_sessions_continue_and_resume_by_prefix(tmp_path, workspace, env, fake):
    fake.script(Reply(text="first answer"), Reply(text="second answer"))
    assert run(["-p", "first question"], workspace, env).returncode == 0
    assert run(["-p", "second question"], workspace, env).returncode == 0

    listed = run(["sessions", "--json"], workspace, env)
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)["sessions"]
    assert [r["title"] for r in rows] == ["second question", "first question"]  # newest first
    assert sorted(r["id"] for r in rows) == session_ids(tmp_path)
    assert all(r["messageCount"] == 2 and r["cwd"] == str(workspace) for r in rows)
    table = run(["sessions"], workspace, env).stdout
    # Each id as its shortest unique prefix, 8 characters at least (UUIDv7 ids of one minute share 8).
    for row in rows:
        assert len(row["shortId"]) >= 8 and row["id"].startswith(row["shortId"]) and row["shortId"] in table
        assert not any(other["id"].startswith(row["shortId"]) for other in rows if other is not row)
    assert "first question" in table

    # -c: a new server process picks the newest session of this directory and sends its history.
    fake.script(Reply(text="continued"))
    done = run(["-c", "-p", "continue"], workspace, env)
    assert done.returncode == 0 and done.stdout == "continued\n", done.stderr
    body = fake.requests[-1].body
    assert user_texts(body) == ["second question", "continue"]
    assert "second answer" in sent(fake, body) and "first question" not in sent(fake, body)

    # -r PREFIX: the older one, by a unique prefix of its id.
    first = rows[1]["id"]
    prefix = next(first[:k] for k in range(8, 37) if not rows[0]["id"].startswith(first[:k]))
    fake.script(Reply(text="back to the first"))
    done = run(["-r", prefix, "-p", "and now?"], workspace, env)
    assert done.returncode == 0 and done.stdout == "back to the first\n", done.stderr
    assert user_texts(fake.requests[-1].body) == ["first question", "and now?"]

    unknown = run(["-r", "ffffffff", "-p", "x"], workspace, env)
    assert unknown.returncode == 1 and "ffffffff" in unknown.stderr


# -- interactive, under a pseudo-terminal ----------------------------------------------------
# How long to wait for something to be shown (or the process to end). Every wait is for a
# condition, so this costs a passing run nothing; a machine shared by many jobs may take many
# seconds to start the client and its server, or to save and say good bye.
WAIT = 60.0


class Term:
    """`shiro` on a pseudo-terminal (pexpect spawns it) with a reader thread that plays the terminal:
    it keeps everything printed and answers prompt_toolkit's cursor position requests (CPR), as a
    real terminal does (without an answer prompt_toolkit hides the bottom toolbar)."""

    CPR = "\x1b[6n"

    def __init__(self, args: list[str], workspace: Path, env: dict[str, str]) -> None:
        self.child = pexpect.spawn(
            SHIRO[0], SHIRO[1:] + args, cwd=str(workspace), env=env, dimensions=(40, 120), encoding="utf-8"
        )
        self.out = ""
        self.pos = 0
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.expect("shiro-neko")

    def _read(self) -> None:
        tail = ""
        while True:
            try:
                data = self.child.read_nonblocking(65536, timeout=0.05)
            except pexpect.TIMEOUT:
                continue
            except (pexpect.EOF, OSError, ValueError):
                return
            with self.lock:
                self.out += data
            window = tail + data
            for _ in range(window.count(self.CPR)):
                self.child.send("\x1b[1;1R")
            tail = window[-(len(self.CPR) - 1):]

    def expect(self, pattern: str, timeout: float = WAIT) -> re.Match[str]:
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout
        while True:
            with self.lock:
                match = regex.search(self.out, self.pos)
            if match is not None:
                self.pos = match.end()
                return match
            if time.monotonic() > deadline or (not self.reader.is_alive() and not regex.search(self.out, self.pos)):
                raise AssertionError(f"{pattern!r} never shown; the terminal got:\n{self.out[-3000:]}")
            time.sleep(0.02)

    def type(self, text: str, enter: bool = True) -> None:
        self.child.send(text)
        if enter:
            time.sleep(0.1)
            self.child.send("\r")

    def key(self, name: str) -> None:
        self.child.send({"up": "\x1b[A", "down": "\x1b[B", "tab": "\t", "ctrl-c": "\x03", "ctrl-d": "\x04"}[name])
        time.sleep(0.15)

    def leave(self) -> str:
        """Ctrl-D; returns everything printed from `Good bye.` on, without escape sequences."""
        self.key("ctrl-d")
        self.expect("Good bye.")
        self.reader.join(timeout=WAIT)
        self.child.close()
        assert self.child.exitstatus == 0, self.out[-2000:]
        text = self.out.split("Good bye.", 1)[1]
        return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", text).replace("\r", "")

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)


def _terms(workspace: Path, env: dict[str, str]) -> Iterator[Any]:
    terms: list[Term] = []

    def start(*args: str) -> Term:
        terms.append(Term(list(args), workspace, env))
        return terms[-1]

    yield start
    for t in terms:
        t.close()


@pytest.fixture
def term(workspace, env):
    yield from _terms(workspace, env)


@pytest.fixture
def cold_term(workspace, cold_env):
    yield from _terms(workspace, cold_env)


def wait_requests(fake: FakeProvider, n: int) -> list[Any]:
    return fake.wait_for_requests(n, timeout=WAIT)


def test_print_renders_markdown_on_a_terminal_and_plain_text_in_a_pipe(workspace, env, fake):
    answer = "# The plan\n\n- read the parser\n\n```python\nprint('fixed')\n```"
    fake.script(Reply(text=answer), Reply(text=answer))
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["-p", "plan it"], cwd=str(workspace), env=env, dimensions=(40, 100), encoding="utf-8")
    child.expect(pexpect.EOF, timeout=120)
    shown = child.before
    assert re.search(r"\x1b\[[0-9;]*\b1[;0-9]*m\s*The plan", shown) and "# The plan" not in shown
    assert re.search(r"\x1b\[[0-9;]*38;5;[0-9]+[0-9;]*mprint", shown) and "```" not in shown
    piped = run(["-p", "plan it"], workspace, env)
    assert piped.returncode == 0 and piped.stdout == answer + "\n"  # a pipe gets the text as written


def test_interactive_answer_is_rendered_as_markdown(workspace, fake, cold_term):
    term = cold_term
    fake.script(Reply(text="# The plan\n\n- read the parser\n- fix the loop\n\n```python\nprint('fixed')\n```\nDone.", chunks=6))
    t = term()
    t.type("plan it")
    t.expect(r"\x1b\[[0-9;]*\b1[;0-9]*m\s*The plan")  # a heading: bold, its '#' gone
    t.expect(r"•.{0,12}read the parser")  # a list
    t.expect(r"\x1b\[[0-9;]*38;5;[0-9]+[0-9;]*mprint")  # the code block, highlighted
    t.expect("Done.")
    t.leave()


def test_interactive_chat_todos_history_sessions_and_exit(tmp_path, workspace, fake, term):
    fake.script(
        Reply(calls=[Call("todo_write", {"todos": [{"content": "fix the boundary", "status": "in_progress"}]})]),
        Reply(text="Looked into it.\nThe loop stops one early.", chunks=5, delay=0.02),
    )
    t = term()
    t.type("why does the pagination test fail?")
    t.expect(r"→ todo_write 1 task")
    t.expect(r"\[~\] fix the boundary")  # the task list, printed when it changes
    t.expect("Looked into it.")
    t.expect("The loop stops one early.")

    t.type("/todos")
    t.expect(r"tasks \.+ 0/1")
    t.expect(r"\[~\] fix the boundary")
    [sid] = session_ids(tmp_path)
    t.type("/sessions")
    t.expect(re.escape(sid[:8]) + r".*why does the pagination test fail\?")  # its short id (one session: 8)

    # Up walks back past the slash commands to the prompt; Enter sends it again.
    fake.script(Reply(text="Same answer."))
    for _ in range(3):
        t.key("up")
    t.type("", enter=True)
    t.expect("Same answer.")
    assert user_texts(wait_requests(fake, 3)[-1].body)[-1] == "why does the pagination test fail?"

    # Down past the newest entry restores what was being typed.
    fake.script(Reply(text="Draft received."))
    t.type("a half-typed draft", enter=False)
    t.key("up")
    t.key("down")
    t.type("", enter=True)
    t.expect("Draft received.")
    assert user_texts(wait_requests(fake, 4)[-1].body)[-1] == "a half-typed draft"

    out = t.leave()
    lines = [line.strip() for line in out.splitlines() if line.strip()]
    prefix = next(line for line in lines if line.startswith("shiro -r")).split()[2]
    assert lines[:4] == [
        'Saved 8 messages: "why does the pagination test fail?"',
        "Resume it with:",
        "shiro -c                    newest session in this directory",
        f"shiro -r {prefix:<18} this session by id",
    ]
    assert sid.startswith(prefix) and len(prefix) >= 8


def test_interactive_abort_queue_and_continue_after_restart(tmp_path, workspace, env, fake, term):
    slow = "Starting the long answer.\n" + " ".join(f"word{i}" for i in range(200))
    fake.script(Reply(text=slow, chunks=100, delay=0.1))
    t = term()
    t.type("tell me a long story")
    t.expect("Starting the long answer.")
    t.type("and a queued one")
    t.expect(r"queued \(1\)")
    t.key("ctrl-c")
    # The abort's answer and the turn's end race each other: either order is right.
    t.expect(r"aborted[\s\S]*cleared 1 queued prompt|cleared 1 queued prompt[\s\S]*aborted")
    deadline = time.monotonic() + WAIT
    while fake.disconnected_early < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert fake.disconnected_early == 1
    time.sleep(0.5)
    assert len(fake.requests) == 1  # the queued prompt never reached the provider
    t.leave()

    # A new process: -c resumes the newest session of this directory, kept text included.
    fake.script(Reply(text="Carrying on."))
    t2 = term("-c")
    t2.expect(r'resumed [^\n]*"tell me a long story"')
    t2.type("go on")
    t2.expect("Carrying on.")
    body = wait_requests(fake, 2)[-1].body
    assert user_texts(body)[0] == "tell me a long story" and user_texts(body)[-1] == "go on"
    assert "Starting the long answer." in sent(fake, body)

    # Esc aborts too.
    fake.script(Reply(text=slow, chunks=100, delay=0.1))
    t2.type("once more, slowly")
    t2.expect("Starting the long answer.")
    t2.child.send("\x1b")
    t2.expect("aborted")
    assert 'Saved 6 messages: "tell me a long story"' in t2.leave()
    assert len(session_ids(tmp_path)) == 1


def test_interactive_attach_approve_clear_and_never_written(tmp_path, workspace, fake, term):
    fake.script(Reply(text="It prints hello."))
    t = term()
    t.type("what does @hel", enter=False)
    time.sleep(0.5)
    t.key("tab")  # the file picker's first match
    t.type(" do?")
    t.expect(r"attached hello\.py \(1 line\)")
    t.expect("It prints hello.")
    typed, attached = user_texts(wait_requests(fake, 1)[0].body)
    assert typed == "what does @hello.py do?"
    assert attached.startswith('<attached-file path="hello.py">') and "print('hello')" in attached

    # An approval is asked in the prompt line; `a` allows it (the client does not offer
    # workspace/applyEdit, so the server writes the file itself).
    fake.script(Reply(calls=[Call("write_file", {"path": "new.txt", "content": "from the terminal\n"})]), Reply(text="Written."))
    t.type("write new.txt")
    t.expect(r"\? shiro-neko wants to write new\.txt")
    t.expect(r"\[a\]llow / al\[w\]ays \(session / \[f\]older / \[u\]ser\) / \[d\]eny")
    time.sleep(QUIET_S + 0.1)  # a key right after typing is typing, not an answer (typed_ahead.py)
    t.type("a", enter=False)
    t.expect("allowed")
    t.expect("Written.")
    assert (workspace / "new.txt").read_text() == "from the terminal\n"

    t.type("/private")
    t.expect("new private session")
    fake.script(Reply(text="private answer"))
    t.type("just between us")
    t.expect("private answer")
    t.type("/clear")
    t.expect("new session")
    out = t.leave()
    assert "The session had no messages, so it was never written." in out
    assert "Saved" not in out
    records = [json.loads((tmp_path / "home" / "sessions" / f"{sid}.json").read_text()) for sid in session_ids(tmp_path)]
    # the first session and the private one stay saved; the new one was never written
    assert sorted(bool(r.get("private")) for r in records) == [False, True]


def test_interactive_stm_shows_and_clears_short_term_memory(tmp_path, workspace, fake, term):
    fake.script(
        Reply(text="Answered.", calls=[Call("update_short_term_memory", {"categories": {"goal": "fix pagination", "next": "add a test"}})]),
        Reply(text="Noted."),
    )
    t = term()
    t.type("/stm")
    t.expect("this session has no short-term memory yet")
    t.type("why does the pagination test fail?")
    t.expect("Noted.")
    t.type("/stm")
    t.expect(r"this session.*categories, updated")
    t.expect("goal:")
    t.expect("fix pagination")
    t.expect("add a test")
    t.type("/stm clear")
    t.expect("cleared this session's short-term memory")
    t.type("/stm")
    t.expect("this session has no short-term memory yet")
    t.type("/stm clear")
    t.expect("nothing to clear")
    t.leave()


def test_interactive_rewind_lists_restores_and_hands_the_prompt_back(tmp_path, workspace, fake, term):
    fake.script(Reply(calls=[Call("write_file", {"path": "hello.py", "content": "print('bye')\n"})]), Reply(text="Changed it."))
    t = term()
    t.type("change hello")
    t.expect(r"\[a\]llow")
    time.sleep(QUIET_S + 0.1)  # a key right after typing is typing, not an answer (typed_ahead.py)
    t.type("a", enter=False)
    t.expect("Changed it.")
    assert (workspace / "hello.py").read_text() == "print('bye')\n"
    t.type("/rewind")
    t.expect(r"1 file: ~hello\.py")
    t.type("/rewind 1")
    t.expect("restored 1 file")
    t.expect("the prompt is back in the input box")
    t.expect("change hello")  # handed back for the input box
    assert (workspace / "hello.py").read_text() == "print('hello')\n"
    t.type("\x15", enter=False)  # Ctrl-U: clear the prompt handed back, so Ctrl-D leaves
    t.leave()


def test_abort_during_an_approval_aborts_without_a_server_error(workspace, fake, term):
    # Issue 26: an abort while an approval was open printed `Error in server: CANCELLED: <Future …>`.
    # (Esc there denies the call: tests/clients/test_terminal_review.py; Ctrl-C aborts the turn.)
    fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"})]), Reply(text="never asked"))
    t = term()
    t.type("run it")
    t.expect(r"\? shiro-neko wants to")
    time.sleep(0.3)
    t.key("ctrl-c")
    t.expect("aborted")
    time.sleep(1.0)  # a late error would be printed by now
    t.leave()
    assert "Error in server" not in t.out and "CANCELLED" not in t.out, t.out[-2000:]
    assert len(fake.requests) == 1
