"""The session index, before and after a change, in one run: listing 10,000 sessions in a real
server, the save time per turn, and the server's memory slope when every turn starts a new session.

Each side runs in its own child process whose `shiro_neko` is that side's `server/` (a shim
directory first on PYTHONPATH; the servers it starts inherit it): "before" is `git archive <ref>`
of this repository (default: main) unpacked under a temp directory, "after" is this checkout.

- `list_in_server_ms`: `shiro.sessions` over LSP (bench/common/lsp_driver.py) with `--count`
  sessions of ~2 KB on disk in 4 workspaces, after the first listing (which builds the index and
  is reported apart); median of 20. Target: 50 ms at 10,000 sessions.
- `save_per_turn_ms`: what a turn's save costs the server's writer thread at that count:
  `SessionStore.save` of a new one-turn session (the new-session-per-turn case) and of the same
  session again (a turn in a running session); median of 100.
- `new_session_per_turn`: bench/memory.py's short turns with `shiro.newSession` before each, RSS
  slope in KB per 100 turns (least squares over samples every 50 turns, after a warm-up of 50).

Run: python bench/session_index.py [--before main] [--count 10000] [--turns 300] [--quick]
Writes bench/results/session_index.json.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
RESULTS = HERE / "results" / "session_index.json"


def _median(samples: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(samples), 2), "max_ms": round(max(samples), 2), "runs": len(samples)}


def child(count: int, turns: int) -> dict[str, Any]:
    """One side's figures; `shiro_neko` here is that side's code."""
    sys.path.insert(0, str(HERE))
    sys.path.insert(0, str(HERE / "common"))
    import shiro_neko
    from common.fake_child import FakeChild
    from common.lsp_driver import Server, server_env
    from memory import short_turns
    from sessions import create
    from shiro_neko.model.transcript import AssistantMessage, TextPart, user_text
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the test-only builder, tests/support
    from tests.support.records import new_record
    from shiro_neko.state.session_store import SessionStore

    result: dict[str, Any] = {"code": str(Path(shiro_neko.__file__).resolve().parent)}
    root = Path(tempfile.mkdtemp(prefix="shiro-bench-index-"))
    try:
        home, workspace = root / "home", root / "workspace"
        workspace.mkdir()
        others = [str(root / f"other-{i}") for i in range(3)]
        create(home, count, 2_000, [str(workspace.resolve()), *others])
        with FakeChild() as fake:
            server = Server(workspace, server_env(home, fake.base_url))
            server.keep_notes = False
            try:
                start = time.perf_counter()
                first = server.command("shiro.sessions", {})
                result["first_list_in_server_builds_index_ms"] = round((time.perf_counter() - start) * 1000, 1)
                assert len(first["sessions"]) == 15, first
                samples = []
                for _ in range(20):
                    start = time.perf_counter()
                    server.command("shiro.sessions", {})
                    samples.append((time.perf_counter() - start) * 1000)
                result["list_in_server_ms"] = _median(samples)
            finally:
                server.close()

            store = SessionStore(home)
            store.list(str(workspace))
            new, again = [], []
            for i in range(100):
                record = new_record(str(workspace), "openai", "gpt-5")
                record.messages += [user_text(f"hi {i}"), AssistantMessage(content=[TextPart(text="ok")])]
                lease = store.acquire(record.id)  # as the server holds its session
                start = time.perf_counter()
                store.save(record)
                new.append((time.perf_counter() - start) * 1000)
                record.messages += [user_text("and again"), AssistantMessage(content=[TextPart(text="ok")])]
                start = time.perf_counter()
                store.save(record)
                again.append((time.perf_counter() - start) * 1000)
                lease.release()
            store.close()
            result["save_per_turn_ms"] = {"new_session": _median(new), "same_session": _median(again)}

            many = short_turns(fake, turns, new_session=True)
            result["new_session_per_turn"] = {k: many[k] for k in (
                "turns", "rss_first_mb", "rss_last_mb", "slope_kb_per_100_turns", "after_trim_kb_per_100_turns")}
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return result


def _shim(tmp: Path, name: str, server_dir: Path) -> Path:
    shim = tmp / f"shim-{name}"
    shim.mkdir()
    (shim / "shiro_neko").symlink_to(server_dir, target_is_directory=True)
    return shim


def _side(shim: Path, count: int, turns: int) -> dict[str, Any]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shim), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    out = subprocess.run([sys.executable, __file__, "--child", "--count", str(count), "--turns", str(turns)],
                         env=env, check=True, stdout=subprocess.PIPE, text=True)
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default="main", help="git ref of the code to compare against (default main)")
    parser.add_argument("--count", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=300)
    parser.add_argument("--quick", action="store_true", help="500 sessions, 100 turns")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.quick:
        args.count, args.turns = 500, 100
    if args.child:
        print(json.dumps(child(args.count, args.turns)))
        return
    known = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--verify", "--quiet", f"{args.before}^{{commit}}"],
                           stdout=subprocess.PIPE, text=True)
    if known.returncode != 0:  # a clone without that ref: the after side alone
        print(f"no git ref {args.before!r} here: measuring this checkout only")
    tmp = Path(tempfile.mkdtemp(prefix="shiro-bench-index-code-"))
    try:
        commit = known.stdout.strip() or None
        before: dict[str, Any] = {}
        if commit is not None:
            before_dir = tmp / "before"
            before_dir.mkdir()
            archive = subprocess.run(["git", "-C", str(REPO), "archive", commit, "server"], check=True, stdout=subprocess.PIPE)
            subprocess.run(["tar", "-x", "-C", str(before_dir)], input=archive.stdout, check=True)
            before = _side(_shim(tmp, "before", before_dir / "server"), args.count, args.turns)
            print("before:", json.dumps(before), flush=True)
        head = subprocess.run(["git", "-C", str(REPO), "rev-parse", "HEAD"], stdout=subprocess.PIPE, text=True).stdout.strip()
        after = _side(_shim(tmp, "after", REPO / "server"), args.count, args.turns)
        print("after:", json.dumps(after), flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    sys.path.insert(0, str(HERE / "common"))
    from stats import environment, write_result

    result = {"count": args.count, "before": {"ref": args.before, "commit": commit, **before},
              "after": {"commit": head, "dirty": bool(subprocess.run(["git", "-C", str(REPO), "status", "--porcelain", "server"],
                                                                      stdout=subprocess.PIPE, text=True).stdout.strip()), **after},
              "targets": {"list_in_server_ms": 50}, "environment": environment()}
    write_result(args.out, result)


if __name__ == "__main__":
    main()
