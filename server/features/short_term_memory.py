"""Short-term memory: the store, the write tool, each turn's plan, the counter, `shiro.stm(Clear)`.

Fail-safe as the seed asks: any error while assembling short-term memory logs a warning and the
turn goes on without it. A write that fails is an error result the model reads, and a write the
database could not take (busy past the wait, unwritable) is also a notice to the user.
"""

from __future__ import annotations

import asyncio
import logging
import time
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from ..agent.short_term_memory import Plan, TurnFacts, block_bound, memory_text, plan_turn, recent_texts
from ..agent.tools.base import Tool
from ..agent.tools.stm_tool import short_term_memory_tool
from ..errors import Refused
from ..model.timestamps import iso_utc
from ..protocol import NoticeEvent, StmClearResult, StmCurrent, StmOther, StmResult
from ..state.atomic import StateError
from ..state.paths import shiro_home
from ..state.short_term_memory import (
    RecentMessage,
    ShortTermMemoryCorrupt,
    ShortTermMemoryRefused,
    ShortTermMemoryStore,
    StmRecord,
)
from ..state.session_record import make_title

if TYPE_CHECKING:
    from ..agent.session import AgentSession
    from ..config import Settings
    from ..session_registry import SessionRegistry

log = logging.getLogger(__name__)


