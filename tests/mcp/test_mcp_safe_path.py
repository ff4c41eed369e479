"""Issue 35 item 1, MCP part: the user's own MCP server started as `python -m its_module` runs in
the workspace (its default working directory), and `python -m` puts the working directory first
on sys.path: a repository that plants `its_module.py`, or any module the server imports, would
run in its place. Every stdio server runs with PYTHONSAFEPATH=1 now. The server is real (the SDK
fault server, importable through the entry's PYTHONPATH as the user's own module would be)."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.planted_modules import imported, plant

from .helpers import HERE
from .test_manager import call, manager, ready


async def test_a_python_m_server_never_imports_the_workspace(tmp_path: Path) -> None:
    marks = tmp_path / "marks"
    entry = {"command": sys.executable, "args": ["-m", "fault_server"], "env": {"PYTHONPATH": str(HERE)}}
    m, root = manager(tmp_path, {"mine": entry})
    assert plant(root, marks) > 100
    # The user's module itself, planted beside every module it imports.
    (root / "fault_server.py").write_text(
        f"import os\nos.makedirs({str(marks)!r}, exist_ok=True)\nopen(os.path.join({str(marks)!r}, 'fault_server'), 'w').close()\n")
    try:
        await ready(m, root, "mine")
        assert await call(m, root, "mcp__mine__echo", {"text": "real"}) == ("real", False)
        # What the server itself started is under the same rule.
        assert await call(m, root, "mcp__mine__env", {"name": "PYTHONSAFEPATH"}) == ("1", False)
    finally:
        await m.stop()
    assert imported(marks) == [], "planted workspace modules ran inside the MCP server"


async def test_an_entry_may_have_the_old_path_back(tmp_path: Path) -> None:
    """A server that needs its working directory on the path says so in its own entry."""
    entry = {"command": sys.executable, "args": ["-m", "fault_server"], "cwd": str(HERE), "env": {"PYTHONSAFEPATH": ""}}
    m, root = manager(tmp_path, {"mine": entry})
    try:
        await ready(m, root, "mine")
        assert await call(m, root, "mcp__mine__env", {"name": "PYTHONSAFEPATH"}) == ("", False)
    finally:
        await m.stop()
