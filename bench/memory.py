"""Server memory: peak RSS through a 200-step session that reaches the compaction threshold, and
RSS across 1,000 short turns (one session, and a new session per turn).

A real `shiro-lsp` over stdio (bench/common/lsp_driver.py) against the fake in a child process.
The long session: one turn of 200 `read_file` calls of a ~3 KB file (about 150k tokens in all, past
the default compactThreshold of 120k, so pruning runs), then the server's VmHWM. The short turns:
"hi" -> "ok", VmRSS read every 50 turns after a warm-up of 50; growth = the slope of a least-squares
line through those samples (KB per 100 turns) and last - first.

Run: python bench/memory.py [--turns 1000] [--quick]   Writes bench/results/memory.json (+ a curve).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.fake_child import FakeChild  # noqa: E402
from common.lsp_driver import Server, server_env  # noqa: E402
from common.stats import write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "memory.json"
LONG_STEPS = 200


def long_session(fake: FakeChild) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shiro-bench-memory-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        (ws / "module.py").write_text("".join(f"def handler_{i}(request, payload):\n    return payload.get({i!r})\n"
                                              for i in range(60)))
        server = Server(ws, server_env(Path(tmp, "home"), fake.base_url), {"approvals": "auto", "maxSteps": 1000})
        server.keep_notes = False
        try:
            fake.ask(loop={"steps": LONG_STEPS, "call": ["read_file", {"path": "module.py"}], "extra": 200})
            result = server.command("shiro.chat", {"prompt": "read module.py two hundred times"})
            status = server.command("shiro.status", {})
            peak = server.rss_kb("VmHWM")
            reqs = fake.requests()
        finally:
            server.close()
    return {"status": result["status"], "peak_rss_mb": round(peak / 1024, 1), "requests": len(reqs),
            "largest_request_kb": round(max(r["bytes"] for r in reqs) / 1024, 1),
            "last_request_kb": round(reqs[-1]["bytes"] / 1024, 1),
            "context_tokens_at_end": status.get("contextTokens", status.get("tokens"))}


def slope(xs: list[float], ys: list[float]) -> float:
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    den = sum((x - mx) ** 2 for x in xs) or 1
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / den


def short_turns(fake: FakeChild, turns: int, new_session: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shiro-bench-memory-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        server = Server(ws, server_env(Path(tmp, "home"), fake.base_url), {"memory": {"enabled": False}})
        server.keep_notes = False
        samples: list[tuple[int, int]] = []
        try:
            warm = 50
            for i in range(warm + turns):
                if new_session:
                    server.command("shiro.newSession", {})
                fake.ask(loop={"steps": 0, "call": ["read_file", {"path": "x"}], "text": "ok", "extra": 2})
                result = server.command("shiro.chat", {"prompt": f"hi {i}"})
                assert result["status"] == "completed", result
                if i >= warm and (i - warm) % 50 == 0 or i == warm + turns - 1:
                    samples.append((i - warm, server.rss_kb()))
        finally:
            server.close()
    xs, ys = [float(x) for x, _ in samples], [float(y) for _, y in samples]
    return {"turns": turns, "rss_first_mb": round(ys[0] / 1024, 1), "rss_last_mb": round(ys[-1] / 1024, 1),
            "growth_kb": round(ys[-1] - ys[0]), "slope_kb_per_100_turns": round(slope(xs, ys) * 100, 1),
            "samples": samples}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--quick", action="store_true", help="300 short turns")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    turns = 300 if args.quick else args.turns
    with FakeChild() as fake:
        long = long_session(fake)
        print(f"200-step session: peak RSS {long['peak_rss_mb']} MB, {long['requests']} requests, "
              f"largest {long['largest_request_kb']} KB, last {long['last_request_kb']} KB")
        one = short_turns(fake, turns, new_session=False)
        print(f"{turns} short turns, one session: {one['rss_first_mb']} -> {one['rss_last_mb']} MB "
              f"({one['slope_kb_per_100_turns']} KB per 100 turns)")
        many = short_turns(fake, turns, new_session=True)
        print(f"{turns} short turns, a session each: {many['rss_first_mb']} -> {many['rss_last_mb']} MB "
              f"({many['slope_kb_per_100_turns']} KB per 100 turns)")
    result = {"long_session": long, "short_turns_one_session": one, "short_turns_new_session_each": many,
              "targets": {"long_session_peak_rss_mb": 150, "short_turns_growth": "none"},
              "curve": {"x_label": "short turns", "y_label": "server RSS (MB)",
                        "series": {"one session": [[x, round(y / 1024, 2)] for x, y in one["samples"]],
                                   "a session each": [[x, round(y / 1024, 2)] for x, y in many["samples"]]}}}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
