"""Keys pressed while the terminal client prints (cooked mode) reach its key bindings.

A child on a real pty enters prompt_toolkit's cooked mode, as `run_in_terminal` does for every
print above the prompt; keys arrive; then raw mode comes back (TCSANOW, as prompt_toolkit does)
and the child reads what is pending. Without our guard Ctrl-C kills the child (SIGINT) and Ctrl-D
is eaten as end-of-file.
"""

from __future__ import annotations

import sys

import pexpect
import pytest

CHILD = r"""
import os, sys, termios
from prompt_toolkit.input.vt100 import cooked_mode, raw_mode
from shiro_neko.client.keys_during_output import keys_kept_during_output
guard = keys_kept_during_output() if sys.argv[1] == "guarded" else __import__("contextlib").nullcontext()
fd = sys.stdin.fileno()
with guard, raw_mode(fd):
    with cooked_mode(fd):
        os.write(1, b"COOKED\r\n")
        sys.stdin.readline  # nothing read here: the keys arrive now
        import time; time.sleep(1.0)
    import select
    ready, _, _ = select.select([fd], [], [], 2.0)
    got = os.read(fd, 100) if ready else b""
os.write(1, b"GOT " + repr(got).encode() + b"\r\n")
"""


def _run(mode: str) -> str:
    child = pexpect.spawn(sys.executable, ["-c", CHILD, mode], encoding="utf-8", timeout=60)
    try:
        child.expect("COOKED")
        child.send("ab\x03\x04")
        child.expect([pexpect.EOF])
        return child.before or ""
    finally:
        child.close(force=True)


def test_keys_typed_while_output_is_printed_reach_the_prompt() -> None:
    assert "GOT b'ab\\x03\\x04'" in _run("guarded")


def test_without_the_guard_the_line_discipline_takes_them() -> None:
    out = _run("bare")
    assert "GOT b'ab\\x03\\x04'" not in out
