"""The operating-system sandbox `run_command` runs in: bubblewrap on Linux.

`workspace-write` (the default where bubblewrap works): the whole file system is mounted
read-only except the workspace and the system temp directory, with a fresh /dev and /proc and no
network (a new network namespace has only its own loopback). `read-only`: nothing of the host is
writable; /tmp is a private, empty tmpfs that vanishes with the command. `off`: the command runs as
before, with the server's rights.

We use bubblewrap (Debian's `bubblewrap` package) rather than hand-written namespace code: it is
the sandbox Flatpak builds on, it needs no daemon, and it works unprivileged and as root in a
container. Whether it works is probed once by running it (a binary on PATH is not enough: a kernel
without user namespaces, or a container without mount rights, makes it fail at start).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from typing import Literal

SandboxMode = Literal["workspace-write", "read-only", "off"]


@dataclass(frozen=True)
class Sandbox:
    """A sandbox in force: the mode and the bubblewrap binary that enforces it."""

    mode: Literal["workspace-write", "read-only"]
    bwrap: str

    def wrap(self, argv: list[str], root: str) -> list[str]:
        """`argv` run inside the sandbox with `root` (the workspace) as its working directory."""
        root = os.path.realpath(root)
        args = [
            self.bwrap,
            "--ro-bind", "/", "/",
            "--dev", "/dev",
            "--proc", "/proc",
            "--unshare-net",
            # Its own pid namespace: killing the command's process group (bwrap) ends everything
            # it started, and it cannot signal the server's processes.
            "--unshare-pid",
            # Ends with the server even when the server is SIGKILLed.
            "--die-with-parent",
        ]
        if self.mode == "workspace-write":
            tmp = os.path.realpath(tempfile.gettempdir())
            args += ["--bind", tmp, tmp, "--bind", root, root]
        else:
            # The workspace is bound again on top: it may itself lie under /tmp.
            args += ["--tmpfs", "/tmp", "--ro-bind", root, root]
        return [*args, "--chdir", root, "--", *argv]


_PROBE_TIMEOUT_S = 10


@functools.cache
def _working_bwrap() -> str | None:
    path = shutil.which("bwrap")
    if path is None:
        return None
    probe = Sandbox("workspace-write", path).wrap(["true"], tempfile.gettempdir())
    try:
        done = subprocess.run(probe, stdin=subprocess.DEVNULL, capture_output=True, timeout=_PROBE_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if done.returncode == 0 else None


def sandbox_for(mode: SandboxMode) -> Sandbox | None:
    """The sandbox in force for this setting, or None (`off`, or no working bubblewrap here)."""
    if mode == "off":
        return None
    path = _working_bwrap()
    return Sandbox(mode, path) if path else None


# What a write or a connection the sandbox blocked looks like in a command's output.
_BLOCKED = re.compile(
    r"Read-only file system|Network is unreachable|Could not resolve host|"
    r"Temporary failure in name resolution|Name or service not known|"
    r"getaddrinfo|Connection refused|No address associated with hostname",
    re.IGNORECASE,
)


def blocked_note(sandbox: Sandbox, exit_code: int | None, output: str) -> str:
    """A line telling the model the sandbox probably stopped the command, or ""."""
    if exit_code == 0:
        return ""
    if output.startswith("bwrap:"):
        return f"\n[the {sandbox.mode} sandbox could not start the command; ask the user to run it with the sandbox off]"
    if not _BLOCKED.search(output):
        return ""
    allowed = "the workspace and the temp directory" if sandbox.mode == "workspace-write" else "nothing"
    return (
        f"\n[sandbox {sandbox.mode}: this command may have been stopped by the sandbox (it can write to "
        f"{allowed} and has no network); if it needs more, ask the user to rerun it outside the "
        "sandbox (setting shiro.sandbox = \"off\")]"
    )
