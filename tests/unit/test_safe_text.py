"""The terminal client's one sanitizer (server/model/visible_text.py) and the approval's layout
(clients/terminal/approval_text.py): what the model, a tool, an MCP server or a workspace file
writes is shown on the terminal, never obeyed (issue 35 item 4)."""

from __future__ import annotations

import json

import pytest

from shiro_neko.client import render
from shiro_neko.client.approval_text import approval_lines, question, size_note
from shiro_neko.client.markdown import to_ansi as markdown_ansi
from shiro_neko.model.visible_text import is_safe, json_visible, visible
from shiro_neko.client.typed_ahead import QUIET_S, AnswerGate

TABLE = [
    # (what the untrusted text holds, what the terminal is sent)
    ("plain text, unicode: héllo 世界 👩‍💻", "plain text, unicode: héllo 世界 👩‍💻"),  # ZWJ emoji stay whole
    ("two\nlines\tand a tab", "two\nlines\tand a tab"),
    ("\x1b]52;c;cm0gLXJmIH4=\x07", "^[]52;c;cm0gLXJmIH4=^G"),  # OSC 52: the clipboard
    ("\x1b]0;innocent title\x1b\\", "^[]0;innocent title^[\\"),  # OSC 0: the window title, ST-ended
    ("\x1b]8;;https://evil.example/\x1b\\docs\x1b]8;;\x1b\\", "^[]8;;https://evil.example/^[\\docs^[]8;;^[\\"),  # OSC 8
    ("rm -rf ~\x1b[1A\x1b[2K\rnpm test", "rm -rf ~^[[1A^[[2K^Mnpm test"),  # CSI up, erase line, CR
    ("\x1bP+q544e\x1b\\", "^[P+q544e^[\\"),  # DCS
    ("safe\x08\x08\x08\x08evil", "safe^H^H^H^Hevil"),  # backspaces overwrite
    ("\x9b2K\x9d0;t\x9c", "⟨U+009B⟩2K⟨U+009D⟩0;t⟨U+009C⟩"),  # C1 CSI, OSC, ST
    ("a\x7fb\x00c", "a^?b^@c"),
    ("ls \u202e~ fr- mr\u202c", "ls ⟨U+202E⟩~ fr- mr⟨U+202C⟩"),  # bidi override
    ("\u2066\u2067\u2068\u2069\u202a\u202b\u202d", "⟨U+2066⟩⟨U+2067⟩⟨U+2068⟩⟨U+2069⟩⟨U+202A⟩⟨U+202B⟩⟨U+202D⟩"),  # isolates, embeddings
    ("\u200e\u200f\u061c", "⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"),  # the implicit marks
    ("one\u2028two\u2029", "one⟨U+2028⟩two⟨U+2029⟩"),  # separators some renderers break lines at
    ("\ud800lone", "⟨U+D800⟩lone"),  # a lone surrogate would make the write raise
    ("^[[2K typed as text", "^[[2K typed as text"),  # already visible: unchanged
]


@pytest.mark.parametrize(("raw", "shown"), TABLE)
def test_visible(raw, shown):
    assert visible(raw) == shown
    assert is_safe(visible(raw))
    assert visible(visible(raw)) == visible(raw)  # idempotent


def test_tabs_can_be_shown_too():
    assert visible("a\tb", tabs=False) == "a^Ib"


def test_every_control_character_is_made_visible():
    for code in [*range(0x20), *range(0x7F, 0xA0)]:
        char = chr(code)
        if char in "\n\t":
            continue
        assert len(visible(char)) > 1 and is_safe(visible(char)), hex(code)


def test_json_stays_the_same_value_without_terminal_controls():
    rows = {"sessions": [{"title": "a\x1b]52;c;eA==\x07b \u202eevil\u202c \x9b \u2028"}]}
    encoded = json_visible(json.dumps(rows, ensure_ascii=False))
    assert json.loads(encoded) == rows
    assert is_safe(encoded) and "\x1b" not in encoded


def test_render_sanitizes_the_text_and_keeps_its_own_colours():
    line: render.Line = [("red", "error: \x1b]0;pwned\x07"), ("", " \u202eok")]
    assert render.to_ansi(line, True) == "\x1b[31merror: ^[]0;pwned^G\x1b[0m ⟨U+202E⟩ok"
    assert render.to_ansi(line, False) == "error: ^[]0;pwned^G ⟨U+202E⟩ok"


def test_markdown_is_rendered_from_the_visible_text():
    shown = markdown_ansi("**bold** \x1b]52;c;eA==\x07 and \u202e", 80)
    assert "\x1b]" not in shown and "\u202e" not in shown and "\x07" not in shown
    assert "^[]52;c;eA==^G" in shown and "⟨U+202E⟩" in shown
    assert "\x1b[1m" in shown  # our styling: bold still rendered


def test_an_approval_shows_every_line_numbered_and_its_size_in_the_question():
    message = "shiro-neko wants to run (sandbox off): touch pwned" + "\n" * 60 + "\x1b[62A\x1b[2K\rnpm test"
    lines = [render.to_ansi(line, False) for line in approval_lines(message)]
    assert lines[0] == "? a request of 61 lines:"
    assert lines[1] == "   1 │ shiro-neko wants to run (sandbox off): touch pwned"
    assert lines[-1] == "  61 │ ^[[62A^[[2K^Mnpm test"
    assert len(lines) == 62 and all(is_safe(line) for line in lines)
    assert question("[a]llow", message) == "[a]llow (the request above: 61 lines, from line 1)"


def test_a_long_request_is_never_cut():
    args = json.dumps({"query": "x" * 5000, "then": "rm -rf ~"})
    message = f"shiro-neko wants to call the MCP tool 'search' of server 'docs' with {args}"
    [line] = approval_lines(message)
    assert render.to_ansi(line, False) == f"? {message}"
    assert size_note(message) == f" (the request above: {len(message):,} characters)"
    assert size_note("shiro-neko wants to run: ls") == ""


def test_the_gate_takes_an_answer_only_after_a_pause_in_typing():
    now = [100.0]
    gate = AnswerGate(clock=lambda: now[0])
    assert gate.answers()  # nothing typed for a long time: the key answers
    gate.typed()
    now[0] += 0.1
    assert not gate.answers()  # typing in full flow
    now[0] += 0.1
    assert not gate.answers()  # the turned-away key counts as typing too
    now[0] += QUIET_S
    assert gate.answers()
