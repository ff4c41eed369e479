"""`shiro/status` of a session: context fill, usage and cost, and what its turn queue holds."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model.transcript import estimate_tokens
from ..protocol import StatusPayload
from .context_level import context_level
from .plan_mode import mode_of
from .tools.sandbox import sandbox_status
from .context_window import capped_threshold, window_for
from .usage import cached_total, side_status

if TYPE_CHECKING:
    from .session import AgentSession


def status_payload(session: "AgentSession") -> StatusPayload:
    settings = session.deps.settings()
    window = window_for(settings.effective_base_url, settings.effective_model, settings.contextWindow)
    threshold = max(1, capped_threshold(settings.compactThreshold, window, session.prefix_tokens))
    tokens = estimate_tokens(session.messages)
    return StatusPayload(
        sessionId=session.id,
        contextTokens=tokens,
        contextThreshold=threshold,
        contextPercent=round(tokens * 100 / threshold, 1),
        level=context_level(tokens, threshold),
        provider="openai",
        model=settings.effective_model,
        inputTokens=session.input_tokens,
        outputTokens=session.output_tokens,
        costUsd=session.cost_usd,
        **side_status(session, settings.effective_model),
        running=session.turns.running,
        queued=session.turns.queued,
        sandbox=sandbox_status(settings.sandbox),
        waiting="approval" if session.waiting_approval is not None else None,
        waitingTool=session.waiting_approval.tool_name if session.waiting_approval is not None else None,
        private=session.private,
        effort=settings.reasoningEffort,
        cachedTokens=cached_total(session),
        contextWindow=window,
        mode=mode_of(session),
    )


def emit_status(session: "AgentSession") -> None:
    session.deps.sink.status(status_payload(session))
