"""The loop's wire view (wire_view.py): summary rounds, view reuse, one `compacted` per turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_neko.agent.prune import PrunedSpan
from shiro_neko.model.transcript import AssistantMessage, Message, ReasoningPart, TextPart
from shiro_neko.agent.wire_view import WireView
from shiro_neko.config import Settings
from tests.support.builders import markers, step, user
from tests.support.scripted import make_session

NO_SUMMARY = "No summary of that part is available"


class Summarizer:
    def __init__(self, fail: bool = False) -> None:
        self.asked: list[str] = []
        self.fail = fail

    async def __call__(self, span: PrunedSpan) -> str:
        self.asked.append(span.key)
        if self.fail:
            raise RuntimeError("provider down")
        return f"summary of {span.key}"


def segments(view: list[Message]) -> list[str]:
    return [seg for text in markers(view) for seg in text.split("\n\n")]


async def test_a_long_turn_summarises_each_span_once_and_carries_every_summary(tmp_path: Path) -> None:
    session = make_session(tmp_path, settings=Settings(), messages=[user("one long task")])
    settings = Settings(compactThreshold=4_000)
    wire, summarize = WireView(), Summarizer()
    views = []
    for k in range(60):
        session.messages += step(k, output="x" * 600, text=f"step {k}")
        views.append(await wire.for_wire(session, settings, summarize))
    assert len(summarize.asked) == len(set(summarize.asked)) >= 3  # several spans, each once
    assert set(session.span_summaries) == set(summarize.asked)
    for k, view in enumerate(views):
        segs = segments(view)
        missing = [i for i, s in enumerate(segs) if NO_SUMMARY in s]
        assert missing in ([], [len(segs) - 1]), (k, segs)  # only the newest span may lack one
    last = "\n".join(segments(views[-1]))
    assert all(f"summary of {key}" in last for key in summarize.asked)


async def test_the_view_is_reused_until_it_no_longer_fits(tmp_path: Path) -> None:
    session = make_session(tmp_path, settings=Settings(), messages=[user("go")] + [m for k in range(30) for m in step(k, output="x" * 600)])
    settings = Settings(compactThreshold=4_000)
    wire, summarize = WireView(), Summarizer()
    first = await wire.for_wire(session, settings, summarize)
    asked = len(summarize.asked)
    session.messages.append(AssistantMessage(content=[TextPart(text="short", item_id="msg_x")]))
    second = await wire.for_wire(session, settings, summarize)
    assert second[: len(first)] == first and all(a is b for a, b in zip(first, second))  # extended, not re-pruned
    assert second[-1] == AssistantMessage(content=[TextPart(text="short")])  # inline, like the rest
    assert len(summarize.asked) == asked


async def test_one_compacted_report_per_turn_with_honest_counts(tmp_path: Path) -> None:
    session = make_session(tmp_path, settings=Settings(), messages=[user("go")] + [m for k in range(30) for m in step(k, output="x" * 600)])
    settings = Settings(compactThreshold=4_000)
    wire = WireView()
    view = await wire.for_wire(session, settings, Summarizer())
    first = (len(session.messages), len(view) - len(markers(view)))
    for k in range(30, 60):
        session.messages += step(k, output="x" * 600)
        view = await wire.for_wire(session, settings, Summarizer())
    report = wire.take_compacted()  # at the turn's end
    assert report is not None and report.after < report.before
    assert report.before - report.after >= first[0] - first[1]  # the deepest pruning, not the first
    assert report.message == f"context compacted: {report.before} messages pruned to {report.after} on the wire"
    assert wire.take_compacted() is None  # reported once


async def test_the_report_is_the_turns_deepest_pruning_not_its_first(tmp_path: Path) -> None:
    """The issue's case: the turn's first pruning only leaves reasoning out; later steps of the same
    turn prune content. The one report says the content was pruned, in the seed's sentence."""
    messages: list[Message] = [user("go"), AssistantMessage(content=[ReasoningPart(text="r" * 12_000, item_id="rs_1"),
                                                                   TextPart(text="reading", item_id="msg_1")])]
    session = make_session(tmp_path, settings=Settings(), messages=messages)
    settings = Settings(compactThreshold=2_000)
    wire = WireView()
    await wire.for_wire(session, settings, Summarizer())
    for k in range(20):
        session.messages += step(k, output="x" * 600)
        await wire.for_wire(session, settings, Summarizer())
    report = wire.take_compacted()
    assert report is not None
    assert report.message == f"context compacted: {report.before} messages pruned to {report.after} on the wire"
    assert report.after < report.before


async def test_stripping_reasoning_only_says_so(tmp_path: Path) -> None:
    messages: list[Message] = [user("hi"), AssistantMessage(content=[ReasoningPart(text="r" * 8_000, item_id="rs_1"),
                                                                     TextPart(text="hello", item_id="msg_1")])]
    session = make_session(tmp_path, settings=Settings(), messages=messages)
    wire = WireView()
    await wire.for_wire(session, Settings(compactThreshold=500), Summarizer())
    report = wire.take_compacted()
    assert report is not None and (report.before, report.after) == (2, 2)
    assert report.message == "context compacted: reasoning left out of the request, all 2 messages sent"


async def test_a_failed_summary_leaves_the_marker_and_is_not_retried_this_turn(tmp_path: Path) -> None:
    session = make_session(tmp_path, settings=Settings(), messages=[user("go")])
    settings = Settings(compactThreshold=4_000)
    wire, failing = WireView(), Summarizer(fail=True)
    for k in range(40):
        session.messages += step(k, output="x" * 600)
        view = await wire.for_wire(session, settings, failing)
    assert failing.asked and len(failing.asked) == len(set(failing.asked))
    assert session.span_summaries == {}
    assert all(NO_SUMMARY in s for s in segments(view))
    working = Summarizer()
    next_turn = WireView()  # a later turn tries again
    view = await next_turn.for_wire(session, settings, working)
    assert set(failing.asked) & set(working.asked)
    assert "summary of" in "\n".join(segments(view))


@pytest.mark.parametrize("threshold", [10**9])
async def test_a_transcript_that_fits_goes_as_it_is(tmp_path: Path, threshold: int) -> None:
    session = make_session(tmp_path, settings=Settings(), messages=[user("go"), *step(0)])
    wire = WireView()
    assert await wire.for_wire(session, Settings(compactThreshold=threshold), Summarizer()) == session.messages
    assert wire.take_compacted() is None
