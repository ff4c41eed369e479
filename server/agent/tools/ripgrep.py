"""grep's engine: ripgrep as a subprocess, bounded in time and output, killed by abort.

Why ripgrep (the `ripgrep` wheel ships the `rg` binary) and not Python's `re` over a walk: its
regexes run in linear time (Python's backtrack: `^(a+)+$` on a 30-character line took 37 s and
held the event loop), it respects `.gitignore`, and it is what every peer agent searches with.
It runs as a child process, so nothing of a search runs on the event loop's thread, a time limit
and an output cap bound it, and cancelling the tool call (abort) kills it.

ripgrep opens files by name, so a directory swapped for a link while it walks could make it read
outside the workspace. Nothing it prints is shown as found until it is confirmed: every reported
line is read back through `agent/workspace_fs.py` (resolved beneath the root's descriptor) and
must be that file's line; what does not match is dropped. Links are not followed (ripgrep's
default), open editor buffers are searched from their text through stdin instead of the disk.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import sys
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path

from ...model.workspace_files import SKIP_DIRS
from .. import workspace_fs
from .base import ToolError

# A search that takes longer than this is stopped; what it found so far is shown.
TIME_LIMIT_S = 30.0
# ripgrep's output read at most (bytes): past it the search is stopped, the count is a lower bound.
OUTPUT_CAP_BYTES = 8 * 1024 * 1024
_READ_CHUNK = 64 * 1024


@dataclass
class Match:
    path: str  # root-relative, forward slashes
    line: int
    text: str


@dataclass
class Found:
    matches: list[Match] = field(default_factory=list)
    total: int = 0
    complete: bool = True  # False: stopped by the time limit or the output cap
    stopped: str = ""  # why, for the model


def rg_path() -> str:
    """The `rg` installed with the `ripgrep` wheel (beside this Python), else one on PATH."""
    here = [sysconfig.get_path("scripts"), os.path.dirname(sys.executable)]
    found = shutil.which("rg", path=os.pathsep.join([*here, os.environ.get("PATH", "")]))
    if found is None:
        raise ToolError("grep needs ripgrep (`rg`), which is not installed: install the `ripgrep` package")
    return found


def _args(pattern: str, case_insensitive: bool, glob: str | None, max_file_bytes: int) -> list[str]:
    args = [
        rg_path(), "--no-config", "--null", "--line-number", "--with-filename", "--no-heading",
        "--color", "never", "--hidden", "--no-messages", "--max-filesize", str(max_file_bytes),
        # Never read through a link to a device or follow one out: links are not followed at all.
        "--no-follow",
    ]
    if case_insensitive:
        args.append("--ignore-case")
    if glob:
        args += ["--glob", glob]
    for name in sorted(SKIP_DIRS):  # tooling state, as list_files skips it
        args += ["--glob", f"!{name}/"]
    args += ["--glob", "!*.egg-info/"]
    return args + ["--regexp", pattern]


async def _drain(stream: asyncio.StreamReader | None) -> None:
    # asyncio's wait() returns only once the pipes are closed, and a full StreamReader stops
    # reading its pipe: unread output would hold wait() for ever.
    while stream is not None and await stream.read(_READ_CHUNK):
        pass


async def _kill(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        try:
            process.kill()
        except ProcessLookupError:
            pass
    await asyncio.gather(_drain(process.stdout), _drain(process.stderr), process.wait())


async def _run(argv: list[str], cwd: str, stdin: bytes | None, time_limit: float,
               output_cap: int) -> tuple[bytes, str, int | None, str]:
    """(stdout up to the cap, stderr's start, exit code or None when stopped, why it was stopped)."""
    process = await asyncio.create_subprocess_exec(
        *argv, cwd=cwd, stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={"PATH": os.environ.get("PATH", ""), "LC_ALL": "C.UTF-8"},  # no secrets in a child's environment
    )
    assert process.stdout is not None and process.stderr is not None
    out = bytearray()
    stopped = ""

    async def feed() -> None:
        if stdin is not None and process.stdin is not None:
            try:
                process.stdin.write(stdin)
                await process.stdin.drain()
                process.stdin.close()
            except (BrokenPipeError, ConnectionResetError):
                pass

    async def read() -> None:
        nonlocal stopped
        assert process.stdout is not None
        while True:
            chunk = await process.stdout.read(_READ_CHUNK)
            if not chunk:
                return
            out.extend(chunk)
            if len(out) >= output_cap:
                stopped = f"search stopped: its output passed {output_cap // (1024 * 1024)} MB"
                return

    try:
        try:
            async with asyncio.timeout(time_limit):
                await asyncio.gather(feed(), read())
        except TimeoutError:
            stopped = f"search stopped after {time_limit:g} s; narrow it with path or glob"
        if stopped:
            await _kill(process)
            err = b""
        else:
            err = await process.stderr.read(4096)
            await asyncio.gather(_drain(process.stderr), process.wait())
    except BaseException:  # abort (CancelledError) included: the child never outlives the call
        await _kill(process)
        raise
    return bytes(out[:output_cap]), err.decode("utf-8", "replace"), None if stopped else process.returncode, stopped


def _parse(out: bytes, label: str | None) -> list[tuple[str, int, bytes]]:
    records = []
    for raw in out.split(b"\n"):
        path, sep, rest = raw.partition(b"\0")
        if not sep:
            continue  # the cut end of a capped output
        number, colon, text = rest.partition(b":")
        if not colon or not number.isdigit():
            continue
        name = label if label is not None else os.fsdecode(path)
        records.append((name.removeprefix("./"), int(number), text))
    return records


def _confirmed(root: Path, records: list[tuple[str, int, bytes]], max_file_bytes: int) -> list[Match]:
    """The records whose line is that line of the workspace file (read beneath the root)."""
    cache: dict[str, list[bytes] | None] = {}
    out = []
    for path, number, text in records:
        if path not in cache:
            try:
                data = workspace_fs.read_bytes(root, path, max_bytes=max_file_bytes)
                cache[path] = data.split(b"\n") if len(data) <= max_file_bytes else None
            except OSError:
                cache[path] = None
        lines = cache[path]
        if lines is None or number > len(lines) or lines[number - 1] != text:
            continue  # not what the workspace holds there: read through a swapped link, or changed
        out.append(Match(path, number, text.decode("utf-8", "replace")))
    return out


async def search(root: Path, start: str, pattern: str, *, case_insensitive: bool = False, glob: str | None = None,
                 buffers: dict[str, str] | None = None, max_matches: int = 500, max_file_bytes: int = 5_000_000,
                 time_limit: float = TIME_LIMIT_S, output_cap: int = OUTPUT_CAP_BYTES) -> Found:
    """Matches of `pattern` under `start` (root-relative), the first `max_matches` confirmed.

    `buffers` (root-relative path -> text) are searched instead of their files on disk."""
    buffers = buffers or {}
    argv = _args(pattern, case_insensitive, glob, max_file_bytes)
    disk_argv = argv + ([] if start == "." else ["--", start])
    out, err, code, stopped = await _run(disk_argv, os.fspath(root), None, time_limit, output_cap)
    if code == 2 and not out:
        message = err.strip().removeprefix("rg: ") or "ripgrep failed"
        raise ToolError(f"grep failed: {message[:2000]}")
    buffer_outputs = []
    for path, buffer in buffers.items():
        buffer_argv = argv + ["-"]  # stdin: named "<stdin>" in the output, renamed by _parse
        b_out, _, _, b_stopped = await _run(buffer_argv, os.fspath(root), buffer.encode("utf-8"), time_limit, output_cap)
        stopped = stopped or b_stopped
        buffer_outputs.append((path, b_out))
    # Parsing, sorting and reading the files back are CPU and disk work: a worker thread, never
    # the event loop's (tens of thousands of matches took 135 ms on the loop, bench/search.py).
    return await asyncio.to_thread(_collect, root, out, buffer_outputs, buffers, stopped, max_matches, max_file_bytes)


def _collect(root: Path, out: bytes, buffer_outputs: list[tuple[str, bytes]], buffers: dict[str, str], stopped: str,
             max_matches: int, max_file_bytes: int) -> Found:
    records = [r for r in _parse(out, None) if r[0] not in buffers]
    for path, b_out in buffer_outputs:
        records += _parse(b_out, path)
    records.sort(key=lambda r: (r[0], r[1]))
    found = Found(total=len(records), complete=not stopped, stopped=stopped)
    from_disk = [r for r in records[:max_matches] if r[0] not in buffers]
    confirmed = {(m.path, m.line): m for m in _confirmed(root, from_disk, max_file_bytes)}
    for path, number, line in records[:max_matches]:
        if path in buffers:
            found.matches.append(Match(path, number, line.decode("utf-8", "replace")))
        elif (path, number) in confirmed:
            found.matches.append(confirmed[(path, number)])
    return found
