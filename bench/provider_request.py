"""Event-loop cost of sending one 120k-token (~480 KB) Responses request, two ways.

(a) the SDK's typed call: `client.responses.create(model=..., input=items, instructions=...,
    tools=[6 function tools], stream=True)`, which transforms the whole request on the event loop;
(b) our path: `wire_responses.request_body(ProviderRequest(...), store=True)` from transcript
    messages, then `OpenAIProvider._open` (msgspec-encoded bytes through the SDK's low-level
    `client.post(..., stream=True, stream_cls=AsyncStream[object])`).

Both go to the fake provider (tests/fake_provider.py), run in a child process so its JSON parsing
and history checks do not compete with this process for the GIL. The child logs, per request, the
CLOCK_MONOTONIC time its handler read the request line (the first bytes of the request) and the
time it had the whole body. Per run we record:

- pre_request_ms: call -> first bytes of the request at the server (the work done before sending);
- to_stream_ms:   call -> the stream object returned (includes upload and the server's checks);
- max_stall_ms:   the longest gap a ticker task (`await asyncio.sleep(0.001)` in a loop) saw while
                  the call was in progress: how long the event loop could not serve anything else.

Also timed alone: `wire_responses.request_body`, `msgspec.json.encode` of that body, and the SDK's
request transform. Median of --runs runs per path (interleaved, after warm-up runs that are
reported separately as "cold"). Writes bench/results/provider_request.json.

Run: python bench/provider_request.py [--runs 10] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import platform
import queue
import random
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "provider_request.json"
MODEL = "bench-model"
TARGET_BYTES = 480_000
TARGET_ITEMS = 600
INSTRUCTIONS = (
    "You are shiro-neko, a coding agent working in the user's repository. Read before you edit, "
    "keep changes small, run the tests after changing code, and explain what you did briefly.\n" * 20
)


# ------------------------------------------------------------------------------- fake (child)
def serve() -> None:
    """Child process: the fake provider, logging request timings as JSON lines on stdout."""
    sys.path.insert(0, str(ROOT))
    from tests import fake_provider as fp

    handler = fp._Handler
    original_parse = handler.parse_request
    original_read_body = handler._read_body
    out_lock = threading.Lock()

    def parse_request(self: Any) -> bool:
        # Called right after the request line was read: the request's first bytes are here.
        self._bench_first_byte = time.monotonic_ns()
        return original_parse(self)

    def read_body(self: Any) -> tuple[Any, bool]:
        body, ok = original_read_body(self)
        done = time.monotonic_ns()
        digest = ""
        if isinstance(body, dict):
            digest = hashlib.sha256(json.dumps(body.get("input"), sort_keys=True).encode()).hexdigest()[:16]
        line = json.dumps({
            "first_byte_ns": getattr(self, "_bench_first_byte", done),
            "body_read_ns": done,
            "bytes": int(self.headers.get("Content-Length") or 0),
            "input_sha": digest,
        })
        with out_lock:
            print(line, flush=True)
        return body, ok

    handler.parse_request = parse_request  # type: ignore[method-assign]
    handler._read_body = read_body  # type: ignore[method-assign]

    fake = fp.FakeProvider().start()
    fake.script(*[fp.Reply(text="ok", chunks=1) for _ in range(10_000)])
    print(json.dumps({"base_url": fake.base_url}), flush=True)
    try:
        sys.stdin.read()  # until the parent closes our stdin
    finally:
        fake.stop()


class FakeChild:
    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--serve"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=str(ROOT),
        )
        assert self.proc.stdout is not None
        self.base_url = json.loads(self.proc.stdout.readline())["base_url"]
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def next_request(self) -> dict[str, Any]:
        return self.lines.get(timeout=30)

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# ------------------------------------------------------------------------------ transcript
_WORDS = ("session", "record", "index", "provider", "stream", "token", "cursor", "buffer", "path", "entry",
          "config", "result", "handler", "request", "offset", "limit", "payload", "cache", "item", "chunk")
_FILES = ("server/agent/loop.py", "server/state/session_store.py", "server/lsp.py", "tests/unit/test_wire.py",
          "server/agent/tools/files.py", "client/src/extension.ts", "server/service.py", "docs/protocol.md")


def _ident(rng: random.Random) -> str:
    return "_".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 3)))


def _code(rng: random.Random, chars: int, numbered: bool = True) -> str:
    lines: list[str] = []
    size = 0
    indent = 0
    n = rng.randint(1, 400)
    while size < chars:
        kind = rng.random()
        if kind < 0.12:
            line = f"def {_ident(rng)}(self, {_ident(rng)}: str, {_ident(rng)}: int = {rng.randint(0, 99)}) -> dict:"
            indent = 1
        elif kind < 0.2:
            line = "    " * indent + f"if {_ident(rng)} is None or len({_ident(rng)}) > {rng.randint(1, 4096)}:"
        elif kind < 0.3:
            line = "    " * (indent + 1) + f"raise ValueError(f\"bad {_ident(rng)}: {{{_ident(rng)}!r}}\")"
        elif kind < 0.45:
            line = "    " * indent + f"# {' '.join(rng.choice(_WORDS) for _ in range(rng.randint(4, 12)))}"
        elif kind < 0.55:
            line = "    " * indent + f"return {{\"{_ident(rng)}\": {_ident(rng)}, \"{_ident(rng)}\": [{rng.randint(0, 9)}, {rng.randint(0, 9)}]}}"
        else:
            line = "    " * indent + f"{_ident(rng)} = self.{_ident(rng)}.get(\"{_ident(rng)}\", {rng.randint(0, 999)})"
        if numbered:
            line = f"{n:6d}\t{line}"
            n += 1
        lines.append(line)
        size += len(line) + 1
    return "\n".join(lines)


def _prose(rng: random.Random, chars: int) -> str:
    out: list[str] = []
    size = 0
    while size < chars:
        sentence = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(6, 16))).capitalize() + "."
        if rng.random() < 0.2:
            sentence += f" See `{rng.choice(_FILES)}` line {rng.randint(1, 900)}."
        out.append(sentence)
        size += len(sentence) + 1
    return " ".join(out)


def build_transcript(scale: float = 1.0, seed: int = 7) -> list[Any]:
    """~600 Responses items: user turns, assistant text, function calls and their (large) outputs.

    The shape (turns, calls, tools, sizes) comes from one random stream and the text from another,
    so `scale` changes the text lengths without changing the shape.
    """
    from shiro_neko.model.transcript import AssistantMessage, TextPart, ToolCallPart, ToolMessage, ToolResultPart, UserMessage

    rng = random.Random(seed)  # shape
    txt = random.Random(seed + 1)  # text

    def size(lo: int, hi: int) -> int:
        return int(rng.randint(lo, hi) * scale)

    messages: list[Any] = []
    items = 0
    call_no = 0
    while items < TARGET_ITEMS:
        messages.append(UserMessage(content=[TextPart(text=_prose(txt, size(80, 600)))]))
        items += 1
        for _step in range(rng.randint(2, 5)):
            parts: list[Any] = []
            if rng.random() < 0.6:
                parts.append(TextPart(text=_prose(txt, size(60, 400))))
            results: list[Any] = []
            for _ in range(rng.randint(1, 3)):
                call_no += 1
                call_id = f"call_{call_no:05d}{rng.getrandbits(48):012x}"
                tool = rng.choice(("read_file", "grep", "edit_file", "run_command", "list_files", "write_file"))
                path = rng.choice(_FILES)
                if tool == "edit_file":
                    args: dict[str, Any] = {"path": path, "old": _code(txt, size(200, 200), False),
                                            "new": _code(txt, size(240, 240), False)}
                elif tool == "write_file":
                    args = {"path": path, "content": _code(txt, size(600, 600), False)}
                elif tool == "grep":
                    args = {"pattern": _ident(txt), "path": "server"}
                elif tool == "run_command":
                    args = {"command": f"python -m pytest -q tests/unit -k {_ident(txt)}", "timeout": 120}
                else:
                    args = {"path": path}
                parts.append(ToolCallPart(tool_call_id=call_id, tool_name=tool, input=args))
                results.append(ToolResultPart(tool_call_id=call_id, tool_name=tool, output=_code(txt, size(200, 1400))))
            messages.append(AssistantMessage(content=parts))
            messages.append(ToolMessage(content=results))
            items += len(parts) + len(results)
        messages.append(AssistantMessage(content=[TextPart(text=_prose(txt, size(100, 800)))]))
        items += 1
    return messages


def calibrated_transcript() -> tuple[list[Any], int]:
    """Scale the text sizes so the encoded `input` is close to TARGET_BYTES."""
    import msgspec

    from shiro_neko.agent.provider import wire_responses

    scale = 1.0
    for _ in range(6):
        messages = build_transcript(scale)
        size = len(msgspec.json.encode(wire_responses.input_items(messages, [], True)))
        if abs(size - TARGET_BYTES) < TARGET_BYTES * 0.005:
            break
        scale *= TARGET_BYTES / size
    return messages, size


# ---------------------------------------------------------------------------------- timing
class Ticker:
    """Records the longest gap between 1 ms sleeps: how long the loop was blocked."""

    def __init__(self) -> None:
        self.max_gap = 0.0
        self.stopping = False

    async def run(self) -> None:
        last = time.perf_counter()
        while True:
            await asyncio.sleep(0.001)
            now = time.perf_counter()
            self.max_gap = max(self.max_gap, now - last)
            last = now
            if self.stopping:
                return


async def measure(call: Callable[[], Any], fake: FakeChild) -> dict[str, Any]:
    ticker = Ticker()
    task = asyncio.create_task(ticker.run())
    await asyncio.sleep(0.01)  # the ticker is running
    ticker.max_gap = 0.0
    t0 = time.monotonic_ns()
    stream = await call()
    returned = time.monotonic_ns()
    ticker.stopping = True
    await task
    async for _ in stream:  # drain, so the connection is reused and the server finishes
        pass
    await stream.close()
    seen = await asyncio.to_thread(fake.next_request)
    return {
        "pre_request_ms": (seen["first_byte_ns"] - t0) / 1e6,
        "upload_done_ms": (seen["body_read_ns"] - t0) / 1e6,
        "to_stream_ms": (returned - t0) / 1e6,
        "max_stall_ms": ticker.max_gap * 1e3,
        "bytes": seen["bytes"],
        "input_sha": seen["input_sha"],
    }


def timed(fn: Callable[[], Any], n: int) -> dict[str, float]:
    samples = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t) * 1e3)
    return summary(samples)


def summary(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(samples), 3), "min_ms": round(min(samples), 3),
            "max_ms": round(max(samples), 3), "n": len(samples)}


def med(runs: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in runs), 3)


async def bench(runs: int, warmup: int) -> dict[str, Any]:
    import msgspec
    from openai import AsyncOpenAI

    from shiro_neko.agent.provider import wire_responses
    from shiro_neko.agent.provider.base import ProviderRequest, ToolSpec
    from shiro_neko.agent.provider.openai_provider import EndpointConfig, OpenAIProvider
    from shiro_neko.agent.tools.registry import core_tools

    messages, input_bytes = calibrated_transcript()
    specs = [ToolSpec(t.name, t.description, t.parameters) for t in core_tools()]
    request = ProviderRequest(MODEL, INSTRUCTIONS, messages, specs)
    body = wire_responses.request_body(request, store=True)
    items = body["input"]
    sdk_tools = body["tools"]
    encoded = msgspec.json.encode(body)

    fake = FakeChild()
    try:
        client = AsyncOpenAI(api_key="sk-bench", base_url=fake.base_url, max_retries=0, timeout=60)
        provider = OpenAIProvider(EndpointConfig(model=MODEL, base_url=fake.base_url, store=True))
        provider._client = AsyncOpenAI(api_key="sk-bench", base_url=fake.base_url, max_retries=0, timeout=60)

        def sdk_call() -> Any:
            return client.responses.create(
                model=MODEL, input=items, instructions=INSTRUCTIONS, tools=sdk_tools, stream=True,
                store=True, include=["reasoning.encrypted_content"],
            )

        async def our_call() -> Any:
            return await provider._open(wire_responses.request_body(request, store=True))

        cold = {"sdk": await measure(sdk_call, fake), "ours": await measure(our_call, fake)}
        for _ in range(warmup - 1):
            await measure(sdk_call, fake)
            await measure(our_call, fake)
        sdk_runs: list[dict[str, Any]] = []
        our_runs: list[dict[str, Any]] = []
        for i in range(runs):  # interleaved, alternating which goes first
            pair = [(sdk_call, sdk_runs), (our_call, our_runs)]
            for call, into in pair if i % 2 == 0 else pair[::-1]:
                into.append(await measure(call, fake))

        baseline = Ticker()
        task = asyncio.create_task(baseline.run())
        await asyncio.sleep(0.2)
        baseline.stopping = True
        await task

        transform_ms: dict[str, float] | None = None
        try:  # the SDK's own transform step, alone (private API: skipped if it moved)
            from openai._utils import async_maybe_transform
            from openai.types.responses import response_create_params

            params = {"model": MODEL, "input": items, "instructions": INSTRUCTIONS, "tools": sdk_tools,
                      "stream": True, "store": True, "include": ["reasoning.encrypted_content"]}
            samples = []
            for _ in range(max(3, runs // 2)):
                t = time.perf_counter()
                await async_maybe_transform(params, response_create_params.ResponseCreateParamsStreaming)
                samples.append((time.perf_counter() - t) * 1e3)
            transform_ms = summary(samples)
        except Exception as exc:  # noqa: BLE001
            transform_ms = {"error": repr(exc)}  # type: ignore[dict-item]
        await client.close()
        await provider._client.close()
    finally:
        fake.close()

    sdk_pre, our_pre = med(sdk_runs, "pre_request_ms"), med(our_runs, "pre_request_ms")
    sdk_stall, our_stall = med(sdk_runs, "max_stall_ms"), med(our_runs, "max_stall_ms")
    same_input = len({r["input_sha"] for r in sdk_runs + our_runs}) == 1
    import openai

    return {
        "input": {
            "items": len(items),
            "input_bytes": input_bytes,
            "body_bytes": len(encoded),
            "tokens_estimate": input_bytes // 4,
            "tools": len(sdk_tools),
            "both_paths_sent_same_input": same_input,
        },
        "runs": runs,
        "sdk_responses_create": {
            "pre_request_ms": med(sdk_runs, "pre_request_ms"),
            "upload_done_ms": med(sdk_runs, "upload_done_ms"),
            "to_stream_ms": med(sdk_runs, "to_stream_ms"),
            "max_stall_ms": sdk_stall,
            "pre_request_ms_range": [round(min(r["pre_request_ms"] for r in sdk_runs), 3),
                                     round(max(r["pre_request_ms"] for r in sdk_runs), 3)],
            "cold_first_call": {k: round(v, 3) for k, v in cold["sdk"].items() if k.endswith("_ms")},
        },
        "ours_request_body_plus_low_level_post": {
            "pre_request_ms": our_pre,
            "upload_done_ms": med(our_runs, "upload_done_ms"),
            "to_stream_ms": med(our_runs, "to_stream_ms"),
            "max_stall_ms": our_stall,
            "pre_request_ms_range": [round(min(r["pre_request_ms"] for r in our_runs), 3),
                                     round(max(r["pre_request_ms"] for r in our_runs), 3)],
            "cold_first_call": {k: round(v, 3) for k, v in cold["ours"].items() if k.endswith("_ms")},
        },
        "ratio_sdk_over_ours": {
            "pre_request": round(sdk_pre / our_pre, 1) if our_pre else None,
            "max_stall": round(sdk_stall / our_stall, 1) if our_stall else None,
            "to_stream": round(med(sdk_runs, "to_stream_ms") / med(our_runs, "to_stream_ms"), 1),
        },
        "alone": {
            "wire_responses.request_body": timed(lambda: wire_responses.request_body(request, store=True), max(10, runs * 2)),
            "msgspec.json.encode(body)": timed(lambda: msgspec.json.encode(body), max(10, runs * 2)),
            "sdk_transform (async_maybe_transform)": transform_ms,
        },
        "idle_loop_max_gap_ms": round(baseline.max_gap * 1e3, 3),
        "environment": {
            "python": platform.python_version(),
            "openai": openai.__version__,
            "msgspec": msgspec.__version__,
            "cpus": os.cpu_count(),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "machine": platform.machine(),
        },
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="measured runs per path (default 10)")
    parser.add_argument("--warmup", type=int, default=2, help="warm-up runs per path (default 2, the first is 'cold')")
    parser.add_argument("--quick", action="store_true", help="5 runs per path")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve()
        return
    for key in [k for k in os.environ if k.startswith("OPENAI_")]:
        del os.environ[key]  # the bench talks to the local fake only
    runs = 5 if args.quick else max(1, args.runs)
    results = asyncio.run(bench(runs, max(1, args.warmup)))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")

    inp = results["input"]
    print(f"Responses request: {inp['items']} items, input {inp['input_bytes'] / 1000:.0f} KB "
          f"(~{inp['tokens_estimate'] / 1000:.0f}k tokens), {inp['tools']} tools; median of {runs} runs")
    print(f"{'path':<34} {'call->1st byte':>15} {'call->stream':>13} {'max loop stall':>15}")
    for label, key in (("(a) SDK responses.create", "sdk_responses_create"),
                       ("(b) request_body + low-level post", "ours_request_body_plus_low_level_post")):
        r = results[key]
        print(f"{label:<34} {r['pre_request_ms']:>12.1f} ms {r['to_stream_ms']:>10.1f} ms {r['max_stall_ms']:>12.1f} ms")
    ratio = results["ratio_sdk_over_ours"]
    print(f"ratio (a)/(b): before-send x{ratio['pre_request']}, stall x{ratio['max_stall']}")
    for name, value in results["alone"].items():
        shown = f"{value['median_ms']:.2f} ms" if "median_ms" in value else value.get("error", "?")
        print(f"  {name:<40} {shown}")
    print(f"  idle loop max gap {results['idle_loop_max_gap_ms']:.2f} ms; same input both paths: "
          f"{inp['both_paths_sent_same_input']}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
