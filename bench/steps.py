"""Step overhead: a 20-step turn of trivial tool calls through LSP, against the same requests
made directly with the openai SDK to the same fake, in the same run.

For each history size (about 1k, 30k and 120k tokens: a first turn whose prompt is that long),
a real `shiro-lsp` over stdio runs `shiro.chat` for a turn in which the fake (a child process,
bench/common/fake_child.py) answers 20 times with a `read_file` call of a one-line file, then
with text. The server's own time per step is the fake's clock from the end of one response to
the first byte of the next request (tool run, history update, request build, upload), and its
CPU time per step (user + system, all threads: it moves far less with the machine's load). Then the
same 21 request bodies, as the server sent them, go from this process through
`AsyncOpenAI.post(..., stream=True)` one after another, each stream read to its end: the
physical limit (its step gap, and its CPU time per request). Ratio = the LSP turn's wall time / the direct sequence's wall time.
compactThreshold is raised so no pruning runs in the measured turn.

Run: python bench/steps.py [--runs 5] [--quick]   Writes bench/results/steps.json (+ a curve).
"""

from __future__ import annotations

import argparse
import asyncio
import os
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

RESULTS = Path(__file__).resolve().parent / "results" / "steps.json"
STEPS = 20
SIZES = {"1k": 1_000, "30k": 30_000, "120k": 120_000}
WORDS = "the session record holds the transcript and the index keeps the newest first ".split()


def filler(tokens: int) -> str:
    words: list[str] = []
    while len(" ".join(words)) < tokens * 4:
        words.extend(WORDS)
    return " ".join(words)[: tokens * 4]


async def direct(base_url: str, bodies: list[str]) -> tuple[float, float]:
    """The wall and CPU time (ms) of the requests alone, the client already made."""
    from openai import AsyncOpenAI, AsyncStream

    client = AsyncOpenAI(api_key="sk-bench", base_url=base_url, max_retries=0)
    contents = [body.encode() for body in bodies]
    t0, cpu0 = time.perf_counter(), time.process_time()
    for content in contents:
        stream = await client.post("/responses", cast_to=object, content=content,
                                   options={"headers": {"Content-Type": "application/json"}},
                                   stream=True, stream_cls=AsyncStream[object])
        async for _ in stream:
            pass
    return (time.perf_counter() - t0) * 1e3, (time.process_time() - cpu0) * 1e3


def cpu_ms(pid: int) -> float:
    """The CPU time (user + system) a process has used so far: steadier than wall time under load."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1e3 / os.sysconf("SC_CLK_TCK")


def one(fake: FakeChild, tokens: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shiro-bench-steps-") as tmp:
        ws = Path(tmp, "ws")
        ws.mkdir()
        (ws / "a.txt").write_text("one line\n")
        server = Server(ws, server_env(Path(tmp, "home"), fake.base_url),
                        {"approvals": "auto", "compactThreshold": 10_000_000, "memory": {"enabled": False}})
        server.keep_notes = False
        try:
            fake.ask(loop={"steps": 0, "call": ["read_file", {"path": "a.txt"}], "text": "noted"})
            server.command("shiro.chat", {"prompt": filler(tokens)})
            time.sleep(0.5)  # a side request (the title) may follow the first turn
            fake.ask(bodies=True)
            fake.requests()
            fake.ask(loop={"steps": STEPS, "call": ["read_file", {"path": "a.txt"}]})
            cpu0 = cpu_ms(server.proc.pid)
            t0 = time.perf_counter()
            result = server.command("shiro.chat", {"prompt": "read a.txt twenty times"})
            turn_ms = (time.perf_counter() - t0) * 1e3
            turn_cpu_ms = cpu_ms(server.proc.pid) - cpu0
            assert result["status"] == "completed", result
            reqs = fake.requests()
            bodies = [b for b in fake.ask(bodies=True)["bodies"] if '"tools"' in b]
        finally:
            server.close()
    own = [(b["first_byte_ns"] - a["end_ns"]) / 1e6 for a, b in zip(reqs, reqs[1:])]
    fake.ask(loop={"steps": STEPS, "call": ["read_file", {"path": "a.txt"}]})
    fake.requests()
    direct_ms, direct_cpu_ms = asyncio.run(direct(fake.base_url, bodies))
    dreqs = fake.requests()
    direct_own = [(b["first_byte_ns"] - a["end_ns"]) / 1e6 for a, b in zip(dreqs, dreqs[1:])]
    fake.ask(clear=True)
    return {"turn_ms": turn_ms, "direct_ms": direct_ms, "step_own_ms": statistics.median(own),
            "direct_step_ms": statistics.median(direct_own),
            "server_cpu_per_step_ms": turn_cpu_ms / len(reqs), "direct_sdk_cpu_per_step_ms": direct_cpu_ms / len(bodies),
            "connections": len({r["port"] for r in reqs}),
            "request_kb": statistics.median(r["bytes"] for r in reqs) / 1024, "requests": len(reqs)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="5 runs (the minimum)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs = max(5, args.runs)
    out: dict[str, Any] = {}
    with FakeChild() as fake:
        one(fake, 1_000)  # warm-up
        for label, tokens in SIZES.items():
            samples = [one(fake, tokens) for _ in range(runs)]
            ratio = [s["turn_ms"] / s["direct_ms"] for s in samples]
            out[label] = {
                "history_tokens": tokens,
                "step_own_ms": summary([s["step_own_ms"] for s in samples], unit=""),
                "turn_ms": summary([s["turn_ms"] for s in samples], unit=""),
                "direct_sdk_ms": summary([s["direct_ms"] for s in samples], unit=""),
                "direct_sdk_step_gap_ms": summary([s["direct_step_ms"] for s in samples], unit=""),
                "server_cpu_per_step_ms": summary([s["server_cpu_per_step_ms"] for s in samples], unit=""),
                "direct_sdk_cpu_per_step_ms": summary([s["direct_sdk_cpu_per_step_ms"] for s in samples], unit=""),
                # Our own CPU per step: what the server spends beyond the SDK's share of the same work.
                "own_cpu_beyond_sdk_ms": summary([s["server_cpu_per_step_ms"] - s["direct_sdk_cpu_per_step_ms"]
                                                  for s in samples], unit=""),
                "connections_per_turn": max(s["connections"] for s in samples),
                "turn_to_direct_ratio": summary(ratio, unit="", digits=3),
                "request_kb": round(statistics.median(s["request_kb"] for s in samples), 1),
            }
            o = out[label]
            print(f"{label:>5}: step own {o['step_own_ms']['median_']} ms, turn {o['turn_ms']['median_']} ms, "
                  f"direct {o['direct_sdk_ms']['median_']} ms (gap {o['direct_sdk_step_gap_ms']['median_']}), ratio {o['turn_to_direct_ratio']['median_']}, "
                  f"request {o['request_kb']} KB")
    result = {"steps_per_turn": STEPS, "by_history": out,
              "targets": {"step_own_ms_at_120k": 5, "turn_to_direct_ratio": 1.05},
              "curve": {"x_label": "history (tokens)", "y_label": "server's own time per step (ms)",
                        "x": [v["history_tokens"] for v in out.values()],
                        "y": [v["step_own_ms"]["median_"] for v in out.values()]}}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
