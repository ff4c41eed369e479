"""Commands left running for a session (`run_command` with `background: true`), and where a
command's output goes when it is longer than the model is shown.

A background command runs as a foreground one does (its own process group, the same sandbox,
group_watch.py ending it if the server is killed); it is stopped by `command_stop`, when its
session leaves memory (service.py `forget`) and when the server stops. Bounds: `MAX_RUNNING` per
session, `MAX_KEPT` entries (finished ones are dropped oldest first), `UNREAD_BYTES` of output
waiting to be read (older unread output is dropped, counted, and still in the output file), and
`SPILL_BYTES` per output file.

Output files live under the state home, `command-output/<session id>/`, 0600 in a 0700 folder,
and are deleted with the session; the sandbox hides the state home from commands (sandbox.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import signal
import time
from pathlib import Path

from ...state.atomic import write_atomic
from ...state.home_modes import make_private_dirs
from ...state.paths import shiro_home
from .base import ToolError

MAX_RUNNING = 8
MAX_KEPT = 16
UNREAD_BYTES = 64_000
SPILL_BYTES = 8 * 1024 * 1024
MAX_SPILLS = 20  # foreground outputs kept per session


# The output files alive now, by absolute path: read_file and grep read these (and only these)
# outside the workspace (`command_output_file`); never a directory, never another state file.
_OUTPUT_FILES: set[str] = set()


def output_dir(session_id: str) -> Path:
    return shiro_home() / "command-output" / session_id


def remove_output(session_id: str) -> None:
    folder = str(output_dir(session_id)) + os.sep
    for name in [f for f in _OUTPUT_FILES if f.startswith(folder)]:
        _OUTPUT_FILES.discard(name)
    shutil.rmtree(output_dir(session_id), ignore_errors=True)


def spill(session_id: str, text: str) -> Path:
    """Write a foreground command's whole kept output to a new file; its path."""
    path = output_dir(session_id) / f"run-{secrets.token_hex(6)}.log"
    write_atomic(path, text.encode("utf-8")[:SPILL_BYTES])
    _OUTPUT_FILES.add(str(path))
    # Bounded: the oldest foreground outputs go first (background ones are bounded by MAX_KEPT).
    olds = sorted(path.parent.glob("run-*.log"), key=lambda p: p.stat().st_mtime_ns)
    for old in olds[:-MAX_SPILLS]:
        _OUTPUT_FILES.discard(str(old))
        old.unlink(missing_ok=True)
    return path


def command_output_file(raw: str) -> Path | None:
    """The output file `raw` names exactly (as a result printed it), else None: the file tools'
    one way out of the workspace, for reading only."""
    if "\x00" in raw:
        return None
    path = os.path.abspath(os.path.expanduser(raw.strip()))
    return Path(path) if path in _OUTPUT_FILES and os.path.isfile(path) and not os.path.islink(path) else None


def read_output_file(path: Path) -> str:
    """An output file's text (bounded by SPILL_BYTES; not following a link put in its place)."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        return f.read(SPILL_BYTES + 1).decode("utf-8", errors="replace")


class _Log:
    """A background command's output: the unread part (bounded) and a file with all of it (bounded)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.unread = bytearray()
        self.dropped = 0  # unread bytes dropped since the last read
        self.total = 0
        self.lines = 0
        make_private_dirs(path.parent)
        # O_EXCL | O_NOFOLLOW: a new file of ours, never one planted or linked elsewhere.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        self.file = os.fdopen(fd, "wb", buffering=0)
        self.written = 0
        _OUTPUT_FILES.add(str(path))

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        self.unread += chunk
        if len(self.unread) > UNREAD_BYTES:
            extra = len(self.unread) - UNREAD_BYTES
            del self.unread[:extra]
            self.dropped += extra
        room = SPILL_BYTES - self.written
        if room > 0 and not self.file.closed:
            # Small writes to a local file; a full disk must not end the pump (the output is still read).
            with contextlib.suppress(OSError):
                self.file.write(chunk[:room])
            self.written += min(room, len(chunk))

    def take(self) -> tuple[str, int]:
        text = bytes(self.unread).decode("utf-8", errors="replace")
        dropped, self.unread, self.dropped = self.dropped, bytearray(), 0
        return text, dropped

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()


