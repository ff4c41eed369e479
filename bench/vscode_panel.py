"""The chat panel with long sessions, in real VS Code (code-server + headless Chromium), with
timestamps from the end-to-end harness (tests/clients/vscode_harness.py):

1. streaming: one answer of N deltas (default 10,000) from the fake provider; figures: time from
   Enter to the last delta rendered, postMessages the webview received, the longest frame spent
   applying patches, long tasks (> 50 ms) while it streamed, and whether any text was lost;
2. resume: a session of M messages (default 1,000) written to SHIRO_NEKO_HOME, then the window
   opened: the panel resumes it; figures: the webview's render time of the hydrate (message
   received to painted) and the whole resume (the command sent to painted), the rows in the DOM.

Run: python bench/vscode_panel.py [--deltas 10000] [--messages 1000] [--quick]
Writes bench/results/vscode_panel.json. Needs what the e2e test needs (code-server, Chromium,
the extension's npm packages); see tests/clients/vscode_harness.py.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import uuid_utils

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from shiro_neko.agent.transcript import AssistantMessage, TextPart, ToolCallPart, ToolMessage, ToolResultPart, UserMessage  # noqa: E402
from shiro_neko.state.session_record import SessionRecord, encode_record, make_title  # noqa: E402
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


def stream(deltas: int, base: Path) -> dict[str, Any]:
    fake = FakeProvider().start()
    vs = VsCode(base=base, env=server_env(base / "home", fake.base_url))
    try:
        vs.prepare()
        text = long_answer(deltas)
        fake.script(Reply(text=text, chunks=deltas))
        vs.start()
        r = vs.drive("stream", base / "shots", timeout=1800, prompt="explain the pagination bug", timeoutMs=120000)
        if not r.get("ok"):
            raise RuntimeError("\n".join(r["errors"]) + r["driverLog"])
        s = r["stream"]
        rendered = s["text"]
        tail = text.strip().splitlines()[-1].lstrip("- ").strip()
        return {
            "deltas": deltas,
            "chars": len(text),
            "charsReceivedByWebview": s["rawLength"],
            "noTextLost": s["rawLength"] == len(text) and tail in rendered,
            "enterToLastDeltaRenderedMs": s["totalMs"],
            "enterToFirstRowMs": s["firstRowMs"],
            "postMessages": s["stats"]["patches"],
            "framesApplied": s["stats"]["frames"],
            "longestFrameApplyMs": round(s["stats"]["maxFrameMs"], 1),
            "longTasks": s["stats"]["longTasks"],
            "longestTaskMs": round(s["stats"]["maxLongTaskMs"], 1),
            "resyncs": s["stats"]["resyncs"],
        }
    finally:
        vs.stop()
        fake.stop()


def write_session(home: Path, workspace: Path, messages: int) -> str:
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
    record = SessionRecord(id=session_id, created_at=stamp, updated_at=stamp, cwd=str(workspace.resolve()), model="gpt-5",
                           title=make_title("a long session"), messages=out)
    sessions = home / "sessions"
    sessions.mkdir(parents=True, exist_ok=True)
    (sessions / f"{session_id}.json").write_bytes(encode_record(record))
    return session_id


def resume(messages: int, base: Path) -> dict[str, Any]:
    fake = FakeProvider().start()
    vs = VsCode(base=base, env=server_env(base / "home", fake.base_url))
    try:
        vs.prepare()
        write_session(vs.home, vs.workspace, messages)
        vs.start()
        r = vs.drive("resume", base / "shots", timeout=900, timeoutMs=120000)
        if not r.get("ok"):
            raise RuntimeError("\n".join(r["errors"]) + r["driverLog"])
        _, _, render_ms, rows, total_ms = r["resume"]["lastRender"].split(":")
        return {
            "messages": messages,
            "hydrateRenderMs": float(render_ms),
            "resumeCommandToPaintedMs": float(total_ms),
            "rowsHydrated": int(rows),
            "rowsInDom": r["resume"]["rows"],
            "olderPagedOnScroll": r["resume"]["hasOlder"],
            "domNodes": r["resume"]["nodes"],
        }
    finally:
        vs.stop()
        fake.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deltas", type=int, default=10_000)
    parser.add_argument("--messages", type=int, default=1_000)
    parser.add_argument("--quick", action="store_true", help="2,000 deltas, 300 messages")
    args = parser.parse_args()
    if args.quick:
        args.deltas, args.messages = min(args.deltas, 2_000), min(args.messages, 300)
    why = missing()
    if why:
        sys.exit(f"vscode_panel: {why}")
    with tempfile.TemporaryDirectory(prefix="shiro-bench-panel-") as tmp:
        result = {
            "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "machine": f"{platform.machine()}, {platform.system()}",
            "stream": stream(args.deltas, Path(tmp) / "stream"),
            "resume": resume(args.messages, Path(tmp) / "resume"),
        }
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
