"""Assistant text as markdown in a terminal: headings, lists, code blocks with syntax highlighting.

rich renders it (a well-kept library with a CommonMark parser, markdown-it, and Pygments
highlighting: hand-written ANSI would cover a fraction of it). It is imported only when a block is
rendered for a terminal, so `shiro -p … | cat` and the client's cold start never load it.

Text streams in; a block is rendered once it is complete: at a blank line outside a code fence, at
a closing fence, or when the text run ends (a tool call, the end of the turn). Until then its
lines are shown raw (the interactive UI shows them live above the input).
"""

from __future__ import annotations

import io
import re

from ..model.visible_text import visible

_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")
_TRAILING = re.compile(r" +$", re.MULTILINE)
_SGR = re.compile(r"\x1b\[[0-9;]*m")


class MarkdownBlocks:
    """Whole lines in, complete markdown blocks out."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._fence: str | None = None

    def feed(self, lines: list[str]) -> list[str]:
        done: list[str] = []
        for line in lines:
            fence = _FENCE.match(line)
            if self._fence is None:
                if fence:
                    self._fence = fence.group(1)[0] * 3
                elif not line.strip():
                    if self.lines:
                        done.append("\n".join(self.lines))
                        self.lines = []
                    continue
                self.lines.append(line)
            else:
                self.lines.append(line)
                if fence and fence.group(1).startswith(self._fence):
                    self._fence = None
                    done.append("\n".join(self.lines))
                    self.lines = []
        return done

    def flush(self) -> list[str]:
        """The end of a text run: what is pending is a block (an unclosed fence included)."""
        if not self.lines:
            return []
        block, self.lines, self._fence = "\n".join(self.lines), [], None
        return [block]


def to_ansi(block: str, width: int) -> str:
    """One markdown block as ANSI text `width` columns wide (trailing padding removed). The block
    is the model's: made visible first (rich passes escape sequences through), styled after."""
    from rich.console import Console  # noqa: PLC0415 - only when rendering for a terminal
    from rich.markdown import Markdown  # noqa: PLC0415

    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="256", width=max(20, width), legacy_windows=False)
    console.print(Markdown(visible(block), code_theme="monokai", hyperlinks=False))
    lines = _TRAILING.sub("", out.getvalue()).split("\n")
    # rich pads a code block and a table with blank lines (of background colour) above and below;
    # the UI puts one blank line between blocks, so these would make 3-4 (issue 41 item 5).
    while lines and _blank(lines[0]):
        lines.pop(0)
    while lines and _blank(lines[-1]):
        lines.pop()
    return "\n".join(lines)


def _blank(line: str) -> bool:
    """A line that shows nothing but spaces (its escape sequences aside)."""
    return not _SGR.sub("", line).strip()
