"""The Responses API wire format: request body out, stream events in.

Stored output items (parts with an `itemId`) are sent as `item_reference`, the way the seed
describes; anything without an id is sent inline and carries no dependency on provider storage.
Every body is one the openai SDK's request types accept (the test fake checks them on every
request): inline assistant text is string content, and inline reasoning is left out.
"""

from __future__ import annotations

import json
from typing import Any, AsyncGenerator, AsyncIterator, Iterable

from ..images import RETURNED_IMAGES, described, placeholder
from ...model.transcript import (
    AssistantMessage,
    ImageRef,
    Message,
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


def _arguments(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _assistant_items(message: AssistantMessage, store: bool) -> Iterable[dict[str, Any]]:
    referenced: set[str] = set()
    for part in message.content:
        if store and part.item_id:
            # One stored item can back several parts (a message with several text parts).
            if part.item_id not in referenced:
                referenced.add(part.item_id)
                yield {"type": "item_reference", "id": part.item_id}
            continue
        if isinstance(part, TextPart):
            if part.text:
                # Inline, an assistant message is the SDK's EasyInputMessageParam with string content:
                # an `output_text`/`refusal` content list is only valid on an output message, which
                # requires the `id` and `status` of a stored item. A refusal goes back as the words
                # the model declined with, so it still sees that it declined.
                yield {"role": "assistant", "content": part.text}
        elif isinstance(part, ReasoningPart):
            # Inline reasoning is not sent: the API requires its `id` (`Missing required parameter:
            # 'input[N].id'`), and an id is a pointer into provider storage, which an inline history
            # exists not to depend on (docs/context.md, "Reasoning on the wire"). Stored reasoning
            # goes by reference above.
            continue
        elif isinstance(part, ToolCallPart):
            yield {
                "type": "function_call",
                "call_id": part.tool_call_id,
                "name": part.tool_name,
                "arguments": _arguments(part.input),
            }


def input_items(messages: list[Message], inserts: list[tuple[int, str]], store: bool,
                images: dict[str, str] | None = None, withheld: str = "") -> list[dict[str, Any]]:
    images = images or {}
    notes: dict[int, list[str]] = {}
    for index, text in inserts:
        notes.setdefault(index, []).append(text)
    items: list[dict[str, Any]] = []
    for index, message in enumerate([*messages, None]):
        for text in notes.get(index, ()):
            items.append({"role": "developer", "content": text})
        if message is None:
            break
        if isinstance(message, UserMessage):
            items.append(
                {
                    "role": "user",
                    "content": [{"type": "input_text", "text": p.text} for p in message.content]
                    + _image_parts(message.images, images, withheld),
                }
            )
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, store))
        elif isinstance(message, ToolMessage):
            for result in message.content:
                items.append(
                    {"type": "function_call_output", "call_id": result.tool_call_id, "output": result.output}
                )
            # The images a call returned (read_file) follow the step's outputs as a user message,
            # as on the Chat wire: OpenAI-compatible servers differ on images inside an output.
            returned = [ref for result in message.content for ref in result.images]
            if returned:
                items.append({"role": "user", "content": [{"type": "input_text", "text": RETURNED_IMAGES},
                                                          *_image_parts(returned, images, withheld)]})
    return items


def _image_parts(refs: list[ImageRef], images: dict[str, str], withheld: str) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = []
    for ref in refs:
        url = images.get(ref.name)
        if url is None:
            parts.append({"type": "input_text", "text": placeholder(ref, withheld)})
        else:
            parts.append({"type": "input_text", "text": described(ref)})
            parts.append({"type": "input_image", "image_url": url, "detail": "auto"})
    return parts


