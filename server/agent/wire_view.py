"""What of the transcript goes on the wire for one request.

The session record keeps the full history; this view only shapes the request. Once a turn has
pruned, the pruned view is kept for the rest of that turn and later steps extend it with what was
appended since; only when the extended view no longer fits is the full transcript pruned afresh
(never the view itself: a marker in it would pass for the newest user message).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Awaitable, Callable

from ..model.transcript import AssistantMessage, Message, estimate_tokens, strip_item_ids
from .prune import PrunedSpan, PrunedView, prune_for_wire, span_chunk_bytes

if TYPE_CHECKING:
    from ..config import Settings
    from .session import AgentSession

log = logging.getLogger(__name__)

Summarize = Callable[[PrunedSpan], Awaitable[str]]


async def _pruned(messages: list[Message], budget: int, summaries: dict[str, str]) -> PrunedView:
    """`prune_for_wire` in a worker thread. Its work grows with the history (every message encoded,
    spans hashed: seconds for a 50 MB prompt, bench/big_prompt.py), and on the event loop's thread it
    held every other request of the editor that long. Copies: the loop may append to the session
    and record summaries while the thread reads."""
    return await asyncio.to_thread(prune_for_wire, list(messages), budget, dict(summaries))


def _sendable(messages: list[Message]) -> list[Message]:
    # An interrupted response with nothing in it has nothing to send.
    return [m for m in messages if not (isinstance(m, AssistantMessage) and not m.content)]


def compacted_message(before: int, after: int, spans: int) -> str:
    """The one `compacted` report of a turn (docs/protocol.md's sentence when content was removed)."""
    if spans == 0:
        return f"context compacted: reasoning left out of the request, all {before} messages sent"
    return f"context compacted: {before} messages pruned to {after} on the wire"


@dataclass
class Compacted:
    before: int  # messages in the transcript
    after: int  # of them sent (markers not counted)
    message: str
    content_removed: bool = True  # False: only reasoning was left out

    def deeper_than(self, other: "Compacted | None") -> bool:
        """Removing content is deeper than leaving reasoning out; then more messages pruned is deeper."""
        if other is None:
            return True
        if self.content_removed != other.content_removed:
            return self.content_removed
        return self.before - self.after > other.before - other.after


def summary_due(span: PrunedSpan, newest: bool, budget: int) -> bool:
    """Summaries stay bounded: the newest span, which may still grow, is summarised only once it
    holds half a chunk of original JSON; a span followed by another one is done growing (a later
    loss makes a new span after it), so it is summarised now. So at most about two summaries per
    chunk (half the budget in bytes, at most 240 KB) of pruned transcript, each exactly once."""
    return not newest or span.size * 2 >= span_chunk_bytes(budget)


@dataclass
class WireView:
    view: list[Message] | None = None
    base: int = 0  # how much of the transcript `view` stands for
    compacted: Compacted | None = None  # the deepest pruning of this turn so far
    _failed: set[str] = field(default_factory=set)  # span keys whose summary failed this turn
    _reported: bool = field(default=False)

    def reset(self) -> None:
        """The history was rewritten (a 404 repair): nothing derived from it holds."""
        self.view = None
        self.base = 0

    def take_compacted(self) -> Compacted | None:
        """The one `compacted` report of this turn, once: taken at the turn's end, so it is the
        deepest pruning of the turn, not the first (which may have left out reasoning only)."""
        if self.compacted is None or self._reported:
            return None
        self._reported = True
        return self.compacted

    async def for_wire(
        self, session: "AgentSession", settings: "Settings", summarize: Summarize | None, reserve: int = 0
    ) -> list[Message]:
        """The messages of one request; `reserve` tokens of the budget are kept for what else goes
        with them (short-term memory notes)."""
        messages = session.messages
        budget = max(1, settings.compactThreshold - max(0, reserve))
        if self.view is not None:
            extended = self.view + strip_item_ids(_sendable(messages[self.base :]))
            if estimate_tokens(extended) <= budget:
                return extended
        elif estimate_tokens(messages) <= budget:
            return _sendable(messages)
        summaries = session.span_summaries
        pruned = await _pruned(messages, budget, summaries)
        if summarize is not None:
            pruned = await self._summarize(pruned, messages, budget, summaries, summarize, session)
        self.view = _sendable(pruned.messages)
        self.base = len(messages)
        if pruned.pruned:
            sent = len(self.view) - pruned.markers
            spans = len(pruned.spans)
            report = Compacted(len(messages), sent, compacted_message(len(messages), sent, spans), spans > 0)
            if report.deeper_than(self.compacted):
                self.compacted = report
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
        """A summary round at every pruning: each due span without a summary gets one (a span is
        summarised once, ever: its key is kept once summarised), then the transcript is pruned
        again so the markers carry them. A failed summary is not retried this turn."""
        spans = pruned.spans
        missing = [
            span for k, span in enumerate(spans)
            if span.key not in summaries and span.key not in self._failed and summary_due(span, k == len(spans) - 1, budget)
        ]
        if not missing:
            return pruned
        made = False
        for span in missing:
            try:
                text = (await summarize(span)).strip()
            except Exception as exc:  # a failed summary leaves pruning as it would have been
                log.warning("summary of pruned span %s failed: %s", span.key, exc)
                text = ""
            if text:
                summaries[span.key] = text
                made = True
            else:
                self._failed.add(span.key)
        if not made:
            return pruned
        session.changed()
        return await _pruned(messages, budget, summaries)
