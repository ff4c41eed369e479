"""The Emacs client (clients/emacs/shiro.el, on eglot) in a real batch Emacs, against the real
server and the fake provider (issue 26): a turn longer than jsonrpc's request timeout completes
(`shiro.chat {wait: false}` and `turn_end`), an approval is answered with a key and its edit lands
in the open buffer and is saved with no "changed since visited", and C-g at an approval is
answered (a deny) instead of leaving the server waiting.

Debian: `apt-get install emacs-nox elpa-eglot` (Emacs 28 with eglot 1.9); Emacs 29+ has eglot built in.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.fake_provider import Call, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "clients" / "emacs"
SCRIPT = Path(__file__).with_name("emacs_chat_test.el")

TODOS = [{"content": "tell the story", "status": "in_progress"}]


def _emacs() -> str:
    emacs = shutil.which("emacs")
    if emacs is None:
        if os.environ.get("CI") == "true":
            pytest.fail("emacs is needed in CI (.ci/run installs emacs-nox and elpa-eglot)")
        pytest.skip("emacs is missing (Debian: apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run([emacs, "--batch", "--eval", "(require 'eglot)"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"eglot does not load: {probe.stderr[-500:]}")
        pytest.skip("eglot is missing (Debian: apt-get install elpa-eglot)")
    return emacs


def test_emacs_slow_turn_approval_edit_and_quit(tmp_path, fake):
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    out = tmp_path / "result.json"
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
    env = server_env(tmp_path / "home", fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL)
    env.update(
        SHIRO_EMACS_OUT=str(out),
        SHIRO_EMACS_PLUGIN=str(PLUGIN),
        SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]),
        SHIRO_EMACS_WORKSPACE=str(workspace),
        HOME=str(tmp_path / "emacs-home"),
    )
    # stdin: the deny reason batch Emacs's minibuffer reads (step 4); nothing else reads it.
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env, input="keep the greeting\n",
                          capture_output=True, text=True, timeout=240)
    assert out.exists(), done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])

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
