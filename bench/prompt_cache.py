"""How much of each request repeats the previous request's prefix (issue 37; target >= 95 %).

A scripted 30-step session through the real service (in-process, tests/support/service.py) against
the HTTP fake provider: reads, edits of several files (git status changes), todo_write updates, a
nested AGENTS.md found halfway, commands, a short-term memory update, over three turns. For every
provider request of the session (its prompt: instructions, tools, conversation, as
tests/fake_provider.py's `prompt_text` orders them, the order a provider's prefix cache reads it):

- `repeats_previous` (the issue's figure, per request): the share of the previous request's input
  that this request repeats byte for byte as its prefix. 100 % but the JSON's closing brackets
  when nothing earlier was rewritten, however much the request appends (a big read appends a lot:
  it is new input, not a broken prefix). A rewrite of the instructions, the tools or any earlier
  item shows as a low figure here.
- `cached_share`: the share of this request's own input that is that repeated prefix (what a
  prefix cache can serve); it is lower exactly where the request appends much (a 120-line read).

Both wire APIs. Writes bench/results/prompt_cache.json.

Run: python bench/prompt_cache.py
"""

from __future__ import annotations

import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the fake provider and the harness, tests/

from tests.fake_provider import Call, FakeProvider, Reply, common_prefix, prompt_text  # noqa: E402
from tests.support.service import service_harness  # noqa: E402

STEPS = 30
OUT = Path(__file__).resolve().parent / "results" / "prompt_cache.json"


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=b", "-c", "user.email=b@example.invalid", *args], cwd=root, check=True, capture_output=True)


