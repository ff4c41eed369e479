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
from pathlib import Path
from typing import Annotated, Any

import msgspec
from msgspec import UNSET, Meta, UnsetType

from .background import BackgroundCommand, BackgroundCommands, spill
from .base import Tool, ToolError, ToolHost, ToolResult
from .output_cap import DEFAULT_LIMIT, cap_output
from . import group_watch
from .sandbox import Sandbox, Widening, blocked_note, command_env
from .workspace_paths import resolve_workspace_path, workspace_relative

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
        self.lines = 0

    def add(self, chunk: bytes) -> None:
        self.total += len(chunk)
        self.lines += chunk.count(b"\n")
        room = _KEEP_BYTES - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > _KEEP_BYTES:
                del self.tail[: len(self.tail) - _KEEP_BYTES]

    def kept(self) -> str:
        """All that was kept: the whole output, or its two ends with a line where the middle was."""
        dropped = self.total - len(self.head) - len(self.tail)
        middle = f"\n[... {dropped:,} bytes dropped here ...]\n".encode() if dropped else b""
        return bytes(self.head + middle + self.tail).decode("utf-8", errors="replace")

    def text(self) -> str:
        text = bytes(self.head + self.tail).decode("utf-8", errors="replace")
        dropped = self.total - len(self.head) - len(self.tail)
        # Dropped bytes are counted as characters: exact for ASCII, close enough otherwise.
        return cap_output(text, keep_tail=True, total_length=len(text) + dropped if dropped else None)

    @property
    def cut(self) -> bool:
        return self.total > DEFAULT_LIMIT  # cap_output shows at most this many characters


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


