"""Titles and excerpts read only the beginning of a long text, and come out exactly as if the
whole text had been collapsed onto one line first."""

from __future__ import annotations

import random

from shiro_neko.model.one_line import one_line_head
from shiro_neko.state.session_record import TITLE_MAX, make_title


def _full_title(prompt: str, limit: int = TITLE_MAX) -> str:  # the definition: collapse all, then cut
    text = " ".join(prompt.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    space = cut.rfind(" ")
    if space >= (limit * 3) // 4:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


def test_the_head_decides_like_the_whole_text() -> None:
    rng = random.Random(15)
    alphabet = ["a", "b", " ", "  ", "\n", "\t", "\u00a0", "\u2028", ",", "猫", "-", "." * 3, " " * 300]
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 1200)))
        for limit in (1, 5, 80, TITLE_MAX, 400):
            whole = " ".join(text.split())
            head = one_line_head(text, limit)
            if len(whole) <= limit:
                assert head == whole
            else:
                assert len(head) > limit and whole.startswith(head)
        assert make_title(text) == _full_title(text)


def test_a_huge_prompt_gives_the_same_title_from_its_beginning() -> None:
    prompt = ("word " * 100_000) + "end"
    assert make_title(prompt) == _full_title(prompt)
    spaced = " " * 500_000 + "late start of the prompt"
    assert make_title(spaced) == "late start of the prompt"
