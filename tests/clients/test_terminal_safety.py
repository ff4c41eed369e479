"""What the model, a tool or a title writes reaches the terminal only as visible text, an approval
shows all of its request before its question, and keys typed ahead never answer it (issue 35
items 4, 5, 6). The real `shiro`, its real server and the HTTP fake provider, on a pseudo-terminal.

Each test is an attack that worked before server/model/visible_text.py, approval_text.py and
typed_ahead.py: the clipboard written (OSC 52), the window title set (OSC 0), a link hidden
(OSC 8), lines erased and redrawn (CSI), text reversed (U+202E); a command's first line pushed out
of sight by 60 newlines; an `a` typed for the next prompt taken as "allow".
"""

from __future__ import annotations

import json
import re
import threading
import time

import pexpect

from tests.clients.test_terminal import SHIRO, WAIT, cold_env, env, run, term  # noqa: F401 - fixtures
from tests.fake_provider import Call, Reply

# One paragraph each: markdown keeps them apart, and none is long enough to be wrapped.
HOSTILE = "\n\n".join([
    "Clip \x1b]52;c;cm0gLXJmIH4=\x07 done.",
    "Title \x1b]0;pwned-title\x07 done.",
    "Link \x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\ done.",
    "Erase \x1b[5A\x1b[2Kerased done.",
    "Reversed \u202eevil\u202c done.",
])
SHOWN = ["^[]52;c;cm0gLXJmIH4=^G", "^[]0;pwned-title^G", "^[]8;;https://evil.example/^[\\docs^[]8;;^[\\",
         "^[[5A^[[2Kerased", "⟨U+202E⟩evil⟨U+202C⟩"]
# As sent (the CSI ones with their text: prompt_toolkit moves the cursor and erases lines itself).
RAW = ["\x1b]", "\x07", "\x1b[5A\x1b[2Kerased", "\u202e", "\u202c"]
CSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
# A command whose tail once erased the real request and redrew it as `npm test`.
COMMAND = "touch pwned" + "\n" * 60 + "\x1b[62A\x1b[2K\rnpm test"


def plain(out: str) -> str:
    """What the terminal shows as text: our own CSI sequences (colours, prompt_toolkit's cursor
    moves) taken out, carriage returns dropped."""
    return CSI.sub("", out).replace("\r", "")


def spawn(args: list[str], workspace, env) -> pexpect.spawn:
    return pexpect.spawn(SHIRO[0], SHIRO[1:] + args, cwd=str(workspace), env=env, dimensions=(40, 100), encoding="utf-8")


def test_print_shows_escape_sequences_and_bidi_controls_visibly(workspace, env, fake):
    fake.script(Reply(text=HOSTILE, chunks=7))
    child = spawn(["-p", "say it"], workspace, env)
    child.expect(pexpect.EOF, timeout=120)
    out = child.before
    for raw in RAW:
        assert raw not in out, (raw, out)
    for shown in SHOWN:
        assert shown in plain(out), (shown, out)
    assert "\x1b[1m" in out or "\x1b[" in out  # our own styling still reaches the terminal


def test_print_into_a_pipe_shows_escape_sequences_visibly_too(workspace, env, fake):
    """`shiro -p … | tee log` or `| less -R` still reaches a terminal: the answer written into a
    pipe is the visible form as well (plain text, newlines and tabs, comes out as written)."""
    fake.script(Reply(text=HOSTILE + "\n\n\tplain line", chunks=7))
    done = run(["-p", "say it"], workspace, env)
    assert done.returncode == 0, done.stderr
    for raw in RAW:
        assert raw not in done.stdout, (raw, done.stdout)
    for shown in SHOWN:
        assert shown in done.stdout, (shown, done.stdout)
    assert "\n\n\tplain line" in done.stdout


def test_interactive_shows_escape_sequences_and_bidi_controls_visibly(workspace, fake, term):
    fake.script(Reply(text=HOSTILE + "\n\nThe end.", chunks=7))
    t = term()
    t.type("say it")
    t.expect("The end.")
    t.leave()
    for raw in RAW:
        assert raw not in t.out, (raw, t.out[-3000:])
    for shown in SHOWN:
        assert shown in plain(t.out), (shown, t.out[-3000:])


def test_session_titles_with_escapes_are_listed_visibly(workspace, env, fake):
    fake.script(Reply(text="ok"))
    prompt = "fix \x1b]0;pwned\x07 the \x1b[2K\u202ebug"
    assert run(["-p", prompt], workspace, env).returncode == 0
    table = run(["sessions"], workspace, env)
    assert table.returncode == 0, table.stderr
    assert "\x1b" not in table.stdout and "\x07" not in table.stdout and "\u202e" not in table.stdout, repr(table.stdout)
    assert "fix ^[]0;pwned^G the ^[[2K⟨U+202E⟩bug" in table.stdout
    listed = run(["sessions", "--json"], workspace, env)
    assert "\u202e" not in listed.stdout and "\x1b" not in listed.stdout
    assert json.loads(listed.stdout)["sessions"][0]["title"].startswith("fix \x1b]0;pwned\x07")  # the same value


def _numbered_lines_before(out: str, question: str) -> list[str]:
    shown = plain(out)
    assert question in shown, shown[-3000:]
    before = shown[: shown.rindex(question)]  # the question as last drawn (the UI redraws its prompt)
    return re.findall(r"^ *(\d+) │ (.*)$", before, re.MULTILINE)


