"""Short-term memory retrieval with many stored sessions: what a turn pays before its first request.

Fills a fresh database with N sessions' memories (a 1,500-character summary and 6 recent texts
each, spread over 20 workspaces, every 10th private), then times, for one session:
- `get` + `others` on a cold store (first turn of a server: connection, schema check),
- the same on a warm store with nothing changed (the data_version cache answers),
- the same right after another process's write (cache dropped, the queries run),
- `update` (the tool's write, one transaction), and `plan_turn` on what was read.

Run: python bench/short_term_memory.py [--sessions 10000]   Writes bench/results/short_term_memory.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from shiro_neko.agent.short_term_memory import TurnFacts, plan_turn
from shiro_neko.config import ShortTermMemorySettings
from shiro_neko.state.short_term_memory import RecentMessage, ShortTermMemoryStore

RESULTS = Path(__file__).parent / "results" / "short_term_memory.json"


def timed(fn: Callable[[], Any], rounds: int) -> dict[str, float]:
    samples = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return {"median_ms": round(statistics.median(samples), 3), "max_ms": round(max(samples), 3), "rounds": rounds}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sessions", type=int, default=10_000)
    parser.add_argument("--rounds", type=int, default=50)
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="shiro-stm-bench-"))
    filler = ShortTermMemoryStore(home)
    recent = [RecentMessage("user" if i % 2 == 0 else "assistant", "a recent message " * 20) for i in range(6)]
    start = time.perf_counter()
    for i in range(args.sessions):
        filler.update(f"s{i:06d}", workspace_key=f"k{i % 20}", workspace=f"/ws/{i % 20}", title=f"task {i}", private=i % 10 == 0,
                      summary="summary text " * 115, categories=None, covered=10, recent=recent, now=1_000_000 + i)
    fill_s = time.perf_counter() - start
    size = (home / "short-term-memory.sqlite3").stat().st_size + sum(p.stat().st_size for p in home.glob("*-wal"))

    def retrieve(store: ShortTermMemoryStore) -> Any:
        return store.get("s000005"), store.others("k5", "s000005", False, False)

    cold = timed(lambda: retrieve(ShortTermMemoryStore(home)), max(5, args.rounds // 10))
    warm_store = ShortTermMemoryStore(home)
    retrieve(warm_store)
    warm = timed(lambda: retrieve(warm_store), args.rounds)

    def after_other_write() -> None:
        filler.update("writer", workspace_key="k0", workspace="/ws/0", title="w", private=False, summary="x",
                      categories=None, covered=0, recent=[])
        start = time.perf_counter()
        retrieve(warm_store)
        after.append((time.perf_counter() - start) * 1000)

    after: list[float] = []
    for _ in range(args.rounds):
        after_other_write()
    write = timed(lambda: warm_store.update("s000005", workspace_key="k5", workspace="/ws/5", title="t", private=False,
                                            summary="new summary", categories=None, covered=12, recent=recent), args.rounds)
    own, others = retrieve(warm_store)
    facts = TurnFacts("next step", time.time(), 5, True, True, "/ws/5", 40)
    plan = timed(lambda: plan_turn(ShortTermMemorySettings(), own, others, facts), args.rounds)
    result = {
        "sessions": args.sessions,
        "database_bytes": size,
        "fill_seconds": round(fill_s, 2),
        "retrieve_cold": cold,
        "retrieve_warm_cached": warm,
        "retrieve_after_other_write": {"median_ms": round(statistics.median(after), 3), "max_ms": round(max(after), 3), "rounds": len(after)},
        "update": write,
        "plan_turn": plan,
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
