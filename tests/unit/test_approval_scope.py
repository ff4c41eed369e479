"""Issue 35: what an approval shows (6) and what "Always allow" covers (9a), on plain data.

Each test failed on the code before: the approval text cut the arguments at 300 characters with
no mark (an MCP call's `"command": "rm -rf ~/projects"` after a long argument was never shown), and
"Always allow" covered the whole tool for the session.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

from shiro_neko.agent.tool_calls import allowance_key, describe_call
from shiro_neko.agent.tools.files import EDIT_FILE, WRITE_FILE
from shiro_neko.agent.tools.shell import RUN_COMMAND
from shiro_neko.mcp.connection import McpTool
from shiro_neko.mcp.tools import mcp_tools
from shiro_neko.model.transcript import ToolCallPart

HIDDEN_TAIL = {"note": "x" * 400, "command": "rm -rf ~/projects"}


def _call(name: str, args: dict) -> ToolCallPart:
    return ToolCallPart(tool_call_id="c1", tool_name=name, input=args)


def test_an_mcp_approval_carries_every_argument_in_full() -> None:
    conn = SimpleNamespace(name="shell-server", spec=SimpleNamespace(alwaysAllow=[]),
                           tools=[McpTool(name="exec", description="run", input_schema={"type": "object"})])
    [tool] = mcp_tools([conn])  # type: ignore[list-item]
    text = describe_call(tool, _call(tool.name, HIDDEN_TAIL))
    assert '"command": "rm -rf ~/projects"' in text and "x" * 400 in text


def test_an_unknown_tool_approval_carries_every_argument_in_full() -> None:
    text = describe_call(None, _call("mystery", HIDDEN_TAIL))
    assert '"command": "rm -rf ~/projects"' in text


def test_always_allow_covers_the_exact_call(tmp_path: Path) -> None:
    def key(tool, args):  # type: ignore[no-untyped-def]
        return allowance_key(tool, _call(tool.name, args), tmp_path)

    assert key(RUN_COMMAND, {"command": "npm test"}) == key(RUN_COMMAND, {"command": "npm test", "timeout_seconds": 9})
    assert key(RUN_COMMAND, {"command": "npm test"}) != key(RUN_COMMAND, {"command": "npm test; echo EVIL"})
    assert key(RUN_COMMAND, {"command": "npm test"}) != key(RUN_COMMAND, {"command": "rm -rf src"})
    # Edit tools: the same file, whatever the text, however spelled; another file is asked again.
    assert key(WRITE_FILE, {"path": "a.py", "content": "1"}) == key(WRITE_FILE, {"path": "./sub/../a.py", "content": "2"})
    assert key(WRITE_FILE, {"path": "a.py", "content": "1"}) != key(WRITE_FILE, {"path": "b.py", "content": "1"})
    assert key(WRITE_FILE, {"path": "a.py", "content": "1"}) != key(EDIT_FILE, {"path": "a.py", "old_text": "1", "new_text": "2"})
