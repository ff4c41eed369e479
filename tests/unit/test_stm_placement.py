"""Short-term memory planning and placement as pure functions (docs/short-term-memory.md's placement rules)."""

from __future__ import annotations

import pytest

from shiro_neko.agent.short_term_memory import (
    FRESH_SECONDS,
    Plan,
    TurnFacts,
    content_depth,
    explicit_long_term_intent,
    find_anchor,
    insert_index,
    place,
    plan_turn,
    recent_texts,
    supersede_cut,
)
from shiro_neko.config import ShortTermMemorySettings
from shiro_neko.state.short_term_memory import RecentMessage, StmRecord
from tests.support.builders import assistant, call, results, user

NOW = 1_000_000.0


def rec(sid: str = "me", age: float = 60, summary: str = "the summary", **kw: object) -> StmRecord:
    return StmRecord(session_id=sid, workspace_key="k", workspace="/ws", title=f"title {sid}", summary=summary,
                     updated_at=NOW - age, **kw)  # type: ignore[arg-type]


def facts(prompt: str | None = "fix the bug", turns: int = 0, tools: bool = True, supports: bool = True, count: int = 10) -> TurnFacts:
    return TurnFacts(prompt, NOW, turns, tools, supports, "/ws", count)


def kinds(plan: Plan) -> list[tuple[str, int]]:
    return [(n.kind, n.depth) for n in plan.notes]


S = ShortTermMemorySettings


def test_fresh_own_goes_to_the_tail_slot_stale_keeps_its_depth() -> None:
    assert kinds(plan_turn(S(), rec(age=60), [], facts())) == [("own", 1)]
    assert kinds(plan_turn(S(), rec(age=FRESH_SECONDS + 1), [], facts())) == [("own", -1)]
    assert kinds(plan_turn(S(depth=4), rec(age=FRESH_SECONDS + 1), [], facts())) == [("own", 4)]


@pytest.mark.parametrize(("configured", "fresh", "expected"), [(-1, True, 1), (0, True, 0), (3, True, 1), (-1, False, -1), (3, False, 3)])
def test_closer_to_the_end_wins(configured: int, fresh: bool, expected: int) -> None:
    assert content_depth(fresh, configured) == expected


def test_others_are_fresh_even_with_stale_own_and_in_order_own_others_nudge() -> None:
    plan = plan_turn(S(nudgeDepth=1), rec(age=FRESH_SECONDS * 2), [rec("o1"), rec("o2")], facts(turns=5))
    assert kinds(plan) == [("own", -1), ("others", 1), ("nudge", 1)]
    assert [n.requires_tools for n in plan.notes] == [True, False, True]


def test_at_most_three_others_and_render_modes() -> None:
    others = [rec(f"o{i}", recent=[RecentMessage("user", f"question {i}")]) for i in range(5)]
    crude = plan_turn(S(), None, others, facts()).notes[0].text
    assert crude.count("## ") == 3 and "question 0" in crude and "o3" not in crude
    plain = plan_turn(S(renderMode="supersede"), None, others, facts()).notes[0].text
    assert "question 0" not in plain and "Recent messages" not in plain


def test_categories_render_as_sections() -> None:
    block = rec(kind="categories", summary="", categories={"goal": "ship", "next": "tests"})
    assert "goal:\nship\nnext:\ntests" in plan_turn(S(), block, [], facts()).notes[0].text


@pytest.mark.parametrize(("turns", "due"), [(4, False), (5, True), (9, True)])
def test_cadence(turns: int, due: bool) -> None:
    assert ("nudge" in [n.kind for n in plan_turn(S(), None, [], facts(turns=turns)).notes]) == due


@pytest.mark.parametrize(
    "change",
    [
        {"tools": False},
        {"supports": False},
        {"prompt": "remember that the API lives under /v2"},
    ],
)
def test_nudge_suppressions(change: dict[str, object]) -> None:
    assert plan_turn(S(), None, [], facts(turns=50, **change)).notes == []  # type: ignore[arg-type]


def test_disabled_means_no_nudge_but_memory_still_renders() -> None:
    plan = plan_turn(S(enabled=False), rec(), [rec("o")], facts(turns=50))
    assert [n.kind for n in plan.notes] == ["own", "others"]


def test_a_turn_without_prompt_gets_nothing() -> None:
    assert plan_turn(S(), rec(), [rec("o")], facts(prompt=None, turns=9)).notes == []


@pytest.mark.parametrize(
    "prompt",
    ["Remember that tests run with bun", "please don't forget the flag", "Do not forget: X", "keep in mind we use uv",
     "save this for later: port 8080", "note this permanently", "store it in memory", "remember: snake_case"],
)
def test_long_term_intent(prompt: str) -> None:
    assert explicit_long_term_intent(prompt)


@pytest.mark.parametrize("prompt", ["fix the bug", "do you remember when it broke?", "what is remembered here", "forget it, use a loop"])
def test_no_long_term_intent(prompt: str) -> None:
    assert not explicit_long_term_intent(prompt)


