"""Issue 38 in batch Emacs (shiro.el on eglot, clients/emacs/shiro-editor.el) with a flymake backend
reporting the diagnostics: a prompt carries the editor context (the region), shown in the chat's
header line, which the [×] drops for the next prompt; a scripted edit makes the backend report a new
error, which the NEXT request to the provider holds (not the error the file had); M-x
shiro-fix-at-point sends flymake's problem; shiro's code actions on it; "Edit with shiro-neko…"
shown as a diff buffer and accepted (C-c C-c), M-x shiro-edit-region's diff rejected (C-c C-k).
Script: emacs_editor_test.el."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import EDIT_FILE_MODEL

APP = 'def greet(name):\n    return "hello " + name\n\n\ny: int = "old"\nx: int = 1\n'
INSTRUCTION = "make x a number again"


def test_emacs_flymake_context_code_actions_inline_edit(tmp_path: Path, fake: FakeProvider) -> None:
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    fake.script(
        Reply(calls=[Call("edit_file", {"path": "app.py", "old_text": "x: int = 1", "new_text": 'x: int = "one"'}, "c1")]),
        Reply(text="x is a word now."),
        Reply(text="Fine."),
        Reply(text="Make it a number again."),
        Reply(text="```python\nx: int = 1\n```"),
        Reply(text="```python\ndef greet(who):\n```"),
        Reply(calls=[Call("find_definition", {"path": "app.py", "line": 1, "symbol": "greet"}, "n1"),
                     Call("find_definition", {"path": "evil.py", "line": 2, "symbol": "greet"}, "n2")]),
        Reply(text="In app.py, line 1."),
        Reply(text="It greets."),
    )
    # Not open in Emacs: opened to answer, with its file-local `eval' ignored, and closed again.
    pwned = tmp_path / "pwned"
    (workspace / "evil.py").write_text(f'# -*- eval: (write-region "pwned" nil "{pwned}") -*-\ngreet("x")\n')
    # A tags table outside the workspace for xref's etags backend (etags comes with Emacs).
    subprocess.run(["etags", "-o", str(tmp_path / "TAGS"), str(workspace / "app.py")], check=True, timeout=60)
    r = run_emacs(emacs, "emacs_editor_test.el", tmp_path, workspace, fake.base_url, timeout=300,
                  SHIRO_MODEL=EDIT_FILE_MODEL, SHIRO_EMACS_INSTRUCTION=INSTRUCTION, SHIRO_EMACS_TAGS=str(tmp_path / "TAGS"))

    assert r["before"] == ['"old" is a str, not an int']
    first, after_edit, dropped, fix, inline, rejected = fake.main_requests[:6]
    # the context: a message of the turn, before the prompt, never in the instructions
    sent = json.dumps(first.body["input"])
    assert "<editor_context>" in sent and "Selected in app.py lines 6" in sent and "x: int = 1" in sent
    assert sent.index("<editor_context>") < sent.index("make x a word")
    assert "editor_context" not in json.dumps(first.body.get("instructions", ""))
    assert r["header"] is True
    assert r["chip"].startswith(" Using app.py:6 ") and "[×]" in r["chip"], r["chip"]
    assert "using app.py:6" in r["transcript"]
    # the new error, in the edit's result the next request carries
    result = json.dumps(after_edit.body["input"][-1])
    assert "new errors after this edit" in result, result
    assert 'app.py:6:10: error: \\"one\\" is a str, not an int (test-int-check)' in result, result
    assert "old" not in result
    # flymake's reports counted: the first check, then at least one after the edit
    (answer,) = r["answer"]["items"]
    assert answer["uri"].endswith("/app.py") and answer["generation"] >= 2, r["answer"]
    # dropped: that prompt went without it, the one after it has it again
    assert r["chipDropped"] == " No editor context with the next prompt"
    assert "no context this time" in json.dumps(dropped.body["input"])
    assert "<editor_context>" not in json.dumps(dropped.body["input"][-1])
    fixed = json.dumps(fix.body["input"][-1])
    assert "Fix these problems" in fixed and 'line 6: \\"one\\" is a str, not an int' in fixed, fixed
    assert "(test-int-check)" in fixed
    # the code actions, the inline edit accepted then one rejected
    assert "Fix with shiro-neko" in r["codeActions"], r["codeActions"]
    assert INSTRUCTION in json.dumps(inline.body["input"])
    assert '-x: int = "one"' in r["diff"] and "+x: int = 1" in r["diff"], r["diff"]
    assert r["diff"].startswith("--- a/app.py\n+++ b/app.py\n"), r["diff"]
    assert r["diffKeys"] == ["C-c C-c", "C-c C-k"]
    assert r["resolved"] == {"accept": True, "applied": True}
    assert r["final"] == APP
    assert "rename name to who" in json.dumps(rejected.body["input"])
    assert "-def greet(name):" in r["rejectDiff"] and "+def greet(who):" in r["rejectDiff"], r["rejectDiff"]
    assert r["rejected"] == {"accept": None, "applied": None}  # nil, as json-encode writes it
    assert r["afterReject"] == APP and r["ok"] is True
    # navigation: the find_definition tool is offered and xref answered it
    navigate = fake.main_requests[7]
    assert "find_definition" in json.dumps(navigate.body["tools"])
    found = json.dumps(navigate.body["input"][-2:])
    assert found.count("app.py:1:") == 2 and "def greet(name):" in found, found
    assert not pwned.exists()
    assert r["evilOpen"] is None  # the buffer opened to answer is gone
    # M-x shiro-ask-region: the context shiro/focusChat brought goes with the next prompt
    assert r["askChip"].startswith(" Using app.py:2 "), r["askChip"]
    asked = json.dumps(fake.main_requests[8].body["input"])
    assert "Selected in app.py lines 2" in asked and 'return \\"hello \\" + name' in asked, asked