def request_body(request: ProviderRequest, store: bool) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": request.model,
        "instructions": request.instructions,
        "input": input_items(request.messages, request.inserts, store, request.images, request.images_withheld),
        "stream": True,
        "store": store,
        "include": ["reasoning.encrypted_content"],
    }
    if request.reasoning_effort is not None:
        body["reasoning"] = {"effort": request.reasoning_effort, "summary": "auto"}
    if request.tools:
        body["tools"] = [
            {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": False}
            for t in request.tools
        ]
    return body


def _part_from_item(item: dict[str, Any], store: bool) -> list[TextPart | ReasoningPart | ToolCallPart]:
    item_id = item.get("id") if store else None
    kind = item.get("type")
    if kind == "message":
        content = item.get("content") or []
        text = "".join(c.get("text", "") for c in content if c.get("type") == "output_text")
        refusal = "".join(c.get("refusal", "") for c in content if c.get("type") == "refusal")
        parts: list[TextPart | ReasoningPart | ToolCallPart] = []
        if text or not refusal:
            parts.append(TextPart(text=text, item_id=item_id))
        if refusal:
            parts.append(TextPart(text=refusal, item_id=item_id, refusal=True))
        return parts
    if kind == "reasoning":
        summary = "\n\n".join(s.get("text", "") for s in item.get("summary") or [])
        return [ReasoningPart(text=summary, item_id=item_id, encrypted_content=item.get("encrypted_content"))]
    if kind == "function_call":
        raw = item.get("arguments") or "{}"
        try:
            parsed: Any = json.loads(raw)
        except ValueError:
            parsed = raw  # kept as the model sent it; the tool runner reports the bad JSON
        return [ToolCallPart(tool_call_id=item["call_id"], tool_name=item["name"], input=parsed, item_id=item_id)]
    return []


def _error_from_payload(payload: dict[str, Any] | None, fallback: str) -> ProviderError:
    payload = payload or {}
    message = payload.get("message") or fallback
    code = payload.get("code")
    retryable = code in (None, "server_error", "rate_limit_exceeded")
    return ProviderError(message, code=code, retryable=retryable)


async def parse_stream(events: AsyncIterator[dict[str, Any]], store: bool) -> AsyncGenerator[ProviderEvent, None]:
    """Turn Responses SSE events (plain dicts) into provider events; the message comes last."""
    done_items: dict[int, dict[str, Any]] = {}
    refusals_streamed: set[tuple[Any, Any]] = set()  # (item_id, content_index) that had deltas
    started = False
    async for event in events:
        kind = event.get("type", "")
        if kind == "response.output_item.added":
            if not started:
                started = True
                yield OutputStarted()
        elif kind == "response.output_text.delta":
            yield TextDelta(event.get("delta", ""))
        elif kind == "response.refusal.delta":
            refusals_streamed.add((event.get("item_id"), event.get("content_index")))
            yield RefusalDelta(event.get("delta", ""))
        elif kind == "response.refusal.done":
            # An endpoint that sends the refusal whole, without deltas, is still shown.
            if (event.get("item_id"), event.get("content_index")) not in refusals_streamed and event.get("refusal"):
                yield RefusalDelta(event["refusal"])
        elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
            yield ReasoningDelta(event.get("delta", ""))
        elif kind == "response.output_item.done":
            done_items[int(event.get("output_index", len(done_items)))] = event["item"]
        elif kind in ("response.completed", "response.incomplete"):
            response = event.get("response") or {}
            output = response.get("output") or [done_items[i] for i in sorted(done_items)]
            parts = [p for item in output for p in _part_from_item(item, store)]
            usage = response.get("usage") or {}
            yield Completed(
                AssistantMessage(content=parts),
                Usage(int(usage.get("input_tokens") or 0), int(usage.get("output_tokens") or 0),
                      cached_tokens(usage.get("input_tokens_details"))),
            )
            return
        elif kind == "response.failed":
            response = event.get("response") or {}
            raise _error_from_payload(response.get("error"), "the provider reported the response as failed")
        elif kind == "error":
            raise _error_from_payload(event, "the provider sent an error in the stream")
    raise ProviderError("the stream ended before the response completed", retryable=True)
