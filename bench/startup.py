"""Server start-up: spawn `python -m shiro_neko` (stdio) -> `initialize` answered.

A raw LSP client (Content-Length framing over pipes, no pygls client) times each run from just
before the process is spawned to the moment the `initialize` response has been read, then sends
`initialized`, `shutdown` and `exit`. Median, min and max of --runs runs.

A second variant starts the server as `python -X importtime -m shiro_neko` and reads what stderr
holds once `initialize` has been answered: was `openai` (or any `openai.*` module) imported by then?
(It should not be: the provider imports it lazily, on the first chat.) The same run also says
whether it got imported at all before the server exited, and lists the costliest top-level imports.
Times from that variant are inflated by -X importtime and are not the start-up figure.

Each server gets a fresh SHIRO_NEKO_HOME and workspace in a temporary directory, and no OPENAI_*
variables. Writes bench/results/startup.json.

Run: python bench/startup.py [--runs 10] [--quick]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.lsp_driver import read_frame  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "startup.json"
TIMEOUT = 60.0


class RawClient:
    """Just enough JSON-RPC over the server's stdin/stdout."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        assert proc.stdin is not None and proc.stdout is not None
        self.proc = proc
        self.stdin: IO[bytes] = proc.stdin
        self.stdout: IO[bytes] = proc.stdout
        self.next_id = 1

    def send(self, payload: dict[str, Any]) -> None:
        data = json.dumps({"jsonrpc": "2.0", **payload}).encode()
        self.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
        self.stdin.flush()

    def read_message(self) -> dict[str, Any]:
        body = read_frame(self.stdout)
        if body is None:
            raise EOFError(f"server closed stdout (exit code {self.proc.poll()})")
        return json.loads(body)

    def request(self, method: str, params: Any) -> dict[str, Any]:
        msg_id = self.next_id
        self.next_id += 1
        self.send({"id": msg_id, "method": method, "params": params})
        while True:
            msg = self.read_message()
            if msg.get("id") == msg_id and "method" not in msg:
                if "error" in msg:
                    raise RuntimeError(f"{method} failed: {msg['error']}")
                return msg
            if "method" in msg and "id" in msg:  # a server->client request: answer it with null
                self.send({"id": msg["id"], "result": None})

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})


def initialize_params(workspace: Path) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "clientInfo": {"name": "bench-startup", "version": "0"},
        "rootUri": workspace.as_uri(),
        "workspaceFolders": [{"uri": workspace.as_uri(), "name": workspace.name}],
        "capabilities": {},
    }


def server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    env["SHIRO_NEKO_HOME"] = str(home)
    env.pop("PYTHONPROFILEIMPORTTIME", None)
    return env


def run_once(python: str, importtime: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shiro-bench-") as tmp:
        home, workspace = Path(tmp, "home"), Path(tmp, "ws")
        home.mkdir()
        workspace.mkdir()
        argv = [python, *(["-X", "importtime"] if importtime else []), "-m", "shiro_neko"]
        stderr_lines: list[str] = []
        t0 = time.perf_counter()
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                cwd=str(workspace), env=server_env(home))
        assert proc.stderr is not None
        stderr = proc.stderr

        def drain() -> None:  # -X importtime writes hundreds of lines: never let the pipe fill
            for raw in stderr:
                stderr_lines.append(raw.decode(errors="replace"))

        reader = threading.Thread(target=drain, daemon=True)
        reader.start()
        watchdog = threading.Timer(TIMEOUT, proc.kill)
        watchdog.start()
        try:
            client = RawClient(proc)
            response = client.request("initialize", initialize_params(workspace))
            elapsed = (time.perf_counter() - t0) * 1e3
            at_initialize = list(stderr_lines)
            client.notify("initialized", {})
            client.request("shutdown", None)
            client.notify("exit", None)
            assert proc.stdin is not None
            proc.stdin.close()
            code = proc.wait(timeout=TIMEOUT)
        finally:
            watchdog.cancel()
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        reader.join(timeout=5)
        server_info = response.get("result", {}).get("serverInfo", {})
        return {
            "initialize_ms": elapsed,
            "exit_code": code,
            "server_info": server_info,
            "stderr_at_initialize": at_initialize,
            "stderr_all": list(stderr_lines),
        }


