"""The parent of one stdio MCP server: nothing the server starts outlives it, and no line it writes
is read whole past a size limit.

    python -I -S child_guard.py SHIRO_PID MAX_LINE_BYTES EXECUTABLE ARGV0 [ARG...]

The SDK starts this guard (in a new session: its pid is the process group's id) and sees it as the
server: it closes the guard's stdin, waits for the guard to exit, signals the guard's group. The
guard starts the real server as its child in the same group, so the SDK's signals reach the server
as before, and is a child subreaper (prctl PR_SET_CHILD_SUBREAPER): whatever the server leaves
behind (a `setsid` helper, a double-forked daemon) is reparented to the guard, not to init, and
stays findable as a descendant. The guard ends every descendant, then itself, when:

- the server exits (a normal stop at the end of its stdin, or a crash): SIGTERM to every
  descendant, LEFTOVER_GRACE, SIGKILL; the guard exits with the server's status;
- the SDK's SIGTERM comes (the server ignored the end of its stdin): SIGTERM to every descendant,
  STOP_GRACE, SIGKILL, all before the SDK's own SIGKILL to the group 2 s later (which would kill
  the guard and leave the helpers to init);
- the shiro server dies (SIGKILLed: it runs none of the SDK's shutdown; a pidfd tells): EOF_GRACE
  for the server to act on the end of its stdin, then SIGTERM to every descendant, TERM_GRACE,
  SIGKILL (the SDK's own timings).

The server's stdout goes through the guard (a thread relays it): a line (one JSON-RPC message) over
MAX_LINE_BYTES is never held whole: it is read through and dropped, and when it is an answer whose
request id shows in its first or last bytes, an error answer naming the limit takes its place. The
SDK's reader would otherwise gather a 100 MB line in memory (and copy it once per 64 KiB read).

A server can still escape on purpose (it runs as the user: `systemd-run --user`, a crontab, killing
the guard); this ends what well-meant servers leave. Standard library only, `-I -S`: milliseconds.
"""

from __future__ import annotations

import ctypes
import json
import os
import re
import select
import signal
import sys
import threading
import time
from typing import Callable

EOF_GRACE = 2.0
TERM_GRACE = 2.0
STOP_GRACE = 1.0
LEFTOVER_GRACE = 0.5
PR_SET_CHILD_SUBREAPER = 36
# The bytes of an oversized line kept to find its request id: its first and its last.
EDGE = 64 * 1024
CHUNK = 64 * 1024

_ID = r'(-?\d+|"(?:[^"\\]|\\.)*")'
# An answer (never a request: a request's id is the server's own, not one of ours) in the key order
# of the Python SDK and serde ({"jsonrpc", "id", "result"}) or the TypeScript SDK ({"result", ...,
# "id"}): the id at the head, or as the last key at the tail.
_ANSWER_HEAD = re.compile(rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?(?:"id"\s*:\s*' + _ID.encode()
                          + rb'\s*,\s*)?(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(?:result|error)"\s*:')
_TAIL_ID = re.compile(rb'"id"\s*:\s*' + _ID.encode() + rb'\s*\}\s*$')


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def answer_id(head: bytes | bytearray, tail: bytes | bytearray) -> bytes | None:
    """The request id of an oversized answer, as JSON, or None (not an answer, or no id in sight)."""
    match = _ANSWER_HEAD.match(head)
    if match is None:
        return None
    if match.group(1) is not None:
        return match.group(1)
    at_end = _TAIL_ID.search(tail)
    return at_end.group(1) if at_end else None


def refusal(request_id: bytes, limit: int) -> bytes:
    message = (f"the server's answer is over maxResponseBytes ({limit:,} bytes); shiro-neko dropped it "
               "unread (raise maxResponseBytes in the server's entry, or ask for less)")
    error = json.dumps({"code": -32603, "message": message})  # JSON-RPC internal error
    return b'{"jsonrpc":"2.0","id":' + request_id + b',"error":' + error.encode() + b"}\n"


def relay(src: int, dst: int, limit: int) -> None:
    """Copy the server's stdout to ours, line by line, holding at most `limit` bytes of a line."""
    line = bytearray()
    over = False  # the current line is past the limit: only its edges are kept
    head, tail, seen, answered = bytearray(), bytearray(), 0, False
    broken = False  # our reader is gone: keep draining so the server never blocks on a full pipe
    while chunk := os.read(src, CHUNK):
        out = bytearray()
        start = 0
        while start < len(chunk):
            newline = chunk.find(b"\n", start)
            end = len(chunk) if newline < 0 else newline
            piece = chunk[start:end]
            if not over and len(line) + len(piece) > limit:
                over, seen, answered = True, 0, False
                head, tail, piece = bytearray(), bytearray(), bytes(line) + piece
                line.clear()
            if over:
                seen += len(piece)
                head += piece[:EDGE - len(head)]
                tail += piece[-EDGE:]
                del tail[:-EDGE]
                found = None if answered else answer_id(head, b"")
                if found is not None:  # the caller learns at once, not after the rest streams by
                    out += refusal(found, limit)
                    answered = True
            else:
                line += piece
            if newline < 0:
                break
            if over:
                found = None if answered else answer_id(head, tail)
                if found is not None:
                    out += refusal(found, limit)
                note = f"shiro-neko: dropped a {seen:,}-byte message from the server (over {limit:,} bytes)\n"
                os.write(2, note.encode())
                over, head, tail = False, bytearray(), bytearray()
            else:
                out += line + b"\n"
                line.clear()
            start = newline + 1
        if out and not broken:
            try:
                _write_all(dst, bytes(out))
            except OSError:
                broken = True
    if line and not over and not broken:  # a last line without its newline
        try:
            _write_all(dst, bytes(line))
        except OSError:
            pass


def _threads_left(pid: str) -> bool:
    """Whether a process shown as a zombie still has threads (/proc/<pid>/task lists the live ones)."""
    try:
        return len(os.listdir(f"/proc/{pid}/task")) > 1
    except OSError:
        return False


def descendants() -> list[int]:
    """Every live process below this one (/proc); orphans of the server are our children here."""
    me = os.getpid()
    parent: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] != b"Z" or _threads_left(name):
                # A zombie is dead (only its parent's wait is missing), unless only its main thread
                # ended (`pthread_exit`): its other threads run on under a leader shown as Z.
                parent[int(name)] = int(fields[1])
    below = []
    for pid in parent:
        up, hops = parent.get(pid), 0
        while up is not None and up != me and up > 1 and hops < 4096:
            up, hops = parent.get(up), hops + 1
        if up == me:
            below.append(pid)
    return below


