"""A freshly opened editor: spawn `shiro-lsp` -> `initialize` answered -> the first chat request.

An editor always starts its language server cold (VS Code activates the extension on
`onStartupFinished`, which starts the server at once: clients/vscode/src/extension.ts). The raw
client (bench/common/lsp_driver.py) sends `initialize` as soon as the process is spawned, as
editors do, then `initialized` and a `shiro.chat` at once (a prompt typed before the server was
ready). The fake provider (bench/common/fake_child.py, a child process) answers with a short text.
Per run, from just before the spawn:

- to_initialize_ms: the `initialize` answer has been read;
- to_first_request_ms: the fake read the first request's first byte;
- to_chat_answer_ms: the `shiro.chat` answer (the turn is over);
- server marks (SHIRO_TRACE): server_main_ms (the interpreter is up), front_initialize_ms (the
  stdlib front answered `initialize`, server/startup/lsp_front.py), server_imported_ms (the LSP layer
  imported, in its thread), server_initialize_ms (pygls handled the replayed `initialize`), early_request_ms (the first request handed to httpx2 before the SDK,
  agent/provider/early_request.py), openai_import_ms / openai_client_ms (the SDK import's start
  and end, in its thread).

Each run's fresh state home is given the generated-code cache (server/startup/codegen_cache.py) its
warm-up run wrote, as a user's home has it after the first start (common/issue28.py,
CodegenSeed); --ab-codegen also runs each time without it (the first start after an install).
The floors are measured with the cache off.

The floors of the same run, each in a fresh interpreter between the runs: `python -c pass`,
`import openai`, `import pygls.server, lsprotocol.types`, and `import shiro_neko.lsp` (our LSP
layer with the libraries it needs). The package is byte-compiled first (common/bytecode.py).
One warm-up run (page cache), then --runs runs: median, min, max.

Targets (issue 28): initialize <= 300 ms, first request <= 550 ms after spawn; each also read at
the issue's machine speed (common/issue28.py: scaled by this run's library floors).

Run: python bench/editor_start.py [--runs 5] [--quick]   Writes bench/results/editor_start.json.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common.bytecode import compile_package  # noqa: E402
from common.fake_child import FakeChild  # noqa: E402
from common.issue28 import FLOOR_ENV, CodegenSeed, verdicts  # noqa: E402
from common.lsp_driver import Server, server_env  # noqa: E402
from common.stats import summary, write_result  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results" / "editor_start.json"
TARGETS = {"to_initialize_ms": 300, "to_first_request_ms": 550}
FLOORS = {
    "python_-c_pass": "pass",
    "import_openai": "import openai",
    "import_pygls_lsprotocol": "import pygls.server, lsprotocol.types",
    "import_shiro_lsp_layer": "import shiro_neko.lsp",
}
MARKS = {"server_main_ms": "server-main", "front_initialize_ms": "front-initialize-answered",
         "server_imported_ms": "server-imported",
         "server_initialize_ms": "server-initialize", "early_request_ms": "early-request-sent",
         "openai_import_ms": "openai-import", "openai_client_ms": "openai-client"}


def marks_of(path: Path) -> dict[str, int]:
    out: dict[str, int] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            ns, _, name = line.split(" ", 2)
            out.setdefault(name, int(ns))
    return out


SEED = CodegenSeed()


def run_once(python: str, fake: FakeChild, **extra_env: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="shiro-bench-editor-") as tmp:
        ws, trace, home = Path(tmp, "ws"), Path(tmp, "trace"), Path(tmp, "home")
        ws.mkdir()
        (ws / "hello.py").write_text("print('hello')\n")
        if extra_env.get("SHIRO_CODEGEN_CACHE") != "0":
            SEED.plant(home)  # a user's home after its first start (common/issue28.py)
        env = server_env(home, fake.base_url, SHIRO_TRACE=str(trace), **extra_env)
        fake.script({"text": "Hello from the fake.", "chunks": 3})
        t0 = time.monotonic_ns()
        server = Server(ws, env, {"memory": {"enabled": False}}, python=python)  # spawn + initialize
        t_init = time.monotonic_ns()
        try:
            result = server.command("shiro.chat", {"prompt": "say hello"})
            t_answer = time.monotonic_ns()
        finally:
            server.close()
        if result.get("status") != "completed":
            raise SystemExit(f"the chat did not complete: {result}")
        reqs = fake.requests()
        marks = marks_of(trace)
        if extra_env.get("SHIRO_CODEGEN_CACHE") != "0":
            SEED.keep(home)
    sample: dict[str, Any] = {
        "to_initialize_ms": (t_init - t0) / 1e6,
        "to_first_request_ms": (reqs[0]["first_byte_ns"] - t0) / 1e6 if reqs else None,
        "to_chat_answer_ms": (t_answer - t0) / 1e6,
    }
    for key, name in MARKS.items():
        sample[key] = (marks[name] - t0) / 1e6 if name in marks else None
    return sample


def timed(argv: list[str], env: dict[str, str] | None = None) -> float:
    t = time.perf_counter()
    subprocess.run(argv, check=True, env=env)
    return (time.perf_counter() - t) * 1e3


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--quick", action="store_true", help="5 runs")
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--ab", action="store_true",
                        help="also run each time with the front off (SHIRO_LSP_FRONT=0): before/after in one run")
    parser.add_argument("--ab-codegen", action="store_true",
                        help="also run each time without the generated-code cache (SHIRO_CODEGEN_CACHE=0:"
                             " the first start after an install, server/startup/codegen_cache.py)")
    args = parser.parse_args()
    runs = 5 if args.quick else max(5, args.runs)
    compile_package(args.python)
    floor_ms: dict[str, list[float]] = {name: [] for name in FLOORS}
    samples, without_front, without_cache = [], [], []
    with FakeChild() as fake:
        run_once(args.python, fake)  # warm-up: page cache
        for _ in range(runs):
            samples.append(run_once(args.python, fake))
            if args.ab:
                without_front.append(run_once(args.python, fake, SHIRO_LSP_FRONT="0"))
            if args.ab_codegen:
                without_cache.append(run_once(args.python, fake, SHIRO_CODEGEN_CACHE="0"))
            for name, code in FLOORS.items():  # between the runs: the same load
                floor_ms[name].append(timed([args.python, "-c", code], FLOOR_ENV))
    keys = list(samples[0])
    cold = {k: summary([s[k] for s in samples if s[k] is not None], unit="") for k in keys}
    floors = {f"{name}_ms": summary(values, unit="") for name, values in floor_ms.items()}
    met = verdicts(TARGETS, {k: cold[k].get("median_", float("inf")) for k in TARGETS}, floors)
    # Against the libraries the server cannot start without, so a loaded machine reads the same.
    ratios = {
        "initialize_to_pygls_floor": round(cold["to_initialize_ms"]["median_"]
                                           / floors["import_pygls_lsprotocol_ms"]["median_"], 2),
        "first_request_to_pygls_floor": round(cold["to_first_request_ms"]["median_"]
                                              / floors["import_pygls_lsprotocol_ms"]["median_"], 2),
    }
    result: dict[str, Any] = {"cold_editor_start": cold, "floors": floors, "ratios": ratios,
                              "targets": TARGETS, "targets_met": met}
    if without_front:
        off = {k: summary([s[k] for s in without_front if s[k] is not None], unit="") for k in keys}
        result["cold_editor_start_without_front"] = off
        result["ratios_without_front"] = {
            "initialize_to_pygls_floor": round(off["to_initialize_ms"]["median_"]
                                               / floors["import_pygls_lsprotocol_ms"]["median_"], 2),
            "first_request_to_pygls_floor": round(off["to_first_request_ms"]["median_"]
                                                  / floors["import_pygls_lsprotocol_ms"]["median_"], 2),
        }
        for k in keys:
            print(f"without front: {k:<24} {off[k].get('median_', '-')!s:>9}")
    if without_cache:
        first = {k: summary([s[k] for s in without_cache if s[k] is not None], unit="") for k in keys}
        result["cold_editor_start_without_codegen_cache"] = first
        for k in keys:
            print(f"without codegen cache: {k:<24} {first[k].get('median_', '-')!s:>9}")
    write_result(args.out, result)
    for k in keys:
        print(f"{k:<24} {cold[k].get('median_', '-')!s:>9} (min {cold[k].get('min_')}, max {cold[k].get('max_')})")
    for k, v in floors.items():
        print(f"{k:<32} {v['median_']:>9}")
    print(ratios)
    for k in TARGETS:
        v = met[k]
        print(f"target {k}: {v['measured_ms']} ms vs {v['target_ms']} ms as written ({'met' if v['met'] else 'missed'});"
              f" at the issue's speed {v['at_issue_speed_ms']} ms ({'met' if v['met_at_issue_speed'] else 'missed'};"
              f" this run is {met['speed_scale']}x the issue's floors)")


if __name__ == "__main__":
    main()
