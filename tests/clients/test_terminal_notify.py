"""Terminal notifications against the real server (issue 39): a bell and an OSC 9 notification
when an approval waits while the terminal is not known to have focus, none once the terminal
reported focus (ESC [ I), and one when a turn longer than notifyAfterSeconds ends."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pexpect

from shiro_neko.client.notify import notification
from tests.clients.test_terminal import SHIRO, wait_requests
from tests.clients.test_terminal import cold_env, env, term  # noqa: F401 - fixtures
from tests.fake_provider import Call, Reply

OSC9 = "\x1b]9;"


def test_an_approval_rings_until_the_terminal_reports_focus(workspace, env, fake, term):
    Path(env["SHIRO_NEKO_CONFIG"]).write_text(json.dumps({"notifyAfterSeconds": 1000}))
    fake.script(Reply(calls=[Call("run_command", {"command": "echo one"}, "c1")]), Reply(text="first done"),
                Reply(calls=[Call("run_command", {"command": "echo two"}, "c2")]), Reply(text="second done"))
    t = term("--approvals", "ask")
    t.expect(r"\x1b\[\?1004h")  # focus reporting asked for
    t.type("run one")
    t.expect(r"\x07\x1b\]9;shiro-neko is waiting for your approval: shiro-neko wants to run[^\x07]*echo one\x07")
    time.sleep(0.7)
    t.type("d", enter=False)
    t.expect("first done")
    t.child.send("\x1b[I")  # the terminal says it has focus
    time.sleep(0.3)
    mark = len(t.out)
    t.type("run two")
    t.expect(r"echo two")
    t.expect(r"\[d\]eny")
    assert OSC9 not in t.out[mark:]
    assert "[I" not in t.out[mark:]  # the report was read as focus, never typed into the input
    time.sleep(0.7)
    t.type("d", enter=False)
    t.expect("second done")
    t.leave()


def test_a_long_turn_rings_when_it_ends(workspace, env, fake, term):
    Path(env["SHIRO_NEKO_CONFIG"]).write_text(json.dumps({"notifyAfterSeconds": 0}))
    fake.script(Reply(text="all done"))
    t = term()
    t.type("hi")
    t.expect(r"\x07\x1b\]9;shiro-neko: the turn finished \(\d+ s\)\x07")
    t.expect("all done")
    t.leave()


def test_print_rings_at_its_question(workspace, env, fake):
    fake.script(Reply(calls=[Call("run_command", {"command": "echo hi\x1b]9;fake\x07"}, "c1")]), Reply(text="ok"))
    child = pexpect.spawn(SHIRO[0], SHIRO[1:] + ["-p", "run it", "--approvals", "ask"], cwd=str(workspace), env=env,
                          dimensions=(40, 120), encoding="utf-8")
    child.expect(r"\x07\x1b\]9;shiro-neko wants to run", timeout=120)
    child.expect(r"\[d\]eny", timeout=30)
    assert child.before.count(OSC9) == 0  # the command's own OSC 9 is shown, never sent (visible_text.py)
    child.send("d\r")
    child.expect(pexpect.EOF, timeout=120)
    assert len(wait_requests(fake, 2)) == 2


def test_the_notification_cannot_be_ended_early_by_its_text():
    sent = notification("run: echo \x07\x1b]52;c;cGF5bG9hZA==\x07 done\n" + "x" * 500)
    assert sent.startswith(b"\a\x1b]9;") and sent.endswith(b"\a")
    assert sent.count(b"\a") == 2 and sent.count(b"\x1b") == 1  # only its own
    assert len(sent) <= 3 + 4 + 200 * 4