def _import_rows(lines: list[str]) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, name) per `-X importtime` line; nested imports' names are indented."""
    rows = []
    for line in lines:
        if not line.startswith("import time:") or "|" not in line:
            continue
        cells = line[len("import time:"):].rstrip("\n").split("|")
        if len(cells) != 3 or not cells[0].strip().isdigit():
            continue  # the header line
        rows.append((int(cells[0]), int(cells[1]), cells[2][1:]))  # the name keeps its nesting indent
    return rows


def openai_modules(lines: list[str]) -> list[str]:
    return [name.strip() for _, _, name in _import_rows(lines)
            if name.strip() == "openai" or name.strip().startswith("openai.")]


def top_imports(lines: list[str], n: int = 8) -> list[dict[str, Any]]:
    top = [(cum, name.strip()) for _, cum, name in _import_rows(lines) if not name.startswith(" ")]
    top.sort(reverse=True)
    return [{"module": name, "cumulative_ms": round(cum / 1000, 1)} for cum, name in top[:n]]


def stats(samples: list[float]) -> dict[str, Any]:
    return {"median_ms": round(statistics.median(samples), 1), "min_ms": round(min(samples), 1),
            "max_ms": round(max(samples), 1), "n": len(samples), "samples_ms": [round(s, 1) for s in samples]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=10, help="measured spawns (default 10)")
    parser.add_argument("--quick", action="store_true", help="5 spawns")
    parser.add_argument("--python", default=sys.executable, help="interpreter with shiro_neko installed")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    runs = 5 if args.quick else max(1, args.runs)

    def bare_python() -> float:
        t = time.perf_counter()
        subprocess.run([args.python, "-c", "pass"], check=True)
        return (time.perf_counter() - t) * 1e3

    run_once(args.python, importtime=False)  # warm the OS page cache and .pyc files; not counted
    samples: list[float] = []
    for _ in range(runs):
        result = run_once(args.python, importtime=False)
        if result["exit_code"] != 0:
            raise SystemExit(f"server exited with {result['exit_code']}: {''.join(result['stderr_all'])[-2000:]}")
        samples.append(result["initialize_ms"])
    baseline = [bare_python() for _ in range(runs)]

    traced = run_once(args.python, importtime=True)
    at_init = openai_modules(traced["stderr_at_initialize"])
    by_exit = openai_modules(traced["stderr_all"])
    rows_at_init = _import_rows(traced["stderr_at_initialize"])

    results: dict[str, Any] = {
        "spawn_to_initialize_response": stats(samples),
        "python_-c_pass": stats(baseline),
        "server_info": result["server_info"],
        "importtime_variant": {
            "openai_imported_by_initialize": bool(at_init),
            "openai_modules_by_initialize": len(at_init),
            "openai_imported_by_exit": bool(by_exit),
            "modules_imported_by_initialize": len(rows_at_init),
            "spawn_to_initialize_ms_with_importtime": round(traced["initialize_ms"], 1),
            "top_level_imports_by_initialize": top_imports(traced["stderr_at_initialize"]),
        },
        "environment": {
            "python": platform.python_version(),
            "interpreter": args.python,
            "cpus": os.cpu_count(),
            "loadavg": [round(x, 2) for x in os.getloadavg()],
            "machine": platform.machine(),
        },
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(results, indent=2) + "\n")

    s = results["spawn_to_initialize_response"]
    b = results["python_-c_pass"]
    it = results["importtime_variant"]
    print(f"spawn -> initialize response ({s['n']} runs): median {s['median_ms']} ms "
          f"(min {s['min_ms']}, max {s['max_ms']}); bare `python -c pass` median {b['median_ms']} ms")
    print(f"openai imported by initialize: {it['openai_imported_by_initialize']} "
          f"({it['modules_imported_by_initialize']} modules imported by then); "
          f"imported by exit: {it['openai_imported_by_exit']}")
    for row in it["top_level_imports_by_initialize"][:5]:
        print(f"  {row['module']:<40} {row['cumulative_ms']:>7.1f} ms (under -X importtime)")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
