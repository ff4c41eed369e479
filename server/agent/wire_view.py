"""What of the transcript goes on the wire for one request.

The session record keeps the full history; this view only shapes the request. Once a turn has
pruned, the pruned view is kept for the rest of that turn and later steps extend it with what was
appended since; only when the extended view no longer fits is the full transcript pruned afresh
(never the view itself: a marker in it would pass for the newest user message).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable

from .prune import PrunedSpan, PrunedView, prune_for_wire
from ..model.transcript import AssistantMessage, Message, estimate_tokens, strip_item_ids

if TYPE_CHECKING:
    from ..config import Settings
    from .session import AgentSession

log = logging.getLogger(__name__)

Summarize = Callable[[PrunedSpan], Awaitable[str]]


def _sendable(messages: list[Message]) -> list[Message]:
    # An interrupted response with nothing in it has nothing to send.
    return [m for m in messages if not (isinstance(m, AssistantMessage) and not m.content)]


@dataclass
class WireView:
    view: list[Message] | None = None
    base: int = 0  # how much of the transcript `view` stands for
    compacted: tuple[int, int] | None = None  # (before, after) the first time this turn pruned
    _summary_round_done: bool = False
    _reported: bool = field(default=False)

    def reset(self) -> None:
        """The history was rewritten (a 404 repair): nothing derived from it holds."""
        self.view = None
        self.base = 0

    def take_compacted(self) -> tuple[int, int] | None:
        """The one `compacted` report of this turn, once."""
        if self.compacted is None or self._reported:
            return None
        self._reported = True
        return self.compacted

    async def for_wire(self, session: "AgentSession", settings: "Settings", summarize: Summarize | None) -> list[Message]:
        messages = session.messages
        budget = max(1, settings.compactThreshold)
        if self.view is not None:
            extended = self.view + strip_item_ids(_sendable(messages[self.base :]))
            if estimate_tokens(extended) <= budget:
                return extended
        elif estimate_tokens(messages) <= budget:
            return _sendable(messages)
        summaries = session.span_summaries
        pruned = prune_for_wire(messages, budget, summaries)
        if summarize is not None and not self._summary_round_done:
            pruned = await self._summarize(pruned, messages, budget, summaries, summarize, session)
        self.view = _sendable(pruned.messages)
        self.base = len(messages)
        if pruned.pruned and self.compacted is None:
            self.compacted = (len(messages), len(self.view))
        return self.view

    async def _summarize(
        self,
        pruned: PrunedView,
        messages: list[Message],
        budget: int,
        summaries: dict[str, str],
        summarize: Summarize,
        session: "AgentSession",
    ) -> PrunedView:
        """One summary round per turn: each new span summarised once, then pruned again."""
        missing = [span for span in pruned.spans if span.key not in summaries]
        if not missing:
            return pruned
        self._summary_round_done = True
        made = False
        for span in missing:
            try:
                text = (await summarize(span)).strip()
            except Exception as exc:  # a failed summary leaves pruning as it would have been
                log.warning("summary of pruned span %s failed: %s", span.key, exc)
                continue
            if text:
                summaries[span.key] = text
                made = True
        if not made:
            return pruned
        session.changed()
        return prune_for_wire(messages, budget, summaries)
