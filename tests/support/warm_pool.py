"""One warm server per test process, so an LSP test's server does not pay the imports again.

Why: a cold `shiro-lsp` spends ~1.3 s of CPU importing the LSP layer, then ~1.4 s importing the
openai SDK for its first turn (on this 2-core machine; docs/performance.md, "Cold start"). Most
LSP tests are a few requests long, so most of their time was those imports.

How: this is the production warm server (server/startup/warm.py, what a repeat `shiro` attaches to),
started once per test process (each xdist worker has its own) with a private runtime directory.
`start_client` (tests/support/lsp.py) then spawns `tests/support/warm_spawn.py` instead of
`python -m shiro_neko`: it hands its own stdio, directory and environment (the test's) to the warm
server, which forks a child that runs the ordinary `shiro-lsp` main on them (`_child`). So each
test still talks LSP over stdio to its own real server process, with its own environment and
state home; only the imports were done once, before the fork.

`shiro_env` does the same for the terminal client's tests: `shiro` attaches to this warm server
through its own handshake, as a user's repeat run does.

What it does not cover, and so stays cold (`start_client(..., cold=True)`, the terminal tests'
`cold_env`): a test that signals or measures the server's own process (the spawned pid is the
launcher's), and what only a fresh interpreter has (the stdlib front, server/startup/lsp_front.py; the
early first request, agent/provider/early_request.py): tests/lsp/test_front.py,
tests/unit/test_early_request.py, a few terminal tests, and the Neovim, Emacs, VS Code and ACP
tests spawn their servers cold. `SHIRO_TEST_COLD=1` runs every test cold.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

LAUNCHER = Path(__file__).with_name("warm_spawn.py")
SOCKET_ENV = "SHIRO_TEST_WARM_SOCKET"  # where the launcher finds this process's warm server
START_TIMEOUT_S = 120.0

_lock = threading.Lock()
_socket: Path | None = None
_failed = False


def enabled() -> bool:
    return os.environ.get("SHIRO_TEST_COLD", "") not in ("1", "true", "yes")


def socket_path() -> Path | None:
    """The warm server's socket, started on first use; None (spawn cold) when it cannot start."""
    global _socket, _failed
    if not enabled():
        return None
    with _lock:
        if _socket is None and not _failed:
            _socket = _start()
            _failed = _socket is None
        return _socket


def _start() -> Path | None:
    base = Path(tempfile.mkdtemp(prefix="shiro-test-warm-"))
    runtime, home = base / "run", base / "home"
    runtime.mkdir(mode=0o700)
    home.mkdir()
    # Nothing of the machine's user: the children take each test's environment instead (_child).
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
    # It ends at this process's exit (`stop`), or after 10 idle minutes should this process be
    # killed before that; a launcher that then finds no socket starts its server cold.
    env.update(XDG_RUNTIME_DIR=str(runtime), SHIRO_NEKO_HOME=str(home), SHIRO_WARM_IDLE="600")
    proc = subprocess.Popen([sys.executable, "-m", "shiro_neko.startup.warm"], env=env, cwd=str(base),
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)

    def stop() -> None:
        try:
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            proc.kill()
        shutil.rmtree(base, ignore_errors=True)

    atexit.register(stop)
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        found = list((runtime / "shiro-neko").glob("warm-*.sock")) if (runtime / "shiro-neko").is_dir() else []
        if found:
            return found[0]
        if proc.poll() is not None:
            return None
        time.sleep(0.02)
    return None


def spawn_argv(env: dict[str, str]) -> list[str]:
    """The command a test's server starts with; adds the launcher's one variable to `env`."""
    path = socket_path()
    if path is None:
        return [sys.executable, "-m", "shiro_neko"]
    env[SOCKET_ENV] = str(path)
    return [sys.executable, str(LAUNCHER)]


_runtimes: list[Path] = []


def shiro_env(env: dict[str, str]) -> dict[str, str]:
    """`env` for a `shiro` (terminal client) run that attaches to this process's warm server.

    The client finds a warm server by a socket name keyed by the code and the state home
    (server/startup/warm_socket.py), and each test has its own home: so each such environment gets a
    private runtime directory (0700) whose socket of that key is a link to this process's warm
    server. The client's own handshake (clients/terminal/warm_client.py) does the rest, as for a
    user's repeat run; the forked server then builds its server for the test's home (server/startup/warm.py,
    `_child`). Without the warm server: `env` unchanged (each run spawns its server cold)."""
    sock = socket_path()
    if sock is None:
        return env
    from shiro_neko.startup import warm_socket

    runtime = Path(tempfile.mkdtemp(prefix="shw-", dir="/tmp"))  # short: a socket path is < 108 bytes
    os.chmod(runtime, 0o700)
    if not _runtimes:
        atexit.register(lambda: [shutil.rmtree(path, ignore_errors=True) for path in _runtimes])
    _runtimes.append(runtime)
    # SHIRO_WARM_IDLE: should the handshake ever fail, the warm server the client then leaves
    # behind for next time (in this private directory) ends soon.
    attached = {**env, "SHIRO_WARM": "1", "XDG_RUNTIME_DIR": str(runtime), "SHIRO_WARM_IDLE": "20"}
    os.symlink(sock, warm_socket.socket_path(attached, create=True))
    return attached
