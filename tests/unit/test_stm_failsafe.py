"""The short-term memory fail-safe covers placement as well as lookup (docs/short-term-memory.md:
"Any error while assembling them logs a warning and the turn goes on without them"). The loop with
a scripted provider; the memory is a `TurnMemory` whose plan is broken as a bug in its size or its
placement would leave it (issue 36 item 3)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from tests.support.sink import ListSink
from shiro_neko.agent.session import AgentSession
from shiro_neko.agent.short_term_memory import Note, Plan
from shiro_neko.config import Settings
from shiro_neko.model.transcript import shown
from tests.support.builders import assistant
from tests.support.scripted import ScriptedProvider, make_session


class BrokenPlanMemory:
    """Hands the loop a plan holding `text` as a note's text and `depth` as its depth (a bug's
    plan: not a string, not a number). The note is one placed in the request (depth -1 is a
    context message, agent/context_messages.py)."""

    def __init__(self, text: Any, depth: Any) -> None:
        self.text, self.depth = text, depth

    async def plan(self, session: AgentSession, turn_id: str, prompt: str | None, settings: Settings, offers_tools: bool) -> Plan:
        return Plan([Note("own", self.depth, self.text, True), Note("nudge", 0, "Short-term memory: nudge", True)])

    async def turn_ended(self, session: AgentSession, turn_id: str, prompt: str | None, status: str) -> None:
        return None


@pytest.mark.parametrize(
    ("broken", "depth", "where"),
    [(None, 1, "the plan's token count"), ("text", "1", "a note's depth not a number")],
)
async def test_a_bug_in_short_term_memory_placement_leaves_the_notes_out_and_the_turn_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, broken: Any, depth: Any, where: str
) -> None:
    provider = ScriptedProvider(assistant("answered"))
    sink = ListSink()
    session = make_session(tmp_path, provider, sink)
    session.deps.short_term_memory = BrokenPlanMemory(broken, depth)
    with caplog.at_level(logging.WARNING):
        outcome = await session.turns.submit("hello").done
    assert outcome.status == "completed" and outcome.text == "answered", where
    [request] = provider.requests
    assert request.inserts == [] and "Short-term memory" not in request.instructions
    # The prompt alone besides the context messages (agent/context_messages.py), and no note in any of them.
    assert [type(m).__name__ for m in shown(request.messages)] == ["UserMessage"]
    assert not any("Short-term memory" in getattr(p, "text", "") for m in request.messages for p in m.content)
    assert any("short-term memory left out" in r.getMessage() for r in caplog.records)
