"""Nothing is kept per turn or per session beyond the transcript and the session index (issue 15,
point 7): many short turns through the real service (the HTTP fake as the provider, real files in a
temporary SHIRO_NEKO_HOME), then a count of what the server still holds. `bench/memory.py` measures
the bytes; this fails when a per-session or per-turn entry comes back.

A count, never a size or a time: after N turns, one live session, one save state, the short-term
memory answers of that session only, no turn state, and no more asyncio tasks than after the first
few turns. SHIRO_FULL_MEMORY=1 runs 300 turns instead of 30.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import os
from pathlib import Path

from shiro_neko.agent.session import AgentSession
from shiro_neko.model.transcript import shown
from shiro_neko.service import ShiroService
from tests.fake_provider import FakeProvider, Reply
from tests.support.service import chat, running_service

TURNS = 300 if os.environ.get("SHIRO_FULL_MEMORY") == "1" else 30
WARM = 5


async def _saves_landed(service: ShiroService) -> None:
    """Wait (a condition, not a time) until no save is pending, so releases have run."""
    for _ in range(1200):
        states = list(service.persistence._states.values())
        if not any(s.dirty or s.timer is not None or s.lock.locked() for s in states):
            break
        await asyncio.sleep(0.025)
    await asyncio.get_running_loop().run_in_executor(service.persistence._writer, lambda: None)


def _live_sessions() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if isinstance(o, AgentSession))


def _held(service: ShiroService) -> dict[str, int]:
    stm = service.short_term_memory
    return {
        "sessions": len(service.sessions),
        "live AgentSession objects": _live_sessions(),
        "save states": len(service.persistence._states),
        "leases": len(service.persistence.store._leases),
        "short-term memory answers": len(stm.store._cache),
        "turn plans": len(stm._plans) + len(stm._refreshed),
        "pinned": len(service.pinned),
        "approval modes": len(service.approval_modes),
    }


async def _turns(service: ShiroService, fake: FakeProvider, count: int, new_session: bool, start: int = 0) -> None:
    for i in range(start, start + count):
        if new_session:
            service.new_session_command(None, private=False)
        fake.script(Reply(text="ok"))
        _, outcome = await chat(service, f"hi {i}")
        assert outcome.status == "completed", outcome
        await _saves_landed(service)


async def test_a_new_session_per_turn_leaves_only_the_current_one(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    async with running_service(fake, workspace) as service:
        await _turns(service, fake, WARM, new_session=True)
        tasks_after_warm_up = len(asyncio.all_tasks())
        await _turns(service, fake, TURNS, new_session=True, start=WARM)
        held = _held(service)
        # One session is current; every other one was saved and released, and nothing of it stays.
        assert held == {
            "sessions": 1, "live AgentSession objects": 1, "save states": 1, "leases": 1,
            "short-term memory answers": 2,  # this session's own memory and the others' (one each)
            "turn plans": 0, "pinned": 0, "approval modes": 0,
        }, held
        assert len(asyncio.all_tasks()) <= tasks_after_warm_up
        assert len(list((shiro_home / "sessions").glob("*.json"))) == WARM + TURNS  # all on disk


async def test_many_turns_in_one_session_keep_only_the_transcript(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    async with running_service(fake, workspace) as service:
        await _turns(service, fake, WARM, new_session=False)
        tasks_after_warm_up = len(asyncio.all_tasks())
        (warm,) = service.sessions.values()
        context_after_warm_up = len(warm.messages) - len(shown(warm.messages))
        await _turns(service, fake, TURNS, new_session=False, start=WARM)
        held = _held(service)
        assert held == {
            "sessions": 1, "live AgentSession objects": 1, "save states": 1, "leases": 1,
            "short-term memory answers": 2, "turn plans": 0, "pinned": 0, "approval modes": 0,
        }, held
        assert len(asyncio.all_tasks()) <= tasks_after_warm_up
        (session,) = service.sessions.values()
        assert len(shown(session.messages)) == 2 * (WARM + TURNS)  # a prompt and an answer per turn
        # Context messages (agent/context_messages.py) are said again only when they change: none per turn.
        assert len(session.messages) - len(shown(session.messages)) == context_after_warm_up


async def test_turns_faster_than_the_disk_queue_one_save_per_session_and_lose_nothing(
        shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    async with running_service(fake, workspace) as service:
        # The writer thread busy (a slow disk): every autosave of these turns has to wait.
        gate = threading.Event()
        service.persistence._writer.submit(gate.wait, 60)
        try:
            for i in range(12):
                fake.script(Reply(text=f"answer {i}"))
                _, outcome = await chat(service, f"hi {i}")
                assert outcome.status == "completed"
                for _ in range(3):
                    await asyncio.sleep(0)  # the turn end's save timer (delay 0) fires
            waiting = [t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__qualname__", "") == "SessionsFeature._autosave"]
            # One holds the lock (its write queued behind the busy writer), one waits for it.
            assert len(waiting) <= 2, len(waiting)
        finally:
            gate.set()
        await _saves_landed(service)
        (session,) = service.sessions.values()
        record = service.persistence.store.load(session.id)
        assert [type(m).__name__ for m in shown(record.messages)] == ["UserMessage", "AssistantMessage"] * 12  # the last change is on disk
        # Saved, it is released once another session is current (a skipped autosave left its
        # fired timer behind, which kept it, and its lease, for ever).
        service.new_session_command(None, private=False)
        fake.script(Reply(text="in the next one"))
        await chat(service, "next session")
        await _saves_landed(service)
        assert session.id not in service.sessions and len(service.persistence.store._leases) == 1
