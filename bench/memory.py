"""Server memory: peak RSS through a 200-step session that reaches the compaction threshold, and
RSS across 1,000 short turns (one session, and a new session per turn).

A real `shiro-lsp` over stdio (bench/common/lsp_driver.py) against the fake in a child process.
The long session: one turn of 200 `read_file` calls of a ~3 KB file (about 150k tokens in all, past
the default compactThreshold of 120k, so pruning runs), then the server's VmHWM. The short turns:
"hi" -> "ok", VmRSS read every 50 turns after a warm-up of 50; growth = the slope of a least-squares
line through those samples (KB per 100 turns) and last - first.

Where it goes (bench/common/traced_server.py, the same server with a sampling hook):
- `after_trim_kb_per_100_turns`: glibc's malloc_trim(0) at the first and the last sample, so what
  the C allocator held free is given back before reading RSS; what remains is live data.
- `where`: a shorter run under tracemalloc; the Python heap's growth per turn, by the line of our
  code (server/) that allocated it, between a snapshot after the warm-up and one at the end.

Run: python bench/memory.py [--turns 1000] [--where-turns 100] [--quick]
Writes bench/results/memory.json (+ a curve).
"""

from __future__ import annotations

import argparse
import os
import pickle
import signal
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.fake_child import FakeChild  # noqa: E402
from common.lsp_driver import Server, server_env  # noqa: E402
from common.stats import write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "memory.json"
LONG_STEPS = 200
HOOKED = [sys.executable, str(Path(__file__).resolve().parent / "common" / "traced_server.py")]
SERVER_DIR = os.sep + "server" + os.sep  # our package's source folder (shiro_neko)


class Sampler:
    """Asks the hooked server for a sample (SIGUSR1) and reads what it wrote."""

    def __init__(self, server: Server, folder: Path) -> None:
        self.server, self.folder, self.count = server, folder, 0

    def __call__(self) -> dict[str, Any]:
        self.count += 1
        path = self.folder / f"{self.count}.pickle"
        os.kill(self.server.proc.pid, signal.SIGUSR1)
        deadline = time.monotonic() + 600
        while not path.exists():
            if time.monotonic() > deadline or self.server.proc.poll() is not None:
                raise RuntimeError("the hooked server wrote no sample")
            time.sleep(0.02)
        with path.open("rb") as fp:
            sample: dict[str, Any] = pickle.load(fp)
        return sample

    def settled(self, timeout: float = 120) -> dict[str, Any]:
        """A sample once the autosaves the turns queued have landed (a tight loop of turns outruns
        the one writer thread on a loaded disk; each waiting session is held until its save)."""
        deadline = time.monotonic() + timeout
        while True:
            sample = self()
            # Saves landed, and the leases of released sessions given back (the writer thread
            # does both, in order; a burst of 1,000 turns leaves hundreds queued).
            settled = "SessionsFeature._autosave" not in sample["task_kinds"] and sample["fd_kinds"].get(".lock", 0) <= 1
            if settled or time.monotonic() > deadline:
                return sample
            time.sleep(0.5)


def hooked_server(tmp: str, fake: FakeChild, trace: bool) -> tuple[Server, Sampler]:
    ws, snaps = Path(tmp, "ws"), Path(tmp, "samples")
    ws.mkdir()
    snaps.mkdir()
    env = server_env(Path(tmp, "home"), fake.base_url, SHIRO_BENCH_SNAPSHOT_DIR=str(snaps),
                     SHIRO_BENCH_TRACEMALLOC="1" if trace else "0")
    server = Server(ws, env, {"memory": {"enabled": False}}, argv=HOOKED)
    server.keep_notes = False
    return server, Sampler(server, snaps)


def short_turn(server: Server, fake: FakeChild, i: int, new_session: bool) -> None:
    if new_session:
        server.command("shiro.newSession", {})
    fake.ask(loop={"steps": 0, "call": ["read_file", {"path": "x"}], "text": "ok", "extra": 2})
    result = server.command("shiro.chat", {"prompt": f"hi {i}"})
    assert result["status"] == "completed", result


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
        server, sample = hooked_server(tmp, fake, trace=False)
        samples: list[tuple[int, int]] = []
        try:
            warm = 50
            for i in range(warm + turns):
                short_turn(server, fake, i, new_session)
                if i == warm:
                    first = sample.settled()  # trims: the RSS samples start from what is live
                if i >= warm and (i - warm) % 50 == 0 or i == warm + turns - 1:
                    samples.append((i - warm, server.rss_kb()))
            queued = sample()
            pending = [queued["task_kinds"].get("SessionsFeature._autosave", 0), queued["fd_kinds"].get(".lock", 0)]
            last = sample.settled()
        finally:
            server.close()
    xs, ys = [float(x) for x, _ in samples], [float(y) for _, y in samples]
    after_trim = None
    if first["rss_after_trim_kb"] is not None and last["rss_after_trim_kb"] is not None:
        after_trim = round((last["rss_after_trim_kb"] - first["rss_after_trim_kb"]) * 100 / turns, 1)
    return {"turns": turns, "rss_first_mb": round(ys[0] / 1024, 1), "rss_last_mb": round(ys[-1] / 1024, 1),
            "growth_kb": round(ys[-1] - ys[0]), "slope_kb_per_100_turns": round(slope(xs, ys) * 100, 1),
            "rss_at_end_kb": last["rss_kb"], "rss_at_end_after_trim_kb": last["rss_after_trim_kb"],
            "after_trim_kb_per_100_turns": after_trim,
            "fds": [first["fds"], last["fds"]], "threads": [first["threads"], last["threads"]],
            "asyncio_tasks": [first["tasks"], last["tasks"]], "samples": samples,
            # Python's own allocator: live small objects, and free blocks it keeps in its arenas.
            "pymalloc_kb_per_100_turns": {k: round((last["pymalloc"][k] - first["pymalloc"][k]) * 100 / 1024 / turns, 1)
                                          for k in ("allocated_bytes", "available_bytes", "total_bytes")
                                          if k in first["pymalloc"] and k in last["pymalloc"]},
            "autosaves_and_leases_held_at_end_before_settling": pending}


