"""Streaming: 10,000 text deltas from the fake to `shiro/event` notifications at the client.

The fake (a child process) writes each delta as one SSE event and records when it wrote it
(CLOCK_MONOTONIC); the client (bench/common/lsp_driver.py, a reader thread) records when each
notification arrived. The server joins deltas that arrive while the client is busy
(server/delta_coalescing.py), so a notification may carry several deltas: each delta's latency
runs to the first notification whose accumulated text covers it. Every character is checked to
arrive, in order. Two paces: `paced` (a pause of --gap-ms between deltas, a model's pace) for
latency, and `burst` (no pause) for throughput and the coalescing ratio. The physical limit in
the same run: the same events read straight off the fake by the openai SDK in this process
(throughput, and the latency per delta of a burst and of the paced stream).

Run: python bench/stream.py [--runs 5] [--quick]   Writes bench/results/stream.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.fake_child import FakeChild  # noqa: E402
from common.lsp_driver import Server, server_env  # noqa: E402
from common.stats import summary, write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "stream.json"
DELTAS = 10_000
PIECE = "abc "  # 4 characters a delta
PREAMBLE = 4  # response.created, .in_progress, output_item.added, content_part.added


def one(fake: FakeChild, gap_s: float) -> dict[str, Any]:
    text = PIECE * DELTAS
    with tempfile.TemporaryDirectory(prefix="shiro-bench-stream-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        server = Server(ws, server_env(Path(tmp, "home"), fake.base_url), {"memory": {"enabled": False}})
        try:
            fake.ask(chunk_times=True)
            fake.script({"text": text, "chunks": DELTAS, "delay": gap_s})
            t0 = time.perf_counter()
            result = server.command("shiro.chat", {"prompt": "stream"})
            wall = time.perf_counter() - t0
        finally:
            server.close()
    chunks = fake.ask(chunk_times=True)["chunk_times_ns"][PREAMBLE:PREAMBLE + DELTAS]
    notes = [(at, m["params"]) for at, m in server.notes
             if m.get("method") == "shiro/event" and m["params"].get("type") == "text_delta"]
    got = "".join(p["text"] for _, p in notes)
    assert result["status"] == "completed" and got == text, (result, len(got), len(text))
    latencies: list[float] = []
    covered, j = 0, 0
    for i, sent in enumerate(chunks):
        end = (i + 1) * len(PIECE)
        while covered < end:
            covered += len(notes[j][1]["text"])
            j += 1
        latencies.append((notes[j - 1][0] - sent) / 1e6)
    return {"median_ms": statistics.median(latencies), "p99_ms": sorted(latencies)[int(0.99 * len(latencies))],
            "deltas_per_s": DELTAS / wall, "notifications": len(notes), "wall_s": wall}


async def direct(base_url: str, arrivals: list[int]) -> float:
    from openai import AsyncOpenAI, AsyncStream

    client = AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0)
    body = json.dumps({"model": "m", "input": "stream", "stream": True}).encode()
    t0 = time.perf_counter()
    stream = await client.post("/responses", cast_to=object, content=body,
                               options={"headers": {"Content-Type": "application/json"}},
                               stream=True, stream_cls=AsyncStream[object])
    async for _ in stream:
        arrivals.append(time.monotonic_ns())
    return time.perf_counter() - t0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="5 runs (the minimum)")
    parser.add_argument("--gap-ms", type=float, default=0.2, help="pause between deltas in the paced runs")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs = max(5, args.runs)
    out: dict[str, Any] = {}
    with FakeChild() as fake:
        one(fake, 0)  # warm-up
        for pace, gap in (("paced", args.gap_ms / 1000), ("burst", 0.0)):
            samples = [one(fake, gap) for _ in range(runs)]
            out[pace] = {k: summary([s[k] for s in samples], unit="") for k in samples[0]}
            print(f"{pace}: latency median {out[pace]['median_ms']['median_']} ms, p99 {out[pace]['p99_ms']['median_']} ms, "
                  f"{out[pace]['deltas_per_s']['median_']:.0f} deltas/s, {out[pace]['notifications']['median_']:.0f} "
                  f"notifications for {DELTAS} deltas")
        fake.script(*[{"text": PIECE * DELTAS, "chunks": DELTAS} for _ in range(runs)])
        sdk: list[float] = []
        sdk_burst_latency: list[float] = []
        for _ in range(runs):  # the physical limit of a burst: the SDK alone reading it, in this process
            fake.ask(chunk_times=True)
            arrivals: list[int] = []
            sdk.append(DELTAS / asyncio.run(direct(fake.base_url, arrivals)))
            sent = fake.ask(chunk_times=True)["chunk_times_ns"]
            sdk_burst_latency.append(statistics.median((a - s) / 1e6 for a, s in zip(arrivals, sent)))
        out["direct_sdk_deltas_per_s"] = summary(sdk, unit="")
        out["direct_sdk_burst_latency_median_ms"] = summary(sdk_burst_latency, unit="")
        fake.script(*[{"text": PIECE * DELTAS, "chunks": DELTAS, "delay": args.gap_ms / 1000} for _ in range(runs)])
        sdk_latency = []
        for _ in range(runs):  # the physical limit of latency: the SDK's own, in this process
            fake.ask(chunk_times=True)
            arrivals = []
            asyncio.run(direct(fake.base_url, arrivals))
            sent = fake.ask(chunk_times=True)["chunk_times_ns"]
            sdk_latency.append(statistics.median((a - s) / 1e6 for a, s in zip(arrivals, sent)))
        out["direct_sdk_paced_latency_median_ms"] = summary(sdk_latency, unit="")
        print(f"direct SDK: {out['direct_sdk_deltas_per_s']['median_']:.0f} deltas/s, burst latency median "
              f"{out['direct_sdk_burst_latency_median_ms']['median_']} ms, paced latency median "
              f"{out['direct_sdk_paced_latency_median_ms']['median_']} ms")
    result = {"deltas": DELTAS, "by_pace": out, "targets": {"paced_latency_median_ms": 2}}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
