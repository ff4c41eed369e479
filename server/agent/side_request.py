"""A tool-less request beside the conversation (`/memory`, `/compact`, pruned-span summaries)."""

from __future__ import annotations

from typing import Callable

from .provider.base import Completed, Provider, ProviderError, ProviderRequest, Usage
from ..model.transcript import UserMessage, TextPart, final_text, refused


async def ask_model(
    provider: Provider, model: str, instructions: str, text: str, usage: Callable[[Usage], None] | None = None
) -> str:
    """The model's whole text answer; side requests are sent without tools. `usage` hears what
    the request spent (a side request costs the session too: agent/usage.py)."""
    request = ProviderRequest(model, instructions, [UserMessage(content=[TextPart(text=text)])], [])
    async for event in provider.stream(request):
        if isinstance(event, Completed):
            if usage is not None:
                usage(event.usage)
            if refused(event.message):
                # A refusal is no summary: taking it as one would replace the history with it.
                raise ProviderError(f"the model declined: {final_text(event.message)}")
            return final_text(event.message)
    raise ProviderError("the provider stream ended without a response")
