"""Autosave of a 120k-token session while a turn streams: save time, and the longest event-loop
stall it causes (the loop must keep forwarding deltas while the record is written).

Runs the real service and sessions feature in-process (no LSP): a session holding a ~480 KB
transcript, a "stream" task appending a delta every 2 ms, a ticker measuring the loop's longest
gap, and `persistence.save()` called repeatedly. The baseline is the same run without saves.

Run: python bench/autosave.py [--saves 20]   Writes bench/results/autosave.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from prune import build_transcript  # bench/ is on sys.path when run as a script

RESULTS = Path(__file__).parent / "results" / "autosave.json"


class _Bridge:
    def __init__(self) -> None:
        sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test-only sink, tests/support
        from tests.support.sink import ListSink

        self.sink = ListSink()

    def host_for(self, root: Path, session_id: str) -> Any:
        from shiro_neko.agent.tools.disk_host import DiskToolHost

        return DiskToolHost(root)

    async def ask(self, message: str, actions: list[str]) -> str | None:
        return None  # no editor to ask: a project's MCP servers stay untrusted, as when dismissed


async def _ticker(stop: asyncio.Event, gaps: list[float]) -> None:
    last = time.perf_counter()
    while not stop.is_set():
        await asyncio.sleep(0.001)
        now = time.perf_counter()
        gaps.append(now - last)
        last = now


async def _stream(stop: asyncio.Event) -> None:
    while not stop.is_set():
        await asyncio.sleep(0.002)


async def run(saves: int) -> dict[str, Any]:
    from shiro_neko.model.transcript import encode_messages
    from shiro_neko.service import ShiroService

    service = ShiroService(_Bridge())
    root = Path(tempfile.mkdtemp(prefix="shiro-bench-ws-"))
    service.workspaces.set_folders([root])
    session = service.new_session(service.workspaces.pick(None))
    session.messages = build_transcript()
    session.title = "bench"
    size = len(encode_messages(session.messages))

    async def phase(with_saves: bool) -> tuple[list[float], list[float]]:
        stop, gaps, times = asyncio.Event(), [], []
        tasks = [asyncio.create_task(_ticker(stop, gaps)), asyncio.create_task(_stream(stop))]
        await asyncio.sleep(0.05)
        for _ in range(saves):
            if with_saves:
                start = time.perf_counter()
                await service.persistence.save(session)
                times.append(time.perf_counter() - start)
            else:
                await asyncio.sleep(0.01)
        stop.set()
        await asyncio.gather(*tasks)
        return gaps, times

    base_gaps, _ = await phase(False)
    save_gaps, times = await phase(True)
    ms = lambda xs: round(1000 * xs, 2)  # noqa: E731
    return {
        "transcript_bytes": size,
        "approx_tokens": size // 4,
        "saves": saves,
        "save_ms_median": ms(statistics.median(times)),
        "save_ms_max": ms(max(times)),
        "loop_stall_ms_max_during_saves": ms(max(save_gaps)),
        "loop_stall_ms_p99_during_saves": ms(sorted(save_gaps)[int(len(save_gaps) * 0.99)]),
        "loop_stall_ms_max_baseline": ms(max(base_gaps)),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--saves", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="5 saves")
    args = parser.parse_args()
    home = tempfile.mkdtemp(prefix="shiro-bench-home-")
    os.environ["SHIRO_NEKO_HOME"] = home
    result = asyncio.run(run(5 if args.quick else args.saves))
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    json.dump(result, sys.stdout, indent=2)
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
