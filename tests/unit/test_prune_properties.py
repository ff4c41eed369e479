"""Pruning properties on random transcripts, checked against the fake provider's validators.

Transcripts: user prompts; assistant responses with text, reasoning (with or without an item id
and encrypted content) and several tool calls (with or without item ids); one tool message per
step answering every call of that step; interrupted turns (text without ids); sometimes a trailing
call still waiting for approval. Budgets: anything from 1 token to more than the transcript.

SHIRO_FULL_PROPERTIES=1 runs about seven times as many examples (300 -> 2000 for the main property).
"""

from __future__ import annotations

import itertools
import json
import os
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shiro_neko.agent import prune as prune_mod
from shiro_neko.agent.prune import LADDER_STEPS, marker_text, prune_for_wire
from shiro_neko.agent.provider import wire_chat, wire_responses
from shiro_neko.agent.provider.base import ProviderRequest
from shiro_neko.model.transcript import (
    AssistantMessage,
    Message,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
    encode_messages,
    estimate_tokens,
    pending_calls,
)
from tests.fake_provider import FakeProvider

FULL = os.environ.get("SHIRO_FULL_PROPERTIES") == "1"
EXAMPLES = 2000 if FULL else 300
PROPERTY_SETTINGS = settings(max_examples=EXAMPLES, deadline=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

words = st.text(alphabet=st.sampled_from("abc xyz_é→\"\\\n"), max_size=12)


def sized(draw: Any, what: str, high: int) -> str:
    """A text of a drawn length (long texts are what pruning is about), with some odd characters."""
    return draw(words) + what * draw(st.integers(0, high))


@st.composite
def transcripts(draw: Any) -> tuple[list[Message], list[tuple[str, list[dict[str, Any]]]]]:
    """A transcript, and the output items a provider would hold for it: (response id, items)."""
    ids = itertools.count()
    messages: list[Message] = []
    stored: list[tuple[str, list[dict[str, Any]]]] = []
    for _ in range(draw(st.integers(1, 8))):
        messages.append(UserMessage(content=[TextPart(text=sized(draw, "u", 300))]))
        for _ in range(draw(st.integers(0, 8))):
            n = next(ids)
            if draw(st.integers(0, 9)) == 0:  # interrupted: the text received, no ids, turn over
                messages.append(AssistantMessage(content=[TextPart(text=sized(draw, "i", 200))]))
                break
            store = draw(st.booleans())

            def item_id(prefix: str, k: int = 0) -> str | None:
                return f"{prefix}_{n}_{k}" if store and draw(st.integers(0, 5)) else None

            parts: list[Any] = []
            if draw(st.booleans()):
                parts.append(ReasoningPart(text=sized(draw, "r", 400), item_id=item_id("rs"),
                                           encrypted_content=draw(st.sampled_from([None, "gAAAA" + "e" * 300]))))
            for k in range(draw(st.integers(0, 2))):
                parts.append(TextPart(text=sized(draw, "t", 300), item_id=item_id("msg", k)))
            calls = [
                ToolCallPart(tool_call_id=f"call_{n}_{k}", tool_name=draw(st.sampled_from(["read_file", "grep"])),
                             input={"path": sized(draw, "p", 30)}, item_id=item_id("fc", k))
                for k in range(draw(st.integers(0, 3)))
            ]
            parts += calls
            message = AssistantMessage(content=parts)
            messages.append(message)
            items = [_item(p) for p in parts if p.item_id]
            if items:
                stored.append((f"resp_{n}", items))
            if not calls:
                break  # a response without calls ends the turn
            messages.append(ToolMessage(content=[
                ToolResultPart(tool_call_id=c.tool_call_id, tool_name=c.tool_name, output=sized(draw, "o", 3000),
                               is_error=draw(st.booleans()))
                for c in calls
            ]))
    if draw(st.integers(0, 3)) == 0:  # a call waiting for approval ends the transcript
        n = next(ids)
        messages.append(AssistantMessage(content=[
            TextPart(text="may I?", item_id=f"msg_{n}_0"),
            ToolCallPart(tool_call_id=f"call_{n}_p", tool_name="run_command", input={"cmd": "ls"}, item_id=f"fc_{n}_p"),
        ]))
        stored.append((f"resp_{n}", [_item(p) for p in messages[-1].content]))
    return messages, stored


def _item(part: Any) -> dict[str, Any]:
    if isinstance(part, ReasoningPart):
        return {"id": part.item_id, "type": "reasoning", "summary": []}
    if isinstance(part, TextPart):
        return {"id": part.item_id, "type": "message", "role": "assistant",
                "content": [{"type": "output_text", "text": part.text}]}
    return {"id": part.item_id, "type": "function_call", "call_id": part.tool_call_id, "name": part.tool_name,
            "arguments": json.dumps(part.input)}


def provider_holding(stored: list[tuple[str, list[dict[str, Any]]]]) -> FakeProvider:
    """A fake provider (not started) that holds exactly the items the transcript references."""
    fake = FakeProvider()
    for response_id, items in stored:
        fake._store_output(response_id, items, True)
    return fake


def validate(fake: FakeProvider, messages: list[Message]) -> None:
    request = ProviderRequest("fake-model", "You are a test.", messages)
    fake._validate_responses(wire_responses.request_body(request, store=True))
    fake._validate_chat(wire_chat.request_body(request))


@st.composite
def cases(draw: Any) -> tuple[list[Message], list[tuple[str, list[dict[str, Any]]]], int]:
    messages, stored = draw(transcripts())
    full = estimate_tokens(messages)
    budget = draw(st.one_of(st.integers(1, max(1, full + 50)), st.integers(full * 3 // 4, full + 5)))
    return messages, stored, budget


@PROPERTY_SETTINGS
@given(cases(), st.booleans())
def test_pruned_views_keep_what_must_stay_and_pass_the_provider(
    case: tuple[list[Message], list[tuple[str, list[dict[str, Any]]]], int], with_summaries: bool
) -> None:
    messages, stored, budget = case
    fake = provider_holding(stored)
    pending = pending_calls(messages)
    if not pending:
        validate(fake, messages)  # the generator makes histories the provider accepts

    snapshot = encode_messages(messages)
    first = prune_for_wire(messages, budget)
    summaries = {s.key: f"summary of {s.start}..{s.end}: read é\"files\"" for s in first.spans} if with_summaries else {}
    view = prune_for_wire(messages, budget, summaries) if with_summaries else first

    # (a) the input is unchanged
    assert encode_messages(messages) == snapshot

    # (b) the newest user message and every pending call survive
    users = [m for m in messages if isinstance(m, UserMessage)]
    assert users[-1] in view.messages
    view_calls = {(p.tool_call_id, p.tool_name, json.dumps(p.input)) for m in view.messages
                  if isinstance(m, AssistantMessage) for p in m.content if isinstance(p, ToolCallPart)}
    assert {(p.tool_call_id, p.tool_name, json.dumps(p.input)) for p in pending} <= view_calls
    assert {p.tool_call_id for p in pending_calls(view.messages)} == {p.tool_call_id for p in pending}

    # (c) without a pending call the view passes both APIs' validation
    if not pending:
        validate(fake, view.messages)

    # (d) no tool result without its call earlier; a pruned view sends no empty message
    seen: set[str] = set()
    for m in view.messages:
        if isinstance(m, AssistantMessage):
            assert m.content or not view.pruned, "an empty assistant message was sent"
            seen.update(p.tool_call_id for p in m.content if isinstance(p, ToolCallPart))
        elif isinstance(m, ToolMessage):
            assert m.content or not view.pruned, "an empty tool message was sent"
            assert all(r.tool_call_id in seen for r in m.content)

    # (e) a pruned view references nothing stored and carries no provider id
    if view.pruned:
        body = wire_responses.request_body(ProviderRequest("m", "", view.messages), store=True)
        assert not any(item.get("type") == "item_reference" for item in body["input"])
        assert not any(p.item_id for m in view.messages if isinstance(m, AssistantMessage) for p in m.content)
        assert not any(isinstance(p, ReasoningPart) for m in view.messages if isinstance(m, AssistantMessage)
                       for p in m.content)

    # The figures: fits -> unchanged; otherwise within budget unless the ladder ran out.
    assert view.tokens == estimate_tokens(view.messages)
    if estimate_tokens(messages) <= budget:
        assert not view.pruned and view.messages == messages and view.steps == 0
    else:
        assert view.pruned and 1 <= view.steps <= LADDER_STEPS
        assert view.steps == LADDER_STEPS or view.tokens <= budget
    marks = [m for m in view.messages if isinstance(m, UserMessage) and m not in users]
    # One marker message per place; spans with nothing kept between them share one.
    assert (1 <= len(marks) <= len(view.spans)) if view.spans else not marks
    for a, b in zip(view.spans, view.spans[1:]):
        assert a.end <= b.start
    for span in view.spans:
        assert 0 <= span.start < span.end <= len(messages) and span.removed
        assert any(marker_text(span, summaries.get(span.key)) in m.content[0].text for m in marks)
    # Deterministic: the same input gives the same view and the same span keys.
    again = prune_for_wire(messages, budget, summaries)
    assert encode_messages(again.messages) == encode_messages(view.messages)
    assert [s.key for s in again.spans] == [s.key for s in view.spans]


@settings(max_examples=EXAMPLES // 3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(transcripts())
def test_more_budget_never_sends_less(case: tuple[list[Message], list[tuple[str, list[dict[str, Any]]]]]) -> None:
    messages, _ = case
    full = estimate_tokens(messages)
    budgets = sorted({1, full // 8, full // 4, full // 2, full - 1, full})
    sizes = [prune_for_wire(messages, b).tokens for b in budgets]
    # A view that fits a smaller budget also fits a larger one, and the ladder stops at the first fit.
    for (b1, s1), (b2, s2) in itertools.pairwise(zip(budgets, sizes)):
        if s1 <= b1:
            assert s2 <= b2


@settings(max_examples=EXAMPLES // 3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases())
def test_the_summed_estimate_decides_like_whole_view_estimates(
    case: tuple[list[Message], list[tuple[str, list[dict[str, Any]]]], int]
) -> None:
    messages, _, budget = case
    summaries = {s.key: "a summary" for s in prune_for_wire(messages, budget).spans[::2]}
    fast = prune_for_wire(messages, budget, summaries)
    slow = prune_for_wire(messages, budget, summaries, estimate=lambda ms: estimate_tokens(ms))
    assert encode_messages(fast.messages) == encode_messages(slow.messages)
    assert (fast.steps, fast.tokens, fast.spans) == (slow.steps, slow.tokens, slow.spans)


_EDGY_TEXT = st.one_of(
    st.text(alphabet=" \n\t\u3000ab", max_size=300),
    st.builds(lambda a, b, c: " " * a + "x" * b + "\n" * c,
              st.integers(0, 9_000), st.integers(0, 3), st.integers(0, 9_000)),
)


@settings(max_examples=200, deadline=None)
@given(_EDGY_TEXT, st.sampled_from([0, 3, 400, 2_000, 10_000]))
def test_a_clipped_text_is_the_stripped_text_clipped(text: str, limit: int) -> None:
    """_clip strips only the edges of a long text (a 50 MB prompt is not copied to be clipped):
    the same result as stripping it whole."""
    whole = text.strip()
    expected = whole if len(whole) <= limit else f"{whole[:limit]}… [{len(whole) - limit} more characters]"
    assert prune_mod._clip(text, limit) == expected
