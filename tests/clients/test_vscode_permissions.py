"""Issue 39's permission rules in real VS Code (code-server in headless Chromium, the default
sidebar width, the real server): "Always allow" on a command's card asks where the rule is kept,
"In this folder" writes the command's prefix rule to the workspace's record; `/permissions` lists
it with its list and where it is kept, and removes it after a yes. Screenshots in
artifacts/vscode-e2e/permissions/. The driver is clients/vscode/test/e2e/permissions_scenario.mjs.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.clients.test_vscode import ARTIFACTS, _need_tools
from tests.clients.vscode_harness import VsCode, server_env
from tests.fake_provider import Call, FakeProvider, Reply

pytestmark = pytest.mark.xdist_group("heavy")

PROMPT = "List the files"
ANSWER = "Listed them."
RULE = "Bash(ls:*)"


def test_always_allow_in_this_folder_then_permissions_removes_it(tmp_path: Path, fake: FakeProvider) -> None:
    _need_tools()
    fake.script(Reply(calls=[Call("run_command", {"command": "ls -la"}, "c1")]),
                Reply(calls=[Call("run_command", {"command": "ls -l"}, "c2")]), Reply(text=ANSWER))
    home = tmp_path / "home"
    vs = VsCode(base=tmp_path, env=server_env(home, fake.base_url))
    try:
        vs.prepare()
        vs.start()
        shots = ARTIFACTS / "permissions"
        for old in shots.glob("*.png"):
            old.unlink()
        r = vs.drive("permissions", shots, prompt=PROMPT, answer=ANSWER, rule=RULE)
    finally:
        vs.stop()
    assert r["ok"], "\n".join(r["errors"]) + "\n" + r["driverLog"] + "\n" + vs.log.read_text(errors="replace")[-2000:]
    assert r["sidebarWidth"] < 400, r["sidebarWidth"]
    assert "ls -la" in r["scopeTitle"]
    assert [row.split(",")[0] for row in r["scopeRows"]][:3] == ["For this session", "In this folder", "For me"], r["scopeRows"]
    assert any(f"allowed from now on in this folder: {RULE}" in row for row in r["rowsAfter"]), r["rowsAfter"]
    # `ls -l` ran unasked under the rule: two commands, one question.
    assert len(fake.main_requests) == 3
    assert any(RULE in row and "allow · this folder" in row for row in r["ruleRows"]), r["ruleRows"]
    assert RULE in r["confirm"] and "Removed" in r["removedToast"]
    saved = json.loads((home / "permissions.json").read_text())
    assert [w.get("allow", []) for w in saved["workspaces"].values()] == [[]]
    for name in ("01-always-allow-where", "02-rule-kept", "03-permissions-list", "04-remove-confirm", "05-removed"):
        assert Path(r["shots"][name]["path"]).stat().st_size > 10_000