class BackgroundCommand:
    def __init__(self, handle: str, command: str, proc: asyncio.subprocess.Process, log: _Log) -> None:
        self.handle = handle
        self.command = command
        self.proc = proc
        self.log = log
        self.started = time.monotonic()
        self.ended: float | None = None
        assert proc.stdout is not None
        self.pump = asyncio.create_task(self._pump(proc.stdout))

    async def _pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            self.log.add(chunk)

    @property
    def running(self) -> bool:
        return self.proc.returncode is None

    def state_line(self) -> str:
        from .shell import exit_line  # noqa: PLC0415 - shell.py imports this module

        elapsed = (self.ended or time.monotonic()) - self.started
        state = "running" if self.running else exit_line(self.proc.returncode)
        return (f"[{self.handle}] {state}; {elapsed:.1f} s; {self.log.lines} lines, {self.log.total:,} bytes "
                f"of output so far; all of it (up to {SPILL_BYTES // (1024 * 1024)} MiB) in {self.log.path}")


class BackgroundCommands:
    """One session's background commands."""

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.commands: dict[str, BackgroundCommand] = {}
        self._next = 1

    def running(self) -> list[BackgroundCommand]:
        return [c for c in self.commands.values() if c.running]

    def check_room(self) -> None:
        running = self.running()
        if len(running) >= MAX_RUNNING:
            names = ", ".join(c.handle for c in running)
            raise ToolError(f"already {MAX_RUNNING} background commands running ({names}); "
                            "stop one with command_stop first")

    def new_log(self) -> tuple[str, _Log]:
        handle = f"bg{self._next}"
        self._next += 1
        return handle, _Log(output_dir(self.session_id) / f"{handle}-{secrets.token_hex(4)}.log")

    def add(self, command: BackgroundCommand) -> None:
        self.commands[command.handle] = command
        finished = [c for c in self.commands.values() if not c.running]
        while len(self.commands) > MAX_KEPT and finished:
            oldest = finished.pop(0)
            del self.commands[oldest.handle]
            oldest.log.close()
            # Its file goes too: a long session's finished commands must not pile up on disk.
            _OUTPUT_FILES.discard(str(oldest.log.path))
            with contextlib.suppress(OSError):
                oldest.log.path.unlink()

    def get(self, handle: str) -> BackgroundCommand:
        command = self.commands.get(handle)
        if command is None:
            known = ", ".join(self.commands) or "none"
            raise ToolError(f"no background command {handle!r} in this session (known: {known})")
        return command

    async def stop(self, command: BackgroundCommand) -> None:
        from .shell import stop_group  # noqa: PLC0415 - shell.py imports this module

        await stop_group(command.proc.pid)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(command.pump), 1.0)
        if command.ended is None:
            command.ended = time.monotonic()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(command.proc.wait(), 1.0)

    async def close(self) -> None:
        """Stop every command and delete the output files (the session ended, the server stops)."""
        commands = list(self.commands.values())
        await asyncio.gather(*(self.stop(c) for c in commands))  # their grace periods run together
        for command in commands:
            command.log.close()
        self.commands.clear()
        await asyncio.to_thread(remove_output, self.session_id)

    def kill_now(self) -> None:
        """SIGKILL every command's group at once (no awaiting possible: a session forgotten from
        synchronous code); the async `close` then finishes the cleanup."""
        from . import group_watch  # noqa: PLC0415

        for command in self.commands.values():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(command.proc.pid, signal.SIGKILL)
            group_watch.unwatch(command.proc.pid)
