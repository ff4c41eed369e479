"""List prices of well-known OpenAI models, for the `costUsd` of a session (beside the adapter
that talks to them).

USD per 1M tokens (input, output), OpenAI's published list prices for standard processing as
known when this table was written. Cached-input discounts, batch and flex tiers are not modelled
(the session only counts input and output tokens), so for prompt-cached turns the figure is an
upper bound. A model not in the table has no price: `cost_usd` answers None, never 0, so the
status bar can show "unknown" rather than a misleading $0.00.
"""

from __future__ import annotations

import re

PRICES: dict[str, tuple[float, float]] = {
    "gpt-5": (1.25, 10.00),
    "gpt-5-mini": (0.25, 2.00),
    "gpt-5-nano": (0.05, 0.40),
    "gpt-4.1": (2.00, 8.00),
    "gpt-4.1-mini": (0.40, 1.60),
    "gpt-4.1-nano": (0.10, 0.40),
    "gpt-4o": (2.50, 10.00),
    "gpt-4o-mini": (0.15, 0.60),
    "o3": (2.00, 8.00),
    "o4-mini": (1.10, 4.40),
}

# Dated snapshots ("gpt-4.1-2025-04-14") cost what their alias costs, except the first gpt-4o
# snapshot, which was priced higher: it is left unknown rather than priced wrong.
_SNAPSHOT = re.compile(r"^(?P<base>.+)-\d{4}-\d{2}-\d{2}$")
_NOT_ALIAS_PRICED = {"gpt-4o-2024-05-13"}


def price(model: str) -> tuple[float, float] | None:
    """(input, output) USD per 1M tokens, or None when the model's price is not known."""
    name = model.strip().lower()
    if name.startswith("openai/"):  # provider-prefixed names used by some gateways
        name = name[len("openai/") :]
    if name in PRICES:
        return PRICES[name]
    match = _SNAPSHOT.match(name)
    if match and name not in _NOT_ALIAS_PRICED:
        return PRICES.get(match["base"])
    return None


def cost_usd(model: str, input_tokens: int, output_tokens: int) -> float | None:
    """Cost of the tokens at list price, None for a model without a known price."""
    known = price(model)
    if known is None:
        return None
    per_input, per_output = known
    return round((input_tokens * per_input + output_tokens * per_output) / 1_000_000, 6)
