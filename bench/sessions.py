"""Session storage at scale: 10,000 sessions of ~100 KB (~1 GB) spread over a few workspaces.

Measures, against a SessionStore on that directory:
- the first listing, which builds the index from the 10,000 files (happens once per home);
- `list(cwd)` cold (a new SessionStore, nothing cached in the process) and warm (same store);
- `list(cwd)` right after another server saved in another workspace (the directory changed, so
  the listing confirms the index against the directory);
- `latest(cwd)` plus loading that session;
- saving a 120k-token (~480 KB) record: encode, atomic write, and the full `save` with index update.

Run: python bench/sessions.py [--count 10000] [--size 100000] [--workspaces 4] [--keep]
Writes bench/results/sessions.json. The session files themselves are created with plain writes
(no fsync) to keep setup short; everything measured goes through the real code paths.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec
import uuid_utils

from shiro_neko.model.transcript import (
    AssistantMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
    estimate_tokens,
)
from shiro_neko.state.atomic import write_atomic
from shiro_neko.state.session_record import SessionRecord, encode_record, make_title
from shiro_neko.state.session_store import SessionStore

RESULTS = Path(__file__).resolve().parent / "results" / "sessions.json"
DAY_NS = 86_400 * 10**9


def turn(i: int, filler: int) -> list[Message]:
    """One realistic step: prompt, reasoning + tool call, tool result, answer."""
    body = ("def handler(request):\n    return paginate(request.items, page=%d)\n" % i) * filler
    return [
        UserMessage(content=[TextPart(text=f"step {i}: why does the pagination test fail on page {i}?")]),
        AssistantMessage(
            content=[
                ReasoningPart(text="Look at the boundary handling first. " * 4, item_id=f"rs_{i:06d}"),
                ToolCallPart(tool_call_id=f"call_{i}", tool_name="read_file", input={"path": f"src/p{i}.py"}, item_id=f"fc_{i}"),
            ]
        ),
        ToolMessage(content=[ToolResultPart(tool_call_id=f"call_{i}", tool_name="read_file", output=body)]),
        AssistantMessage(content=[TextPart(text="The off-by-one is in the last page. " * 6, item_id=f"msg_{i}")]),
    ]


def messages_of_size(target: int) -> list[Message]:
    messages: list[Message] = []
    i = 0
    while len(msgspec.json.encode(messages)) < target:
        messages += turn(i, 40)
        i += 1
    return messages


def timed(fn: Callable[[], Any], repeat: int) -> dict[str, float]:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - start) * 1000)
    return {"median_ms": round(statistics.median(samples), 2), "min_ms": round(min(samples), 2), "max_ms": round(max(samples), 2), "runs": repeat}


def create(home: Path, count: int, size: int, workspaces: list[str]) -> int:
    """Write `count` session files directly; returns the bytes written."""
    sessions = home / "sessions"
    sessions.mkdir(parents=True)
    messages = messages_of_size(size)
    start_ns = time.time_ns() - count * 60 * 10**9  # one session a minute, ending now
    total = 0
    for n in range(count):
        created_ns = start_ns + n * 60 * 10**9
        session_id = str(uuid_utils.uuid7(nanoseconds=created_ns))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(created_ns / 1e9))
        record = SessionRecord(
            id=session_id,
            created_at=f"{stamp}.000Z",
            updated_at=f"{stamp}.500Z",
            cwd=workspaces[n % len(workspaces)],
            provider="openai",
            model="gpt-5",
            title=make_title(f"session {n}: why does the pagination test fail on the last page of results?"),
            input_tokens=48_210,
            output_tokens=3_105,
            cost_usd=0.0913,
            messages=messages,
        )
        data = encode_record(record)
        (sessions / f"{session_id}.json").write_bytes(data)
        total += len(data)
    return total


def run(count: int, size: int, n_workspaces: int, keep: bool, out: Path) -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="shiro-bench-sessions-"))
    home = root / "home"
    workspaces = []
    for w in range(n_workspaces):
        folder = root / f"workspace-{w}"
        folder.mkdir()
        workspaces.append(str(folder.resolve()))
    cwd = workspaces[0]
    try:
        t0 = time.perf_counter()
        total = create(home, count, size, workspaces)
        setup_s = time.perf_counter() - t0
        print(f"created {count} sessions, {total / 1e9:.2f} GB, in {setup_s:.1f} s under {root}")

        results: dict[str, Any] = {
            "count": count,
            "workspaces": n_workspaces,
            "bytes_on_disk": total,
            "mean_session_bytes": total // max(count, 1),
        }
        results["first_list_builds_index"] = timed(lambda: SessionStore(home).list(cwd), 1)
        shown = SessionStore(home).list(cwd)
        assert len(shown) == min(15, -(-count // n_workspaces)), len(shown)
        results["list_cold_new_store"] = timed(lambda: SessionStore(home).list(cwd), 10)
        warm = SessionStore(home)
        warm.list(cwd)
        results["list_warm"] = timed(lambda: warm.list(cwd), 30)

        def latest_and_load(store: SessionStore) -> None:
            latest = store.latest(cwd)
            assert latest is not None
            store.load(latest)

        results["latest_plus_load_cold"] = timed(lambda: latest_and_load(SessionStore(home)), 10)
        results["latest_plus_load_warm"] = timed(lambda: latest_and_load(warm), 30)
        results["latest_only_warm"] = timed(lambda: warm.latest(cwd), 30)

        big = SessionRecord(
            id=str(uuid_utils.uuid7()),
            created_at="2025-01-01T00:00:00.000Z",
            updated_at="2025-01-01T00:00:00.000Z",
            cwd=workspaces[1 % n_workspaces],
            provider="openai",
            model="gpt-5",
            messages=messages_of_size(480_000),
        )
        results["big_record_tokens_estimate"] = estimate_tokens(big.messages)
        data = encode_record(big)
        results["big_record_bytes"] = len(data)
        results["save_120k_encode"] = timed(lambda: encode_record(big), 20)
        scratch = root / "scratch"
        results["save_120k_atomic_write"] = timed(lambda: write_atomic(scratch / "big.json", data), 20)
        other = SessionStore(home)
        other.acquire(big.id)  # a live server holds its session, as the LSP layer does
        results["save_120k_full_save_with_index"] = timed(lambda: other.save(big), 20)

        # Another server's save changed the directory: this workspace's shard is re-confirmed by
        # stats (no reads), once; the next listing is back to the warm figure.
        def list_after_foreign_save() -> None:
            other.save(big)
            start = time.perf_counter()
            warm.list(cwd)
            samples.append((time.perf_counter() - start) * 1000)

        samples: list[float] = []
        for _ in range(10):
            list_after_foreign_save()
        results["list_after_other_server_saved"] = {
            "median_ms": round(statistics.median(samples), 2),
            "min_ms": round(min(samples), 2),
            "max_ms": round(max(samples), 2),
            "runs": len(samples),
        }
        # A file nobody announced (copied in by hand, or a writer killed before indexing): the
        # listing verifies the whole index once (a stat per file, one parse), then trusts it again.
        samples = []
        for n in range(5):
            stray = SessionRecord(
                id=str(uuid_utils.uuid7()),
                created_at="2025-01-01T00:00:00.000Z",
                updated_at="2025-01-01T00:00:00.000Z",
                cwd=cwd,
                title=f"copied in by hand {n}",
                messages=big.messages[:40],
            )
            write_atomic(home / "sessions" / f"{stray.id}.json", encode_record(stray))
            start = time.perf_counter()
            warm.list(cwd)
            samples.append((time.perf_counter() - start) * 1000)
        results["list_after_unannounced_change"] = {
            "median_ms": round(statistics.median(samples), 2),
            "min_ms": round(min(samples), 2),
            "max_ms": round(max(samples), 2),
            "runs": len(samples),
        }

        def save_new() -> None:
            fresh = SessionRecord(
                id=str(uuid_utils.uuid7()),
                created_at="2025-01-01T00:00:00.000Z",
                updated_at="2025-01-01T00:00:00.000Z",
                cwd=cwd,
                messages=big.messages[:40],
            )
            other.save(fresh)

        results["save_new_session_with_index"] = timed(save_new, 10)
        ids = sorted(p.stem for p in (home / "sessions").glob("*.json"))
        hint = warm.resume_hint(ids[len(ids) // 2])
        results["resolve_hint_prefix"] = timed(lambda: warm.resolve(hint), 10)
        results["resume_hint"] = timed(lambda: warm.resume_hint(ids[0]), 10)
        index_bytes = sum(p.stat().st_size for p in (home / "sessions" / "index").iterdir() if p.is_file())
        results["index_bytes"] = index_bytes
        other.close()
        results["environment"] = {
            "python": sys.version.split()[0],
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "setup_seconds": round(setup_s, 1),
        }
    finally:
        if keep:
            print(f"kept {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=2) + "\n")
    return results


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="sessions to create (default 10000)")
    parser.add_argument("--size", type=int, default=100_000, help="approximate bytes per session")
    parser.add_argument("--workspaces", type=int, default=4, help="workspaces the sessions are spread over")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    results = run(args.count, args.size, max(1, args.workspaces), args.keep, args.out)
    width = max(len(k) for k in results)
    for name, value in results.items():
        if isinstance(value, dict) and "median_ms" in value:
            print(f"{name:<{width}}  median {value['median_ms']:8.2f} ms   min {value['min_ms']:8.2f}   max {value['max_ms']:8.2f}")
        elif not isinstance(value, dict):
            print(f"{name:<{width}}  {value}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
