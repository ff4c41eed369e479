"""Issue 35 item 9, MCP part: an MCP answer had no size cap (a 100 MB answer: hundreds of MB of
RSS and a two-minute stall while the SDK's reader gathered one line). The guard relays the
server's stdout and drops a message over the entry's `maxResponseBytes` (default 4 MiB) unread,
answering the call with an error that names the setting; an answer under it reaches the model
through the usual 30,000-character cap. Real servers: the SDK fault server (Python SDK: the
request id leads the answer) and server-everything (TypeScript SDK: the id ends it)."""

from __future__ import annotations

import time
from pathlib import Path

from .helpers import everything_server, fault_entry
from .test_manager import call, manager, ready

MB = 1024 * 1024


def _kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(field)


async def test_a_100_mb_answer_is_dropped_unread(tmp_path: Path) -> None:
    m, root = manager(tmp_path, {"f": fault_entry(timeoutSeconds=120)})
    try:
        await ready(m, root, "f")
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS starts again from now
        start, took = _kib("VmRSS"), time.monotonic()
        output, is_error = await call(m, root, "mcp__f__big", {"size": 100 * MB})
        took, grew = time.monotonic() - took, (_kib("VmHWM") - start) / 1024
        assert is_error and "over maxResponseBytes (4,194,304 bytes)" in output and "dropped it unread" in output, output[:300]
        assert grew < 40, f"the peak RSS grew by {grew:.0f} MB for a dropped answer"
        assert took < 60, took
        # The server lives on, and an answer under the limit reaches the usual cap with its notice.
        assert await call(m, root, "mcp__f__echo", {"text": "still here"}) == ("still here", False)
        output, is_error = await call(m, root, "mcp__f__big", {"size": 3 * MB})
        assert not is_error and len(output) < 31_000 and "truncated" in output
    finally:
        await m.stop()


async def test_the_limit_is_the_entrys_and_holds_for_a_typescript_server(tmp_path: Path) -> None:
    entries = {
        "f": fault_entry(maxResponseBytes=10_000),
        "everything": {"command": everything_server(), "args": ["stdio"], "maxResponseBytes": 100_000},
    }
    m, root = manager(tmp_path, entries)
    try:
        await ready(m, root, "f")
        await ready(m, root, "everything")
        output, is_error = await call(m, root, "mcp__f__big", {"size": 20_000})
        assert is_error and "over maxResponseBytes (10,000 bytes)" in output, output[:300]
        assert await call(m, root, "mcp__f__big", {"size": 9_000}) == ("x" * 9_000, False)
        output, is_error = await call(m, root, "mcp__everything__echo", {"message": "y" * 200_000})
        assert is_error and "over maxResponseBytes (100,000 bytes)" in output, output[:300]
        output, is_error = await call(m, root, "mcp__everything__echo", {"message": "short"})
        assert not is_error and "short" in output
    finally:
        await m.stop()
