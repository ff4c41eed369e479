"""Cost of automatic pruning on a realistic long transcript.

Builds a ~120k-token transcript (by the seed's estimate, compact JSON length / 4) of about 1,000
messages: user prompts, assistant responses with reasoning (item id and encrypted content), text
and one to three tool calls with item ids, and tool messages with results of varied size. Then
times, median of --runs runs each (after one warm-up run):

- estimate_ms:    `estimate_tokens` of the whole transcript (the cost a fitting request pays, and
                  what re-measuring a whole view on every ladder rung would cost per rung);
- prune_ms:       `prune_for_wire(messages, 60_000)` (budget = 120k * 0.5), no summaries;
- prune_summaries_ms: the same with a summary for every span of the first run;
- fits_ms:        `prune_for_wire(messages, 10**9)` (the fast path: estimate only);
- by_budget:      rungs used, size and median time for budgets from 110k down to 1k tokens.

Also records the rungs used, the spans, and message counts/tokens before and after.
Writes bench/results/prune.json.

Run: python bench/prune.py [--runs 20] [--quick]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import statistics
import time
from pathlib import Path

from shiro_neko.agent.prune import prune_for_wire
from shiro_neko.model.transcript import (
    AssistantMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
    encode_messages,
    estimate_tokens,
)

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "prune.json"
TARGET_TOKENS = 120_000
TARGET_MESSAGES = 1_000
BUDGET = TARGET_TOKENS // 2
TOOLS = ("read_file", "grep", "run_command", "edit_file", "list_files")
WORDS = ("the", "parser", "returns", "a", "token", "stream", "test", "fails", "because", "config",
         "value", "missing", "fixed", "import", "module", "path", "error", "line", "function", "cache")


def words(rng: random.Random, n: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(n))


def build_transcript(seed: int = 7) -> list[Message]:
    """About TARGET_MESSAGES messages summing to about TARGET_TOKENS by the estimate."""
    rng = random.Random(seed)
    out: list[Message] = []
    n_call = 0
    # Result sizes drawn so the total lands near the target: ~480 KB over ~330 tool messages.
    while len(out) < TARGET_MESSAGES - 3:
        if not out or rng.random() < 0.12:
            out.append(UserMessage(content=[TextPart(text=words(rng, rng.randint(8, 40)))]))
        h = "%032x" % rng.getrandbits(128)
        parts: list = [
            ReasoningPart(text=words(rng, rng.randint(5, 20)), item_id=f"rs_{h}",
                          encrypted_content="gAAAA" + "%x" % rng.getrandbits(rng.randint(200, 600))),
        ]
        if rng.random() < 0.5:
            parts.append(TextPart(text=words(rng, rng.randint(5, 30)), item_id=f"msg_{h}"))
        calls = []
        for k in range(rng.choice((1, 1, 1, 2, 3))):
            n_call += 1
            name = rng.choice(TOOLS)
            call = ToolCallPart(tool_call_id=f"call_{n_call:05d}", tool_name=name,
                                input={"path": f"src/module_{rng.randint(1, 60)}.py", "pattern": words(rng, 2)},
                                item_id=f"fc_{h}{k}")
            parts.append(call)
            calls.append(call)
        out.append(AssistantMessage(content=parts))
        out.append(ToolMessage(content=[
            ToolResultPart(tool_call_id=c.tool_call_id, tool_name=c.tool_name,
                           output=words(rng, rng.randint(20, 260)), is_error=rng.random() < 0.05)
            for c in calls
        ]))
    out.append(UserMessage(content=[TextPart(text="now run the whole test suite and fix what fails")]))
    h = "%032x" % rng.getrandbits(128)
    out.append(AssistantMessage(content=[
        ReasoningPart(text="run the tests", item_id=f"rs_{h}", encrypted_content="gAAAA"),
        TextPart(text="Running the test suite.", item_id=f"msg_{h}"),
    ]))
    # Scale tool outputs so the whole lands on the target.
    results = sum(len(r.output) for m in out if isinstance(m, ToolMessage) for r in m.content)
    scale = 1 + (TARGET_TOKENS * 4 - len(encode_messages(out))) / results
    scaled: list[Message] = []
    for m in out:
        if isinstance(m, ToolMessage):
            m = ToolMessage(content=[
                ToolResultPart(tool_call_id=r.tool_call_id, tool_name=r.tool_name,
                               output=_stretch(r.output, scale), is_error=r.is_error)
                for r in m.content
            ])
        scaled.append(m)
    return scaled


def _stretch(text: str, scale: float) -> str:
    want = max(1, round(len(text) * scale))
    return (text + " ") * (want // (len(text) + 1)) + text[: want % (len(text) + 1)]


def timed(fn, runs: int) -> tuple[float, list[float]]:
    fn()  # warm-up
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) * 1000)
    return statistics.median(samples), samples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--quick", action="store_true", help="5 runs")
    args = parser.parse_args()
    runs = 5 if args.quick else args.runs

    messages = build_transcript()
    tokens = estimate_tokens(messages)
    view = prune_for_wire(messages, BUDGET)
    summaries = {s.key: "- goal: fix the parser\n- edited src/module_3.py\n- tests pass" for s in view.spans}

    estimate_ms, _ = timed(lambda: estimate_tokens(messages), runs)
    prune_ms, samples = timed(lambda: prune_for_wire(messages, BUDGET), runs)
    prune_sum_ms, _ = timed(lambda: prune_for_wire(messages, BUDGET, summaries), runs)
    fits_ms, _ = timed(lambda: prune_for_wire(messages, 10**9), runs)
    ladder = []
    for budget in (110_000, 60_000, 30_000, 15_000, 8_000, 1_000):
        v = prune_for_wire(messages, budget)
        ms, _ = timed(lambda: prune_for_wire(messages, budget), runs)
        ladder.append({"budget_tokens": budget, "steps": v.steps, "messages": len(v.messages),
                       "estimate_tokens": v.tokens, "spans": len(v.spans), "ms": round(ms, 3)})

    result = {
        "transcript": {"messages": len(messages), "estimate_tokens": tokens,
                       "json_bytes": len(encode_messages(messages))},
        "budget_tokens": BUDGET,
        "view": {"messages": len(view.messages), "estimate_tokens": view.tokens, "steps": view.steps,
                 "spans": [{"key": s.key, "start": s.start, "end": s.end, "removed": len(s.removed)}
                           for s in view.spans]},
        "runs": runs,
        "estimate_ms": round(estimate_ms, 3),
        "prune_ms": round(prune_ms, 3),
        "prune_ms_min": round(min(samples), 3),
        "prune_ms_max": round(max(samples), 3),
        "prune_summaries_ms": round(prune_sum_ms, 3),
        "fits_ms": round(fits_ms, 3),
        "by_budget": ladder,
        "estimate_per_rung_if_remeasured_ms": round(estimate_ms * view.steps, 3),
        "target_ms": 20,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"transcript: {len(messages)} messages, {tokens} tokens (estimate); budget {BUDGET}")
    print(f"view: {len(view.messages)} messages, {view.tokens} tokens, rungs {view.steps}, spans {len(view.spans)}")
    print(f"prune_for_wire: median {prune_ms:.2f} ms (min {min(samples):.2f}, max {max(samples):.2f}) over {runs} runs")
    print(f"with summaries: {prune_sum_ms:.2f} ms; fits fast path: {fits_ms:.2f} ms; "
          f"estimate_tokens: {estimate_ms:.2f} ms per call")
    for row in ladder:
        print(f"  budget {row['budget_tokens']:>7}: rungs {row['steps']:>2}, {row['messages']:>4} messages, "
              f"{row['estimate_tokens']:>6} tokens, {row['spans']} spans, {row['ms']:.2f} ms")
    print(f"wrote {RESULTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
