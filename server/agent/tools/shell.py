"""run_command: a shell command in the workspace, bounded in time, output and lifetime.

The command runs in its own session (process group), so a timeout, an abort or the end of the
call can stop everything it started, background children included, without touching the server's
own process group; group_watch.py ends it if the server is killed first.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
from typing import Annotated

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .base import Tool, ToolHost, ToolResult
from .output_cap import cap_output
from . import group_watch
from .sandbox import Sandbox, blocked_note, command_env

DEFAULT_TIMEOUT_S = 120
MAX_TIMEOUT_S = 600
# After SIGTERM a process group gets this long to exit before SIGKILL.
_TERM_GRACE_S = 1.0
# After the shell exits, output still in flight gets this long to arrive. A pipe still open after
# that is held by a background process the command left behind.
_PIPE_GRACE_S = 0.5
_POLL_S = 0.05
# Bytes kept from each end of the output; the model is shown far less (see cap_output), so the
# middle of a huge output can be dropped while it streams instead of piling up in memory.
_KEEP_BYTES = 256_000


def _shell() -> str:
    return shutil.which("bash") or "/bin/sh"


class _Output:
    """The command's merged stdout/stderr, keeping only both ends of a huge stream."""

    def __init__(self) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = _KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > _KEEP_BYTES:
                del self.tail[: len(self.tail) - _KEEP_BYTES]

    def text(self) -> str:
        text = bytes(self.head + self.tail).decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        # Dropped bytes are counted as characters: exact for ASCII, close enough otherwise.
        return cap_output(text, keep_tail=True, total_length=len(text) + dropped if dropped else None)


async def _pump(stream: asyncio.StreamReader, out: _Output) -> None:
    while chunk := await stream.read(65536):
        out.add(chunk)


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # a member changed its user id; it still exists
    return True


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def stop_process_group(pgid: int) -> None:
    """SIGTERM the group, then SIGKILL whatever is left after a grace period.

    SIGKILL is sent from `finally` so that even a second cancellation during the grace period
    cannot leave the group running."""
    if not _group_alive(pgid):
        return
    _signal_group(pgid, signal.SIGTERM)
    try:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + _TERM_GRACE_S
        while loop.time() < deadline and _group_alive(pgid):
            await asyncio.sleep(_POLL_S)
    finally:
        if _group_alive(pgid):
            _signal_group(pgid, signal.SIGKILL)


