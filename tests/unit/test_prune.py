"""Automatic pruning of the wire view: one example per rule (prune.py, docs/context.md)."""

from __future__ import annotations

import msgspec
import pytest

from shiro_neko.agent import prune as prune_mod
from shiro_neko.agent.prune import (
    LADDER_STEPS,
    PrunedSpan,
    drop_orphaned_results,
    marker_text,
    prune_for_wire,
    summary_request,
)
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
from tests.support.builders import call, long_task, markers, results, step, user


def item_ids(messages: list[Message]) -> list[str]:
    return [p.item_id for m in messages if isinstance(m, AssistantMessage) for p in m.content if p.item_id]


def call_ids(messages: list[Message]) -> set[str]:
    return {p.tool_call_id for m in messages if isinstance(m, AssistantMessage) for p in m.content
            if isinstance(p, ToolCallPart)}


def result_ids(messages: list[Message]) -> set[str]:
    return {r.tool_call_id for m in messages if isinstance(m, ToolMessage) for r in m.content}


def validate_both(messages: list[Message]) -> None:
    fake = FakeProvider()
    request = ProviderRequest("m", "sys", messages)
    fake._validate_responses(wire_responses.request_body(request, store=True))
    fake._validate_chat(wire_chat.request_body(request))


# ------------------------------------------------------------------------------------- fits


def test_fits_returns_the_messages_unchanged_with_their_ids() -> None:
    messages = long_task(1, 3)
    view = prune_for_wire(messages, estimate_tokens(messages))
    assert view.pruned is False and view.steps == 0 and view.spans == []
    assert view.messages == messages and view.messages is not messages
    assert all(a is b for a, b in zip(view.messages, messages))
    assert item_ids(view.messages) == item_ids(messages)
    assert view.tokens == estimate_tokens(messages)


# ------------------------------------------------------------------------------------- rung 1


def test_reasoning_is_stripped_first_and_tool_history_stays() -> None:
    messages = long_task(2, 10, output="short")
    without_reasoning = [
        AssistantMessage(content=[p for p in m.content if not isinstance(p, ReasoningPart)])
        if isinstance(m, AssistantMessage) else m
        for m in messages
    ]
    budget = estimate_tokens(without_reasoning)  # fits once reasoning (and item ids) are gone
    view = prune_for_wire(messages, budget)
    assert view.pruned and view.steps == 1 and view.spans == []
    assert not any(isinstance(p, ReasoningPart) for m in view.messages if isinstance(m, AssistantMessage)
                   for p in m.content)
    assert call_ids(view.messages) == call_ids(messages)
    assert result_ids(view.messages) == result_ids(messages)
    assert item_ids(view.messages) == []  # every provider id stripped once pruned
    assert not markers(view.messages)  # reasoning alone is no loss worth a marker
    validate_both(view.messages)


def test_a_reasoning_only_response_disappears_without_a_marker() -> None:
    messages = [user("hi"), AssistantMessage(content=[ReasoningPart(text="r" * 4000, item_id="rs_1")]),
                AssistantMessage(content=[TextPart(text="hello", item_id="msg_2")])]
    view = prune_for_wire(messages, 100)
    assert view.messages == [user("hi"), AssistantMessage(content=[TextPart(text="hello")])]
    assert view.steps == 1 and view.spans == []


# ------------------------------------------------------------------------------------- repairs


def test_a_pruned_view_sends_a_response_inline_where_the_reference_would_be_rejected() -> None:
    """The repair for "message without its reasoning item": every pruned view goes inline."""
    fake = FakeProvider()
    fake._store_output("resp_1", [{"id": "rs_1", "type": "reasoning", "summary": []},
                                  {"id": "msg_1", "type": "message", "role": "assistant", "content": []}], True)
    messages = [user("q"), AssistantMessage(content=[ReasoningPart(text="r" * 2000, item_id="rs_1"),
                                                     TextPart(text="a", item_id="msg_1")]), user("next")]
    body = lambda ms: wire_responses.request_body(ProviderRequest("m", "", ms), store=True)  # noqa: E731
    kept_id = [messages[0], AssistantMessage(content=[TextPart(text="a", item_id="msg_1")]), messages[2]]
    with pytest.raises(Exception, match="without its required 'reasoning' item"):
        fake._validate_responses(body(kept_id))  # what stripping reasoning alone would send
    view = prune_for_wire(messages, 100)
    assert view.steps == 1 and view.messages[1] == AssistantMessage(content=[TextPart(text="a")])
    fake._validate_responses(body(view.messages))


