"""Plan mode in the Emacs client (clients/emacs/shiro-plan.el) in a real batch Emacs against the
real server (issue 39): `shiro-plan-mode' switches the server's mode, the mode line says "plan", a
write in plan mode is refused, the plan-ready offer follows the turn, `shiro-start-plan' with
auto-edit carries the plan out."""

from __future__ import annotations

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL


def test_emacs_plan_mode_and_start(tmp_path, fake):
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    fake.script(
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"}, "call_w")]),
        Reply(text="The plan: add new.txt."),
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"}, "call_w2")]),
        Reply(text="Done."),
    )
    result = run_emacs(emacs, "emacs_plan_test.el", tmp_path, workspace, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL)
    assert result["modeAfterToggle"] == "plan"
    assert " plan" in result["modeLine"] and " plan" not in result["modeLineAct"]
    assert result["existsAfterPlan"] == "no"
    chat = result["chatAfterPlan"]
    assert "plan mode is on" in chat and "The plan: add new.txt." in chat
    assert "[plan ready: M-x shiro-start-plan" in chat
    assert "write_file" not in [t["name"] for t in fake.requests[0].body["tools"]]
    assert "[act mode: approvals auto-edit]" in result["chatAfterStart"] and "Done." in result["chatAfterStart"]
    assert result["newTxt"] == "x\n"