def test_depth_counts_dialogue_items_back_from_the_turns_prompt() -> None:
    # u0 a1(call)+t2 u3 a4 u5 | this turn's steps: a6(call) t7
    msgs = [user("0"), assistant("1", call("c1")), results(("c1", "x")), user("3"), assistant("4"), user("5"), assistant("6", call("c2")), results(("c2", "x"))]
    anchor = find_anchor(msgs, msgs[5])
    assert anchor == 5
    assert insert_index(msgs, anchor, 0) == 6  # right after the prompt (the end, on the first step)
    assert insert_index(msgs, anchor, 1) == 5  # tail slot: before the latest user message
    assert insert_index(msgs, anchor, 2) == 4
    assert insert_index(msgs, anchor, 4) == 1  # the call and its result count as one item
    assert insert_index(msgs, anchor, 99) == 0


def test_anchor_is_the_prompt_not_a_later_marker() -> None:
    prompt = user("the prompt")
    msgs = [user("0"), prompt, user("[marker: 3 messages pruned]"), assistant("x")]
    assert find_anchor(msgs, prompt) == 1
    assert find_anchor(msgs, None) == 2


def test_place_leaves_the_stale_note_to_the_context_message_and_routes_the_rest() -> None:
    plan = plan_turn(S(nudgeDepth=2), rec(age=FRESH_SECONDS * 2), [rec("o")], facts(turns=5))
    msgs = [user("0"), assistant("1"), user("2")]
    placed = place(plan, msgs, 2)
    # Depth -1 is never the instructions (issue 37): the turn's context message carries it, with
    # the update time instead of an age, so an unchanged memory reads the same on every turn.
    assert plan.context is not None and "the summary" in plan.context and "last updated" in plan.context
    assert [(i, req) for i, _, req in placed.inserts] == [(2, False), (1, True)]
    # Without the turn's prompt in view, a note goes above history, still not in the instructions.
    assert [i for i, _, _ in place(plan, msgs, None).inserts] == [0, 0]


def test_plan_context_says_what_the_context_message_should() -> None:
    assert plan_turn(S(), rec(age=60), [], facts()).context is None  # fresh: placed in the request
    assert plan_turn(S(), None, [], facts()).context == ""  # no memory: said gone (once)
    assert plan_turn(S(depth=4), rec(age=FRESH_SECONDS * 2), [], facts()).context is None
    assert plan_turn(S(), rec(age=FRESH_SECONDS * 2), [], facts(prompt=None)).context is None  # no turn
    # A nudge configured at -1 goes to the tail slot (the instructions stay the same bytes).
    assert kinds(plan_turn(S(nudgeDepth=-1), None, [], facts(turns=5))) == [("nudge", 1)]


def test_a_retry_without_tools_drops_the_memory_context_section() -> None:
    from shiro_neko.agent.short_term_memory import apply, without_memory_context
    from shiro_neko.model.transcript import TextPart, UserMessage

    context = UserMessage(content=[TextPart(text="<environment_context>\nDate\n</environment_context>"),
                                   TextPart(text="<short_term_memory>\nmine\n</short_term_memory>")], context=True)
    only = UserMessage(content=[TextPart(text="<short_term_memory>\nold\n</short_term_memory>")], context=True)
    msgs = [user("0"), only, assistant("1"), context, user("2")]
    applied = apply(Plan(), msgs, list(msgs), msgs[-1])
    assert applied.messages == msgs and applied.tool_free_messages is not None
    free = applied.tool_free_messages
    assert len(free) == 4 and "short_term_memory" not in repr(free) and "environment_context" in repr(free)
    assert without_memory_context([user("0"), assistant("1")]) is None


def test_supersede_cut_lands_on_a_user_message_and_keeps_the_latest_turn() -> None:
    msgs = [user("0"), assistant("1", call("c")), results(("c", "x")), user("3"), assistant("4"), user("5")]
    assert supersede_cut(msgs, 0) == 0
    assert supersede_cut(msgs, 2) == 3  # never between a call and its result
    assert supersede_cut(msgs, 6) == 5  # the latest turn always stays
    # The context messages of the turn a cut lands on stay with its prompt (its memory among them).
    from shiro_neko.model.transcript import TextPart, UserMessage

    ctx = UserMessage(content=[TextPart(text="<short_term_memory>\nx\n</short_term_memory>")], context=True)
    assert supersede_cut([user("0"), assistant("1"), ctx, user("3")], 2) == 2
    plan = plan_turn(S(renderMode="supersede"), rec(covered=4), [], facts(count=6))
    assert plan.hide_before == 4


def test_recent_texts_skip_tools_and_keep_order() -> None:
    msgs = [user("q1"), assistant("", call("c")), results(("c", "x")), assistant("a1"), user("q2"), assistant("a2")]
    assert recent_texts(msgs, 3) == [("assistant", "a1"), ("user", "q2"), ("assistant", "a2")]
