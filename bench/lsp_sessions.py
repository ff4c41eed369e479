"""`shiro.sessions` and `shiro.resume {latest: true}` over LSP with 10,000 sessions (~1 GB) on disk.

The store-level figures are in bench/sessions.py; this measures what an editor sees: a real
`shiro-lsp` over stdio, JSON-RPC round trips included. The first listing (which builds the index
once per home) is reported apart; then the median of 20 of each command, each resume followed by
`shiro.newSession` so the next resume loads the file again rather than finding it open.

Run: python bench/lsp_sessions.py [--count 10000] [--quick]   Writes bench/results/lsp_sessions.json.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sessions import create  # bench/ is on sys.path when run as a script
from startup import RawClient, initialize_params, server_env

RESULTS = Path(__file__).parent / "results" / "lsp_sessions.json"


def command(client: RawClient, name: str, args: dict[str, Any]) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    reply = client.request("workspace/executeCommand", {"command": name, "arguments": [args]})
    return (time.perf_counter() - start) * 1000, reply["result"]


def run(count: int, runs: int) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="shiro-bench-lsp-sessions-"))
    home, workspace = root / "home", root / "workspace"
    workspace.mkdir()
    try:
        others = [str(root / f"other-{i}") for i in range(3)]
        total = create(home, count, 100_000, [str(workspace.resolve()), *others])
        proc = subprocess.Popen(
            [sys.executable, "-m", "shiro_neko"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=server_env(home)
        )
        client = RawClient(proc)
        client.request("initialize", initialize_params(workspace))
        client.notify("initialized", {})
        first_ms, first = command(client, "shiro.sessions", {})
        assert len(first["sessions"]) == 15
        listing, resume = [], []
        for _ in range(runs):
            listing.append(command(client, "shiro.sessions", {})[0])
            ms, result = command(client, "shiro.resume", {"latest": True})
            assert result["sessionId"] == first["sessions"][0]["id"]
            resume.append(ms)
            command(client, "shiro.newSession", {})
        client.request("shutdown", None)
        client.notify("exit", None)
        proc.wait(timeout=30)
        return {
            "count": count,
            "bytes_on_disk": total,
            "first_listing_builds_index_ms": round(first_ms, 1),
            "sessions_ms_median": round(statistics.median(listing), 2),
            "sessions_ms_max": round(max(listing), 2),
            "resume_latest_ms_median": round(statistics.median(resume), 2),
            "resume_latest_ms_max": round(max(resume), 2),
            "resumed_record_bytes": len(json.dumps(result["messages"])),
            "runs": runs,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--quick", action="store_true", help="500 sessions, 5 runs")
    args = parser.parse_args()
    result = run(500 if args.quick else args.count, 5 if args.quick else 20)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    json.dump(result, sys.stdout, indent=2)
    print(f"\nwrote {RESULTS}")


if __name__ == "__main__":
    main()