def test_drop_orphaned_results_keeps_pending_calls() -> None:
    messages = [
        user("q"),
        results(("gone", "lost call")),  # its call was pruned
        AssistantMessage(content=[call("c1"), call("c2")]),
        ToolMessage(content=[ToolResultPart(tool_call_id="c1", tool_name="read_file", output="1"),
                             ToolResultPart(tool_call_id="old", tool_name="read_file", output="2")]),
        AssistantMessage(content=[call("c3")]),  # waiting for approval: no result yet
    ]
    snapshot = encode_messages(messages)
    out = drop_orphaned_results(messages)
    assert encode_messages(messages) == snapshot
    assert out == [messages[0], messages[2], results(("c1", "1")), messages[4]]
    assert pending_calls(out)[-1].tool_call_id == "c3"
    assert drop_orphaned_results([user("q"), ToolMessage(content=[])]) == [user("q")]


# ------------------------------------------------------------------------------------- rungs 2..


def test_old_tool_calls_and_results_go_first_and_assistant_text_stays() -> None:
    messages = long_task(3, 40)
    view = prune_for_wire(messages, estimate_tokens(messages) * 2 // 3)
    assert view.pruned and 2 <= view.steps < LADDER_STEPS
    # Every message still there except the emptied tool messages; the text of every response stays.
    texts = [p.text for m in messages if isinstance(m, AssistantMessage) for p in m.content if isinstance(p, TextPart)]
    kept_texts = [p.text for m in view.messages if isinstance(m, AssistantMessage) for p in m.content
                  if isinstance(p, TextPart)]
    assert kept_texts == texts
    assert [m for m in view.messages if isinstance(m, UserMessage) and not markers([m])] == \
        [m for m in messages if isinstance(m, UserMessage)]
    # The most recent calls are intact, the oldest are gone, and pairs stay pairs.
    assert "call_119" in call_ids(view.messages) and "call_0" not in call_ids(view.messages)
    assert call_ids(view.messages) == result_ids(view.messages)
    assert view.tokens == estimate_tokens(view.messages) <= estimate_tokens(messages) * 2 // 3
    validate_both(view.messages)


def test_the_last_rung_keeps_the_newest_prompt_what_follows_and_pending_calls() -> None:
    messages = long_task(3, 10, output="y" * 2000)
    messages += [user("the newest prompt"), *step(900, output="z" * 3000, text="on it"),
                 AssistantMessage(content=[TextPart(text="may I run it?", item_id="msg_p"),
                                           call("call_pending", "run_command", item_id="fc_p")])]
    view = prune_for_wire(messages, 10)  # cannot fit: every rung runs, then the view goes as it is
    assert view.steps == LADDER_STEPS and view.pruned
    tail = view.messages[-4:]
    assert tail[0] == user("the newest prompt")
    assert tail[1] == AssistantMessage(content=[TextPart(text="on it"), call("call_900", path="f900.py")])
    assert tail[2] == results(("call_900", "z" * 3000))
    assert tail[3] == AssistantMessage(content=[TextPart(text="may I run it?"), call("call_pending", "run_command")])
    assert [p.tool_call_id for p in pending_calls(view.messages)] == ["call_pending"]
    # Everything older than the newest prompt is gone, the first prompt too (it goes last), and
    # one marker stands in its place.
    assert len(view.messages) == 5 and markers(view.messages[:1])


def test_the_first_prompt_is_the_last_old_message_dropped() -> None:
    messages = [user("p" * 400), *step(1, output="o" * 4000, text="t" * 400), user("now"),
                AssistantMessage(content=[TextPart(text="ok")])]
    keep_first = estimate_tokens([messages[0], user("m" * 300), *messages[3:]])
    view = prune_for_wire(messages, keep_first)
    assert view.messages[0] == messages[0] and view.messages[-2:] == messages[3:]
    view = prune_for_wire(messages, 50)
    assert view.messages[0] != messages[0] and markers(view.messages[:1])
    assert view.messages[-2:] == messages[3:]


def test_a_pending_call_in_old_history_is_kept_with_its_message() -> None:
    messages = [user("go"), AssistantMessage(content=[TextPart(text="asking"), call("call_p")]),
                *long_task(1, 30)]
    view = prune_for_wire(messages, 200)
    assert any(isinstance(p, ToolCallPart) and p.tool_call_id == "call_p" for m in view.messages
               if isinstance(m, AssistantMessage) for p in m.content)


# ------------------------------------------------------------------------------------- markers


def test_marker_without_summary_then_with_it_where_the_span_was() -> None:
    messages = long_task(3, 40)
    budget = estimate_tokens(messages) // 2
    view = prune_for_wire(messages, budget)
    assert len(view.spans) >= 2  # cut by size (half the budget), inside one prompt's steps too
    first = view.spans[0]
    assert first.start == 1 and first.removed and all(messages[i] in first.removed for i in (1, 2))
    assert all(a.end <= b.start for a, b in zip(view.spans, view.spans[1:]))
    marks = markers(view.messages)
    assert "".join(marks).count("No summary") == len(view.spans)
    assert view.messages[0] == messages[0] and "history was pruned" in view.messages[1].content[0].text
    assert marker_text(first, None) in marks[0]

    summaries = {s.key: f"- goal: tasks, part {s.start}\n- read f{s.start}.py" for s in view.spans}
    again = prune_for_wire(messages, budget, summaries)
    assert [s.key for s in again.spans] == [s.key for s in view.spans]  # the same spans, the same keys
    text = "\n".join(markers(again.messages))
    assert "No summary" not in text
    for span in view.spans:
        assert marker_text(span, summaries[span.key]) in text
    assert again.tokens <= budget


def test_a_summarised_span_keeps_its_key_as_pruning_extends_past_it() -> None:
    messages = [user("one long task")]
    for k in range(120):
        messages += step(k, output="x" * 600, text=f"looking at f{k}.py")
    budget = 6_000
    short = prune_for_wire(messages[:121], budget)
    summaries = {s.key: f"summary {s.start}" for s in short.spans}
    longer = prune_for_wire(messages, budget, summaries)
    keys = [s.key for s in longer.spans]
    assert set(summaries) <= set(keys) and len(keys) > len(summaries)  # old ones kept, new ones after
    text = "\n".join(markers(longer.messages))
    assert all(f"summary {s.start}" in text for s in short.spans)
    assert text.count("No summary") == len(keys) - len(summaries)


def test_markers_never_split_a_call_from_its_results() -> None:
    messages = long_task(2, 30)
    for budget in range(2_000, estimate_tokens(messages), 1_500):
        validate_both(prune_for_wire(messages, budget).messages)


def test_span_keys_survive_the_transcript_growing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(prune_mod, "SPAN_CHUNK_BYTES", 4_000)
    messages = long_task(6, 8)
    first = prune_for_wire(messages, estimate_tokens(messages) // 2)
    grown = messages + long_task(1, 8)[1:] + [user("more")]
    second = prune_for_wire(grown, estimate_tokens(grown) // 2)
    assert len(first.spans) >= 3
    kept = {s.key for s in first.spans} & {s.key for s in second.spans}
    assert len(kept) >= len(first.spans) - 1  # only the last, still growing span changed
    assert prune_for_wire(messages, estimate_tokens(messages) // 2).spans == first.spans


def test_summary_request_describes_the_span_without_reasoning_and_is_capped() -> None:
    messages = long_task(2, 10)
    span = PrunedSpan("1-20-abc", 1, 20, messages[1:20])
    instructions, text = summary_request(span)
    assert "goal" in instructions and "files" in instructions and "commands" in instructions
    assert "TOOL CALL read_file" in text and "looking at f0.py" in text and "TOOL RESULT read_file" in text
    assert "think 0" not in text and "gAAA" not in text
    huge = PrunedSpan("k", 0, 200, [user("u" * 50_000)] + [results((f"c{i}", "r" * 5_000)) for i in range(200)])
    _, text = summary_request(huge)
    assert len(text) < prune_mod.SUMMARY_INPUT_CHARS + 500 and "characters omitted" in text


# ------------------------------------------------------------------------------------- invariants


def test_the_input_is_never_changed() -> None:
    messages = long_task(3, 30)
    messages.append(AssistantMessage(content=[call("call_wait", item_id="fc_wait")]))
    snapshot = encode_messages(messages)
    ids = [id(m) for m in messages]
    for budget in (10**9, estimate_tokens(messages) - 1, 20_000, 5_000, 10):
        prune_for_wire(messages, budget, {"x": "y"})
    assert encode_messages(messages) == snapshot and [id(m) for m in messages] == ids


def test_the_summed_estimate_matches_a_custom_estimate_on_whole_views() -> None:
    messages = long_task(3, 25)
    full = estimate_tokens(messages)
    for budget in (full - 1, full * 2 // 3, full // 3, full // 8, 300):
        fast = prune_for_wire(messages, budget, {"1-2-x": "s"})
        slow = prune_for_wire(messages, budget, {"1-2-x": "s"}, estimate=lambda ms: estimate_tokens(ms))
        assert msgspec.json.encode(fast.messages) == msgspec.json.encode(slow.messages)
        assert (fast.steps, fast.tokens) == (slow.steps, slow.tokens)
        assert fast.tokens == estimate_tokens(fast.messages)
        if fast.steps < LADDER_STEPS:
            assert fast.tokens <= budget
