"""`estimate_tokens` measures only what is new in a list it has measured before, and always gives
exactly compact JSON length / 4 of the whole list (the seed's estimate), the length counted as
JavaScript's `JSON.stringify(messages).length`: UTF-16 code units, not UTF-8 bytes."""

from __future__ import annotations

import json
import random

import msgspec

from shiro_neko.agent.prune import prune_for_wire
from shiro_neko.model.transcript import (
    AssistantMessage,
    ImageRef,
    Message,
    TextPart,
    ToolCallPart,
    ToolMessage,
    ToolResultPart,
    UserMessage,
    encode_messages,
    estimate_tokens,
    image_tokens,
    json_length,
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


def _js_length(text: str) -> int:
    """What JavaScript's `.length` gives for `text`: UTF-16 code units."""
    return len(text.encode("utf-16-le")) // 2


def _exact(messages: list[Message]) -> int:
    return _js_length(encode_messages(messages).decode("utf-8")) // 4


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


def _stringify(messages: list[Message]) -> str:
    """`JSON.stringify(messages)`: compact JSON, non-ASCII characters written as they are."""
    return json.dumps(msgspec.to_builtins(messages), ensure_ascii=False, separators=(",", ":"))


def test_cjk_and_emoji_count_as_javascript_counts_them_not_as_utf8_bytes() -> None:
    # Three UTF-8 bytes per CJK character but one UTF-16 unit; four bytes per emoji but two units
    # (a surrogate pair). The estimate is the seed's JSON.stringify length / 4 (issue 36 item 5).
    cjk = [UserMessage(content=[TextPart(text="分页测试为什么失败" * 400)])]
    emoji = [AssistantMessage(content=[TextPart(text="ok 😀 " * 500)])]
    mixed = cjk + emoji + [ToolMessage(content=[ToolResultPart(tool_call_id="c", tool_name="read_file", output="é\n\t\"ü𝄞")])]
    for messages in (cjk, emoji, mixed):
        assert estimate_tokens(messages) == _js_length(_stringify(messages)) // 4 == _exact(messages)
    assert estimate_tokens(cjk) < len(encode_messages(cjk)) // 4 // 2  # about a third of the bytes
    assert json_length("😀".encode()) == 2 and json_length("分".encode()) == 1 and json_length(b"abc") == 3


def test_a_cjk_history_under_the_threshold_by_characters_is_not_pruned() -> None:
    # 3,600 characters of Chinese per message: ~900 tokens by the seed's estimate, ~2,700 by bytes.
    history: list[Message] = []
    for i in range(10):
        history.append(UserMessage(content=[TextPart(text=f"{i}" + "为什么分页测试在最后一页失败" * 257)]))
        history.append(AssistantMessage(content=[TextPart(text="边界条件少算了一项" * 400)]))
    tokens = estimate_tokens(history)
    assert tokens == _js_length(_stringify(history)) // 4 and 18_000 < tokens < 20_000
    view = prune_for_wire(history, 20_000)
    assert not view.pruned and view.messages == history  # bytes would read ~55k: pruned to a third


def test_the_pruners_summed_sizes_equal_the_estimate_on_a_cjk_view() -> None:
    rng = random.Random(36)
    history: list[Message] = []
    for i in range(60):
        history.append(UserMessage(content=[TextPart(text="问题" * rng.randrange(1, 200) + str(i))]))
        history.append(AssistantMessage(content=[TextPart(text="回答😀" * rng.randrange(1, 100)),
                                                 ToolCallPart(tool_call_id=f"c{i}", tool_name="read_file", input={"path": f"文件{i}.txt"})]))
        history.append(ToolMessage(content=[ToolResultPart(tool_call_id=f"c{i}", tool_name="read_file", output="内容" * rng.randrange(0, 300))]))
    budget = estimate_tokens(history) // 3
    view = prune_for_wire(history, budget)
    assert view.pruned and view.tokens == estimate_tokens(view.messages) == _exact(view.messages) <= budget


# -- images: the record names each by its file, the model is sent the picture --------------------

def _shot(i: int, width: int = 1920, height: int = 1080) -> ImageRef:
    return ImageRef(name=f"{i:064x}.png", media_type="image/png", width=width, height=height, label="screenshot.png")


def test_an_image_counts_as_what_the_model_is_sent_not_as_its_file_name() -> None:
    assert [image_tokens(1024, 1024), image_tokens(2048, 4096), image_tokens(512, 512)] == [765, 1105, 255]
    plain = UserMessage(content=[TextPart(text="what is wrong here?")])
    shown = UserMessage(content=[TextPart(text="what is wrong here?")], images=[_shot(1), _shot(2, 1024, 1024)])
    json_only = _js_length(encode_messages([shown]).decode()) // 4
    assert estimate_tokens([shown]) == (_js_length(encode_messages([shown]).decode()) + 4 * (1105 + 765)) // 4
    assert estimate_tokens([shown]) - estimate_tokens([plain]) > 1800 > json_only


def test_screenshots_over_the_budget_are_pruned_and_the_summed_sizes_still_equal_the_estimate() -> None:
    # 30 read_file results of a screenshot each: little JSON, ~33k tokens of pictures.
    history: list[Message] = [UserMessage(content=[TextPart(text="look at the screens")])]
    for i in range(30):
        history.append(AssistantMessage(content=[ToolCallPart(tool_call_id=f"c{i}", tool_name="read_file", input={"path": f"s{i}.png"})]))
        history.append(ToolMessage(content=[ToolResultPart(tool_call_id=f"c{i}", tool_name="read_file", output=f"s{i}.png: image 1920x1080",
                                                           images=[_shot(i)])]))
    history.append(AssistantMessage(content=[TextPart(text="The login button overlaps the footer.")]))
    assert _exact(history) < 4_000 < 30_000 < estimate_tokens(history)
    view = prune_for_wire(history, 8_000)
    assert view.pruned and view.tokens == estimate_tokens(view.messages) <= 8_000
    assert sum(len(p.images) for m in view.messages if isinstance(m, ToolMessage) for p in m.content) < 30
