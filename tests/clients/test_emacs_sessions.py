"""Saved sessions in the Emacs client (clients/emacs/shiro-sessions.el) in a real batch Emacs
against the real server (issue 40): `shiro-search-sessions' offers only the session whose answer
holds the word (short id, title, passage) and resumes it; `shiro-rename-session',
`shiro-export-session' (Markdown in a buffer) and `shiro-delete-session' reach the files."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.clients.test_emacs import PLUGIN, _emacs
from tests.fake_provider import Reply
from tests.support.lsp import server_env

SCRIPT = Path(__file__).with_name("emacs_sessions_test.el")


def test_emacs_search_rename_export_delete(tmp_path, fake):
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    out = tmp_path / "result.json"
    fake.script(Reply(text="The narwhal ledger rounds once at the end."), Reply(text="Webpack now keeps its cache."))
    env = server_env(tmp_path / "home", fake.base_url)
    env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN), SHIRO_EMACS_WORKSPACE=str(workspace),
               SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]), HOME=str(tmp_path / "emacs-home"))
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=240)
    assert out.exists(), done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    first = result["first"]
    [offered] = result["searchOffered"]
    assert offered.startswith(first[:8]) and "why is the invoice total off by a cent?" in offered and "narwhal" in offered
    assert result["current"] == first
    assert result["exported"].startswith("# Invoice rounding\n") and "narwhal ledger" in result["exported"]
    assert result["files"] == [first]
    assert json.loads((tmp_path / "home" / "sessions" / f"{first}.json").read_text())["title"] == "Invoice rounding"
