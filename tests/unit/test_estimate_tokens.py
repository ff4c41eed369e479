"""`estimate_tokens` measures only what is new in a list it has measured before, and always gives
exactly compact JSON length / 4 of the whole list (the seed's estimate)."""

from __future__ import annotations

import random

from shiro_neko.model.transcript import (
    AssistantMessage,
    Message,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
    encode_messages,
    estimate_tokens,
    strip_item_ids,
)


def _message(rng: random.Random, i: int) -> Message:
    kind = rng.randrange(3)
    if kind == 0:
        return UserMessage(content=[TextPart(text="ü" * rng.randrange(0, 50) + str(i))])
    if kind == 1:
        return AssistantMessage(content=[TextPart(text="x" * rng.randrange(0, 80), item_id=f"msg_{i}"),
                                         ToolCallPart(tool_call_id=f"c{i}", tool_name="read_file", input={"path": f"{i}.txt"})])
    return ToolMessage(content=[ToolResultPart(tool_call_id=f"c{i}", tool_name="read_file", output="y" * rng.randrange(0, 200))])


def _exact(messages: list[Message]) -> int:
    return len(encode_messages(messages)) // 4


def test_the_estimate_is_exact_as_a_history_grows_is_rewritten_and_is_replaced() -> None:
    rng = random.Random(15)
    history: list[Message] = []
    assert estimate_tokens(history) == _exact(history) == 0
    for i in range(300):
        history.append(_message(rng, i))
        assert estimate_tokens(history) == _exact(history)
        if i % 37 == 0:
            history = strip_item_ids(history)  # a rewrite: new objects, a new list
            assert estimate_tokens(history) == _exact(history)
        if i % 53 == 0:
            history[rng.randrange(len(history))] = _message(rng, -i)  # one element replaced
            assert estimate_tokens(history) == _exact(history)
        if i % 71 == 0:
            del history[: rng.randrange(1, len(history) + 1)]  # shortened from the front
            assert estimate_tokens(history) == _exact(history)
    sub = history[1:-1]
    assert estimate_tokens(sub) == _exact(sub)


def test_many_lists_at_once_each_stay_exact() -> None:
    rng = random.Random(16)
    lists: list[list[Message]] = [[] for _ in range(20)]  # more lists than the memo holds
    for i in range(400):
        target = lists[rng.randrange(len(lists))]
        target.append(_message(rng, i))
        for each in lists:
            assert estimate_tokens(each) == _exact(each)
