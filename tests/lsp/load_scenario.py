"""One server, three workspace folders, six sessions streaming at once, `shiro.status` asked over
and over while they stream. Shared by tests/lsp/test_load.py (it must answer; memory must stay
bounded) and bench/load.py (how fast it answers: timings belong in bench/, not in tests)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import server_env, start_client

FOLDERS = 3
SESSIONS_PER_FOLDER = 2


@dataclass
class LoadRun:
    status_ms: list[float] = field(default_factory=list)  # latency of each shiro.status while streaming
    rss_kb: list[int] = field(default_factory=list)  # the server's resident memory after each round
    turns: int = 0
    deltas: int = 0


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _turn_script() -> list[Reply]:
    """One turn: a streamed step with a tool call, then a streamed answer (about 2 s in all)."""
    return [
        Reply(text="looking " * 200, calls=[Call("read_file", {"path": "a.py"})], chunks=30, delay=0.03),
        Reply(text="answer " * 300, chunks=40, delay=0.03),
    ]


async def run_load(base: Path, rounds: int) -> LoadRun:
    folders = [base / f"folder{n}" for n in range(FOLDERS)]
    for folder in folders:
        folder.mkdir(parents=True)
        (folder / "a.py").write_text("x = 1\n")
    home = base / "home"
    run = LoadRun()
    with FakeProvider() as fake:
        h = await start_client({"fake": fake, "home": home, "root": folders[0]}, "visual-studio-code",
                               server_env(home, fake.base_url), init_options={"approvals": "auto"}, folders=folders,
                               cold=True)  # its RSS is read from /proc of the server's own pid
        try:
            sessions: list[str] = []
            for folder in folders:
                for _ in range(SESSIONS_PER_FOLDER):
                    sessions.append((await h.command("shiro.newSession", {"workspace": folder.as_uri()}))["sessionId"])
            for _ in range(rounds):
                fake.script(*[step for _ in sessions for step in _turn_script()])
                running = [h.start_chat(f"round work in {sid[:8]}", sessionId=sid) for sid in sessions]
                n = 0
                while not all(r.done() for r in running):
                    sid = sessions[n % len(sessions)]
                    n += 1
                    started = time.perf_counter()
                    status = await h.command("shiro.status", {"sessionId": sid})
                    run.status_ms.append((time.perf_counter() - started) * 1000)
                    assert status["sessionId"] == sid
                    await asyncio.sleep(0.02)
                for result in await asyncio.gather(*running):
                    result = result if isinstance(result, dict) else result._asdict()
                    assert result["status"] == "completed", result
                    run.turns += 1
                run.rss_kb.append(_rss_kb(h.client._server.pid))
            run.deltas = sum(1 for e in h.events if e["type"] == "text_delta")
            assert not fake.rejections
        finally:
            await h.client.shutdown_session()
            await h.client.stop()
    return run