def _workspace(root: Path) -> None:
    (root / "src" / "api").mkdir(parents=True)
    for i in range(8):
        (root / "src" / f"mod{i}.py").write_text("".join(f"def f{j}():\n    return {j}\n\n" for j in range(40)))
    (root / "src" / "api" / "AGENTS.md").write_text("API handlers: validate every input; run `make api-test`.\n")
    (root / "src" / "api" / "handler.py").write_text("def handle(x):\n    return x\n")
    (root / "AGENTS.md").write_text("Run `pytest -q` before you finish. Four-space indentation.\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "start")


def _script() -> list[list[Reply]]:
    """Three turns, 30 provider steps in all."""
    def todos(done: int) -> Call:
        items = [{"content": f"step {k}", "status": "completed" if k < done else ("in_progress" if k == done else "pending")} for k in range(4)]
        return Call("todo_write", {"todos": items})

    turn1 = [
        Reply(calls=[Call("read_file", {"path": "src/mod0.py"})]),
        Reply(calls=[todos(0)]),
        Reply(calls=[Call("grep", {"pattern": "def f3"})]),
        Reply(calls=[Call("edit_file", {"path": "src/mod0.py", "old_text": "def f1():\n    return 1", "new_text": "def f1():\n    return 11"})]),
        Reply(calls=[Call("run_command", {"command": "python -c 'import sys; print(sys.version)'"})]),
        Reply(calls=[todos(1)]),
        Reply(calls=[Call("read_file", {"path": "src/mod1.py"})]),
        Reply(calls=[Call("edit_file", {"path": "src/mod1.py", "old_text": "def f2():\n    return 2", "new_text": "def f2():\n    return 22"})]),
        Reply(calls=[Call("run_command", {"command": "git status --short"})]),
        Reply(text="Changed src/mod0.py:4 and src/mod1.py:7."),
    ]
    turn2 = [
        Reply(calls=[Call("read_file", {"path": "src/api/handler.py"})]),  # finds src/api/AGENTS.md
        Reply(calls=[todos(2)]),
        Reply(calls=[Call("edit_file", {"path": "src/api/handler.py", "old_text": "    return x", "new_text": "    if x is None:\n        raise ValueError('x')\n    return x"})]),
        Reply(calls=[Call("read_file", {"path": "src/mod2.py"})]),
        Reply(calls=[Call("read_file", {"path": "src/mod3.py"})]),
        Reply(calls=[Call("edit_file", {"path": "src/mod3.py", "old_text": "def f5():\n    return 5", "new_text": "def f5():\n    return 55"})]),
        Reply(calls=[Call("run_command", {"command": "ls src"})]),
        # A fresh running summary: turn 3 gets it before its prompt (docs/short-term-memory.md).
        Reply(calls=[Call("update_short_term_memory", {"summary": "Goal: four steps; mod0, mod1, handler, mod3 done."})]),
        Reply(calls=[todos(3)]),
        Reply(text="Validated inputs in src/api/handler.py:2."),
    ]
    turn3 = [
        Reply(calls=[Call("read_file", {"path": "src/mod4.py"})]),
        Reply(calls=[Call("edit_file", {"path": "src/mod4.py", "old_text": "def f6():\n    return 6", "new_text": "def f6():\n    return 66"})]),
        Reply(calls=[Call("read_file", {"path": "src/mod5.py"})]),
        Reply(calls=[Call("edit_file", {"path": "src/mod5.py", "old_text": "def f7():\n    return 7", "new_text": "def f7():\n    return 77"})]),
        Reply(calls=[Call("run_command", {"command": "git diff --stat"})]),
        Reply(calls=[todos(4)]),
        Reply(calls=[Call("read_file", {"path": "src/mod6.py"})]),
        Reply(calls=[Call("grep", {"pattern": "return 77"})]),
        Reply(calls=[Call("run_command", {"command": "echo done"})]),
        Reply(text="All four steps done."),
    ]
    return [turn1, turn2, turn3]


async def _session(wire: str, home: Path, root: Path) -> dict[str, Any]:
    fake = FakeProvider().start()
    try:
        # A model of no apply_patch family: the script edits with edit_file (agent/model_family.py).
        async with service_harness(fake, home, root, wireApi=wire, approvals="auto", sandbox="off", model="bench-model") as h:
            for prompt, turn in zip(("make the two changes", "now the API handler", "finish the rest"), _script()):
                fake.script(*turn)
                result = await h.chat(prompt)
                assert result["status"] == "completed", result
            status = await h.command("shiro.status")
        requests = fake.main_requests
        assert len(requests) == STEPS and not fake.rejections, (len(requests), fake.rejections)
        prompts = [prompt_text(r.api, r.body) for r in requests]
        repeated = [common_prefix(a, b) for a, b in zip(prompts, prompts[1:])]
        kept = [n / len(a) for n, a in zip(repeated, prompts)]  # of the previous request
        shares = [n / len(b) for n, b in zip(repeated, prompts[1:])]  # of this request
        return {
            "requests": len(requests),
            "repeats_previous_min": round(min(kept), 4),
            "repeats_previous_median": round(statistics.median(kept), 4),
            "repeats_previous": [round(k, 4) for k in kept],
            "repeats_previous_below_95": sum(k < 0.95 for k in kept),
            "cached_share_min": round(min(shares), 4),
            "cached_share_median": round(statistics.median(shares), 4),
            "cached_share_mean": round(statistics.fmean(shares), 4),
            "cached_share": [round(s, 4) for s in shares],
            "cached_share_below_95": sum(s < 0.95 for s in shares),
            # What each request appended (characters): the large ones are the reads.
            "appended_chars": [len(b) - n for n, b in zip(repeated, prompts[1:])],
            "prompt_chars_first_last": [len(prompts[0]), len(prompts[-1])],
            # What shiro/status reports from the fake's usage (its cache model counts the tools too,
            # its input_tokens do not: a ratio of the two would overstate).
            "status_input_tokens": status["inputTokens"],
            "status_cached_tokens": status["cachedTokens"],
        }
    finally:
        fake.stop()


async def run() -> dict[str, Any]:
    out: dict[str, Any] = {"python": platform.python_version(), "steps": STEPS, "wires": {}}
    for wire in ("responses", "chat"):
        with tempfile.TemporaryDirectory() as tmp:
            home, root = Path(tmp) / "home", Path(tmp) / "workspace"
            root.mkdir()
            os.environ["SHIRO_NEKO_HOME"] = str(home)
            os.environ["SHIRO_NEKO_CONFIG"] = str(Path(tmp) / "user-settings.json")
            os.environ.setdefault("OPENAI_API_KEY", "sk-bench-not-a-real-key")
            _workspace(root)
            out["wires"][wire] = await _session(wire, home, root)
    return out


def main() -> None:
    for name in ("OPENAI_BASE_URL", "SHIRO_MODEL"):
        os.environ.pop(name, None)
    result = asyncio.run(run())
    OUT.parent.mkdir(exist_ok=True)
    OUT.write_text(json.dumps(result, indent=2) + "\n")
    for wire, figures in result["wires"].items():
        print(f"{wire}: each request repeats at least {figures['repeats_previous_min']:.2%} of the previous one "
              f"({figures['repeats_previous_below_95']} of {figures['requests'] - 1} below 95 %); the repeated prefix is "
              f"min {figures['cached_share_min']:.1%}, median {figures['cached_share_median']:.1%} of a request's own input "
              f"({figures['cached_share_below_95']} below 95 %, each appending a tool result of at least "
              f"{min([a for a, c in zip(figures['appended_chars'], figures['cached_share']) if c < 0.95], default=0):,} characters)")


if __name__ == "__main__":
    main()