async def _wait_exit(proc: asyncio.subprocess.Process, pump: asyncio.Task[None], timeout: float) -> bool:
    """Wait for the shell to exit; False on timeout.

    Process.wait() also waits for the pipes to close, which a background child can hold open for
    ever, so the exit is seen by polling returncode until the pipe closes."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while proc.returncode is None:
        remaining = deadline - loop.time()
        if remaining <= 0:
            return False
        if pump.done():  # pipe closed: now wait() returns as soon as the process exits
            try:
                await asyncio.wait_for(proc.wait(), remaining)
            except TimeoutError:
                return False
            return True
        await asyncio.wait({pump}, timeout=min(_POLL_S, remaining))
    return True


async def _settle(pump: asyncio.Task[None], grace: float) -> bool:
    """Let the rest of the output arrive; False when the pipe is still open after `grace`."""
    done, _ = await asyncio.wait({pump}, timeout=grace)
    return bool(done)


def _exit_line(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"exit code {code} (killed by signal {name})"
    return f"exit code {code}"


async def _spawn(argv: list[str], host: ToolHost, env: dict[str, str]) -> asyncio.subprocess.Process:
    """Start the command in its own process group (whose id is its pid), so that a cancellation
    cannot leave any of it running. The shell runs before its spawn is awaited to the end; a cancel
    landing then made asyncio kill the shell alone, and a child it had already started lived on.
    So the spawn finishes under a shield, and a cancel stops the whole new group before going on."""
    spawn = asyncio.ensure_future(
        asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=host.root,
            env=env,
            start_new_session=True,
        )
    )
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # a spawn that failed left nothing to stop
            await stop_process_group((await spawn).pid)
        raise
    group_watch.watch(proc.pid)
    return proc


async def _stop_group(pgid: int) -> None:
    await stop_process_group(pgid)
    group_watch.unwatch(pgid)


async def _run_command(host: ToolHost, args: RunCommandArgs, sandbox: Sandbox | None = None,
                       env_names: tuple[str, ...] = ()) -> ToolResult:
    command = args.command
    timeout = args.timeout_seconds or DEFAULT_TIMEOUT_S  # within 1..MAX_TIMEOUT_S: the Struct's bounds
    argv = [_shell(), "-c", command]
    if sandbox is not None:
        # In a thread: the mounts are looked up on disk, and a changed index costs a `git ls-files`
        # (tools/git_metadata.py submodule_dirs), neither of which may hold up the event loop.
        argv = await asyncio.to_thread(sandbox.wrap, argv, str(host.root))
        env_names = sandbox.env_names
    proc = await _spawn(argv, host, command_env(env_names, sandboxed=sandbox is not None))
    assert proc.stdout is not None
    out = _Output()
    pump = asyncio.create_task(_pump(proc.stdout, out))
    try:
        if not await _wait_exit(proc, pump, timeout):
            await _stop_group(proc.pid)
            await _settle(pump, _TERM_GRACE_S)
            return ToolResult(f"timed out after {timeout} s; the command was stopped\n{out.text()}", is_error=True)
        note = ""
        if not await _settle(pump, _PIPE_GRACE_S):
            # Left running, the child would keep the output pipe (and this call) open.
            note = "\n[background processes still attached to the output were stopped]"
        elif _group_alive(proc.pid):
            note = "\n[background processes the command left running were stopped]"
        # Nothing a call started outlives it (in the sandbox its pid namespace is gone already).
        await _stop_group(proc.pid)
        await _settle(pump, _TERM_GRACE_S)
        body = out.text() or "(no output)"
        if sandbox is not None:
            note += blocked_note(sandbox, proc.returncode, body)
        return ToolResult(f"{_exit_line(proc.returncode)}\n{body}{note}")
    finally:
        # Cancelled (the user aborted the turn) or failed: stop everything; a no-op when stopped.
        await _stop_group(proc.pid)
        if not pump.done():
            pump.cancel()


class RunCommandArgs(msgspec.Struct, forbid_unknown_fields=True):
    command: Annotated[str, Meta(description="The shell command line to run.")]
    timeout_seconds: Annotated[
        int, Meta(ge=1, le=MAX_TIMEOUT_S, description=f"Stop the command after this many seconds. Default {DEFAULT_TIMEOUT_S}.")
    ] | UnsetType = UNSET


def run_command_tool(sandbox: Sandbox | None, *, env_names: tuple[str, ...] = (), unenforced: str | None = None) -> Tool:
    """run_command, inside `sandbox` when one is in force.

    A sandboxed command asks for approval of kind "sandboxed-command", which `approvals:
    auto-edit` lets through (the sandbox bounds what it can do); with `sandbox: "off"` it is
    "command". `unenforced` (why a sandbox the settings ask for cannot be had) makes it
    "unsandboxed-command": asked about even under `approvals: auto` (docs/protocol.md, "Workspace
    trust"), and a deny says what to do about it. `env_names` is `sandboxEnv`."""
    where = (
        f" It runs in a {sandbox.mode} sandbox: "
        + ("it can write only inside the workspace and a private /tmp" if sandbox.mode == "workspace-write" else "it cannot write files except in a private /tmp")
        + ", has no network and sees only a few environment variables."
        if sandbox is not None
        else ""
    )
    if sandbox is not None:
        label = f"run (sandbox {sandbox.mode})"
    elif unenforced is not None:
        label = "run WITHOUT the sandbox (bubblewrap does not work here)"
    else:
        label = "run"
    denied = (
        f"denied: the command was not run. The sandbox setting asks for a sandbox, but {unenforced}; "
        "so every command needs the user's yes. Install bubblewrap (Debian/Ubuntu: the `bubblewrap` "
        'package), or set shiro.sandbox = "off" to run commands unconfined.'
        if unenforced is not None
        else None
    )

    async def run(host: ToolHost, args: RunCommandArgs) -> ToolResult:
        return await _run_command(host, args, sandbox, env_names)

    return Tool(
        name="run_command",
        description=(
            "Run a shell command (bash -c) in the workspace root and return its exit code and combined "
            "stdout/stderr. Stdin is empty, so interactive commands must not wait for input (pass -y "
            "and similar flags). Long output keeps its beginning and end. The command is stopped "
            f"after timeout_seconds (default {DEFAULT_TIMEOUT_S}, at most {MAX_TIMEOUT_S}). Background "
            "processes are stopped when the command ends. Prefer read_file, list_files and grep for looking at files. "
            "The user may be asked to approve the command." + where
        ),
        arguments=RunCommandArgs,
        run=run,
        approval="sandboxed-command" if sandbox is not None else "unsandboxed-command" if unenforced else "command",
        summary=lambda args: f"{label}: {args.get('command', '')}",
        denied=denied,
    )


RUN_COMMAND = run_command_tool(None)
