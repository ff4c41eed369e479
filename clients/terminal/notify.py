"""Telling a user who looks elsewhere (docs/terminal.md "Notifications"): a bell and an OSC 9
desktop notification (`ESC ] 9 ; text BEL`: iTerm2, WezTerm, kitty, Windows Terminal, foot show
it; the rest ignore it) when an approval waits, and when a turn that ran longer than
`notifyAfterSeconds` (default 30) ends.

Whether the terminal has focus comes from focus reporting (`ESC [ ? 1004 h`: the terminal then
sends `ESC [ I` and `ESC [ O`). Until the terminal has said, focus is unknown: an approval always
notifies, a long turn too. Once it has, only while it is not focused.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from ..model.visible_text import visible

FOCUS_REPORTING_ON = b"\x1b[?1004h"
FOCUS_REPORTING_OFF = b"\x1b[?1004l"
FOCUS_IN, FOCUS_OUT = "\x1b[I", "\x1b[O"
MAX_TEXT = 200  # characters of a notification (a terminal shows one line)
DEFAULT_AFTER_S = 30.0


def notification(text: str) -> bytes:
    """BEL, then OSC 9 with `text` made printable: nothing of a request (model output) can end the
    sequence early or start another one."""
    shown = "".join(c for c in visible(" ".join(text.split())) if c.isprintable())[:MAX_TEXT]
    return b"\a\x1b]9;" + shown.encode("utf-8", "replace") + b"\a"


def after_seconds(options: dict[str, object]) -> float:
    value = options.get("notifyAfterSeconds")
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0 else DEFAULT_AFTER_S


class Notifier:
    def __init__(self, write: Callable[[bytes], None], after_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.write = write
        self.after_s = after_s
        self.clock = clock
        self.focused: bool | None = None  # None: the terminal has not said
        self.started: float | None = None

    def focus(self, focused: bool) -> None:
        self.focused = focused

    def turn_started(self) -> None:
        self.started = self.clock()

    def turn_ended(self, status: str) -> None:
        started, self.started = self.started, None
        if started is None or self.focused is True:
            return
        took = self.clock() - started
        if took >= self.after_s:
            how = {"completed": "finished", "aborted": "was aborted"}.get(status, "ended with an error")
            self.write(notification(f"shiro-neko: the turn {how} ({took:.0f} s)"))

    def approval(self, request: str) -> None:
        if self.focused is not True:
            self.write(notification(f"shiro-neko is waiting for your approval: {request}"))


def write_terminal(data: bytes) -> None:
    """To the terminal the view draws on (stdout), past prompt_toolkit: a bell and an OSC move no cursor."""
    import sys  # noqa: PLC0415

    try:
        if sys.stdout is not None and sys.stdout.isatty():
            sys.stdout.flush()
            os.write(sys.stdout.fileno(), data)
    except (OSError, ValueError):
        pass  # no terminal any more: nobody to tell
