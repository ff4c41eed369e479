"""Issue 40 in real VS Code (code-server in headless Chromium, the real server): a project's custom
command from the composer's `/` menu. The folder's `.claude/commands` was trusted before (the trust
record holds their fingerprint, as `shiro trust` leaves it); the menu lists the command with its
description and argument hint from `shiro.commands`, picking it fills the input, and the model gets
the expanded text while the transcript shows the prompt as typed. Screenshots in
artifacts/vscode-e2e/skills/. The driver is clients/vscode/test/e2e/skills_scenario.mjs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from shiro_neko.project_instructions import fingerprints
from shiro_neko.state.paths import workspace_key
from shiro_neko.state.trust import TrustStore
from tests.clients.test_vscode import ARTIFACTS, _need_tools
from tests.clients.vscode_harness import VsCode, server_env
from tests.fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.xdist_group("heavy")

ANSWER = "Reviewed src/app.py: two naming nits, no bugs."


def test_a_custom_command_from_the_composers_menu(tmp_path: Path, fake: FakeProvider) -> None:
    _need_tools()
    fake.script(Reply(text=ANSWER))
    home = tmp_path / "home"
    env = server_env(home, fake.base_url)
    # The user's own skills and commands (~/.claude, ~/.agents) come first and count toward the
    # catalog's cap: the machine's home must not decide what this test's menu shows.
    env["HOME"] = str(tmp_path / "user-home")
    (tmp_path / "user-home").mkdir()
    vs = VsCode(base=tmp_path, env=env)
    try:
        vs.prepare()
        command = vs.workspace / ".claude" / "commands" / "review.md"
        command.parent.mkdir(parents=True)
        command.write_text("---\ndescription: Review a file for bugs and naming\nargument-hint: [file]\n---\n"
                           "Review $1 line by line. Report bugs first, then naming.\n")
        root = vs.workspace.resolve()
        TrustStore(home).record(workspace_key(root), root, {f: sha for f, sha, _ in fingerprints(root)}, "trusted")
        vs.start()
        shots = ARTIFACTS / "skills"
        for old in shots.glob("*.png"):
            old.unlink()
        r = vs.drive("skills", shots, typed="rev", command="review", args="src/app.py", answer=ANSWER)
    finally:
        vs.stop()
    assert r["ok"], "\n".join(r["errors"]) + "\n" + r["driverLog"] + "\n" + vs.log.read_text(errors="replace")[-2000:] + "\n" + vs.output_log()
    assert any("/review [file]" in o and "Review a file for bugs and naming" in o for o in r["menu"]), r["menu"]
    assert r["menuAfterRefocus"] is True  # a moment's blur (VS Code re-focusing the webview) keeps the menu
    assert r["afterPick"] == "/review ", r["afterPick"]
    body = json.dumps(fake.requests[-1].body)
    assert "Review src/app.py line by line. Report bugs first, then naming." in body
    user_rows = [row["text"] for row in r["rows"] if "user" in row["kind"]]
    assert any("/review src/app.py" in t for t in user_rows) and not any("line by line" in t for t in user_rows), user_rows
    assert any(ANSWER in row["text"] for row in r["rows"]), r["rows"]
    for name in ("01-custom-command-menu", "02-custom-command-answered"):
        assert Path(r["shots"][name]["path"]).stat().st_size > 10_000
