"""The chat panel with long sessions, in real VS Code (code-server + headless Chromium), with
timestamps from the end-to-end harness (tests/clients/vscode_harness.py, test/e2e/drive.mjs):

Both run at VS Code's default sidebar width (about 300 px; the result says which).

1. streaming: one answer of N deltas (default 10,000) from the fake provider, `--runs` times in one
   window (New Chat between runs, after one warm-up run reported apart); figures per run, from the webview's own counters: time from
   Enter to the last delta rendered, postMessages received, frames applied, the longest frame
   spent applying patches (JS and the layout it forces), long tasks (> 50 ms, Long Tasks API: any
   task of the renderer, the workbench's too), and whether any text was lost (characters received
   = characters sent, and the answer's last line rendered);
2. resume: a session of M messages (default 1,000) saved with the project's own SessionStore in
   SHIRO_NEKO_HOME, then the window opened (the extension resumes it) and reloaded `--runs`
   times; figures per reload: from reload to every row rendered, and from the resume command to
   the newest rows painted and to every row rendered. It checks that the panel shows one row per
   message (M rows).

Medians, minimums and maximums over the runs. Run: python bench/vscode_panel.py [--deltas 10000]
[--messages 1000] [--runs 5] [--quick] [--trace FILE]. Writes bench/results/vscode_panel.json.
Needs what the e2e test needs (code-server, Chromium, the npm packages; see vscode_harness.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import uuid_utils

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shiro_neko.model.transcript import AssistantMessage, TextPart, ToolCallPart, ToolMessage, ToolResultPart, UserMessage  # noqa: E402
from shiro_neko.state.session_record import SessionRecord, make_title  # noqa: E402
from shiro_neko.state.session_store import SessionStore  # noqa: E402
from tests.clients.vscode_harness import VsCode, missing, server_env  # noqa: E402
from tests.fake_provider import FakeProvider, Reply  # noqa: E402

RESULTS = REPO / "bench" / "results" / "vscode_panel.json"


def long_answer(deltas: int) -> str:
    """Markdown with paragraphs, lists and code blocks, about six characters per delta."""
    parts = []
    n = 0
    while sum(len(p) for p in parts) < deltas * 6:
        n += 1
        parts.append(f"### Step {n}\n\nThe handler for page {n} returns `paginate(items, page={n})`; "
                     f"the boundary is off by one when the last page is full.\n\n"
                     f"```python\ndef page_{n}(items):\n    return items[{n} * 10:({n} + 1) * 10]\n```\n\n- checked {n}\n- next {n + 1}\n\n")
    return "".join(parts)


def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 1), "min": round(min(values), 1), "max": round(max(values), 1)}


def stream(deltas: int, runs: int, base: Path, trace: str | None, width: int | None = None) -> dict[str, Any]:
    fake = FakeProvider().start()
    vs = VsCode(base=base, env=server_env(base / "home", fake.base_url))
    try:
        vs.prepare()
        text = long_answer(deltas)
        # One more run than reported: the first warms up (JIT, highlight.js grammars, the server).
        fake.script(*[Reply(text=text, chunks=deltas) for _ in range(runs + 1)])
        vs.start()
        r = vs.drive("stream", base / "shots", timeout=600 + 300 * runs, prompt="explain the pagination bug", runs=runs + 1,
                     timeoutMs=120000, **({"trace": trace} if trace else {}), **({"sidebarWidth": width} if width else {}))
        if not r.get("ok"):
            raise RuntimeError("\n".join(r["errors"]) + r["driverLog"])
        tail = text.strip().splitlines()[-1].lstrip("- ").strip()
        per_run = []
        for s in r["streams"]:
            st = s["stats"]
            per_run.append({
                "charsReceivedByWebview": s["rawLength"],
                "noTextLost": s["rawLength"] == len(text) and tail in s["text"],
                "enterToLastDeltaRenderedMs": s["totalMs"],
                "enterToFirstRowMs": s["firstRowMs"],
                "postMessages": st["patches"],
                "framesApplied": st["frames"],
                "longestFrameApplyMs": round(st["maxFrameMs"], 1),
                "longTasks": st["longTasks"],
                "longestTaskMs": round(st["maxLongTaskMs"], 1),
                "resyncs": st["resyncs"],
            })
        lost = [i for i, p in enumerate(per_run) if not p["noTextLost"]]
        if lost:
            raise RuntimeError(f"text lost in run(s) {lost} (0 = warm-up): {per_run}")
        warm_up, per_run = per_run[0], per_run[1:]
        return {
            "sidebarWidthPx": r.get("sidebarWidth"),  # VS Code's default (issue 25: the width users have)
            "deltas": deltas,
            "charsSent": len(text),
            "runs": runs,
            "noTextLost": True,
            **{k: spread([p[k] for p in per_run]) for k in ("longestFrameApplyMs", "longTasks", "longestTaskMs",
                                                            "enterToLastDeltaRenderedMs", "postMessages", "framesApplied")},
            "perRun": per_run,
            "warmUpRun": warm_up,
        }
    finally:
        vs.stop()
        fake.stop()


def write_session(home: Path, workspace: Path, messages: int) -> str:
    """A session of `messages` messages (prompt, answer with code and a tool call, its result, a
    final answer), saved the way the server saves one: SessionStore.save, which indexes it."""
    out = []
    i = 0
    while len(out) < messages:
        i += 1
        out += [
            UserMessage(content=[TextPart(text=f"step {i}: why does test_page_{i} fail?")]),
            AssistantMessage(content=[TextPart(text=f"Let me look at `page_{i}`.\n\n```python\ndef page_{i}(items):\n    return items[{i}:]\n```"),
                                      ToolCallPart(tool_call_id=f"call_{i}", tool_name="read_file", input={"path": f"src/page_{i}.py"})]),
            ToolMessage(content=[ToolResultPart(tool_call_id=f"call_{i}", tool_name="read_file", output=f"    1\tdef page_{i}(items):\n    2\t    return items[{i}:]")]),
            AssistantMessage(content=[TextPart(text=f"The slice in **page_{i}** starts one too late; fix: `items[{i} - 1:]`.")]),
        ]
    out = out[:messages]
    session_id = str(uuid_utils.uuid7())
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime())
    record = SessionRecord(id=session_id, created_at=stamp, updated_at=stamp, cwd=os.path.realpath(workspace), model="gpt-5",
                           title=make_title("a long session"), messages=out)
    store = SessionStore(home)
    store.save(record)
    assert store.latest(os.path.realpath(workspace)) == session_id, "the server would not find the session"
    assert len(store.load(session_id).messages) == messages
    return session_id


def _render_ms(figure: str) -> tuple[float, int, float]:
    """"resume:<sent>:<webview ms>:<rows>:<ms since the resume was sent>" → (ms, rows, total)."""
    _, _, ms, rows, total = figure.split(":")
    return float(ms), int(rows), float(total)


def resume(messages: int, runs: int, base: Path) -> dict[str, Any]:
    fake = FakeProvider().start()
    vs = VsCode(base=base, env=server_env(base / "home", fake.base_url))
    try:
        vs.prepare()
        write_session(vs.home, vs.workspace, messages)
        vs.start()
        r = vs.drive("resume", base / "shots", timeout=600 + 120 * runs, runs=runs, timeoutMs=120000)
        if not r.get("ok"):
            raise RuntimeError("\n".join(r["errors"]) + r["driverLog"])
        per_run = []
        for f in [r["resume"]["open"], *r["resume"]["reloads"]]:
            _, first_rows, first_total = _render_ms(f["firstPaint"])
            all_ms, all_rows, all_total = _render_ms(f["allRendered"])
            rows = f["rows"] - len(f["notices"])  # a fork notice, if the last window still held it
            if rows != messages or all_rows != f["rows"]:
                raise RuntimeError(f"the panel shows {rows} message rows ({all_rows} rendered), not {messages}: {f}")
            per_run.append({
                "reloadToAllRowsRenderedMs": f.get("reloadToAllRenderedMs"),
                "resumeToNewestRowsPaintedMs": first_total,
                "newestRowsPainted": first_rows,
                "resumeToAllRowsRenderedMs": all_total,
                "webviewRenderAllMs": all_ms,
                "rows": rows,
                "notices": f["notices"],
                "domNodes": f["nodes"],
            })
        reloads = per_run[1:]
        return {
            "sidebarWidthPx": r.get("sidebarWidth"),
            "messages": messages,
            "rowsRendered": messages,
            "reloads": runs,
            **{k: spread([p[k] for p in reloads]) for k in ("reloadToAllRowsRenderedMs", "resumeToNewestRowsPaintedMs",
                                                           "resumeToAllRowsRenderedMs", "webviewRenderAllMs")},
            "onOpen": per_run[0],
            "perReload": reloads,
        }
    finally:
        vs.stop()
        fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--quick", action="store_true", help="2,000 deltas, 300 messages, 2 runs")
    parser.add_argument("--trace", help="write a Chromium performance trace of the first stream here")
    parser.add_argument("--only", choices=("stream", "resume"))
    parser.add_argument("--sidebar-width", type=int, help="drag the sidebar to this width first (a comparison; not the reported result)")
    args = parser.parse_args()
    if args.quick:
        args.deltas, args.messages, args.runs = min(args.deltas, 2_000), min(args.messages, 300), min(args.runs, 2)
    why = missing()
    if why:
        sys.exit(f"vscode_panel: {why}")
    result: dict[str, Any] = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "machine": f"{platform.machine()}, {platform.system()}, {os.cpu_count()} cores",
        "loadAverageAtStart": round(os.getloadavg()[0], 2),
    }
    with tempfile.TemporaryDirectory(prefix="shiro-bench-panel-") as tmp:
        if args.only != "resume":
            result["stream"] = stream(args.deltas, args.runs, Path(tmp) / "stream", args.trace, args.sidebar_width)
        if args.only != "stream":
            result["resume"] = resume(args.messages, args.runs, Path(tmp) / "resume")
    result["loadAverageAtEnd"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result, indent=2))
    if args.only or args.quick or args.sidebar_width:
        return  # a partial run is not the reported result
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")


if __name__ == "__main__":
    main()
