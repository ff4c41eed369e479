"""A tool-less request beside the conversation (`/memory`, `/compact`, pruned-span summaries)."""

from __future__ import annotations

from .provider.base import Completed, Provider, ProviderError, ProviderRequest
from ..model.transcript import UserMessage, TextPart, final_text


async def ask_model(provider: Provider, model: str, instructions: str, text: str) -> str:
    """The model's whole text answer; side requests are sent without tools."""
    request = ProviderRequest(model, instructions, [UserMessage(content=[TextPart(text=text)])], [])
    async for event in provider.stream(request):
        if isinstance(event, Completed):
            return final_text(event.message)
    raise ProviderError("the provider stream ended without a response")
