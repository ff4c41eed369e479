"""Plan mode in the terminal (issue 39), in a pseudo-terminal against the real server: `/plan`
with a prompt, the bottom bar's badge, a write refused, the /start offer after the plan, Shift+Tab
(ESC [ Z) switching, `/start auto-edit` carrying the plan out."""

from __future__ import annotations

from tests.clients.test_terminal import cold_env, env, term, user_texts, wait_requests  # noqa: F401 (fixtures)
from tests.fake_provider import Call, Reply


def tool_names(body):
    return [t.get("name") for t in body.get("tools") or []]


def test_plan_shift_tab_and_start(workspace, env, fake, term):  # noqa: F811
    fake.script(
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"})]),
        Reply(text="The plan: add new.txt."),
        Reply(text="Still planning."),
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"})]),
        Reply(text="Done."),
    )
    t = term()
    t.type("/plan add a file")
    t.expect("plan mode")
    t.expect("plan mode is on")  # the refused write's result, as the tool line shows it
    t.expect("The plan: add new.txt.")
    t.expect(r"plan ready: /start carries it out")
    t.expect(r"⏸ plan mode")  # the bottom bar
    assert not (workspace / "new.txt").exists()
    first = wait_requests(fake, 2)[0].body
    assert "write_file" not in tool_names(first) and "read_file" in tool_names(first)

    t.child.send("\x1b[Z")  # Shift+Tab: act
    t.expect("act mode")
    t.child.send("\x1b[Z")  # and back to plan
    t.expect(r"plan mode.*nothing is changed")
    t.type("anything else?")
    t.expect("Still planning.")
    assert "write_file" not in tool_names(wait_requests(fake, 3)[-1].body)

    t.type("/start auto-edit")
    t.expect("act mode.*approvals auto-edit")
    t.expect("Done.")
    last = wait_requests(fake, 5)
    assert user_texts(last[3].body)[-1] == "Carry out the plan."
    assert "write_file" in tool_names(last[3].body)
    assert (workspace / "new.txt").read_text() == "x\n"  # auto-edit: no question
    t.type("/act yolo")
    t.expect(r"usage: /act or /start \[ask\|auto-edit\|auto\]")
    t.leave()
