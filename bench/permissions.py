"""Permission check (issue 39, agent/permissions.py): one command against 200 rules, median ≤ 1 ms.

The 200 rules are what a heavy user might collect: 120 Bash prefix and exact rules, 40 path rules
(Edit/Write/Read), 20 WebFetch and MCP rules, 20 deny and ask rules. The command is a compound
one every part of which is checked (`npm test -- -k foo && git status | head -n 20`), allowed by
the last Bash rules so every rule is tried before the answer.

Three figures per run: `new_command` clears the command parse cache before each check (each call a
command never seen, the parse by bashlex included; the rule list compiled once, as a session's
settings are), and `cold` clears every cache (rules parsed again too, as after a settings change);
`rules_only` keeps the parse cached: the cost of trying the 200 rules alone. `with_sources` is
`new_command` with the rules where a server keeps them (features/permission_rules.py): 100 in the
user settings file and 100 in the workspace's record in the state home, joined per call (a `stat`
of each file; read again only when it changed) with none sent by the client.

Run: python bench/permissions.py [--runs 2000] [--out PATH]   Writes bench/results/permissions.json.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results" / "permissions.json"
sys.path.insert(0, str(ROOT))

from shiro_neko.agent import permissions  # noqa: E402
from shiro_neko.config import PermissionSettings  # noqa: E402

COMMAND = "npm test -- -k foo && git status | head -n 20"


def rules() -> PermissionSettings:
    allow = [f"Bash(tool{i} sub{i}:*)" for i in range(60)] + [f"Bash(tool{i} --flag {i})" for i in range(57)]
    allow += [f"Edit(src/pkg{i}/**)" for i in range(20)] + [f"Read(docs/part{i}/**)" for i in range(10)]
    allow += [f"Write(out/{i}/*.txt)" for i in range(10)] + [f"WebFetch(domain:site{i}.example)" for i in range(10)]
    allow += [f"mcp__server{i}__tool" for i in range(10)]
    allow += ["Bash(npm test:*)", "Bash(git status)", "Bash(head:*)"]
    deny = [f"Bash(danger{i}:*)" for i in range(10)] + [f"Read(~/.secret{i}/**)" for i in range(5)]
    ask = [f"Bash(deploy{i}:*)" for i in range(5)]
    settings = PermissionSettings(allow=allow, ask=ask, deny=deny)
    assert len(allow) + len(ask) + len(deny) == 200
    return settings


def check(settings: PermissionSettings, root: Path) -> None:
    decision = permissions.decide(settings, [], "run_command", {"command": COMMAND}, root)
    assert decision is not None and decision.kind == "allow", decision


def clear_all() -> None:
    for cached in (permissions.simple_commands, permissions._bash_pattern, permissions._compiled, permissions._bash_index,
                   permissions._path_pattern):
        cached.cache_clear()


def measure(runs: int, cold: bool | None) -> list[float]:
    settings, root = rules(), ROOT
    check(settings, root)  # imports and first compile outside the figures
    times = []
    for _ in range(runs):
        if cold:
            clear_all()
        elif cold is not None:
            permissions.simple_commands.cache_clear()
        start = time.perf_counter()
        check(settings, root)
        times.append((time.perf_counter() - start) * 1000)
    return times


def measure_sources(runs: int) -> list[float]:
    import tempfile  # noqa: PLC0415

    from shiro_neko.features.permission_rules import PermissionRulesFeature  # noqa: PLC0415
    from shiro_neko.state.permission_store import UserRuleFile, WorkspaceRuleStore  # noqa: PLC0415

    every, root = rules(), ROOT
    with tempfile.TemporaryDirectory() as tmp:
        home, user_file = Path(tmp) / "home", Path(tmp) / "settings.json"
        user = UserRuleFile(user_file)
        store = WorkspaceRuleStore(home)
        for kind in ("allow", "ask", "deny"):
            listed = getattr(every, kind)
            user.add(kind, listed[: len(listed) // 2])  # type: ignore[arg-type]
            store.add("key", root, kind, listed[len(listed) // 2 :])  # type: ignore[arg-type]
        feature = PermissionRulesFeature(lambda: home, lambda: user_file)
        sent = PermissionSettings()

        def one() -> None:
            decision = permissions.decide(feature.effective(sent, "key"), [], "run_command", {"command": COMMAND}, root)
            assert decision is not None and decision.kind == "allow", decision

        one()
        times = []
        for _ in range(runs):
            permissions.simple_commands.cache_clear()
            start = time.perf_counter()
            one()
            times.append((time.perf_counter() - start) * 1000)
    return times


def summary(times: list[float]) -> dict[str, float]:
    ordered = sorted(times)
    return {"median_ms": round(statistics.median(times), 4), "p90_ms": round(ordered[int(len(ordered) * 0.9)], 4),
            "min_ms": round(ordered[0], 4), "max_ms": round(ordered[-1], 4)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    result = {
        "benchmark": "one compound command checked against 200 permission rules",
        "command": COMMAND,
        "rules": 200,
        "runs": args.runs,
        "target_median_ms": 1.0,
        "new_command": summary(measure(args.runs, cold=False)),
        "cold": summary(measure(args.runs, cold=True)),
        "rules_only": summary(measure(args.runs, cold=None)),
        "with_sources": summary(measure_sources(args.runs)),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
