"""The Neovim plugin shows what the agent changes and lets the user answer it (issue 41 items 3, 7
and 8; issue 37's effort and reasoning), in a real headless Neovim against the real server and
the fake provider:

- an edit's approval shows its diff in a float (filetype diff) before the menu, "Show the whole
  diff" opens the file beside the proposed text in a diff tab, and "Deny with reason…" sends the
  reason, which reaches the model in the tool result;
- the task list never covers the chat transcript (docked above it, or as a float left of it);
- after a turn that changed files the chat says "1 file changed: hello.py (modified)",
  `:Shiro diff` shows the turn's diff, `:ShiroUndo hello.py` restores the file;
- reasoning summaries are folded in the chat; `:Shiro effort high` reaches the next request.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.clients.test_nvim import _run, nvim  # noqa: F401  (nvim is the binary fixture)
from tests.fake_provider import Call, FakeProvider, Reply

SCRIPT = Path(__file__).with_name("nvim_review_test.lua")
TODOS = [
    {"content": "rename the greeting", "status": "in_progress"},
    {"content": "run the script", "status": "pending"},
]
EDIT = {"path": "hello.py", "old_text": "hello", "new_text": "hi there"}
REASON = "keep hello; add a GREETING constant instead"


def test_approval_diff_reason_todos_changes_undo_effort(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:  # noqa: F811
    fake.script(
        # 1: a reasoning summary and a task list, then the answer
        Reply(reasoning="Weighing the greeting.\nThen the plan.", calls=[Call("todo_write", {"todos": TODOS}, "c_todo")]),
        Reply(text="Planned."),
        # 2: an edit, denied with a reason
        Reply(calls=[Call("edit_file", EDIT, "c_edit1")]),
        Reply(text="Understood."),
        # 3: the same edit, allowed
        Reply(calls=[Call("edit_file", EDIT, "c_edit2")]),
        Reply(text="Renamed."),
        # 4: after :Shiro effort high
        Reply(text="You are welcome."),
    )
    result, _proc, workspace = _run(nvim, fake, tmp_path, SCRIPT)

    # reasoning: written with its prefix and folded (closed) in the chat window
    folds = result["reasoning_folds"]
    assert [f["line"] for f in folds] == ["  ┊ Weighing the greeting.", "  ┊ Then the plan."]
    assert all(f["closed"] for f in folds)
    assert folds[0]["text"].startswith("  ┊ thinking… (2 lines")

    # item 7: the task list beside the transcript, never over it
    dock = result["todos_dock"]
    assert dock["lines"][1:] == ["[~] rename the greeting", "[ ] run the script"]
    assert dock["overlap"] is False, dock
    assert dock["todos"]["floating"] is False
    assert dock["todos"]["left"] == dock["chat"]["left"] and dock["todos"]["bottom"] < dock["chat"]["top"]
    floating = result["todos_float"]
    assert floating["todos"]["floating"] is True
    assert floating["overlap"] is False, floating
    assert floating["todos"]["left"] >= 0

    # item 3: the diff float before the menu, the menu's choices, the whole diff in a tab
    approvals = [a for a in result["asked"] if a["kind"] == "shiro_approval"]
    assert len(approvals) == 3, approvals
    first = approvals[0]
    assert first["items"] == ["Allow", "Always allow (this session)", "Always allow in this folder",
                              "Always allow for me (everywhere)", "Deny", "Deny with reason…", "Show the whole diff"]
    assert "edit hello.py" in first["prompt"]
    float_ = first["float"]
    assert float_ and float_["floating"] is True and float_["filetype"] == "diff"
    assert float_["lines"][0] == "shiro-neko wants to edit hello.py"
    assert "-print('hello')" in float_["lines"] and "+print('hi there')" in float_["lines"]
    assert any(line.startswith("@@") for line in float_["lines"])
    if tuple(int(n) for n in result["nvim_version"].split(".")) >= (0, 10, 0):
        tab = result["whole_diff_tab"]  # read while the menu waited for the tab to close
        assert approvals[1]["tab"]["tabs"] == 1  # q closed it, then the menu came back
    else:
        tab = approvals[1]["tab"]  # without a coroutine the menu comes back over the tab
    assert tab["tabs"] == 2
    assert [w["diff"] for w in tab["wins"]] == [True, True]
    assert tab["wins"][0]["lines"] == ["print('hello')"] and tab["wins"][1]["lines"] == ["print('hi there')"]
    assert approvals[1].get("float") is None or approvals[1]["float"]["filetype"] == "diff"
    reasons = [a for a in result["asked"] if a["kind"] == "input"]
    assert len(reasons) == 1
    assert result["after_approval"]["tabs"] == 1  # nothing left open after the answer
    assert result["disk_after_deny"] == ["print('hello')"]
    assert result["turn_end_2"]["text"] == "Understood."
    denied = [r for r in fake.requests if f"The user denied this call: {REASON}" in json.dumps(r.body, ensure_ascii=False)]
    assert denied, "the reason never reached the model"

    # item 8: the changed files under the answer, the turn's diff, undo of one file
    assert result["disk_after_allow"] == ["print('hi there')"]
    assert result["turn_end_3"]["files"] == [{"path": "hello.py", "change": "modified"}]
    lines = result["chat_lines_3"]
    changed = [line for line in lines if line.startswith("1 file changed: hello.py (modified)")]
    assert len(changed) == 1, lines
    assert lines.index("Renamed.") < lines.index(changed[0])
    assert not any(" changed: " in line for line in result["chat_lines_1"])  # turn 1 changed no file
    diff = result["diff_buffer"]
    assert diff["filetype"] == "diff"
    assert "-print('hello')" in diff["lines"] and "+print('hi there')" in diff["lines"]
    assert result["undo_notification"]["msg"] == "shiro: undone: 1 file(s) restored"
    assert result["disk_after_undo"] == ["print('hello')"]
    assert result["code_buffer_after_undo"] == ["print('hello')"]
    assert "-- undone: 1 file(s) restored (hello.py)" in result["chat_lines_undo"]

    # issue 37: :Shiro effort high is reported and sent with the next request
    assert result["effort_notification"]["msg"] == "shiro: reasoning effort: high (model fake-model)"
    last = fake.requests[-1].body
    assert (last.get("reasoning") or {}).get("effort") == "high" or last.get("reasoning_effort") == "high"

    assert result["steps"][-1] == "done"
    assert [n for n in result["notifications"] if n["level"] >= 3] == []
