"""Saved sessions in Neovim (issue 40), a real headless Neovim against the real server:
`:ShiroSessions narwhal` offers only the session whose answer holds the word (with its short id and
the passage) and resumes it; `:ShiroRenameSession`, `:ShiroExport` (Markdown in a new buffer),
`:ShiroDeleteSession` (picked, confirmed) reach the files."""

from __future__ import annotations

import json
from pathlib import Path

from tests.clients.test_nvim import _run, nvim  # noqa: F401  (nvim is the binary fixture)
from tests.fake_provider import FakeProvider, Reply

SCRIPT = Path(__file__).with_name("nvim_sessions_test.lua")


def test_search_resume_rename_export_delete(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:  # noqa: F811
    fake.script(Reply(text="The narwhal ledger rounds once at the end."), Reply(text="Webpack now keeps its cache."))
    result, _proc, _workspace = _run(nvim, fake, tmp_path, SCRIPT)
    first, second = result["first"], result["second"]
    search = next(a for a in result["asked"] if a["kind"] == "shiro_sessions")
    assert len(search["items"]) == 1 and "narwhal" in search["items"][0].lower(), search
    assert search["items"][0].startswith(first[:8]) and "why is the invoice total off by a cent?" in search["items"][0]
    assert "# Invoice rounding" in result["exported"] and result["export_filetype"] == "markdown"
    assert "The narwhal ledger rounds once at the end." in result["exported"]
    assert any(a["kind"] == "confirm" and "speed up the build" in a["prompt"] for a in result["asked"])
    assert [Path(f).stem for f in result["files"]] == [first]
    record = json.loads((tmp_path / "home" / "sessions" / f"{first}.json").read_text())
    assert record["title"] == "Invoice rounding" and second not in json.dumps(result["files"])
