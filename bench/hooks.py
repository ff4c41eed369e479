"""A PreToolUse hook's overhead per tool call (issue 40, agent/hooks.py): a shell script that
allows, the way a call runs it (`/bin/sh -c`, the event's JSON on stdin, its own process group,
stdout and stderr read capped, the answer read), median over the runs.

Two figures: `allow_script` is a script file that reads its input and prints Claude Code's allow
answer (`{"hookSpecificOutput": {"permissionDecision": "allow"}}`), `no_hooks` the same call's
hook step with no `hooks` set (what every call pays without hooks: finding none to run).

Run: python bench/hooks.py [--runs 200] [--out PATH]   Writes bench/results/hooks.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "hooks.json"
sys.path.insert(0, str(ROOT))

from shiro_neko.agent import hooks  # noqa: E402
from shiro_neko.agent.tools.sandbox import command_env  # noqa: E402

SCRIPT = """#!/bin/sh
cat > /dev/null
echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow"}}'
"""
PAYLOAD = {"session_id": "bench", "transcript_path": "", "cwd": str(ROOT), "permission_mode": "default",
           "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": "npm test"}, "tool_use_id": "call_1"}


async def one_call(setting: dict, env: dict[str, str]) -> float:
    start = time.perf_counter()
    problems: list[str] = []
    commands = hooks.commands_for(setting, "PreToolUse", "run_command", 60.0, problems)
    runs = await asyncio.gather(*(hooks.run_hook(c, PAYLOAD, ROOT, env) for c in commands))
    out = hooks.interpret("PreToolUse", list(runs))
    elapsed = (time.perf_counter() - start) * 1000
    assert not problems and (out.decision == "allow" or not commands), (problems, out)
    return elapsed


async def measure(runs: int, setting: dict) -> list[float]:
    env = command_env((), sandboxed=False)
    await one_call(setting, env)  # the first spawn outside the figures
    return [await one_call(setting, env) for _ in range(runs)]


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(times), 3), "p90_ms": round(ordered[int(len(ordered) * 0.9)], 3),
            "min_ms": round(ordered[0], 3), "max_ms": round(ordered[-1], 3)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "allow.sh"
        script.write_text(SCRIPT)
        script.chmod(0o755)
        setting = {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": str(script)}]}]}
        allow = asyncio.run(measure(args.runs, setting))
    none = asyncio.run(measure(args.runs, {}))
    result = {
        "benchmark": "a PreToolUse hook that allows (a shell script), per tool call",
        "runs": args.runs,
        "allow_script": summary(allow),
        "no_hooks": summary(none),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