class ShortTermMemoryFeature:
    def __init__(self, settings: "Callable[[], Settings]", registry: "SessionRegistry") -> None:
        self.settings = settings
        self.registry = registry
        self.store = ShortTermMemoryStore(shiro_home())
        self._plans: dict[str, tuple[str, Plan]] = {}  # session id -> (turn id, that turn's plan)
        self._refreshed: dict[str, str] = {}  # session id -> turn id in which the tool was called
        self._reported: set[str] = set()  # state errors already shown to the user (once each)

    # -- the tool -----------------------------------------------------------------------------
    def tools(self, session: "AgentSession") -> list[Tool]:
        if not self.settings().shortTermMemory.enabled:
            return []  # disabled: no write tool (existing memories still render)
        loop = asyncio.get_running_loop()
        return [short_term_memory_tool(lambda summary, categories: self._write(session, summary, categories, loop))]

    def _identity(self, session: "AgentSession") -> tuple[str, str, str]:
        workspace = self.registry.workspace_of(session)
        return workspace.key, str(workspace.root), make_title(session.title) if session.title else ""

    def _write(
        self, session: "AgentSession", summary: str | None, categories: dict[str, str] | None, loop: asyncio.AbstractEventLoop
    ) -> StmRecord:
        """Runs in a worker thread while the loop awaits the call (the transcript holds still)."""
        key, root, title = self._identity(session)
        try:
            record = self.store.update(
                session.id, workspace_key=key, workspace=root, title=title, private=session.private,
                summary=summary, categories=categories, covered=len(session.messages), recent=self._recent(session),
            )
        except (ShortTermMemoryRefused, ShortTermMemoryCorrupt):
            # The model's own mistake (its error result says what to change), or a broken file the
            # user was told of once already (plan's notice).
            raise
        except StateError as exc:
            # The database stayed busy past the wait, or cannot be written: the model reads the
            # error, and the user hears of the lost update too.
            loop.call_soon_threadsafe(self._notify, session, f"short-term memory not updated: {exc}")
            raise
        session.turns_since_refresh = 0  # one counter for creation and refresh
        running = self._plans.get(session.id)
        if running is not None:
            self._refreshed[session.id] = running[0]
        return record

    @staticmethod
    def _recent(session: "AgentSession") -> list[RecentMessage]:
        return [RecentMessage(role, text) for role, text in recent_texts(session.messages)]

    # -- a turn -------------------------------------------------------------------------------
    def _retrieve(self, session: "AgentSession", settings: "Settings") -> tuple[StmRecord | None, list[StmRecord]]:
        stm = settings.shortTermMemory
        key = self.registry.workspace_of(session).key
        return self.store.get(session.id), self.store.others(key, session.id, stm.crossWorkspace, stm.privacyBypass)

    async def plan(self, session: "AgentSession", turn_id: str, prompt: str | None, settings: "Settings", offers_tools: bool) -> Plan:
        """Made once per turn (what the model is told does not move between its steps); the nudge
        goes once the model has done what it asked."""
        cached = self._plans.get(session.id)
        if cached is None or cached[0] != turn_id:
            made = Plan()
            if prompt is not None:
                try:
                    own, others = await asyncio.to_thread(self._retrieve, session, settings)
                    facts = TurnFacts(
                        prompt=prompt, now=time.time(), turns_since_refresh=session.turns_since_refresh,
                        offers_tools=offers_tools, provider_supports_tools=settings.supportsTools,
                        workspace=str(self.registry.workspace_of(session).root), message_count=len(session.messages),
                        block_chars=block_bound(settings.compactThreshold),
                    )
                    made = plan_turn(settings.shortTermMemory, own, others, facts)
                except StateError as exc:  # a broken or unreadable file: the user hears of it once
                    log.warning("short-term memory left out of this turn: %s", exc)
                    if str(exc) not in self._reported:
                        self._reported.add(str(exc))
                        message = f"short-term memory is unavailable: {exc}"
                        session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=message))
                except Exception as exc:  # noqa: BLE001 - the seed's fail-safe: warn, yield nothing, go on
                    log.warning("short-term memory left out of this turn: %s", exc)
            cached = self._plans[session.id] = (turn_id, made)
        if self._refreshed.get(session.id) == turn_id:
            return cached[1].without_nudge()
        return cached[1]

    async def turn_ended(self, session: "AgentSession", turn_id: str, prompt: str | None, status: str) -> None:
        self._plans.pop(session.id, None)
        refreshed = self._refreshed.pop(session.id, None) == turn_id
        if prompt is None:
            return  # a resumed approval is not a turn of the conversation
        if status == "completed" and not refreshed:
            session.turns_since_refresh += 1
        try:
            key, root, title = self._identity(session)
            # Other sessions see this one's latest messages next to its summary.
            await asyncio.to_thread(self.store.touch, session.id, title=title, private=session.private, recent=self._recent(session))
        except StateError as exc:  # never fails a turn; the user hears of it once per cause
            log.warning("short-term memory of session %s not refreshed: %s", session.id, exc)
            if str(exc) not in self._reported:
                self._reported.add(str(exc))
                self._notify(session, f"short-term memory not refreshed: {exc}", turn_id)
        except Exception as exc:  # noqa: BLE001 - never fails a turn
            log.warning("short-term memory of session %s not refreshed: %s", session.id, exc)

    def _notify(self, session: "AgentSession", message: str, turn_id: str | None = None) -> None:
        if turn_id is None:
            running = self._plans.get(session.id)
            turn_id = running[0] if running is not None else ""
        session.deps.sink.event(NoticeEvent(sessionId=session.id, turnId=turn_id, message=message))

    # -- commands -----------------------------------------------------------------------------
    async def show(self, session: "AgentSession") -> StmResult:
        try:
            own, others = await asyncio.to_thread(self._retrieve, session, self.settings())
        except StateError as exc:
            raise Refused(str(exc)) from None
        current = None
        if own is not None and not own.is_empty:
            current = StmCurrent(kind=own.kind, text=memory_text(own), updatedAt=iso_utc(own.updated_at))
        return StmResult(
            current=current,
            others=[
                StmOther(sessionId=r.session_id, title=r.title, workspace=Path(r.workspace).as_uri(), text=memory_text(r), updatedAt=iso_utc(r.updated_at))
                for r in others
            ],
        )

    async def transcript_replaced(self, session: "AgentSession") -> None:
        """/compact replaced the transcript: the memory covers none of the new one, so supersede
        hides nothing until the model refreshes it (the /compact summary always reaches the model)."""
        self._plans.pop(session.id, None)
        try:
            await asyncio.to_thread(self.store.uncover, session.id)
        except Exception as exc:  # noqa: BLE001 - never fails /compact; plan_turn guards as well
            log.warning("short-term memory of session %s not reset after /compact: %s", session.id, exc)

    def forget(self, session_id: str) -> None:
        """The session left memory: its per-turn caches go with it."""
        self._plans.pop(session_id, None)
        self._refreshed.pop(session_id, None)
        self.store.forget(session_id)

    async def clear(self, session_id: str) -> StmClearResult:
        try:
            cleared = await asyncio.to_thread(self.store.clear, session_id)
        except StateError as exc:
            raise Refused(str(exc)) from None
        self._plans.pop(session_id, None)
        return StmClearResult(cleared=cleared)

    def close(self) -> None:
        self.store.close()