def exit_line(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = str(-code)
        return f"exit code {code} (killed by signal {name})"
    return f"exit code {code}"


async def _spawn(argv: list[str], cwd: Path, env: dict[str, str], pass_fds: tuple[int, ...] = ()) -> asyncio.subprocess.Process:
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
            cwd=cwd,
            env=env,
            start_new_session=True,
            pass_fds=pass_fds,
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


async def stop_group(pgid: int) -> None:
    await stop_process_group(pgid)
    group_watch.unwatch(pgid)


def _workdir(host: ToolHost, args: RunCommandArgs) -> Path:
    """The command's working directory: the workspace root, or `workdir` inside it (guarded as
    the file tools' paths are: no `..`, no absolute path elsewhere, no link leading out)."""
    if isinstance(args.workdir, UnsetType) or args.workdir in ("", "."):
        return host.root
    path = resolve_workspace_path(host.root, args.workdir)
    if not path.is_dir():
        raise ToolError(f"workdir '{args.workdir}' is not a folder in the workspace")
    return path


def _widen_path(host: ToolHost, raw: str) -> str:
    """A path a call asks to add to the sandbox: existing, absolute once resolved (`~` and
    workspace-relative spellings accepted), never the state home (sandbox.py hides it anyway)."""
    if "\x00" in raw or not raw.strip():
        raise ToolError(f"the path {raw!r} to add to the sandbox is empty or has a NUL character")
    written = os.path.expanduser(raw)
    path = os.path.realpath(written if os.path.isabs(written) else os.path.join(host.root, written))
    if not os.path.exists(path):
        raise ToolError(f"the path {raw!r} to add to the sandbox does not exist ({path})")
    return path


def widening_of(args: RunCommandArgs, host: ToolHost) -> Widening | None:
    if not (args.network or args.write_paths or args.read_paths):
        return None
    return Widening(
        network=args.network,
        write=tuple(dict.fromkeys(_widen_path(host, p) for p in args.write_paths)),
        read=tuple(dict.fromkeys(_widen_path(host, p) for p in args.read_paths)),
    )


def widening_words(args: dict[str, Any]) -> str | None:
    """What a call asks beyond the sandbox, from its unchecked arguments (the approval's text), or None."""
    parts = []
    if args.get("network") is True:
        parts.append("NETWORK access")
    for key, verb in (("write_paths", "WRITE"), ("read_paths", "READ")):
        paths = args.get(key)
        if isinstance(paths, list) and paths:
            parts.append(f"{verb} " + ", ".join(str(p) for p in paths))
    if not parts:
        return None
    reason = args.get("reason")
    why = reason.strip() if isinstance(reason, str) and reason.strip() else "(no reason given)"
    return "; ".join(parts) + f" — reason: {why}"


def _result_text(code: int | None, seconds: float, out: _Output, spilled: Path | None) -> str:
    lines = out.lines + (1 if out.total and not out.kept().endswith("\n") else 0)
    head = f"{exit_line(code)}; {seconds:.1f} s; {lines} line{'' if lines == 1 else 's'} of output"
    if spilled is not None:
        head += f"\n[the whole output is in {spilled}; read it with read_file or search it with grep]"
    return head


async def _start_background(host: ToolHost, argv: list[str], cwd: Path, env: dict[str, str], command: str,
                            background: BackgroundCommands, pass_fds: tuple[int, ...] = ()) -> ToolResult:
    background.check_room()
    handle, log = background.new_log()
    try:
        proc = await _spawn(argv, cwd, env, pass_fds)
    except BaseException:
        log.close()
        raise
    background.add(BackgroundCommand(handle, command, proc, log))
    return ToolResult(
        f"started in the background as {handle} (pid {proc.pid}); read its new output with "
        f"command_output {{\"handle\": \"{handle}\"}} and end it with command_stop; it is stopped when "
        f"the session ends. Its whole output goes to {log.path}")


async def _run_command(host: ToolHost, args: RunCommandArgs, sandbox: Sandbox | None = None,
                       env_names: tuple[str, ...] = (), background: BackgroundCommands | None = None) -> ToolResult:
    command = args.command
    timeout = args.timeout_seconds or DEFAULT_TIMEOUT_S  # within 1..MAX_TIMEOUT_S: the Struct's bounds
    cwd = _workdir(host, args)
    argv = [_shell(), "-c", command]
    if sandbox is not None:
        widen = widening_of(args, host)
        # In a thread: the mounts are looked up on disk, and a changed index costs a `git ls-files`
        # (tools/git_metadata.py submodule_dirs), neither of which may hold up the event loop.
        argv = await asyncio.to_thread(sandbox.wrap, argv, str(host.root), str(cwd), widen)
        env_names = sandbox.env_names
    env = command_env(env_names, sandboxed=sandbox is not None)
    fds: tuple[int, ...] = ()
    if sandbox is None:
        argv, fds = group_watch.self_registering(argv)
    if args.background:
        if background is None:
            raise ToolError("background commands are not available here; run it without background")
        return await _start_background(host, argv, cwd, env, command, background, fds)
    started = asyncio.get_running_loop().time()
    proc = await _spawn(argv, cwd, env, fds)
    assert proc.stdout is not None
    out = _Output()
    pump = asyncio.create_task(_pump(proc.stdout, out))
    try:
        if not await _wait_exit(proc, pump, timeout):
            await stop_group(proc.pid)
            await _settle(pump, _TERM_GRACE_S)
            return ToolResult(f"timed out after {timeout} s; the command was stopped (use background: true "
                              f"for a server or a watcher)\n{out.text()}", is_error=True)
        note = ""
        if not await _settle(pump, _PIPE_GRACE_S):
            # Left running, the child would keep the output pipe (and this call) open.
            note = "\n[background processes still attached to the output were stopped; use background: true to keep one]"
        elif _group_alive(proc.pid):
            note = "\n[background processes the command left running were stopped; use background: true to keep one]"
        # Nothing a call started outlives it (in the sandbox its pid namespace is gone already).
        await stop_group(proc.pid)
        await _settle(pump, _TERM_GRACE_S)
        seconds = asyncio.get_running_loop().time() - started
        body = out.text() or "(no output)"
        spilled = None
        if out.cut and background is not None:
            spilled = await asyncio.to_thread(spill, background.session_id, out.kept())
        if sandbox is not None:
            note += blocked_note(sandbox, proc.returncode, body)
        return ToolResult(f"{_result_text(proc.returncode, seconds, out, spilled)}\n{body}{note}")
    finally:
        # Cancelled (the user aborted the turn) or failed: stop everything; a no-op when stopped.
        await stop_group(proc.pid)
        if not pump.done():
            pump.cancel()


class RunCommandArgs(msgspec.Struct, forbid_unknown_fields=True):
    command: Annotated[str, Meta(description="The shell command line to run.")]
    timeout_seconds: Annotated[
        int, Meta(ge=1, le=MAX_TIMEOUT_S, description=f"Stop the command after this many seconds. Default {DEFAULT_TIMEOUT_S}.")
    ] | UnsetType = UNSET
    workdir: Annotated[str, Meta(description="Folder to run in, relative to the workspace root. Default: the root.")] | UnsetType = UNSET
    background: Annotated[bool, Meta(description=(
        "Start it and return at once with a handle (a dev server, a watcher); read its output with "
        "command_output, end it with command_stop."))] = False
    network: Annotated[bool, Meta(description="Ask the user for network access for this one call (give a reason).")] = False
    write_paths: Annotated[list[str], Meta(max_length=16, description=(
        "Ask the user to let this one call write these paths outside what the sandbox allows (give a reason)."))] = []
    read_paths: Annotated[list[str], Meta(max_length=16, description=(
        "Ask the user to let this one call read these hidden paths (give a reason)."))] = []
    reason: Annotated[str, Meta(max_length=500, description="Why the call needs network or extra paths; shown to the user.")] | UnsetType = UNSET


def run_command_tool(sandbox: Sandbox | None, *, env_names: tuple[str, ...] = (), unenforced: str | None = None,
                     background: BackgroundCommands | None = None) -> Tool:
    """run_command, inside `sandbox` when one is in force.

    A sandboxed command asks for approval of kind "sandboxed-command", which `approvals:
    auto-edit` lets through (the sandbox bounds what it can do); with `sandbox: "off"` it is
    "command". `unenforced` (why a sandbox the settings ask for cannot be had) makes it
    "unsandboxed-command": asked about even under `approvals: auto` (docs/protocol.md, "Workspace
    trust"), and a deny says what to do about it. `env_names` is `sandboxEnv`. A call that widens
    the sandbox (network, extra paths) is asked about in every mode, for that call alone.
    `background` is the session's background commands (none: `background: true` is refused)."""
    where = (
        f" It runs in a {sandbox.mode} sandbox: "
        + ("it can write only inside the workspace and a private /tmp" if sandbox.mode == "workspace-write" else "it cannot write files except in a private /tmp")
        + ", has no network and sees only a few environment variables. If a command needs more (network "
        "for a package install, a path outside), set network / write_paths / read_paths with a reason: the "
        "user is asked for that one call."
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
        return await _run_command(host, args, sandbox, env_names, background)

    def summary(args: dict[str, Any]) -> str:
        widened = widening_words(args) if sandbox is not None else None
        where = f" in {args['workdir']}" if isinstance(args.get("workdir"), str) and args["workdir"] not in ("", ".") else ""
        bg = " in the background" if args.get("background") is True else ""
        extra = f" WIDENED: {widened}" if widened else ""
        return f"{label}{extra}{where}{bg}: {args.get('command', '')}"

    def always_ask(args: dict[str, Any]) -> str | None:
        if sandbox is None or widening_words(args) is None:
            return None
        return "it asks for more than the sandbox gives, for this call only"

    return Tool(
        name="run_command",
        description=(
            "Run a shell command (bash -c) in the workspace root (or workdir) and return its exit code, "
            "wall time, line count and combined stdout/stderr. Stdin is empty, so interactive commands must "
            "not wait for input (pass -y and similar flags). Long output keeps its beginning and end, and the "
            "whole of it is kept in a file you can read_file or grep. The command is stopped "
            f"after timeout_seconds (default {DEFAULT_TIMEOUT_S}, at most {MAX_TIMEOUT_S}). Processes it "
            "leaves running are stopped when it ends; use background: true for a server or a watcher. "
            "Prefer read_file, list_files and grep for looking at files. "
            "The user may be asked to approve the command." + where
        ),
        arguments=RunCommandArgs,
        run=run,
        approval="sandboxed-command" if sandbox is not None else "unsandboxed-command" if unenforced else "command",
        summary=summary,
        denied=denied,
        always_ask=always_ask,
    )


class HandleArgs(msgspec.Struct, forbid_unknown_fields=True):
    handle: Annotated[str, Meta(description="The handle run_command returned, e.g. bg1.")]


def _new_output(command: BackgroundCommand) -> str:
    text, dropped = command.log.take()
    note = f"[{dropped:,} older bytes not shown here; they are in {command.log.path}]\n" if dropped else ""
    return command.state_line() + "\n" + note + (cap_output(text, keep_tail=True) if text else "(no new output)")


def background_tools(background: BackgroundCommands) -> list[Tool]:
    """command_output and command_stop for one session's background commands."""

    async def output(host: ToolHost, args: HandleArgs) -> ToolResult:
        command = background.get(args.handle)
        if not command.running:
            with contextlib.suppress(TimeoutError):  # the last output of a command that ended
                await asyncio.wait_for(asyncio.shield(command.pump), _PIPE_GRACE_S)
        return ToolResult(_new_output(command))

    async def stop(host: ToolHost, args: HandleArgs) -> ToolResult:
        command = background.get(args.handle)
        was_running = command.running
        await background.stop(command)
        return ToolResult(("stopped. " if was_running else "it had ended already. ") + _new_output(command))

    return [
        Tool(
            name="command_output",
            description="The new output (since the last read) of a command started with run_command background: true, and whether it still runs.",
            arguments=HandleArgs,
            run=output,
            read_only=True,
        ),
        Tool(
            name="command_stop",
            description="Stop a command started with run_command background: true (its whole process group) and return its last output.",
            arguments=HandleArgs,
            run=stop,
            read_only=True,  # stops what an earlier call started; writes nothing
        ),
    ]


RUN_COMMAND = run_command_tool(None)
