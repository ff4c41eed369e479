"""The terminal client's markdown: blocks cut from streamed lines, rendered by rich."""

from __future__ import annotations

import re
import subprocess
import sys

from shiro_neko.client.markdown import MarkdownBlocks, to_ansi

ESC = re.compile(r"\x1b\[[0-9;]*m")


def test_blocks_end_at_blank_lines_and_fences_not_inside_code() -> None:
    blocks = MarkdownBlocks()
    assert blocks.feed(["# Title", "some text"]) == []
    assert blocks.feed([""]) == ["# Title\nsome text"]
    assert blocks.feed(["```python", "def f():", "", "    return 1"]) == []  # a blank line inside code
    assert blocks.feed(["```", "- a"]) == ["```python\ndef f():\n\n    return 1\n```"]
    assert blocks.lines == ["- a"] and blocks.flush() == ["- a"] and blocks.flush() == []


def test_headings_lists_and_highlighted_code() -> None:
    out = to_ansi("# Fix the parser\n\n- one\n- two\n\n```python\ndef parse(s):\n    return []\n```", 80)
    plain = ESC.sub("", out)
    assert "Fix the parser" in plain and "# Fix" not in plain
    assert "• one" in plain and "• two" in plain
    assert "def parse(s):" in plain and "```" not in plain
    code_line = next(line for line in out.splitlines() if "parse" in ESC.sub("", line) and "def" in ESC.sub("", line))
    assert len(set(ESC.findall(code_line))) >= 3  # keywords, names and punctuation coloured apart
    assert not any(line.endswith(" ") for line in plain.splitlines() if "•" in line)  # no padding after text


def test_rich_is_not_imported_by_the_client_until_it_renders() -> None:
    code = "import sys, shiro_neko.client.main, shiro_neko.client.oneshot; print('rich' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip() == "False"
