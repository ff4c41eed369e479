"""One live session: its transcript, task list, usage, and the prompt queue in front of its loop.

The queue is in memory only, deliberately (seed: a queued thought that fires on next launch,
against a workspace that has since changed, is worse than a lost one).
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Awaitable, Callable

import uuid_utils

from .short_term_memory import NoShortTermMemory, TurnMemory
from .context_level import context_level
from .usage import side_status
from ..model.transcript import Message, estimate_tokens
from ..protocol import QueuedEvent, StatusPayload, TurnStatus

if TYPE_CHECKING:
    from ..config import Settings
    from .events import EventSink
    from .provider.base import Provider
    from .todos import Todo
    from .tools.base import Tool, ToolHost

log = logging.getLogger(__name__)

@dataclass
class TurnOutcome:
    status: TurnStatus
    text: str = ""
    error: str | None = None
    max_steps_reached: bool = False  # completed, but cut off by `maxSteps` (ACP: max_turn_requests)
    refused: bool = False  # completed with the model declining (a refusal part; ACP: refusal)


@dataclass
class QueuedPrompt:
    prompt: str | None  # None: a turn the server starts itself (a resumed approval)
    turn_id: str
    done: asyncio.Future[TurnOutcome]
    attachments: list[str] = field(default_factory=list)  # extra text parts sent with the prompt


@dataclass
class SessionDeps:
    """Everything a session needs from outside the agent package."""

    settings: Callable[[], "Settings"]
    sink: "EventSink"
    host: "ToolHost"
    provider: Callable[["Settings"], "Provider"]
    tools: Callable[["AgentSession"], list["Tool"]] = lambda s: []
    system_blocks: Callable[["AgentSession"], list[str]] = lambda s: []
    on_change: Callable[["AgentSession", bool], None] = lambda s, turn_ended: None
    record_prompt: Callable[[str], None] = lambda p: None
    short_term_memory: TurnMemory = field(default_factory=NoShortTermMemory)
    # Awaited as a turn starts (MCP servers still starting, restarts); returns notices to show.
    before_turn: Callable[["AgentSession"], Awaitable[list[str]]] = lambda s: _no_notices()


async def _no_notices() -> list[str]:
    return []


def new_turn_id() -> str:
    return str(uuid_utils.uuid7())


@dataclass
class AgentSession:
    id: str
    root: Path
    deps: SessionDeps
    messages: list[Message] = field(default_factory=list)
    todos: list["Todo"] = field(default_factory=list)
    title: str = ""
    created_at: str = ""
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    private: bool = False  # shiro.newSession {private: true}: its short-term memory stays out of other sessions
    turns_since_refresh: int = 0  # completed turns since the last update_short_term_memory (saved)
    always_allowed: set[str] = field(default_factory=set)
    touched: set[Path] = field(default_factory=set)  # files the agent worked on (for AGENTS.md lookup)
    # Summaries of automatically pruned spans, one per span, saved in the record.
    span_summaries: dict[str, str] = field(default_factory=dict)
    # Project memory as rendered once for this session (memory is what *earlier* sessions learned).
    memory_block: str | None = None
    # What side requests (span summaries, /compact, /memory) spent, part of the totals: saved.
    side_usage: dict[str, int] = field(default_factory=dict)
    _queue: deque[QueuedPrompt] = field(default_factory=deque)
    _current: QueuedPrompt | None = None
    _turn_task: asyncio.Task[TurnOutcome] | None = None
    _worker: asyncio.Task[None] | None = None
    # Set while the server stops: an approval still waiting stays pending in the record.
    stopping: bool = False

    # -- queue ----------------------------------------------------------------------------
    @property
    def running(self) -> bool:
        return self._current is not None

    @property
    def idle(self) -> bool:
        """No turn running or queued, and no worker left: safe to drop from memory."""
        return self._current is None and not self._queue and (self._worker is None or self._worker.done())

    @property
    def queued(self) -> int:
        return len(self._queue)

    def submit(self, prompt: str | None, turn_id: str | None = None, attachments: list[str] | None = None) -> QueuedPrompt:
        """Queue a prompt; it runs when every earlier one has ended."""
        item = QueuedPrompt(prompt, turn_id or new_turn_id(), asyncio.get_running_loop().create_future(), list(attachments or []))
        busy = self.running or bool(self._queue)
        self._queue.append(item)
        if prompt is not None:
            self.deps.record_prompt(prompt)  # queued prompts are history too
        if busy:
            self.deps.sink.event(QueuedEvent(sessionId=self.id, turnId=item.turn_id, position=len(self._queue)))
            self.emit_status()
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return item

    async def _drain(self) -> None:
        from .loop import run_turn  # the loop imports this module's types

        while self._queue:
            item = self._queue.popleft()
            self._current = item
            self._turn_task = asyncio.create_task(run_turn(self, item.prompt, item.turn_id, item.attachments))
            try:
                # run_turn absorbs its own cancellation (abort) and answers `aborted`.
                outcome = await self._turn_task
            except Exception as exc:  # a bug in the loop must not wedge the queue
                log.exception("turn failed")
                outcome = TurnOutcome("error", error=f"internal error: {exc}")
            finally:
                self._current = None
                self._turn_task = None
            self.emit_status()  # after clearing: this one says the turn is over
            if not item.done.done():
                item.done.set_result(outcome)

    def abort(self) -> tuple[bool, int]:
        """Stop the running turn and clear the queue."""
        cleared = 0
        while self._queue:
            item = self._queue.popleft()
            cleared += 1
            if not item.done.done():
                item.done.set_result(TurnOutcome("aborted"))
        aborted = False
        if self._turn_task is not None and not self._turn_task.done():
            self._turn_task.cancel()
            aborted = True
        return aborted, cleared

    def cancel_turn(self, turn_id: str) -> None:
        """`$/cancelRequest` of one chat: abort it when running, drop it when queued."""
        if self._current is not None and self._current.turn_id == turn_id:
            if self._turn_task is not None:
                self._turn_task.cancel()
            return
        for item in list(self._queue):
            if item.turn_id == turn_id:
                self._queue.remove(item)
                if not item.done.done():
                    item.done.set_result(TurnOutcome("aborted"))

    async def stop(self) -> None:
        """Server shutdown: end the running turn, keeping a waiting approval pending."""
        self.stopping = True
        self.abort()
        if self._worker is not None:
            await asyncio.gather(self._worker, return_exceptions=True)

    # -- status ---------------------------------------------------------------------------
    def status_payload(self) -> StatusPayload:
        settings = self.deps.settings()
        threshold = max(1, settings.compactThreshold)
        tokens = estimate_tokens(self.messages)
        percent = round(tokens * 100 / threshold, 1)
        level = context_level(tokens, threshold)
        return StatusPayload(
            sessionId=self.id,
            contextTokens=tokens,
            contextThreshold=threshold,
            contextPercent=percent,
            level=level,
            provider="openai",
            model=settings.effective_model,
            inputTokens=self.input_tokens,
            outputTokens=self.output_tokens,
            costUsd=self.cost_usd,
            **side_status(self, settings.effective_model),
            running=self.running,
            queued=self.queued,
        )

    def emit_status(self) -> None:
        self.deps.sink.status(self.status_payload())

    def changed(self, turn_ended: bool = False) -> None:
        self.deps.on_change(self, turn_ended)
