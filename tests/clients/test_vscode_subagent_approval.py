"""A `task` subagent's approval in real VS Code (code-server in headless Chromium, the default
sidebar width, the real server): the card of the subagent's web_fetch says "The task subagent
wants to fetch …", nested under the task call and inside the view; the main agent's command after
it says "shiro-neko wants to run …". Screenshots in artifacts/vscode-e2e/subagent-approval/. The
driver is clients/vscode/test/e2e/subagent_scenario.mjs."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.test_vscode import ARTIFACTS, _need_tools
from tests.clients.vscode_harness import VsCode, server_env
from tests.fake_provider import FakeProvider
from tests.lsp.test_subagent_approval import script

pytestmark = pytest.mark.xdist_group("heavy")

PROMPT = "What does the page say?"


def test_the_card_says_the_task_subagent_asks(tmp_path: Path, fake: FakeProvider) -> None:
    _need_tools()
    script(fake)  # its last reply, "done", ends the turn
    vs = VsCode(base=tmp_path, env=server_env(tmp_path / "home", fake.base_url))
    try:
        vs.prepare()
        vs.start()
        shots = ARTIFACTS / "subagent-approval"
        for old in shots.glob("*.png"):
            old.unlink()
        r = vs.drive("subagent", shots, prompt=PROMPT, answer="done")
    finally:
        vs.stop()
    assert r["ok"], "\n".join(r["errors"]) + "\n" + r["driverLog"] + "\n" + vs.log.read_text(errors="replace")[-2000:]
    assert r["sidebarWidth"] < 400, r["sidebarWidth"]
    card = r["askCard"]
    assert card["title"].startswith("The task subagent wants to fetch https://example.invalid/page"), card
    assert card["nested"] and not card["overflows"], card
    assert r["mainCard"].startswith("shiro-neko wants to run"), r["mainCard"]
    for name in ("01-subagent-asks", "02-main-asks", "03-done"):
        assert Path(r["shots"][name]["path"]).stat().st_size > 10_000