class Guard:
    def __init__(self, server: int, shiro_fd: int | None, wake: int) -> None:
        self.server, self.shiro_fd, self.wake = server, shiro_fd, wake
        self.status: int | None = None

    def reap(self) -> None:
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.server:
                self.status = status

    def shiro_gone(self) -> bool:
        return self.shiro_fd is not None and bool(select.select([self.shiro_fd], [], [], 0)[0])

    def wait(self, done: Callable[[], bool], seconds: float | None, poll: float | None = None) -> bool:
        """Until `done()` (checked after every signal and every `poll` seconds) or `seconds`."""
        deadline = None if seconds is None else time.monotonic() + seconds
        while True:
            self.reap()
            if done():
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            step = left if poll is None or (left is not None and left < poll) else poll
            watch = [self.wake] + ([self.shiro_fd] if self.shiro_fd is not None and not self.shiro_gone() else [])
            select.select(watch, [], [], step)
            try:
                while os.read(self.wake, 512):
                    pass
            except BlockingIOError:
                pass

    def end_all(self, grace: float) -> None:
        """SIGTERM to every descendant, `grace` for them to go, then SIGKILL until none is left."""
        for pid in descendants():
            _signal(pid, signal.SIGTERM)
        self.wait(lambda: not descendants(), grace, poll=0.05)
        for _ in range(100):  # a process forked in between is a descendant on the next pass
            left = descendants()
            if not left:
                break
            for pid in left:
                _signal(pid, signal.SIGKILL)
            self.wait(lambda: False, 0.01)
        self.reap()

    def exit_code(self) -> int:
        if self.status is None:
            return 1
        if os.WIFSIGNALED(self.status):
            return 128 + os.WTERMSIG(self.status)
        return os.waitstatus_to_exitcode(self.status)


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _subreaper() -> None:
    try:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux's libc: the process group still ends with the server
        pass


def _exec_server(executable: str, args: list[str], stdout: int) -> None:
    """In the forked child: become the server, its stdout our relay's pipe."""
    os.dup2(stdout, 1)
    # What Python ignores at start-up would stay ignored across exec (subprocess restores them too).
    for name in ("SIGPIPE", "SIGXFSZ"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_DFL)
    try:
        os.execv(executable, args)
    except OSError as exc:
        os.write(2, f"{executable}: {exc.strerror}\n".encode())
    os._exit(127)


def main(argv: list[str]) -> int:
    shiro, limit, executable, args = int(argv[1]), int(argv[2]), argv[3], argv[4:]
    try:
        shiro_fd: int | None = os.pidfd_open(shiro)  # before the check: no window for a pid reuse
    except OSError:  # a kernel without pidfds (< 5.3): the server is not watched for shiro's death
        shiro_fd = None
    if shiro_fd is not None and os.getppid() != shiro:
        return 1  # shiro died while this process started: there is no one to serve
    _subreaper()
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    stops: list[int] = []
    signal.signal(signal.SIGCHLD, lambda *_: None)  # a handler, so the wakeup fd hears of it
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, lambda signum, _frame: stops.append(signum))
    out_r, out_w = os.pipe2(os.O_CLOEXEC)
    server = os.fork()
    if server == 0:
        _exec_server(executable, args, out_w)
    os.close(out_w)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)  # the end of stdin must come to the server when the SDK closes it
    os.close(devnull)
    pump = threading.Thread(target=relay, args=(out_r, 1, limit), daemon=True)
    pump.start()
    guard = Guard(server, shiro_fd, wake_r)
    guard.wait(lambda: guard.status is not None or bool(stops) or guard.shiro_gone(), None)
    if guard.status is not None:
        guard.end_all(LEFTOVER_GRACE)
    elif stops:
        guard.end_all(STOP_GRACE)
    else:  # shiro is gone, and with it the write end of the server's stdin
        if not guard.wait(lambda: guard.status is not None, EOF_GRACE):
            guard.end_all(TERM_GRACE)
        else:
            guard.end_all(LEFTOVER_GRACE)
    pump.join(1.0)  # every writer of the relay's pipe is gone: what is left in it goes out
    return guard.exit_code()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
