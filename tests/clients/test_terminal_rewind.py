"""Issue 41 item 2 in the terminal, in a pseudo-terminal: `/rewind 1` back to the first prompt,
Ctrl-D, and the saved session holds nothing old (`shiro sessions`, `shiro -c`)."""

from __future__ import annotations

import json
import time

from shiro_neko.client.typed_ahead import QUIET_S
from tests.clients.test_terminal import cold_env, env, run, term, user_texts, wait_requests  # noqa: F401 (fixtures)
from tests.fake_provider import Call, Reply


def test_rewind_to_the_first_prompt_is_saved(tmp_path, workspace, env, fake, term):  # noqa: F811
    fake.script(Reply(calls=[Call("write_file", {"path": "hello.py", "content": "print('bye')\n"})]), Reply(text="Changed it."),
                Reply(text="Second answer."))
    t = term()
    t.type("change hello")
    t.expect(r"\[a\]llow")
    time.sleep(QUIET_S + 0.1)  # a key right after typing is typing, not an answer (typed_ahead.py)
    t.type("a", enter=False)
    t.expect("Changed it.")
    t.type("and more")
    t.expect("Second answer.")
    t.type("/rewind")
    # The listing's number of the first turn (the terminal's own numbering, docs/terminal.md).
    row = t.expect(r"(\d+)(?:\x1b\[[0-9;]*m|\s)+[0-9-]+ [0-9:]+(?:\x1b\[[0-9;]*m|\s)+change hello")
    t.expect(r"1 file: ~hello\.py")
    t.type(f"/rewind {row.group(1)}")  # the first of two turns: the whole conversation
    t.expect("restored 1 file")
    t.expect("the prompt is back in the input box")
    t.type("\x15", enter=False)  # Ctrl-U: clear the prompt handed back, so Ctrl-D leaves
    goodbye = t.leave()
    assert "Saved 0 messages: the conversation was rewound to its start." in goodbye, goodbye
    assert (workspace / "hello.py").read_text() == "print('hello')\n"

    [row] = json.loads(run(["sessions", "--json"], workspace, env).stdout)["sessions"]
    assert row["messageCount"] == 0 and row["title"] == ""

    # -c resumes that session, empty: the model sees only the new prompt.
    fake.script(Reply(text="Fresh start."))
    t2 = term("-c")
    t2.type("hi again")
    t2.expect("Fresh start.")
    body = wait_requests(fake, 4)[-1].body
    assert user_texts(body) == ["hi again"]
    assert "change hello" not in json.dumps(body) and "Changed it." not in json.dumps(body)
    t2.leave()
