"""The prompt queue in front of one session's loop, and the worker that drains it turn by turn.

The queue is in memory only, deliberately (seed: a queued thought that fires on next launch,
against a workspace that has since changed, is worse than a lost one). It knows neither the loop
nor the session: the session hands it the turn runner, so the loop can import the session without
the session importing the loop back.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Coroutine


from ..model.ids import new_uuid7
from .images import RawImage
from ..protocol import TurnStatus

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
    started: bool = False  # its turn ran (else it was cleared from the queue)
    # What the editor showed as it was sent, rendered (agent/editor_context.py); "" when nothing.
    editor_context: str = ""
    # Images sent with the prompt, checked by their first bytes, not yet decoded (agent/images.py).
    images: "list[RawImage]" = field(default_factory=list)


class TurnQueue:
    """One turn at a time; later prompts wait. `run` plays one prompt's turn; `submitted` is told of
    every prompt and how many wait before it runs (0: it runs now); `settled` runs after each turn."""

    def __init__(
        self,
        run: Callable[[QueuedPrompt], Coroutine[Any, Any, TurnOutcome]],
        submitted: Callable[[QueuedPrompt, int], None],
        settled: Callable[[], None],
    ) -> None:
        self._run, self._submitted, self._settled = run, submitted, settled
        self._queue: deque[QueuedPrompt] = deque()
        self._current: QueuedPrompt | None = None
        self._turn_task: asyncio.Task[TurnOutcome] | None = None
        self._worker: asyncio.Task[None] | None = None
        # Set while the server stops: an approval still waiting stays pending in the record.
        self.stopping = False

    @property
    def running(self) -> bool:
        return self._current is not None

    @property
    def idle(self) -> bool:
        """No turn running or queued, and no worker left: safe to drop from memory."""
        return self._current is None and not self._queue and (self._worker is None or self._worker.done())

    @property
    def current(self) -> QueuedPrompt | None:
        """The prompt whose turn runs now."""
        return self._current

    @property
    def queued(self) -> int:
        return len(self._queue)

    def submit(self, prompt: str | None, turn_id: str | None = None, attachments: list[str] | None = None,
               editor_context: str = "", images: "list[RawImage] | None" = None) -> QueuedPrompt:
        """Queue a prompt; it runs when every earlier one has ended."""
        item = QueuedPrompt(prompt, turn_id or new_uuid7(), asyncio.get_running_loop().create_future(), list(attachments or []),
                            editor_context=editor_context, images=list(images or []))
        busy = self.running or bool(self._queue)
        self._queue.append(item)
        self._submitted(item, len(self._queue) if busy else 0)
        if self._worker is None or self._worker.done():
            self._worker = asyncio.create_task(self._drain())
        return item

    async def _drain(self) -> None:
        while self._queue:
            item = self._queue.popleft()
            self._current = item
            item.started = True
            self._turn_task = asyncio.create_task(self._run(item))
            try:
                # The loop absorbs its own cancellation (abort) and answers `aborted`.
                outcome = await self._turn_task
            except Exception as exc:  # a bug in the loop must not wedge the queue
                log.exception("turn failed")
                outcome = TurnOutcome("error", error=f"internal error: {exc}")
            finally:
                self._current = None
                self._turn_task = None
            self._settled()  # after clearing: this says the turn is over
            if not item.done.done():
                item.done.set_result(outcome)

    def abort(self) -> tuple[bool, int]:
        """Stop the running turn and clear the queue: (a turn was aborted, prompts cleared)."""
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

