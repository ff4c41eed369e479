"""`recall` on a full project memory (300 entries, the store's limit), at the store.

ProjectMemory.recall reads the file under its lock, matches every term, then writes the hit
counts back atomically (state/atomic: temp file, fsync, rename). Timed: a recall that matches
about 20 entries, one that matches none (no write), and, as the physical limits in the same
run, reading + decoding the file alone and one write_atomic of the same bytes. Median of --runs.

Run: python bench/recall.py [--runs 50] [--quick]   Writes bench/results/recall.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.stats import summary, write_result  # noqa: E402
from shiro_neko.state.atomic import write_atomic  # noqa: E402
from shiro_neko.state.memory.store import MAX_ENTRIES, ProjectMemory  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "recall.json"
TOPICS = ["migrations", "fixtures", "pagination", "the cache", "retries", "logging", "the index", "timeouts",
          "auth tokens", "the release", "flaky tests", "the schema", "imports", "the CLI", "docs"]


def timed(fn: Callable[[], Any], runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1e3)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--quick", action="store_true", help="20 runs")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs = 20 if args.quick else max(5, args.runs)
    with tempfile.TemporaryDirectory(prefix="shiro-bench-recall-") as tmp:
        store = ProjectMemory(Path(tmp, "memory.json"))
        for i in range(MAX_ENTRIES):
            topic = TOPICS[i % len(TOPICS)]
            store.remember("fact", f"note {i}: about {topic}, run `make check-{i}` before committing; "
                                   f"the {topic} helper lives in src/module_{i % 40}.py and must stay small")
        assert len(store.entries()) == MAX_ENTRIES
        size = store.path.stat().st_size
        hits = len(store.recall("pagination helper"))
        data = store.path.read_bytes()
        result = {
            "entries": MAX_ENTRIES, "file_kb": round(size / 1024, 1), "matches": hits,
            "recall_matching_ms": summary(timed(lambda: store.recall("pagination helper"), runs), unit=""),
            "recall_no_match_ms": summary(timed(lambda: store.recall("kubernetes"), runs), unit=""),
            "read_and_decode_ms": summary(timed(store.entries, runs), unit=""),
            "write_atomic_ms": summary(timed(lambda: write_atomic(Path(tmp, "copy.json"), data), runs), unit=""),
        }
    write_result(args.out, result)
    print(f"recall on {MAX_ENTRIES} entries ({result['file_kb']} KB): matching {result['recall_matching_ms']['median_']} ms "
          f"({hits} hits), none {result['recall_no_match_ms']['median_']} ms; read {result['read_and_decode_ms']['median_']} ms, "
          f"write_atomic {result['write_atomic_ms']['median_']} ms")


if __name__ == "__main__":
    main()
