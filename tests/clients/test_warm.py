"""The warm server (server/startup/warm.py): a repeat `shiro -p` is served by a fork of it, safely.

Real processes throughout: `shiro` as a user runs it, the fake provider over HTTP, the warm
server started by the first run and found by the second through the socket in a private
runtime directory (XDG_RUNTIME_DIR points at a fresh one per test). Which server answered is
read from the `warm-child` trace mark (shiro_neko.startup.trace) that only a forked child writes.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.lsp import server_env

_SCRIPT = Path(sys.executable).with_name("shiro")
SHIRO = [str(_SCRIPT)] if _SCRIPT.exists() else [sys.executable, "-c", "from shiro_neko.client.main import main; main()"]
IS_ROOT = os.getuid() == 0


@pytest.fixture
def runtime() -> Iterator[Path]:
    # Short and fresh: a Unix socket path must stay under 108 bytes.
    path = Path(tempfile.mkdtemp(prefix="shw-", dir="/tmp"))
    os.chmod(path, 0o700)
    yield path
    for lock in path.glob("shiro-neko/*.lock"):  # end the warm server this test started
        pid = int(lock.read_text().strip() or 0)
        if pid:
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
    shutil.rmtree(path, ignore_errors=True)


def warm_env(tmp_path: Path, runtime: Path, fake: FakeProvider) -> dict[str, str]:
    env = server_env(tmp_path / "home", fake.base_url, XDG_RUNTIME_DIR=str(runtime), SHIRO_WARM="1",
                     SHIRO_WARM_IDLE="120", SHIRO_TRACE=str(tmp_path / "trace"))
    return env


def run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(SHIRO + args, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)


def warm_children(tmp_path: Path) -> int:
    trace = tmp_path / "trace"
    return trace.read_text().count(" warm-child\n") if trace.exists() else 0


def wait_for_socket(runtime: Path, timeout: float = 90) -> Path:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = list((runtime / "shiro-neko").glob("warm-*.sock")) if (runtime / "shiro-neko").exists() else []
        if found:
            return found[0]
        time.sleep(0.1)
    raise AssertionError("the first run started no warm server")


def warm_pid(runtime: Path) -> int:
    return int(next((runtime / "shiro-neko").glob("*.lock")).read_text())


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def warmed(tmp_path: Path, runtime: Path, fake: FakeProvider, workspace: Path) -> dict[str, Any]:
    """A first (cold) run, which leaves a warm server behind."""
    env = warm_env(tmp_path, runtime, fake)
    fake.script(Reply(text="cold answer"))
    done = run(["-p", "first"], workspace, env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "cold answer\n"
    assert warm_children(tmp_path) == 0
    sock = wait_for_socket(runtime)
    return {"env": env, "socket": sock}


def test_a_repeat_run_is_served_by_the_warm_server_with_its_own_environment(tmp_path, warmed, workspace, fake):
    fake.script(Reply(calls=[Call("run_command", {"command": "echo $LC_SHIRO_PROBE > probe.txt"})]), Reply(text="warm answer"))
    other = FakeProvider().start()  # the second run's environment names another endpoint: that one is used
    try:
        other.script(Reply(calls=[Call("run_command", {"command": "echo $LC_SHIRO_PROBE > probe.txt"})]), Reply(text="warm answer"))
        env = {**warmed["env"], "OPENAI_BASE_URL": other.base_url, "LC_SHIRO_PROBE": "from-the-client"}  # LC_*: a name the command environment allowlist passes
        done = run(["--approvals", "auto", "-p", "second"], workspace, env)
        assert done.returncode == 0, done.stderr
        assert done.stdout == "warm answer\n"
        assert len(other.requests) == 2
    finally:
        other.stop()
    assert warm_children(tmp_path) == 1
    assert (workspace / "probe.txt").read_text() == "from-the-client\n"  # the client's env and cwd
    # The session of the warm run was saved like any other, and resumes.
    fake.script(Reply(text="continued"))
    done = run(["-c", "-p", "third"], workspace, warmed["env"])
    assert done.returncode == 0, done.stderr
    assert "second" in json.dumps(fake.requests[-1].body)


def test_two_clients_at_once_on_one_workspace_get_two_servers(tmp_path, warmed, workspace, fake):
    fake.script(*[Reply(text="same answer", delay=0.3, chunks=3) for _ in range(2)])
    env = warmed["env"]
    procs = [subprocess.Popen(SHIRO + ["-p", f"prompt {i}"], cwd=workspace, env=env, stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for i in range(2)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    assert warm_children(tmp_path) == 2
    pids = {pid for ns, pid, name in (line.split(" ", 2) for line in (tmp_path / "trace").read_text().splitlines())
            if name == "warm-child"}
    assert len(pids) == 2  # one server process per client, as with two editor windows
    records = [json.loads(p.read_text()) for p in (tmp_path / "home" / "sessions").glob("*.json")]
    prompts = json.dumps(records)
    assert len(records) == 3 and "prompt 0" in prompts and "prompt 1" in prompts and "first" in prompts


def test_the_socket_is_the_users_alone(warmed, runtime):
    folder = runtime / "shiro-neko"
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(warmed["socket"]).st_mode) == 0o600
    assert os.stat(warmed["socket"]).st_uid == os.getuid()


def test_a_folder_open_to_others_is_not_used(tmp_path, warmed, runtime, workspace, fake):
    os.chmod(runtime / "shiro-neko", 0o755)
    try:
        fake.script(Reply(text="spawned"))
        done = run(["-p", "again"], workspace, warmed["env"])
    finally:
        os.chmod(runtime / "shiro-neko", 0o700)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "spawned\n"
    assert warm_children(tmp_path) == 0  # its own server, as if there were no warm one


_INTRUDER = r"""
import json, os, socket, struct, sys
os.setgid(65534); os.setuid(65534)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(10)
s.connect(sys.argv[1])
r, w = os.pipe()
body = json.dumps({"v": 1, "cwd": "/", "env": {}, "umask": 18}).encode()
try:
    socket.send_fds(s, [struct.pack("!I", len(body)) + body], [r, w, w])
    answer = s.recv(256).decode()
except ConnectionError:  # reset: the server closed on us
    answer = ""
print(json.dumps({"answer": answer}))
"""


@pytest.mark.skipif(not IS_ROOT and os.environ.get("CI") != "true", reason="needs root to act as another user")
def test_another_users_process_is_refused_even_if_it_reaches_the_socket(tmp_path, warmed, runtime):
    # Open the way on purpose (as a careless chmod would), so only the uid check stands.
    os.chmod(runtime, 0o711)
    os.chmod(runtime / "shiro-neko", 0o711)
    os.chmod(warmed["socket"], 0o666)
    try:
        done = subprocess.run([sys.executable, "-c", _INTRUDER, str(warmed["socket"])], capture_output=True, text=True,
                              timeout=60)
    finally:
        os.chmod(warmed["socket"], 0o600)
        os.chmod(runtime / "shiro-neko", 0o700)
        os.chmod(runtime, 0o700)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"answer": ""}  # closed without a pid: nothing was forked
    assert warm_children(tmp_path) == 0


def test_the_warm_server_ends_when_its_socket_is_removed(warmed, runtime):
    pid = warm_pid(runtime)
    os.kill(pid, 0)
    warmed["socket"].unlink()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    raise AssertionError("the warm server outlived its socket")
