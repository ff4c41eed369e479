"""Issue 38 in real Neovim (0.11, headless) with pyright from PyPI attached as the user's language
server: the editor context goes with a prompt; a scripted edit introduces a type error that pyright
reports and the NEXT request to the provider holds (only the new error, not the one the file had);
find_definition is answered by pyright through shiro/navigate; shiro's code actions on the error;
"Edit with shiro-neko…" shown in a diff tab and accepted with ga. Script: nvim_editor_test.lua.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.clients.test_nvim import PLUGIN, VENV_NVIM, _nvim
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import server_env

SCRIPT = Path(__file__).with_name("nvim_editor_test.lua")
PYRIGHT = Path(sys.executable).with_name("pyright-langserver")
APP = ('def greet(name: str) -> str:\n    return "hello " + name\n\n\ny: int = "old"\nx: int = 1\n'
       'print(greet("a"))\n')
INSTRUCTION = "make x a number again"


def test_nvim_with_pyright(fake: FakeProvider, tmp_path: Path) -> None:
    nvim = _nvim(VENV_NVIM, "venv")
    if not PYRIGHT.exists() or shutil.which("node") is None:
        pytest.skip("pyright (the test extra) or node is missing")
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    # Line 5 holds an error before anything is edited (y's); the edit is on line 6 (x).
    (workspace / "app.py").write_text(APP)
    fake.script(
        Reply(calls=[Call("edit_file", {"path": "app.py", "old_text": "x: int = 1", "new_text": 'x: int = "one"'}, "c1")]),
        Reply(text="x is a word now."),
        Reply(calls=[Call("find_definition", {"path": "app.py", "line": 7, "symbol": "greet"}, "c2")]),
        Reply(text="greet is defined on line 1."),
        Reply(text='```python\nx: int = 1\n```'),
    )
    out = tmp_path / "result.json"
    xdg = tmp_path / "xdg"
    env = server_env(tmp_path / "home", fake.base_url, SHIRO_MODEL="test-model")
    env.update(SHIRO_NVIM_OUT=str(out), SHIRO_NVIM_PLUGIN=str(PLUGIN), SHIRO_NVIM_WORKSPACE=str(workspace),
               SHIRO_NVIM_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]), SHIRO_NVIM_PYRIGHT=str(PYRIGHT),
               SHIRO_NVIM_INSTRUCTION=INSTRUCTION, XDG_CONFIG_HOME=str(xdg / "config"), XDG_DATA_HOME=str(xdg / "data"),
               XDG_STATE_HOME=str(xdg / "state"), XDG_CACHE_HOME=str(xdg / "cache"))
    for name in ("VIMINIT", "NVIM", "NVIM_LISTEN_ADDRESS"):
        env.pop(name, None)
    proc = subprocess.run([str(nvim), "--headless", "-i", "NONE", "-u", str(SCRIPT)], cwd=workspace, env=env,
                          capture_output=True, text=True, timeout=320, stdin=subprocess.DEVNULL)
    logs = "\n".join(p.read_text(errors="replace")[-3000:] for p in xdg.rglob("lsp.log"))
    assert out.exists(), f"rc={proc.returncode}\n{proc.stderr}\n{logs}"
    r = json.loads(out.read_text())
    assert proc.returncode == 0 and not r["errors"], f"{r}\n{proc.stderr}\n{logs}"

    assert any("old" in m for m in r["before"]), r["before"]  # pyright's error before the edit
    first, after_edit, nav_call, after_nav, inline = fake.main_requests[:5]
    context = json.dumps(first.body["input"])
    assert "<editor_context>" in context and "Active file: app.py (cursor at line 6" in context
    assert "Selected in app.py lines 6:\\n```\\nx: int = 1\\n" in context, context
    result = json.dumps(after_edit.body["input"][-1])
    assert "new errors after this edit" in result, result
    assert "app.py:6:10: error reportAssignmentType" in result and "(Pyright)" in result, result
    assert "old" not in result  # the error the file already had is not new
    nav = json.dumps(after_nav.body["input"][-1])
    assert "app.py:1:5  def greet(name: str) -> str:" in nav, nav
    assert "Fix with shiro-neko" in r["code_actions"] and any(t.startswith("Edit with shiro-neko") for t in r["code_actions"])
    assert INSTRUCTION in json.dumps(inline.body["input"])
    assert r["diff_on"] and r["diff_tabs"] == 2 and r["tabs_after"] == 1
    assert r["resolved"]["accept"] and r["resolved"]["applied"], r["resolved"]
    assert r["final"][5] == "x: int = 1"
