"""Saved sessions in the Emacs client (clients/emacs/shiro-sessions.el) in a real batch Emacs
against the real server (issue 40): `shiro-search-sessions' offers only the session whose answer
holds the word (short id, title, passage) and resumes it; `shiro-rename-session',
`shiro-export-session' (Markdown in a buffer) and `shiro-delete-session' reach the files."""

from __future__ import annotations

import json

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.fake_provider import Reply


def test_emacs_search_rename_export_delete(tmp_path, fake):
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    (workspace / "hello.py").write_text("print('hello')\n")
    fake.script(Reply(text="The narwhal ledger rounds once at the end."), Reply(text="Webpack now keeps its cache."))
    result = run_emacs(emacs, "emacs_sessions_test.el", tmp_path, workspace, fake.base_url)
    first = result["first"]
    [offered] = result["searchOffered"]
    assert offered.startswith(first[:8]) and "why is the invoice total off by a cent?" in offered and "narwhal" in offered
    assert result["current"] == first
    assert result["exported"].startswith("# Invoice rounding\n") and "narwhal ledger" in result["exported"]
    assert result["files"] == [first]
    assert json.loads((tmp_path / "home" / "sessions" / f"{first}.json").read_text())["title"] == "Invoice rounding"