def _our_site(trace: tracemalloc.Traceback) -> str:
    """The innermost frame in our code (server/): the line that made or kept the allocation."""
    for frame in reversed(list(trace)):  # innermost last in a tracemalloc Traceback
        if SERVER_DIR in frame.filename:
            return f"{frame.filename.rsplit(SERVER_DIR, 1)[1]}:{frame.lineno}"
    frame = trace[-1]
    return f"(outside server/) {Path(frame.filename).name}:{frame.lineno}"


def where(fake: FakeChild, turns: int, new_session: bool, warm: int = 30) -> dict[str, Any]:
    """The Python heap's growth over `turns` turns, by the line of server/ code behind it."""
    with tempfile.TemporaryDirectory(prefix="shiro-bench-memory-") as tmp:
        server, sample = hooked_server(tmp, fake, trace=True)
        try:
            for i in range(warm):
                short_turn(server, fake, i, new_session)
            before = sample.settled()
            for i in range(warm, warm + turns):
                short_turn(server, fake, i, new_session)
            after = sample.settled()
        finally:
            server.close()
    ignore = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, "*traced_server.py")]
    # The SDK's last stream (its events, read buffers) lives until that stream is finalized, which
    # a snapshot catches or not: one response's worth, never growth, so it is counted apart.
    in_flight = [tracemalloc.Filter(False, f"*{os.sep}{name}{os.sep}*", all_frames=True)
                 for name in ("openai", "h11", "httpcore2", "httpx2", "httpcore", "httpx")]
    old, new = before["snapshot"].filter_traces(ignore), after["snapshot"].filter_traces(ignore)
    stream = [sum(t.size for t in snap.traces) - sum(t.size for t in snap.filter_traces(in_flight).traces) for snap in (old, new)]
    old, new = old.filter_traces(in_flight), new.filter_traces(in_flight)
    sites: dict[str, int] = {}
    for diff in new.compare_to(old, "traceback"):
        key = _our_site(diff.traceback)
        sites[key] = sites.get(key, 0) + diff.size_diff
    total = sum(t.size for t in new.traces) - sum(t.size for t in old.traces)
    top = sorted(sites.items(), key=lambda kv: -abs(kv[1]))[:12]
    types = {k: after["types"].get(k, 0) - before["types"].get(k, 0)
             for k in set(after["types"]) | set(before["types"])}
    return {"turns": turns, "heap_growth_bytes_per_turn": round(total / turns),
            "sdk_stream_in_flight_bytes": stream,
            "rss_after_trim_growth_bytes_per_turn": round((after["rss_after_trim_kb"] - before["rss_after_trim_kb"]) * 1024 / turns)
            if after["rss_after_trim_kb"] is not None else None,
            "by_site_bytes_per_turn": {k: round(v / turns) for k, v in top},
            "object_counts_per_100_turns": {k: round(v * 100 / turns) for k, v in sorted(types.items(), key=lambda kv: -abs(kv[1]))[:10] if v},
            "asyncio_tasks": [before["tasks"], after["tasks"]], "fds": [before["fds"], after["fds"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=1000)
    parser.add_argument("--where-turns", type=int, default=100, help="turns of the tracemalloc run (0: skip it)")
    parser.add_argument("--quick", action="store_true", help="300 short turns, 40 traced")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    turns = 300 if args.quick else args.turns
    where_turns = min(args.where_turns, 40) if args.quick else args.where_turns
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
        for name, row in (("one session", one), ("a session each", many)):
            print(f"  {name}: after malloc_trim {row['after_trim_kb_per_100_turns']} KB per 100 turns "
                  f"(pymalloc per 100 turns: {row['pymalloc_kb_per_100_turns']}); "
                  f"fds {row['fds']}, threads {row['threads']}, tasks {row['asyncio_tasks']}")
        # 0 skips the traced runs (bench/run does: they are a diagnosis, not a target, and a
        # minute of its 10).
        found = {} if where_turns <= 0 else {"one_session": where(fake, where_turns, new_session=False),
                                              "new_session_each": where(fake, where_turns, new_session=True)}
        for name, row in found.items():
            print(f"  where, {name}: Python heap +{row['heap_growth_bytes_per_turn']} B per turn "
                  f"(RSS after trim {row['rss_after_trim_growth_bytes_per_turn']} B), by site:")
            for site, size in row["by_site_bytes_per_turn"].items():
                print(f"    {size:6d} B  {site}")
    result = {"long_session": long, "short_turns_one_session": one, "short_turns_new_session_each": many,
              "where": found,
              "targets": {"long_session_peak_rss_mb": 150, "short_turns_growth": "none"},
              "curve": {"x_label": "short turns", "y_label": "server RSS (MB)",
                        "series": {"one session": [[x, round(y / 1024, 2)] for x, y in one["samples"]],
                                   "a session each": [[x, round(y / 1024, 2)] for x, y in many["samples"]]}}}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
