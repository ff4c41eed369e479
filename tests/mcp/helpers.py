"""Shared bits of the MCP tests: where the servers are, and how to see which processes live."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).parent
FAULT_SERVER = str(HERE / "fault_server.py")
BIN = Path(sys.executable).parent


def fault_entry(*flags: str, **extra: object) -> dict[str, object]:
    return {"command": sys.executable, "args": [FAULT_SERVER, *flags], **extra}


def need_tool(path: str | None, what: str) -> str:
    """The executable, or a skip locally and a failure in CI (COMMON.md)."""
    if path and (os.path.isabs(path) and os.access(path, os.X_OK) or shutil.which(path)):
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{what} is not installed; .ci/run must install it")
    pytest.skip(f"{what} is not installed")


def time_server() -> str:
    return need_tool(str(BIN / "mcp-server-time"), "mcp-server-time (PyPI, the test extras)")


def everything_server() -> str:
    """@modelcontextprotocol/server-everything from tests/mcp/npm (`npm ci` in .ci/run)."""
    return need_tool(str(HERE / "npm" / "node_modules" / ".bin" / "mcp-server-everything"),
                     "server-everything (npm ci in tests/mcp/npm)")


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    # A zombie is dead for our purposes (its parent has not reaped it yet), unless only its main
    # thread ended: its other threads still run under a leader shown as Z.
    try:
        zombie = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"
        return not zombie or len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def pids_in(pidfile: Path) -> list[int]:
    return [int(line) for line in pidfile.read_text().split()] if pidfile.exists() else []


def descendants(pid: int) -> list[int]:
    """Every live process below `pid` (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                ppid = int((entry / "stat").read_text().split(")")[-1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return [p for p in out if pid_alive(p)]
