"""Issue 38 in batch Emacs (shiro.el on eglot, clients/emacs/shiro-editor.el) with a flymake backend
reporting the diagnostics: a prompt carries the editor context (the region); a scripted edit makes
the backend report a new error, which the NEXT request to the provider holds (not the error the
file had); shiro's code actions on it; "Edit with shiro-neko…" shown as a diff and accepted.
Script: emacs_editor_test.el."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.clients.test_emacs import PLUGIN, _emacs
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import EDIT_FILE_MODEL, server_env

SCRIPT = Path(__file__).with_name("emacs_editor_test.el")
APP = 'def greet(name):\n    return "hello " + name\n\n\ny: int = "old"\nx: int = 1\n'
INSTRUCTION = "make x a number again"


def test_emacs_flymake_context_code_actions_inline_edit(tmp_path: Path, fake: FakeProvider) -> None:
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "app.py").write_text(APP)
    fake.script(
        Reply(calls=[Call("edit_file", {"path": "app.py", "old_text": "x: int = 1", "new_text": 'x: int = "one"'}, "c1")]),
        Reply(text="x is a word now."),
        Reply(text="```python\nx: int = 1\n```"),
    )
    out = tmp_path / "result.json"
    env = server_env(tmp_path / "home", fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL)
    env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN), SHIRO_EMACS_WORKSPACE=str(workspace),
               SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]), SHIRO_EMACS_INSTRUCTION=INSTRUCTION,
               HOME=str(tmp_path / "emacs-home"))
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env, capture_output=True, text=True,
                          timeout=300, stdin=subprocess.DEVNULL)
    assert out.exists(), done.stderr[-3000:]
    r = json.loads(out.read_text())
    assert "error" not in r, (r, done.stderr[-3000:])

    assert r["before"] == ['"old" is a str, not an int']
    first, after_edit, inline = fake.main_requests[:3]
    sent = json.dumps(first.body["input"])
    assert "<editor_context>" in sent and "Selected in app.py lines 6" in sent and "x: int = 1" in sent
    result = json.dumps(after_edit.body["input"][-1])
    assert "new errors after this edit" in result, result
    assert 'app.py:6:10: error: \\"one\\" is a str, not an int (test-int-check)' in result, result
    assert "old" not in result
    assert "Fix with shiro-neko" in r["codeActions"], r["codeActions"]
    assert INSTRUCTION in json.dumps(inline.body["input"])
    assert '-x: int = "one"' in r["diff"] and "+x: int = 1" in r["diff"], r["diff"]
    assert r["resolved"] == {"accept": True, "applied": True}
    assert r["final"] == APP and r["ok"] is True
