"""`shiro acp` latency: spawn -> `initialize` answered, and `session/prompt` -> first provider request.

A raw newline-delimited JSON-RPC client over pipes (no ACP SDK on the timing side) spawns the
`shiro acp` console script (which execs `python -m shiro_neko.acp`), and, for comparison,
`python -m shiro_neko.acp` directly. Per run: time from just before the spawn to reading the
`initialize` answer; then `session/new`; then two prompts, each timed from writing the
`session/prompt` frame to the moment the fake provider (tests/fake_provider.py, in this process)
receives the request. The first prompt pays the lazy `openai` import and client set-up; the second
is the steady state. Median, min and max of --runs runs, each with a fresh SHIRO_NEKO_HOME.

Run: python bench/acp.py [--runs 10] [--quick] [--out PATH]   Writes bench/results/acp.json (or PATH:
a trial run on a busy machine need not replace the recorded figures).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "acp.json"
sys.path.insert(0, str(ROOT))
from tests.fake_provider import FakeProvider, RecordedRequest, Reply  # noqa: E402


class RawAcp:
    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc, self.stdin, self.stdout = proc, proc.stdin, proc.stdout
        self.next_id = 0

    def send(self, method: str, params: dict[str, Any]) -> int:
        self.next_id += 1
        self.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode() + b"\n")
        self.stdin.flush()
        return self.next_id

    def answer(self, request_id: int) -> dict[str, Any]:
        while True:
            line = self.stdout.readline()
            if not line:
                raise EOFError(f"shiro acp closed stdout (exit code {self.proc.poll()})")
            message = json.loads(line)
            if message.get("id") == request_id and "method" not in message:
                if "error" in message:
                    raise RuntimeError(message["error"])
                return message["result"]


def one_run(command: list[str], fake: FakeProvider, stamps: list[float]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "workspace"
        root.mkdir()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
        env.update(SHIRO_NEKO_HOME=str(Path(tmp) / "home"), SHIRO_NEKO_CONFIG=str(Path(tmp) / "none.json"),
                   OPENAI_BASE_URL=fake.base_url, OPENAI_API_KEY="sk-bench")
        start = time.perf_counter()
        proc = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        client = RawAcp(proc)
        try:
            client.answer(client.send("initialize", {"protocolVersion": 1, "clientCapabilities": {}}))
            initialized = time.perf_counter() - start
            session = client.answer(client.send("session/new", {"cwd": str(root), "mcpServers": []}))["sessionId"]
            prompts = []
            for text in ("first prompt", "second prompt"):
                stamps.clear()
                sent = time.perf_counter()
                request_id = client.send("session/prompt", {"sessionId": session, "prompt": [{"type": "text", "text": text}]})
                client.answer(request_id)
                prompts.append(stamps[0] - sent)
        finally:
            proc.stdin.close()  # type: ignore[union-attr]
            proc.wait(timeout=30)
    return {"initialize_s": initialized, "first_prompt_to_request_s": prompts[0], "second_prompt_to_request_s": prompts[1]}


def summarise(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values) * 1000, 1), "min_ms": round(min(values) * 1000, 1),
            "max_ms": round(max(values) * 1000, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--quick", action="store_true", help="3 runs")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where to write the results")
    args = parser.parse_args()
    load_at_start = round(os.getloadavg()[0], 2)
    runs = 3 if args.quick else args.runs
    shiro = Path(sys.executable).parent / "shiro"
    variants = {"shiro acp": [str(shiro), "acp"], "python -m shiro_neko.acp": [sys.executable, "-m", "shiro_neko.acp"]}
    stamps: list[float] = []
    lock = threading.Lock()

    def reply(req: RecordedRequest) -> Reply:
        with lock:
            stamps.append(time.perf_counter())
        return Reply(text="ok", chunks=1)

    results: dict[str, Any] = {}
    with FakeProvider() as fake:
        for name, command in variants.items():
            measured = []
            for _ in range(runs):
                fake.script(reply, reply)
                measured.append(one_run(command, fake, stamps))
            results[name] = {key: summarise([m[key] for m in measured]) for key in measured[0]}
            print(name, json.dumps(results[name]))
    out = {
        "topic": "acp",
        "what": "spawn -> initialize answered; session/prompt frame written -> fake provider received the request",
        "runs": runs,
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_1m_at_start": load_at_start, "load_average_1m_at_end": round(os.getloadavg()[0], 2)},
        "results": results,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(out, indent=2) + "\n")
    tmp.replace(args.out)


if __name__ == "__main__":
    main()
