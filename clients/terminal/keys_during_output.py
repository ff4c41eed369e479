"""Keep keys typed while output is printed.

prompt_toolkit prints above a running prompt (`patch_stdout`) through `run_in_terminal`, which puts
the terminal in cooked mode for the write. A key pressed in that window goes through the tty's line
discipline: Ctrl-D is eaten as end-of-file, Ctrl-C becomes SIGINT, Backspace and Ctrl-U edit a line
prompt_toolkit never sees. Under load those windows are long, and a Ctrl-D pressed as an answer
finishes was simply lost. With the terminal's special characters disabled for the session, every
key is an ordinary byte that reaches prompt_toolkit when raw mode returns (it switches with
TCSANOW, which keeps pending input), and our own key bindings handle it.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Iterator

try:
    import termios
except ImportError:  # not POSIX: nothing to do
    termios = None  # type: ignore[assignment]

_SPECIAL = ("VEOF", "VINTR", "VQUIT", "VSUSP", "VKILL", "VERASE", "VWERASE", "VLNEXT", "VREPRINT", "VDISCARD")


def _vdisable(fd: int) -> int:
    """The byte that disables a special character: 0 on Linux, 0xff on macOS."""
    try:
        value = os.fpathconf(fd, "PC_VDISABLE")
    except (OSError, ValueError):
        return 0
    return value if 0 <= value <= 255 else 0


@contextlib.contextmanager
def keys_kept_during_output() -> Iterator[None]:
    fd = sys.stdin.fileno() if sys.stdin is not None and sys.stdin.isatty() else -1
    if termios is None or fd < 0:
        yield
        return
    before = termios.tcgetattr(fd)
    after = termios.tcgetattr(fd)
    disabled = bytes([_vdisable(fd)])
    for name in _SPECIAL:
        index = getattr(termios, name, None)
        if index is not None:
            after[6][index] = disabled
    after[3] &= ~getattr(termios, "ECHOCTL", 0)  # no "^D" echoed into the output
    termios.tcsetattr(fd, termios.TCSANOW, after)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)
