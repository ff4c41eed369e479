"""`shiro sessions` from the terminal with 10,000 stored sessions, end to end (process start to
exit, the listing printed), as a user types it: the first listing of a home (which builds the
session index), then repeats. `shiro sessions` reads the store in its own process
(clients/terminal/local_sessions.py, docs/performance.md): no server is started or attached to.

Sessions are written straight to disk by bench/sessions.py's `create` (one workspace in three
is this directory). Physical limits in the same run, alternated with the runs: `python -c pass`,
and the store alone: a fresh interpreter that imports `state/session_store` and lists the same
50 rows (what the listing cannot do without).

Run: python bench/terminal_sessions.py [--count 10000] [--runs 5] [--quick]
Writes bench/results/terminal_sessions.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.stats import summary, write_result  # noqa: E402
from sessions import create  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "terminal_sessions.json"


def shiro(python: str) -> list[str]:
    script = Path(python).with_name("shiro")
    return [str(script)] if script.exists() else [python, "-c", "from shiro_neko.client.main import main; main()"]


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, str]:
    t = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300)
    ms = (time.perf_counter() - t) * 1e3
    if done.returncode != 0:
        raise SystemExit(f"{argv} failed: {done.stderr[-2000:]}")
    return ms, done.stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2,000 sessions")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    count = 2_000 if args.quick else args.count
    runs = max(5, args.runs)
    root = Path(tempfile.mkdtemp(prefix="shb-ts-", dir="/tmp"))
    os.chmod(root, 0o700)
    try:
        home = root / "home"
        workspaces = [root / f"ws{i}" for i in range(3)]
        for w in workspaces:
            w.mkdir()
        create(home, count, 4_000, [str(w.resolve()) for w in workspaces])
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
        env.update(SHIRO_NEKO_HOME=str(home), OPENAI_API_KEY="sk-bench", XDG_RUNTIME_DIR=str(root))
        argv = [*shiro(sys.executable), "sessions", "--limit", "50"]
        first, listing = timed(argv, workspaces[0], env)
        rows = len(listing.splitlines())
        store_alone = [sys.executable, "-c", "import os; from shiro_neko.state.session_store import SessionStore; "
                       "SessionStore(os.environ['SHIRO_NEKO_HOME']).list(os.getcwd(), 50)"]
        ends, store, python = [], [], []
        for _ in range(runs):
            ends.append(timed(argv, workspaces[0], env)[0])
            store.append(timed(store_alone, workspaces[0], env)[0])
            python.append(timed([sys.executable, "-c", "pass"], root, env)[0])
    finally:
        shutil.rmtree(root, ignore_errors=True)
    # (summary() gives median_/min_/max_; the ratio is of the medians, measured alternately.)
    result: dict[str, Any] = {
        "sessions": count, "rows_printed": rows, "first_listing_ms": round(first, 1),
        "end_to_end_ms": summary(ends, unit=""), "store_alone_ms": summary(store, unit=""),
        "python_-c_pass_ms": summary(python, unit=""),
        "ratio_to_store_alone": round(summary(ends, unit="")["median_"] / summary(store, unit="")["median_"], 2),
        "targets": {"end_to_end_ms": 300},
    }
    write_result(args.out, result)
    print(f"{count} sessions: first {first:.0f} ms; shiro sessions {result['end_to_end_ms']['median_']} ms; "
          f"the store alone {result['store_alone_ms']['median_']} ms; python -c pass {result['python_-c_pass_ms']['median_']} ms")

if __name__ == "__main__":
    main()
