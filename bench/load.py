"""`shiro.status` latency while six sessions in three folders stream at once on one server
(the scenario of tests/lsp/test_load.py, tests/lsp/load_scenario.py), and the server's memory.

Run: python bench/load.py [--rounds 5] [--quick]   Writes bench/results/load.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.stats import environment, summary  # noqa: E402
from tests.lsp.load_scenario import FOLDERS, SESSIONS_PER_FOLDER, run_load  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "load.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2 rounds")
    args = parser.parse_args()
    rounds = 2 if args.quick else args.rounds
    with tempfile.TemporaryDirectory(prefix="shiro-bench-load-") as tmp:
        run = asyncio.run(run_load(Path(tmp), rounds))
    under_100 = sum(1 for ms in run.status_ms if ms < 100)
    result = {
        "scenario": f"{FOLDERS} folders x {SESSIONS_PER_FOLDER} sessions streaming at once, {rounds} rounds",
        "status_while_streaming": summary(run.status_ms),
        "status_under_100ms_share": round(under_100 / len(run.status_ms), 4),
        "turns": run.turns,
        "text_deltas": run.deltas,
        "rss_mb_after_each_round": [round(kb / 1024, 1) for kb in run.rss_kb],
        "environment": environment(),
    }
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
