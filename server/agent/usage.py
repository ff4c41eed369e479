"""What a session spends: every request counts, the turn's own and the side requests beside it
(pruned-span summaries, `/compact`, `/memory`), which are also kept apart so `/cost` can show them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from .provider.base import Usage

if TYPE_CHECKING:
    from .session import AgentSession


def count_usage(session: "AgentSession", usage: Usage, model: str, side: bool = False) -> None:
    """Add one request's usage to the session's totals (and cost) and, for a side request, apart."""
    from .provider.pricing import cost_usd  # noqa: PLC0415 - keeps agent start-up light

    session.input_tokens += usage.input_tokens
    session.output_tokens += usage.output_tokens
    if usage.cached_tokens:
        session.state.cached_tokens = cached_total(session) + usage.cached_tokens
    if side:
        apart = session.side_usage
        apart["inputTokens"] = apart.get("inputTokens", 0) + usage.input_tokens
        apart["outputTokens"] = apart.get("outputTokens", 0) + usage.output_tokens
    session.cost_usd = cost_usd(model, session.input_tokens, session.output_tokens)


def cached_total(session: "AgentSession") -> int:
    """The session's input tokens read from the provider's prompt cache (`cachedTokens`)."""
    cached = session.state.cached_tokens
    return cached if isinstance(cached, int) else 0


def side_counter(session: "AgentSession", model: str) -> Callable[[Usage], None]:
    """The `usage` callback of `ask_model` for a side request made for `session`."""
    return lambda usage: count_usage(session, usage, model, side=True)


def side_status(session: "AgentSession", model: str) -> dict[str, Any]:
    """`sideInputTokens`, `sideOutputTokens`, `sideCostUsd` of `shiro/status` (part of the totals)."""
    from .provider.pricing import cost_usd  # noqa: PLC0415

    apart = session.side_usage
    tokens_in, tokens_out = int(apart.get("inputTokens", 0)), int(apart.get("outputTokens", 0))
    return {"sideInputTokens": tokens_in, "sideOutputTokens": tokens_out, "sideCostUsd": cost_usd(model, tokens_in, tokens_out)}
