"""`/compact` (`shiro.compact`): the model's summary replaces the transcript; the task list stays.

What the summary replaced stays in the record for display only (`compacted`): the panels show it
folded above the summary, after a reload and on resume too, and no request carries it.

Compaction is destructive (the seed: for a session that has drifted across unrelated tasks), so it
is refused while a turn runs or is queued, and a model error leaves the transcript as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

import msgspec

from ..agent.compaction import compact_transcript
from ..agent.provider.base import ProviderError
from ..agent.status import emit_status
from ..agent.usage import side_counter
from ..errors import Refused
from ..model.session_state import CompactedSpan
from ..model.transcript import Message, shown
from ..protocol import CompactArgs, CompactResult
from ..model.timestamps import iso_utc

if TYPE_CHECKING:
    from ..agent.provider.openai_provider import OpenAIProvider
    from ..agent.session import AgentSession
    from ..config import Settings
    from .sessions import SessionsFeature
    from .short_term_memory import ShortTermMemoryFeature


#: Messages of earlier /compacts a record keeps for display at most (the oldest spans go first).
DISPLAY_LIMIT = 5_000


def kept_for_display(spans: list[CompactedSpan] | msgspec.UnsetType, new: CompactedSpan, limit: int = DISPLAY_LIMIT) -> list[CompactedSpan]:
    """`spans` + `new`, the oldest spans dropped (and the oldest messages of the oldest span kept
    cut) until at most `limit` messages remain: a session compacted again and again stays bounded."""
    out = [*(spans or []), new]
    total = sum(len(s.messages) for s in out)
    while total > limit and out:
        excess = total - limit
        first = out[0]
        if len(first.messages) <= excess:
            out.pop(0)
            total -= len(first.messages)
        else:
            kept: list[Message] = first.messages[excess:]
            out[0] = CompactedSpan(compacted_at=first.compacted_at, messages=kept)
            total -= excess
    return out


class CompactionFeature:
    def __init__(
        self,
        settings: "Callable[[], Settings]",
        session_for: "Callable[[str | None, str | None], AgentSession]",
        provider_for: "Callable[[AgentSession, Settings], OpenAIProvider]",
        short_term_memory: "ShortTermMemoryFeature",
        persistence: "SessionsFeature",
    ) -> None:
        self.settings = settings
        self.session_for = session_for
        self.provider_for = provider_for
        self.short_term_memory = short_term_memory
        self.persistence = persistence

    async def compact(self, args: CompactArgs) -> CompactResult:
        session = self.session_for(args.sessionId, args.workspace)
        if session.turns.running or session.turns.queued:
            raise Refused("a turn is running; wait for it to end (or abort it) before /compact")
        if not session.messages:
            raise Refused("the session has no messages to compact")
        settings = self.settings()
        provider = self.provider_for(session, settings)
        before = len(shown(session.messages))  # the dialogue: context messages are the model's
        try:
            model = settings.effective_model
            summary, messages = await compact_transcript(provider, model, session.messages, args.focus, side_counter(session, model))
        except ProviderError as err:
            raise Refused(f"the conversation was left as it was: the model failed: {err.message}") from None
        except ValueError as err:
            raise Refused(str(err)) from None
        # Kept for display only: the context messages (agent/context_messages.py) are the model's.
        session.compacted = kept_for_display(session.compacted, CompactedSpan(compacted_at=iso_utc(), messages=shown(session.messages)))
        session.messages = messages
        session.span_summaries = {}  # the spans they described are gone
        await self.short_term_memory.transcript_replaced(session)
        await self.persistence.save(session)
        emit_status(session)
        return CompactResult(summary=summary, messagesBefore=before, messagesAfter=len(messages))
