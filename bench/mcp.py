"""MCP servers: time from `initialize` to a ready stdio server, and the added time per MCP tool
call over our own `read_file`.

1. Start-up: a real `shiro-lsp` over stdio (bench/startup.py's raw client) with one stdio MCP
   server in `initializationOptions`. Timed from just before `initialize` is sent: when its answer
   arrives (with and without the server configured: MCP must not delay it), and when `shiro.mcp`
   (polled every 20 ms right after `initialized`) first says `ready`.
2. Per call, end to end: one `shiro.chat` turn whose first step asks for N calls (the fake
   provider from tests/, approvals `auto`), all `read_file`, or all of one MCP tool; the turn's
   time difference divided by N is the added time per call.
3. Per call, in process: `run_tool` on the same tools without LSP or provider (median of N).

Servers: the SDK fault server in tests/mcp (Python, tool `echo`), mcp-server-time (PyPI,
`get_current_time`) and @modelcontextprotocol/server-everything (npm in tests/mcp/npm, `echo`).

Run: python bench/mcp.py [--runs 5] [--calls 20] [--quick]   Writes bench/results/mcp.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from startup import RawClient, initialize_params, server_env  # bench/ is on sys.path

ROOT = Path(__file__).resolve().parent.parent
# This file is named like the SDK: with bench/ first on sys.path, `import mcp` would find it.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]
sys.path.insert(0, str(ROOT))

from tests.fake_provider import Call, FakeProvider, Reply  # noqa: E402

RESULTS = Path(__file__).parent / "results" / "mcp.json"
BIN = Path(sys.executable).parent
EVERYTHING = ROOT / "tests" / "mcp" / "npm" / "node_modules" / ".bin" / "mcp-server-everything"

SERVERS: dict[str, tuple[dict[str, Any], str, dict[str, Any]]] = {
    # name -> (entry, tool, arguments)
    "sdk-python": ({"command": sys.executable, "args": [str(ROOT / "tests" / "mcp" / "fault_server.py")]}, "echo", {"text": "hi"}),
    "mcp-server-time": ({"command": str(BIN / "mcp-server-time"), "args": ["--local-timezone", "UTC"]}, "get_current_time", {"timezone": "UTC"}),
    "server-everything": ({"command": str(EVERYTHING), "args": ["stdio"]}, "echo", {"message": "hi"}),
}


def stats(samples: list[float]) -> dict[str, Any]:
    return {"median_ms": round(statistics.median(samples) * 1000, 2), "min_ms": round(min(samples) * 1000, 2),
            "max_ms": round(max(samples) * 1000, 2), "runs": len(samples)}


class Server:
    def __init__(self, tmp: Path, settings: dict[str, Any], base_url: str | None = None) -> None:
        self.workspace = tmp / "workspace"
        self.workspace.mkdir(parents=True, exist_ok=True)
        (self.workspace / "hello.py").write_text("print('hello')\n")
        env = server_env(tmp / "home")
        if base_url:
            env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="sk-bench")
        self.proc = subprocess.Popen([sys.executable, "-m", "shiro_neko"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, env=env, cwd=self.workspace)
        self.client = RawClient(self.proc)
        self.settings = settings

    def initialize(self) -> float:
        t0 = time.perf_counter()
        params = initialize_params(self.workspace) | {"initializationOptions": self.settings}
        self.client.request("initialize", params)
        answered = time.perf_counter() - t0
        self.client.notify("initialized", {})
        return answered

    def command(self, name: str, args: dict[str, Any]) -> Any:
        return self.client.request("workspace/executeCommand", {"command": name, "arguments": [args]})["result"]

    def wait_ready(self, name: str, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            servers = {s["name"]: s for s in self.command("shiro.mcp", {})["servers"]}
            state = servers.get(name, {}).get("state")
            if state == "ready":
                return
            if state == "failed":
                raise RuntimeError(f"{name} failed: {servers[name].get('error')}")
            time.sleep(0.02)
        raise TimeoutError(name)

    def close(self) -> None:
        try:
            self.client.request("shutdown", None)
            self.client.notify("exit", None)
            self.proc.wait(timeout=30)
        except Exception:
            self.proc.kill()
            self.proc.wait()


def startup(name: str, runs: int) -> dict[str, Any]:
    entry = SERVERS[name][0]
    init_with, init_without, ready = [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            server = Server(Path(tmp) / "a", {"mcpServers": {name: entry}})
            t0 = time.perf_counter()
            init_with.append(server.initialize())
            server.wait_ready(name)
            ready.append(time.perf_counter() - t0)
            server.close()
            plain = Server(Path(tmp) / "b", {})
            init_without.append(plain.initialize())
            plain.close()
    return {"initialize_answered_with_server": stats(init_with), "initialize_answered_without": stats(init_without),
            "initialize_to_ready": stats(ready)}


def per_call_lsp(name: str, runs: int, calls: int) -> dict[str, Any]:
    entry, tool, args = SERVERS[name]
    fake = FakeProvider().start()
    try:
        with tempfile.TemporaryDirectory() as tmp:
            server = Server(Path(tmp), {"approvals": "auto", "mcpServers": {name: entry}}, fake.base_url)
            server.initialize()
            server.wait_ready(name)
            model_name = f"mcp__{name.replace('.', '_')}__{tool}"
            times: dict[str, list[float]] = {"read_file": [], "mcp": []}
            for run in range(runs + 1):  # the first round warms both paths up and is not counted
                for kind in ("read_file", "mcp"):
                    call = Call("read_file", {"path": "hello.py"}) if kind == "read_file" else Call(model_name, args)
                    fake.script(Reply(calls=[Call(call.name, call.arguments) for _ in range(calls)]), Reply(text="ok"))
                    t0 = time.perf_counter()
                    result = server.command("shiro.chat", {"prompt": f"{kind} {run}"})
                    elapsed = time.perf_counter() - t0
                    assert result["status"] == "completed", result
                    if run:
                        times[kind].append(elapsed)
            server.close()
    finally:
        fake.stop()
    added = [(m - r) / calls for m, r in zip(times["mcp"], times["read_file"])]
    return {"turn_read_file": stats(times["read_file"]), "turn_mcp": stats(times["mcp"]),
            "calls_per_turn": calls, "added_per_call": stats(added)}


async def per_call_in_process(name: str, calls: int) -> dict[str, Any]:
    from shiro_neko.agent.tools.disk_host import DiskToolHost
    from shiro_neko.agent.tools.files import READ_FILE
    from shiro_neko.agent.tools.registry import run_tool
    from shiro_neko.mcp.manager import McpManager

    entry, tool, args = SERVERS[name]

    async def never(message: str, actions: list[str]) -> None:
        return None

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        root.mkdir()
        (root / "hello.py").write_text("print('hello')\n")
        manager = McpManager(lambda: Path(tmp) / "home", never)
        manager.configure({name: entry})
        manager.activate(root)
        await manager.prepare_turn(root)
        while manager.views(root)[0].state == "starting":
            await asyncio.sleep(0.02)
        mcp_tool = next(t for t in manager.tools(root) if t.name.endswith(f"__{tool}"))
        host = DiskToolHost(root)
        samples: dict[str, list[float]] = {"read_file": [], "mcp": []}
        for i in range(calls + 3):
            for kind, t, a in (("read_file", READ_FILE, {"path": "hello.py"}), ("mcp", mcp_tool, args)):
                t0 = time.perf_counter()
                result = await run_tool(t, host, a)
                elapsed = time.perf_counter() - t0
                assert not result.is_error, result.output
                if i >= 3:
                    samples[kind].append(elapsed)
        await manager.stop()
    return {"read_file": stats(samples["read_file"]), "mcp": stats(samples["mcp"]),
            "added_per_call_ms": round((statistics.median(samples["mcp"]) - statistics.median(samples["read_file"])) * 1000, 2)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--quick", action="store_true")
    opts = parser.parse_args()
    runs, calls = (2, 5) if opts.quick else (opts.runs, opts.calls)
    names = [n for n in SERVERS if n != "server-everything" or EVERYTHING.exists()]
    out: dict[str, Any] = {
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "load_1min": os.getloadavg()[0]},
        "runs": runs, "calls": calls, "servers": {},
    }
    for name in names:
        print(f"{name}: start-up", file=sys.stderr, flush=True)
        row: dict[str, Any] = {"startup": startup(name, runs)}
        print(f"{name}: per call over LSP", file=sys.stderr, flush=True)
        row["per_call_lsp"] = per_call_lsp(name, runs, calls)
        print(f"{name}: per call in process", file=sys.stderr, flush=True)
        row["per_call_in_process"] = asyncio.run(per_call_in_process(name, calls))
        out["servers"][name] = row
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
