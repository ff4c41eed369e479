"""`/compact` (`shiro.compact`): the model's summary replaces the transcript; the task list stays.

Compaction is destructive (the seed: for a session that has drifted across unrelated tasks), so it
is refused while a turn runs or is queued, and a model error leaves the transcript as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..agent.compaction import compact_transcript
from ..agent.provider.base import ProviderError
from ..agent.status import emit_status
from ..agent.usage import side_counter
from ..errors import Refused
from ..protocol import CompactArgs, CompactResult

if TYPE_CHECKING:
    from ..service import ShiroService


class CompactionFeature:
    def __init__(self, service: "ShiroService") -> None:
        self.service = service

    async def compact(self, args: CompactArgs) -> CompactResult:
        service = self.service
        session = service.session_for(args.sessionId, args.workspace)
        if session.turns.running or session.turns.queued:
            raise Refused("a turn is running; wait for it to end (or abort it) before /compact")
        if not session.messages:
            raise Refused("the session has no messages to compact")
        provider = service.provider_for(session, service.settings)
        before = len(session.messages)
        try:
            model = service.settings.effective_model
            summary, messages = await compact_transcript(provider, model, session.messages, args.focus, side_counter(session, model))
        except ProviderError as err:
            raise Refused(f"the conversation was left as it was: the model failed: {err.message}") from None
        except ValueError as err:
            raise Refused(str(err)) from None
        session.messages = messages
        session.span_summaries = {}  # the spans they described are gone
        await service.short_term_memory.transcript_replaced(session)
        await service.persistence.save(session)
        emit_status(session)
        return CompactResult(summary=summary, messagesBefore=before, messagesAfter=len(messages))
