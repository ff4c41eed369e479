"""Keys typed for the next prompt never answer an approval (issue 35 item 5).

While the model writes, the user types ahead: the next prompt, or letters such as `a`, `y`, `w`.
A question that appears mid-sentence must not take those keys as its answer. Two rules:

- Right before a question is asked, what is typed but not yet read is dropped (`tcflush`,
  TCIFLUSH): in `shiro -p` the tty's line buffer (a typed-ahead `a` + Enter answered the
  question), in the interactive view the keys the UI has not read yet.
- In the interactive view a key answers only after a pause: a key that comes less than
  `QUIET_S` after the previous keystroke (typing in full flow, across the moment the question
  appeared) is typed into the input as the user meant it, and the question stays open. A user
  who stops, reads the request and presses `a` answers it.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable

try:
    import termios
except ImportError:  # not POSIX: nothing is dropped
    termios = None  # type: ignore[assignment]

QUIET_S = 0.5  # a typist's keys come faster than this; a reply after reading comes slower


def drop_typed_ahead(fd: int) -> None:
    """Discard input the terminal `fd` has received and nobody has read yet."""
    if termios is None or fd < 0:
        return
    with contextlib.suppress(termios.error, OSError, ValueError):
        termios.tcflush(fd, termios.TCIFLUSH)


class AnswerGate:
    """Whether a key now is an answer: not while the user is typing in full flow."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.last_key = -1e9

    def typed(self) -> None:
        """A keystroke that went into the input (text typed, or a key the gate turned away)."""
        self.last_key = self.clock()

    def answers(self) -> bool:
        """True when the key pressed now may answer; else it counts as typing."""
        now = self.clock()
        quiet = now - self.last_key >= QUIET_S
        self.last_key = now
        return quiet
