"""Short-term memory against the context budget, and after /compact (in-process service, HTTP fake)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from shiro_neko.agent.short_term_memory import block_bound
from shiro_neko.protocol import CompactArgs
from shiro_neko.model.transcript import estimate_tokens
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.service import chat, running_service

MARKER = "[Context note, not from the user: history was pruned here"


def _text_of(body: dict) -> str:  # type: ignore[type-arg]
    return json.dumps(body.get("input"), ensure_ascii=False) + (body.get("instructions") or "")


async def test_supersede_after_compact_keeps_the_compaction_summary(fake: FakeProvider, workspace: Path, shiro_home: Path) -> None:
    """/compact leaves one message; the memory's `covered` (of the old transcript) no longer hides
    anything, so the request is [compaction summary, prompt], not [own memory, prompt]."""
    async with running_service(fake, workspace, shortTermMemory={"renderMode": "supersede"}) as service:
        fake.script(
            Reply(calls=[Call("update_short_term_memory", {"summary": "STM: working on the parser"})]),
            Reply(text="noted"),
            Reply(text="second answer"),
        )
        session, _ = await chat(service, "first")
        await chat(service, "second")
        assert service.short_term_memory.store.get(session.id).covered >= 2  # type: ignore[union-attr]
        fake.script(Reply(text="## Goal\nCOMPACTED-GOAL: finish the parser"))
        await service.compaction.compact(CompactArgs(sessionId=session.id))
        assert service.short_term_memory.store.get(session.id).covered == 0  # type: ignore[union-attr]
        fake.script(Reply(text="carrying on"))
        await chat(service, "next", sessionId=session.id)
        body = fake.main_requests[-1].body
        assert "COMPACTED-GOAL" in json.dumps(body["input"])
        assert "STM: working on the parser" in _text_of(body)  # the memory still goes, beside it


async def test_a_stale_covered_hides_nothing(fake: FakeProvider, workspace: Path, shiro_home: Path) -> None:
    """A record from before /compact (an older store, or a reset that failed) covers more than the
    transcript holds: supersede then hides nothing."""
    async with running_service(fake, workspace, shortTermMemory={"renderMode": "supersede"}) as service:
        fake.script(Reply(text="hello"))
        session, _ = await chat(service, "REAL-FIRST-PROMPT")
        ws = service.workspaces.pick(None)
        service.short_term_memory.store.update(
            session.id, workspace_key=ws.key, workspace=str(ws.root), title="t", private=False,
            summary="an old summary", categories=None, covered=50, recent=[],
        )
        fake.script(Reply(text="again"))
        await chat(service, "second", sessionId=session.id)
        assert "REAL-FIRST-PROMPT" in json.dumps(fake.main_requests[-1].body["input"])


async def test_short_term_memory_counts_against_the_budget(fake: FakeProvider, workspace: Path, shiro_home: Path) -> None:
    """A transcript that fits on its own plus other sessions' memories does not: pruning makes room
    for the memory, and each block is within its bound."""
    threshold = 3_000
    (workspace / "big.txt").write_text("a line of the big file\n" * 345)
    async with running_service(fake, workspace, compactThreshold=threshold, shortTermMemory={"renderMode": "crude_summary"}) as service:
        fake.script(Reply(calls=[Call("read_file", {"path": "big.txt"})]), Reply(text="read it"))
        session, _ = await chat(service, "read big.txt")
        ws = service.workspaces.pick(None)
        for k in range(3):  # three other sessions with full-size memories
            service.short_term_memory.store.update(
                f"other-{k}", workspace_key=ws.key, workspace=str(ws.root), title=f"other {k}", private=False,
                summary=f"OTHER-{k} " + "x" * 3_900, categories=None, covered=2, recent=[], now=time.time() - k,
            )
        fake.script(Reply(text="ok"))
        await chat(service, "and now?", sessionId=session.id)
        alone = estimate_tokens(session.messages[:-1])
        assert threshold - 300 < alone <= threshold, alone  # the transcript alone fitted, the memory with it not
        body = fake.main_requests[-1].body
        notes = [i["content"] for i in body["input"] if i.get("role") == "developer"]
        [others] = [n for n in notes if n.startswith("Short-term memory of other recent sessions")]
        assert len(others) <= block_bound(threshold) and "OTHER-0" in others
        sent = len(json.dumps(body["input"], separators=(",", ":"))) // 4
        assert sent <= threshold + 100  # within the budget (the estimate's rounding aside)
        assert MARKER in json.dumps(body["input"])  # the old file read was pruned to make room
        assert "a line of the big file" not in json.dumps(body["input"])
