"""The Emacs client (clients/emacs/shiro.el, on eglot) in a real batch Emacs, against the real
server and the fake provider (issue 26): a turn longer than jsonrpc's request timeout completes
(`shiro.chat {wait: false}` and `turn_end`), an approval is answered with a key and its edit lands
in the open buffer and is saved with no "changed since visited", and C-g at an approval is
answered (a deny) instead of leaving the server waiting.

Debian: `apt-get install emacs-nox elpa-eglot` (Emacs 28 with eglot 1.9); Emacs 29+ has eglot built in.
"""

from __future__ import annotations

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL

TODOS = [{"content": "tell the story", "status": "in_progress"}]


def test_emacs_slow_turn_approval_edit_and_quit(tmp_path, fake):
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    fake.script(
        Reply(calls=[Call("todo_write", {"todos": TODOS}, "call_todo")]),
        # Three seconds of streaming: three times the request timeout the test sets.
        Reply(text="Once upon a time " + " ".join(f"w{i}" for i in range(30)) + ". The end.", chunks=30, delay=0.1),
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "emacs"}, "call_edit")]),
        Reply(text="Edited."),
        Reply(calls=[Call("run_command", {"command": "echo hi"}, "call_run")]),
        Reply(text="Not run."),
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "emacs", "new_text": "bye"}, "call_edit2")]),
        Reply(text="Left it."),
    )
    # stdin: the deny reason batch Emacs's minibuffer reads (step 4); nothing else reads it.
    result = run_emacs(emacs, "emacs_chat_test.el", tmp_path, workspace, fake.base_url, stdin_text="keep the greeting\n",
                       SHIRO_MODEL=EDIT_FILE_MODEL)

    assert result["slowStatus"] == "started" and result["slowEnd"] == "completed"
    assert result["slowSeconds"] > 1  # it outlasted the request timeout (1 s in the test)
    assert "Once upon a time" in result["chatAfterSlow"] and "The end." in result["chatAfterSlow"]
    assert "[~] tell the story" in result["tasks"]

    assert result["editEnd"] == "completed"
    assert result["asked"] == ["edit hello.py"]
    assert result["bufferText"] == "print('emacs')\n"  # the edit is in the buffer...
    assert result["bufferModified"] is False and result["modtimeCurrent"] is True  # ...and saved by Emacs
    assert result["diskAfterSave"] == "print('emacs')\n# by hand\n"

    assert result["quitEnd"] == "completed"
    assert result["statusAfterQuit"] == {"running": False, "waiting": False}
    outputs = {i["call_id"]: i["output"] for r in fake.main_requests for i in r.body["input"] if i.get("type") == "function_call_output"}
    assert "denied" in outputs["call_run"], outputs

    # Issue 41: the approval's diff in a diff-mode buffer (coloured), the turn's files line, the
    # turn's diff, a deny with a reason the model reads, and shiro-effort.
    assert result["diffMode"] == "diff-mode"
    assert "diff-added" in result["addedFace"], result["addedFace"]
    assert "--- a/hello.py\n+++ b/hello.py\n@@ -1 +1 @@\n-print('hello')\n+print('emacs')" in result["approvalDiff"]
    assert "1 file changed: ~hello.py  (M-x shiro-turn-diff)" in result["chatAfterEdit"]
    assert "-print('hello')\n+print('emacs')" in result["turnDiff"]
    assert result["reasonEnd"] == "completed"
    assert outputs["call_edit2"] == "The user denied this call: keep the greeting"
    assert result["effort"] == "low" and result["effortReport"] == "low"
    assert "shiro" in result["modeLine"] and "%" in result["modeLine"]
    assert result["ok"] is True
