"""Issue 40 in real VS Code (code-server in headless Chromium, the real server): the Sessions view
lists the workspace's sessions with their short ids; its search finds a session by a word of an
answer (the server's full-text search) and resumes it into the panel; Rename, Export as Markdown
and Delete from a session's context menu reach the files. Screenshots in
artifacts/vscode-e2e/sessions/. The driver is clients/vscode/test/e2e/sessions_scenario.mjs."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from shiro_neko.model.transcript import AssistantMessage, TextPart, user_text
from shiro_neko.state.session_store import SessionStore
from tests.clients.test_vscode import ARTIFACTS, _need_tools
from tests.clients.vscode_harness import VsCode, server_env
from tests.fake_provider import FakeProvider
from tests.support.records import new_record

pytestmark = pytest.mark.xdist_group("heavy")

SESSIONS = [  # oldest first; (prompt, answer)
    ("Why is the invoice total off by a cent?", "Rounding happened per line; the narwhal ledger now rounds once at the end."),
    ("Speed up the webpack build", "Turned on the persistent cache; cold builds are unchanged, warm ones take 4 s."),
    ("The login test is flaky", "The test raced the redirect; it now waits for the session cookie."),
]


def _write_sessions(home: Path, workspace: Path) -> list[str]:
    store = SessionStore(home)
    ids = []
    for prompt, answer in SESSIONS:
        record = new_record(workspace, "openai", "gpt-5")
        record.messages = [user_text(prompt), AssistantMessage(content=[TextPart(text=answer)])]
        store.save(record)
        ids.append(record.id)
        time.sleep(0.01)  # distinct updatedAt: a stable newest-first order
    store.close()
    return ids


def test_sessions_view_search_rename_export_delete(tmp_path: Path, fake: FakeProvider) -> None:
    _need_tools()
    vs = VsCode(base=tmp_path, env=server_env(tmp_path / "home", fake.base_url))
    try:
        vs.prepare()
        ids = _write_sessions(vs.home, vs.workspace.resolve())
        vs.start()
        shots = ARTIFACTS / "sessions"
        for old in shots.glob("*.png"):
            old.unlink()
        r = vs.drive("sessions", shots, titles=[p for p, _ in SESSIONS], query="narwhal", foundAnswer=SESSIONS[0][1],
                     renameFrom=SESSIONS[1][0], renameTo="Webpack cache work", deleteTitle=SESSIONS[2][0])
    finally:
        vs.stop()
    assert r["ok"], "\n".join(r["errors"]) + "\n" + r["driverLog"] + "\n" + vs.log.read_text(errors="replace")[-2000:]
    # Newest first, each with its short id (8 characters at least, unique).
    assert [next(i for i, (p, _) in enumerate(SESSIONS) if p in row) for row in r["listed"]] == [2, 1, 0], r["listed"]
    # The short id is drawn at the sidebar's default width (300 px), not only in the row's text
    # (a cut row still holds it) or its tooltip: it is what `/resume <id>` takes elsewhere.
    for sid, row in zip(reversed(ids), r["listedVisible"]):
        assert sid[:8] in row, (sid, row, r["listedVisible"])
    # The search found the one answer holding the word, with that passage; Enter resumed it.
    assert len(r["found"]) == 1 and SESSIONS[0][0] in r["found"][0] and "narwhal" in r["found"][0].lower(), r["found"]
    assert any(SESSIONS[0][1] in row for row in r["resumedRows"])
    # Rename reached the record.
    record = json.loads((vs.home / "sessions" / f"{ids[1]}.json").read_text())
    assert record["title"] == "Webpack cache work"
    assert {"Resume", "Rename…", "Export as Markdown", "Delete…"} <= set(r["menus"][SESSIONS[1][0]]), r["menus"]
    # Export: the Markdown of that session in an untitled editor.
    assert "# Webpack cache work" in r["exported"] and "persistent cache" in r["exported"], r["exported"]
    assert "Untitled" in r["exportTab"]
    # Delete: asked first, then the record is gone and the view says so.
    assert "cannot be undone" in r["question"]
    assert not (vs.home / "sessions" / f"{ids[2]}.json").exists()
    assert not any(SESSIONS[2][0] in row for row in r["afterDelete"])
    for name in ("01-sessions-view", "02-search", "03-renamed", "04-exported", "05-delete-question", "06-deleted"):
        assert Path(r["shots"][name]["path"]).stat().st_size > 10_000
