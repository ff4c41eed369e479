"""grep on ripgrep (agent/tools/ripgrep.py): linear-time regexes, .gitignore, a time limit, an
output cap, and abort killing the child."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from shiro_neko.agent.tools import ripgrep
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import core_tools, run_tool

GREP = next(t for t in core_tools() if t.name == "grep")


async def test_a_catastrophic_regex_is_linear(tmp_path: Path) -> None:
    # Python's re backtracks 2^n on this: 37 s at 30 characters, on the event loop's thread.
    (tmp_path / "a.txt").write_text("a" * 40 + "b\n" + "a" * 40 + "\n")
    result = await asyncio.wait_for(run_tool(GREP, DiskToolHost(tmp_path), {"pattern": "^(a+)+$"}), 30)
    assert result.output == f"a.txt:2: {'a' * 40}"


async def test_gitignored_files_are_not_searched(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / ".git").mkdir()
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "out.txt").write_text("needle\n")
    (tmp_path / "x.log").write_text("needle\n")
    (tmp_path / ".github").mkdir()
    (tmp_path / ".github" / "ci.yml").write_text("needle\n")  # hidden, not ignored: searched
    result = await run_tool(GREP, DiskToolHost(tmp_path), {"pattern": "needle"})
    assert result.output == ".github/ci.yml:1: needle"


async def test_the_time_limit_stops_the_child(tmp_path: Path) -> None:
    out, _, code, stopped = await ripgrep._run(["sleep", "30"], str(tmp_path), None, 0.3, 1024)
    assert code is None and "stopped after 0.3 s" in stopped


async def test_the_output_cap_stops_the_child(tmp_path: Path) -> None:
    out, _, code, stopped = await ripgrep._run(["yes"], str(tmp_path), None, 30, 100_000)
    assert code is None and len(out) == 100_000 and "output passed" in stopped


async def test_abort_kills_the_child(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    task = asyncio.ensure_future(ripgrep._run(["sh", "-c", f"echo $$ > {marker}; exec sleep 30"], str(tmp_path), None, 60, 1024))
    while not marker.exists() or not marker.read_text().strip():
        await asyncio.sleep(0.01)
    pid = int(marker.read_text())
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    try:
        os.kill(pid, 0)
        alive = True
    except ProcessLookupError:
        alive = False
    assert not alive, "the search's child outlived the abort"