def test_print_approval_shows_every_line_and_asks_last(workspace, env, fake):
    fake.script(Reply(calls=[Call("run_command", {"command": COMMAND})]), Reply(text="not run"))
    child = spawn(["-p", "run it"], workspace, env)
    child.expect(r"the request above: 61 lines, from line 1\): ", timeout=WAIT)
    out = child.before + child.after
    numbered = _numbered_lines_before(out, "[a]llow / al[w]ays (session / [f]older / [u]ser) / [d]eny / [r]eason (the request above: 61 lines")
    assert [int(n) for n, _ in numbered] == list(range(1, 62))
    assert numbered[0][1].endswith(": touch pwned") and numbered[-1][1] == "^[[62A^[[2K^Mnpm test"
    assert "\x1b[62A" not in out
    child.send("d\r")
    child.expect(pexpect.EOF, timeout=WAIT)
    assert not (workspace / "pwned").exists()


def test_interactive_approval_shows_every_line_and_asks_last(workspace, fake, term):
    fake.script(Reply(calls=[Call("run_command", {"command": COMMAND})]), Reply(text="not run"))
    t = term()
    t.type("run it")
    # The request is printed above the prompt, and the prompt (the question) redrawn under it;
    # prompt_toolkit may draw the question once before the printed lines reach the terminal.
    last_line, asked = "61 │ ^[[62A^[[2K^Mnpm test", "[a]llow / al[w]ays (session / [f]older / [u]ser) / [d]eny / [r]eason (the request above: 61 lines, from line 1) › "
    deadline = time.monotonic() + WAIT
    while not (last_line in (shown := plain(t.out)) and asked in shown[shown.index(last_line):]):
        assert time.monotonic() < deadline, shown[-3000:]
        time.sleep(0.05)
    numbered = _numbered_lines_before(t.out, asked)
    assert [int(n) for n, _ in numbered] == list(range(1, 62))
    assert numbered[0][1].endswith(": touch pwned") and numbered[-1][1] == "^[[62A^[[2K^Mnpm test"
    assert "\x1b[62A" not in t.out
    time.sleep(0.7)
    t.type("d", enter=False)
    t.expect("denied")
    t.expect("not run")
    t.leave()
    assert not (workspace / "pwned").exists()


STREAMING = "Thinking about it.\n\n" + " ".join(f"word{i}" for i in range(60))


def test_print_keys_typed_while_the_answer_streams_do_not_answer(workspace, env, fake):
    fake.script(Reply(text=STREAMING, chunks=40, delay=0.05, calls=[Call("run_command", {"command": "touch typed-ahead"})]),
                Reply(text="denied, as asked"))
    child = spawn(["-p", "go"], workspace, env)
    child.expect("Thinking about it", timeout=WAIT)
    child.send("a\r")  # typed ahead, before any question: a line in the tty's buffer
    child.send("y\r")
    child.expect(r"\[a\]llow / al\[w\]ays \(session / \[f\]older / \[u\]ser\) / \[d\]eny", timeout=WAIT)
    time.sleep(1.5)
    assert not (workspace / "typed-ahead").exists()
    assert len(fake.requests) == 1  # the call is still waiting for its answer
    child.send("d\r")
    child.expect(pexpect.EOF, timeout=WAIT)
    assert "denied, as asked" in child.before
    assert not (workspace / "typed-ahead").exists()


def test_interactive_keys_typed_in_full_flow_do_not_answer(workspace, fake, term):
    fake.script(Reply(text=STREAMING, chunks=40, delay=0.05, calls=[Call("run_command", {"command": "touch typed-ahead"})]),
                Reply(text="denied, as asked"))
    t = term()
    t.type("go")
    t.expect("Thinking about it")
    stop = threading.Event()

    def typist() -> None:  # `a` after `a`, before and after the question appears
        while not stop.is_set():
            t.child.send("a")
            time.sleep(0.05)

    typing = threading.Thread(target=typist, daemon=True)
    typing.start()
    try:
        t.expect(r"\[a\]llow / al\[w\]ays \(session / \[f\]older / \[u\]ser\) / \[d\]eny")
        time.sleep(0.3)
    finally:
        stop.set()
        typing.join()
    time.sleep(1.5)
    assert not (workspace / "typed-ahead").exists()
    assert len(fake.requests) == 1  # still waiting
    assert "allowed" not in plain(t.out)
    t.type("d", enter=False)  # after a pause: an answer
    t.expect("denied")
    t.expect("denied, as asked")
    t.type("\x15", enter=False)  # Ctrl-U: the typed `a`s out of the input, so Ctrl-D leaves
    t.leave()
    assert not (workspace / "typed-ahead").exists()


def test_print_mcp_approval_shows_every_argument_in_full(workspace, env, fake):
    """Issue 35 item 6: an MCP call's arguments were cut at 300 characters with no ellipsis; what
    came after (here `rm -rf ~` behind a bidi override) was never shown. The server sends them
    all; the terminal shows them all, visibly, then asks."""
    from pathlib import Path

    from tests.mcp.helpers import fault_entry

    Path(env["SHIRO_NEKO_CONFIG"]).write_text(json.dumps({"mcpServers": {"tools": fault_entry()}}))
    text = "x" * 400 + " then \u202erm -rf ~ END"
    fake.script(Reply(calls=[Call("mcp__tools__echo", {"text": text})]), Reply(text="not called"))
    child = spawn(["-p", "echo it"], workspace, env)
    child.expect(r"\(the request above: [0-9,]+ characters\): ", timeout=WAIT)
    shown = plain(child.before)
    request = shown[shown.rindex("? "):]
    assert "x" * 400 + " then ⟨U+202E⟩rm -rf ~ END" in request.replace("\n", "")
    assert "\u202e" not in child.before
    child.send("d\r")
    child.expect(pexpect.EOF, timeout=WAIT)
    assert "not called" in child.before
