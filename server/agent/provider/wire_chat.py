"""The Chat Completions wire format: request body out, stream chunks in.

Chat Completions stores nothing, so every part goes inline and no part gets an `itemId`.
Reasoning cannot be handed back on this API and is left out of requests.
"""

from __future__ import annotations

import json
from typing import Any, AsyncGenerator, AsyncIterator

from ..images import RETURNED_IMAGES, described, placeholder
from ...model.transcript import (
    AssistantMessage,
    ImageRef,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    UserMessage,
)
from .base import (
    Completed,
    cached_tokens,
    OutputStarted,
    ProviderError,
    ProviderEvent,
    ProviderRequest,
    ReasoningDelta,
    RefusalDelta,
    TextDelta,
    Usage,
)


def chat_messages(request: ProviderRequest) -> list[dict[str, Any]]:
    notes: dict[int, list[str]] = {}
    for index, text in request.inserts:
        notes.setdefault(index, []).append(text)
    out: list[dict[str, Any]] = [{"role": "system", "content": request.instructions}]
    for index, message in enumerate([*request.messages, None]):
        for text in notes.get(index, ()):
            out.append({"role": "system", "content": text})
        if message is None:
            break
        if isinstance(message, UserMessage):
            text = "\n\n".join(p.text for p in message.content)
            if message.images:
                out.append({"role": "user", "content": [{"type": "text", "text": text}, *_image_parts(message.images, request)]})
            else:
                out.append({"role": "user", "content": text})
        elif isinstance(message, AssistantMessage):
            # A refusal goes back as plain content: OpenAI-compatible servers that know no
            # `refusal` field still take it, and the model reads what it said.
            text = "".join(p.text for p in message.content if isinstance(p, TextPart))
            calls = [
                {
                    "id": p.tool_call_id,
                    "type": "function",
                    "function": {
                        "name": p.tool_name,
                        "arguments": p.input if isinstance(p.input, str) else json.dumps(p.input, ensure_ascii=False),
                    },
                }
                for p in message.content
                if isinstance(p, ToolCallPart)
            ]
            if not text and not calls:
                continue  # a reasoning-only response has nothing this API can carry
            entry: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif isinstance(message, ToolMessage):
            for result in message.content:
                out.append({"role": "tool", "tool_call_id": result.tool_call_id, "content": result.output})
            # A tool message carries text only: the images a call returned (read_file) follow the
            # step's results as a user message (agent/images.py).
            returned = [ref for result in message.content for ref in result.images]
            if returned:
                out.append({"role": "user", "content": [{"type": "text", "text": RETURNED_IMAGES}, *_image_parts(returned, request)]})
    return out


def _image_parts(refs: list[ImageRef], request: ProviderRequest) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for ref in refs:
        url = request.images.get(ref.name)
        if url is None:
            parts.append({"type": "text", "text": placeholder(ref, request.images_withheld)})
        else:
            parts.append({"type": "text", "text": described(ref)})
            parts.append({"type": "image_url", "image_url": {"url": url}})
    return parts


def request_body(request: ProviderRequest) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "messages": chat_messages(request),
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if request.reasoning_effort is not None:
        body["reasoning_effort"] = request.reasoning_effort
    if request.tools:
        body["tools"] = [
            {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
            for t in request.tools
        ]
    return body


async def parse_stream(chunks: AsyncIterator[dict[str, Any]]) -> AsyncGenerator[ProviderEvent, None]:
    text: list[str] = []
    reasoning: list[str] = []
    refusal: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    usage = Usage()
    finished = False
    started = False
    async for chunk in chunks:
        if chunk.get("usage"):
            u = chunk["usage"]
            usage = Usage(int(u.get("prompt_tokens") or 0), int(u.get("completion_tokens") or 0),
                          cached_tokens(u.get("prompt_tokens_details")))
        for choice in chunk.get("choices") or []:
            delta = choice.get("delta") or {}
            if not started and (
                delta.get("content") or delta.get("reasoning_content") or delta.get("refusal") or delta.get("tool_calls")
            ):
                started = True
                yield OutputStarted()
            if delta.get("reasoning_content"):
                reasoning.append(delta["reasoning_content"])
                yield ReasoningDelta(delta["reasoning_content"])
            if delta.get("content"):
                text.append(delta["content"])
                yield TextDelta(delta["content"])
            if delta.get("refusal"):  # the model declined (`delta.refusal`, content stays null)
                refusal.append(delta["refusal"])
                yield RefusalDelta(delta["refusal"])
            for call in delta.get("tool_calls") or []:
                slot = calls.setdefault(int(call.get("index", 0)), {"id": None, "name": "", "arguments": ""})
                if call.get("id"):
                    slot["id"] = call["id"]
                function = call.get("function") or {}
                if function.get("name"):
                    slot["name"] += function["name"]
                if function.get("arguments"):
                    slot["arguments"] += function["arguments"]
            if choice.get("finish_reason"):
                finished = True
    if not finished:
        raise ProviderError("the stream ended before the response completed", retryable=True)
    parts: list[TextPart | ReasoningPart | ToolCallPart] = []
    if reasoning:
        parts.append(ReasoningPart(text="".join(reasoning)))
    if text:
        parts.append(TextPart(text="".join(text)))
    if refusal:
        parts.append(TextPart(text="".join(refusal), refusal=True))
    for index in sorted(calls):
        slot = calls[index]
        try:
            parsed: Any = json.loads(slot["arguments"] or "{}")
        except ValueError:
            parsed = slot["arguments"]
        parts.append(ToolCallPart(tool_call_id=slot["id"] or f"call_{index}", tool_name=slot["name"], input=parsed))
    yield Completed(AssistantMessage(content=parts), usage)
