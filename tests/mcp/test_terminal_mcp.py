"""`/mcp` in the terminal client, and trusting a project's .mcp.json from it (pseudo-terminal)."""

from __future__ import annotations

import json
import re
import sys
import time
from pathlib import Path

from tests.clients.test_terminal import Term, cold_env, env  # noqa: F401 - fixtures

from .helpers import FAULT_SERVER, fault_entry

ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def screen_since(t: Term, start: int) -> str:
    with t.lock:
        return ANSI.sub("", t.out[start:]).replace("\r", "")


def test_slash_mcp_shows_states_errors_and_tools(workspace, env):
    Path(env["SHIRO_NEKO_CONFIG"]).write_text(json.dumps({"mcpServers": {
        "tools": fault_entry(), "boom": fault_entry("--crash-at-start"), "off": {**fault_entry(), "enabled": False}}}))
    (workspace / ".mcp.json").write_text(json.dumps({"mcpServers": {"proj": {"command": sys.executable, "args": [FAULT_SERVER]}}}))
    t = Term([], workspace, env)
    try:
        t.pos = 0  # the question comes before the banner
        t.expect(r"\.mcp\.json: mcpServers\.proj")
        t.type("y")  # yes: trusted, remembered
        deadline = time.monotonic() + 60
        while True:
            start = len(t.out)
            t.type("/mcp")
            time.sleep(1.0)
            shown = screen_since(t, start)
            if all(s in shown for s in ("tools  ready  settings  10 tools", "proj  ready  project", "boom  failed")):
                break
            assert time.monotonic() < deadline, shown
        assert "mcp__tools__echo  Echo the text back" in shown
        assert "boom  failed  settings  0 tools" in shown and "told to crash at start" in shown
        assert "off  disabled  settings  0 tools" in shown
        t.leave()
    finally:
        t.close()
    assert '"decision":"trusted"' in (Path(env["SHIRO_NEKO_HOME"]) / "trust.json").read_text()
