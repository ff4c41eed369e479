"""What docs/protocol.md and docs/context.md say of the `compacted` event agrees with the code
(server/agent/wire_view.py, server/agent/loop.py): sent once, at the turn's end, with the deepest
pruning; the reasoning-only wording declared as a deviation from PROTOCOL.md's "Texts" sentence
(issue 36 item 7)."""

from __future__ import annotations

import re
from pathlib import Path

from shiro_neko.agent.wire_view import compacted_message

ROOT = Path(__file__).resolve().parents[2]


def _flat(name: str) -> str:
    return re.sub(r"\s+", " ", (ROOT / "docs" / name).read_text())


def test_every_place_in_the_docs_says_compacted_is_sent_at_the_turns_end() -> None:
    for name in ("protocol.md", "context.md"):
        text = _flat(name)
        assert "first pruning" not in text.replace("a turn's first pruning may only", ""), name
        whens = re.findall(r"`compacted`\*?\*? is sent [^.;]*", text)
        assert all("at its end" in w for w in whens), (name, whens)
    assert "sent at most once per turn, at its end (just before `turn_end`), and reports the turn's deepest pruning" in _flat("protocol.md")


def test_the_reasoning_only_wording_is_the_codes_and_declared_a_deviation_from_protocol() -> None:
    sentence = compacted_message(7, 3, 1).replace("7", "N").replace("3", "M")
    reasoning_only = compacted_message(7, 7, 0).replace("7", "N")
    for name in ("protocol.md", "context.md"):
        text = _flat(name)
        assert f"`{reasoning_only}`" in text, name
        assert f"`{sentence}`" in text, name
        deviation = text[text.index("eviation from PROTOCOL.md"):][:400]
        assert "Texts" in deviation and "pruned to N" in text, name
