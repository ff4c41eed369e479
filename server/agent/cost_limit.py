"""`maxCostUsd` (`shiro -p --max-cost-usd N`): a turn stops before a request that would pass it.

The next request's cost is estimated before it is sent: its input tokens (the transcript's
estimate, model/transcript.py `estimate_tokens`, plus the instructions and tool definitions) at
the model's input price (provider/pricing.py), on top of what the turn's requests (side
requests included) cost so far. Its output is not known in advance, so a turn may still end a
little past the limit by the last response's output; it never sends a request whose input alone
would pass it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model.transcript import estimate_tokens

if TYPE_CHECKING:
    from .provider.base import ProviderRequest
    from .session import AgentSession


class CostLimitReached(Exception):
    """The request was not sent; the message is the notice the user sees."""


@dataclass
class TurnSpend:
    """The session's token totals when the turn started (what the turn spent is the difference)."""

    input_tokens: int
    output_tokens: int
    unpriced_told: bool = False

    @classmethod
    def at_start(cls, session: "AgentSession") -> "TurnSpend":
        return cls(session.input_tokens, session.output_tokens)


def request_tokens(request: "ProviderRequest") -> int:
    tools = json.dumps([[t.name, t.description, t.parameters] for t in request.tools])
    notes = sum(len(text) for _, text in request.inserts)
    return estimate_tokens(request.messages) + (len(request.instructions) + len(tools) + notes) // 4


def check(session: "AgentSession", request: "ProviderRequest", limit: float | None, spend: TurnSpend) -> str | None:
    """None when the request may go; a notice for the user when the model's price is unknown
    (once per turn: the request goes); CostLimitReached when it would pass the limit."""
    if limit is None:
        return None
    from .provider.pricing import price  # noqa: PLC0415 - as usage.py: only when a limit is set

    known = price(request.model)
    if known is None:
        if spend.unpriced_told:
            return None
        spend.unpriced_told = True
        return (f"maxCostUsd is {limit:g} but the price of {request.model} is not known: "
                "the limit cannot be checked for this turn")
    per_input, per_output = known
    spent = ((session.input_tokens - spend.input_tokens) * per_input
             + (session.output_tokens - spend.output_tokens) * per_output) / 1_000_000
    tokens = request_tokens(request)
    estimate = spent + tokens * per_input / 1_000_000
    if estimate > limit:
        raise CostLimitReached(
            f"cost limit: stopped before the next request (about {tokens} input tokens, ~${estimate:.4f} "
            f"with this turn's ${spent:.4f} so far) would pass maxCostUsd = ${limit:g}; "
            "raise it (--max-cost-usd, the maxCostUsd setting) or send a prompt to continue")
    return None
