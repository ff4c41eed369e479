"""The seam between the loop and a model endpoint: one request in, a stream of events out."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Protocol, Union

from ...model.transcript import AssistantMessage, Message

# "tools is not supported", "does not support tools", "tool use is unsupported": endpoints word it
# differently; history errors ("No tool output found ...") must not match.
_TOOLS_UNSUPPORTED = re.compile(
    r"\btools?\b[^.]*\b(not supported|unsupported|not enabled)\b|\b(does not|doesn't) support\b[^.]*\btools?\b",
    re.IGNORECASE,
)


_REASONING_UNSUPPORTED = re.compile(r"\breasoning[._ ]?effort\b|'reasoning'|`reasoning`", re.IGNORECASE)
# "The model `x` does not exist or you do not have access to it." (OpenAI, vLLM), 'model "x" not
# found, try pulling it first' (Ollama), "Invalid model name passed in model=x" (LiteLLM).
_MODEL_UNKNOWN = re.compile(r"\bmodel\b[^.]*\b(does not exist|not found|not exist)\b|\binvalid model\b", re.IGNORECASE)
MODEL_HINT = "the endpoint has no model by that name: /model lists the ones it has (or set `model`)"


@dataclass
class ToolSpec:
    name: str
    description: str
    parameters: dict[str, Any]


@dataclass
class ProviderRequest:
    model: str
    instructions: str
    messages: list[Message]
    tools: list[ToolSpec] = field(default_factory=list)
    # Plain developer/system notes placed before the message at that index (short-term memory).
    inserts: list[tuple[int, str]] = field(default_factory=list)
    # What a retry without tools sends instead: notes that exist to get a tool called are left out.
    tool_free_inserts: list[tuple[int, str]] | None = None
    # And the messages it sends instead: in `supersede` mode the dropped summary took the messages
    # it stands for off the wire, and they go back (server/agent/short_term_memory.py, `apply`).
    tool_free_messages: list[Message] | None = None
    # The `reasoningEffort` setting: Responses `reasoning.effort`, Chat `reasoning_effort`; None
    # leaves it to the endpoint.
    reasoning_effort: str | None = None
    # The images of `messages` as data URLs by ImageRef name (agent/images.py `load`); an image not
    # here goes as a text line saying `images_withheld` (or that it is no longer stored).
    images: dict[str, str] = field(default_factory=dict)
    images_withheld: str = "no longer stored"

    def without_tools(self) -> "ProviderRequest":
        inserts = self.inserts if self.tool_free_inserts is None else self.tool_free_inserts
        messages = self.messages if self.tool_free_messages is None else self.tool_free_messages
        return ProviderRequest(self.model, self.instructions, messages, [], inserts, reasoning_effort=self.reasoning_effort,
                               images=self.images, images_withheld=self.images_withheld)


@dataclass
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    # Of input_tokens, those the provider read from its prompt cache (the repeated prefix).
    cached_tokens: int = 0


def cached_tokens(details: Any) -> int:
    """`cached_tokens` of a usage's details object (both wire APIs); 0 when absent or not a number."""
    value = details.get("cached_tokens") if isinstance(details, dict) else None
    return value if isinstance(value, int) and value >= 0 else 0


@dataclass
class TextDelta:
    text: str


@dataclass
class ReasoningDelta:
    text: str


@dataclass
class RefusalDelta:
    """Streamed text of a refusal (the model declined); the final message marks its part `refusal`."""

    text: str


@dataclass
class OutputStarted:
    """The first output item of this request arrived: from here on a retry would repeat output."""


@dataclass
class Notice:
    message: str


@dataclass
class Completed:
    message: AssistantMessage
    usage: Usage


ProviderEvent = Union[TextDelta, ReasoningDelta, RefusalDelta, OutputStarted, Notice, Completed]


class ProviderError(Exception):
    """A request that failed; `message` is meant for the user."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        param: str | None = None,
        retry_after: float | None = None,
        retryable: bool = False,
        missing_item: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.param = param
        self.retry_after = retry_after
        self.retryable = retryable
        # Set for a 404 naming a stored item the provider no longer holds.
        self.missing_item = missing_item

    @property
    def names_reasoning(self) -> bool:
        """A 400 that refuses the reasoning effort parameter (a model without reasoning; LiteLLM's
        proxy for a model its table does not mark as reasoning: "doesn't support `reasoning.effort`")."""
        if self.status != 400:
            return False
        return (self.param or "").startswith("reasoning") or bool(_REASONING_UNSUPPORTED.search(self.message))

    @property
    def names_model(self) -> bool:
        """A 404 or 400 that says the model does not exist there (not a missing route: a 404 for
        the Responses API is answered by falling back to Chat Completions, which a wrong model
        name must not trigger)."""
        if self.status not in (400, 404):
            return False
        return self.code == "model_not_found" or bool(_MODEL_UNKNOWN.search(self.message))

    @property
    def names_tools(self) -> bool:
        """A 400 that says the endpoint cannot take tools."""
        if self.status != 400:
            return False
        param = self.param or ""
        if param == "tools" or param.startswith("tools[") or param == "tool_choice":
            return True
        return bool(_TOOLS_UNSUPPORTED.search(self.message))


class Provider(Protocol):
    name: str

    def stream(self, request: ProviderRequest) -> AsyncIterator[ProviderEvent]: ...
