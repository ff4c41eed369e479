"""grep over a 10k-file tree: the previous implementation (Python `re` over a walk, on the event
loop with a yield every 20 ms) against ripgrep (agent/tools/ripgrep.py, a subprocess, every line
it reports read back through agent/workspace_fs.py). One run each (issue 22 asks for one).

Figures per pattern: wall time of the tool call, and the longest the event loop went without
running a heartbeat task during the call (what every other request of the server waits). Also
one catastrophic pattern, `^(a+)+$`, on a file of 26-character lines, where the old engine's time
doubles per character and the event loop is held the whole time.

Writes bench/results/search.json. Run: python bench/search.py [--files 10000]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import re
import tempfile
import time
from pathlib import Path
from typing import Any

from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import core_tools, run_tool
from shiro_neko.model.workspace_files import walk_files

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "search.json"
GREP = next(t for t in core_tools() if t.name == "grep")
WORDS = ("parser", "token", "stream", "config", "value", "missing", "import", "module", "cache", "error")


def make_tree(root: Path, files: int) -> int:
    rng = random.Random(22)
    total = 0
    for i in range(files):
        directory = root / f"pkg{i % 100:02d}" / f"sub{i % 7}"
        directory.mkdir(parents=True, exist_ok=True)
        lines = []
        for n in range(rng.randint(20, 120)):
            if rng.random() < 0.05:
                lines.append(f"def handler_{n}(request):")
            else:
                lines.append("    " + " ".join(rng.choice(WORDS) for _ in range(rng.randint(3, 12))))
        if i % 997 == 0:
            lines.append("    # needle: the one line every search looks for")
        text = "\n".join(lines) + "\n"
        (directory / f"mod{i}.py").write_text(text)
        total += len(text)
    return total


async def old_grep(root: Path, pattern: str) -> int:
    """The implementation before issue 22 (server/agent/tools/search.py on main), its core kept:
    walk, read each regular file, skip binaries, Python `re` line by line, yield every 20 ms."""
    regex = re.compile(pattern)
    last, hits = time.monotonic(), 0
    for file in walk_files(root):
        if time.monotonic() - last >= 0.02:
            await asyncio.sleep(0)
            last = time.monotonic()
        try:
            if file.stat().st_size > 5_000_000:
                continue
            data = file.read_bytes()
        except OSError:
            continue
        if b"\x00" in data[:8192]:
            continue
        for line in data.decode("utf-8", errors="replace").split("\n"):
            if regex.search(line) is not None:
                hits += 1
    return hits


async def timed(call: Any) -> dict[str, float]:
    """Wall time of `call` and the longest stall of the event loop while it ran."""
    done, worst, last = False, 0.0, time.perf_counter()

    async def heartbeat() -> None:
        nonlocal worst, last
        while not done:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            worst = max(worst, now - last)
            last = now

    beat = asyncio.ensure_future(heartbeat())
    await asyncio.sleep(0)  # the heartbeat is running before the call starts
    start = last = time.perf_counter()
    await call
    end = time.perf_counter()
    wall = end - start
    done = True
    worst = max(worst, end - last)  # a call that never let the heartbeat run stalled it throughout
    await beat
    return {"wall_ms": round(wall * 1000, 1), "max_loop_stall_ms": round(worst * 1000, 1)}


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=10_000)
    parser.add_argument("--catastrophic-chars", type=int, default=26)
    args = parser.parse_args()
    out: dict[str, Any] = {"machine": platform.platform(), "cpus": os.cpu_count(), "files": args.files, "runs": 1}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        out["tree_bytes"] = make_tree(root, args.files)
        host = DiskToolHost(root)
        await old_grep(root, "x")  # page cache warm for both
        by_pattern = {}
        for name, pattern in [("literal", "needle"), ("regex", r"def handler_\d+\(request\)"), ("no_match", "zzz_not_there")]:
            by_pattern[name] = {
                "old_python_re": await timed(old_grep(root, pattern)),
                "ripgrep": await timed(run_tool(GREP, host, {"pattern": pattern})),
            }
            print(name, by_pattern[name], flush=True)
        out["by_pattern"] = by_pattern
        bad = Path(tmp) / "bad"
        bad.mkdir()
        (bad / "a.txt").write_text(("a" * args.catastrophic_chars + "b\n") * 2)
        out["catastrophic"] = {
            "pattern": "^(a+)+$", "line_chars": args.catastrophic_chars + 1,
            "old_python_re": await timed(old_grep(bad, "^(a+)+$")),
            "ripgrep": await timed(run_tool(GREP, DiskToolHost(bad), {"pattern": "^(a+)+$"})),
        }
        print("catastrophic", out["catastrophic"], flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    asyncio.run(main())
