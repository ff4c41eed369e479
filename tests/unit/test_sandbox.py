"""run_command in the bubblewrap sandbox, against the real bwrap binary and real files.

Skipped where bubblewrap does not work, except under CI (`.ci/run` installs Debian's
`bubblewrap`), where a missing sandbox is a failure.
"""

from __future__ import annotations

import re

import asyncio
import os
import shutil
import socket
import uuid
from pathlib import Path

import pytest

from shiro_neko.agent.tool_calls import needs_approval
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import core_tools, run_tool
from shiro_neko.agent.tools.sandbox import Sandbox, sandbox_for
from shiro_neko.agent.tools.shell import RUN_COMMAND, run_command_tool
from shiro_neko.protocol import SessionArgs
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.service import chat, running_service


def _require(mode: str = "workspace-write") -> Sandbox:
    sandbox = sandbox_for(mode)  # type: ignore[arg-type]
    if sandbox is None:
        if os.environ.get("CI") == "true":
            pytest.fail("bubblewrap is missing or does not work here; .ci/run installs it")
        pytest.skip("bubblewrap is not available")
    return sandbox


@pytest.fixture
def host(tmp_path: Path) -> DiskToolHost:
    root = tmp_path / "ws"
    root.mkdir()
    return DiskToolHost(root)


@pytest.fixture
def outside() -> Path:
    """A path outside the workspace, the temp directory and the home (private in the sandbox)."""
    path = Path("/var/tmp") / f".shiro-sandbox-probe-{uuid.uuid4().hex}"
    yield path
    path.unlink(missing_ok=True)


async def run(sandbox: Sandbox | None, host: DiskToolHost, command: str, timeout: int = 30) -> tuple[bool, str]:
    result = await run_tool(run_command_tool(sandbox), host, {"command": command, "timeout_seconds": timeout})
    return result.is_error, untimed(result.output)


def untimed(output: str) -> str:
    """The result without its wall time and line count (shell.py `_result_text`), which vary."""
    return re.sub(r"\A(exit code [^;\n]*); \d+\.\d s; \d+ lines? of output", r"\1", output)


async def test_workspace_write_succeeds_and_outside_write_fails(host: DiskToolHost, outside: Path) -> None:
    sandbox = _require()
    _, inside = await run(sandbox, host, "echo made > made.txt && cat made.txt && mkdir -p sub && touch sub/x")
    assert inside.startswith("exit code 0\nmade")
    assert (host.root / "made.txt").read_text() == "made\n" and (host.root / "sub" / "x").exists()
    _, out = await run(sandbox, host, f"echo escaped > {outside}")
    assert not outside.exists()
    assert out.startswith("exit code 1\n") and "Read-only file system" in out
    assert "stopped by the sandbox" in out and "write_paths" in out  # how to ask for more, for one call


async def test_no_network_inside_the_sandbox(host: DiskToolHost) -> None:
    sandbox = _require()
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    probe = f"python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=3); print(\"connected\")'"
    try:
        _, boxed = await run(sandbox, host, probe)
        assert "connected" not in boxed and "Connection refused" in boxed and "stopped by the sandbox" in boxed
        _, free = await run(None, host, probe)
        assert free.startswith("exit code 0\nconnected")
    finally:
        listener.close()


async def test_read_only_writes_nothing(host: DiskToolHost, outside: Path) -> None:
    sandbox = _require("read-only")
    _, out = await run(sandbox, host, "echo no > no.txt")
    assert not (host.root / "no.txt").exists() and "Read-only file system" in out
    _, scratch = await run(sandbox, host, "echo tmp > /tmp/scratch && cat /tmp/scratch")
    assert scratch.startswith("exit code 0\ntmp")  # a private tmpfs, gone afterwards


async def test_off_behaves_as_before(host: DiskToolHost, outside: Path) -> None:
    assert sandbox_for("off") is None
    assert core_tools(None)[-1] is RUN_COMMAND and RUN_COMMAND.approval == "command"
    _, out = await run(None, host, f"echo out > {outside} && echo done")
    assert out == "exit code 0\ndone\n" and outside.read_text() == "out\n"


async def test_sandboxed_timeout_still_stops_everything(host: DiskToolHost, tmp_path: Path) -> None:
    sandbox = _require()
    marker = host.root / "late"
    is_error, out = await run(sandbox, host, f"(sleep 2; touch {marker}) & sleep 30", timeout=1)
    assert is_error and "timed out after 1 s" in out
    await asyncio.sleep(2.5)
    assert not marker.exists()  # the background child died with the sandbox


async def test_auto_edit_runs_commands_unasked_only_in_a_sandbox() -> None:
    boxed = run_command_tool(Sandbox("workspace-write", "/usr/bin/bwrap"))
    assert boxed.approval == "sandboxed-command"
    assert not needs_approval(boxed, "auto-edit")
    assert needs_approval(boxed, "ask")
    assert needs_approval(RUN_COMMAND, "auto-edit") and needs_approval(RUN_COMMAND, "ask")
    assert not needs_approval(RUN_COMMAND, "auto")
    assert boxed.summary({"command": "make"}) == "run (sandbox workspace-write): make"


# -- issue 21: the escapes an attacker found, each shut -------------------------------------------
# Each test below failed on the code before the sandbox was set up for hostile code.

def _listen_unix(path: Path) -> socket.socket:
    path.parent.mkdir(parents=True, exist_ok=True)
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    return server


_CONNECT = "python3 -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print(\"CONNECTED\")' {}"


async def test_warm_socket_and_run_sockets_are_out_of_reach(host: DiskToolHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """1: a pathname Unix socket is reached through the file system, network namespace or not: the
    warm server's (a forked, unsandboxed server) and the sockets under /run (D-Bus, Docker)."""
    from shiro_neko.startup.warm_socket import runtime_dir

    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg-run"))
    warm = runtime_dir(os.environ) / "warm-probe.sock"
    sockets = [warm]
    if os.access("/run", os.W_OK):
        sockets.append(Path("/run") / f"shiro-probe-{uuid.uuid4().hex[:8]}.sock")
    listeners = [_listen_unix(p) for p in sockets]
    try:
        for boxed in (_require(), _require("read-only")):
            for path in sockets:
                _, out = await run(boxed, host, _CONNECT.format(path))
                assert "CONNECTED" not in out, (boxed.mode, path, out)
        _, free = await run(None, host, _CONNECT.format(warm))
        assert "CONNECTED" in free  # the probe itself works
    finally:
        for listener, path in zip(listeners, sockets):
            listener.close()
            path.unlink(missing_ok=True)


async def test_no_capabilities_and_no_remount(host: DiskToolHost, outside: Path) -> None:
    """2: as root every capability was kept, and a remount made the host writable."""
    sandbox = _require()
    _, caps = await run(sandbox, host, "grep CapEff /proc/self/status; id -u")
    assert "CapEff:\t0000000000000000" in caps
    _, out = await run(sandbox, host, f"mount -o remount,rw,bind / ; echo escaped > {outside}; unshare -Ur true && echo NEWUSERNS")
    assert not outside.exists()
    assert "NEWUSERNS" not in out  # no user namespace of its own in which to gain capabilities again
    if os.geteuid() == 0:
        assert caps.splitlines()[-1] == "65534"  # an unprivileged uid inside


async def test_host_temp_directory_is_not_shared(host: DiskToolHost) -> None:
    """3: the host's temp directory was bound writable, and what a command left there stayed."""
    sandbox = _require()
    import tempfile

    probe = Path(tempfile.gettempdir()) / f"shiro-probe-{uuid.uuid4().hex}"
    try:
        _, out = await run(sandbox, host, f"echo left > {probe} && cat {probe}")
        assert out.startswith("exit code 0\nleft")  # a private /tmp it may use ...
        assert not probe.exists()  # ... which is not the host's
        _, again = await run(sandbox, host, f"cat {probe}")
        assert "No such file" in again  # and which does not outlive the command
    finally:
        probe.unlink(missing_ok=True)


@pytest.mark.parametrize("inside_workspace", [False, True])
async def test_state_home_is_hidden(host: DiskToolHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inside_workspace: bool) -> None:
    """3: a state home under the temp directory (or in the workspace) was readable and writable."""
    sandbox = _require()
    home = (host.root / ".state") if inside_workspace else (tmp_path / "state-home")
    (home / "sessions").mkdir(parents=True)
    (home / "trust.json").write_text('{"trusted": "secret-record"}')
    monkeypatch.setenv("SHIRO_NEKO_HOME", str(home))
    _, out = await run(sandbox, host, f"cat {home}/trust.json; echo '{{}}' > {home}/sessions/evil.json; ls -A {home}")
    assert "secret-record" not in out and "sessions" not in out.replace(f"{home}/sessions", "")
    assert not (home / "sessions" / "evil.json").exists()
    assert (home / "trust.json").read_text() == '{"trusted": "secret-record"}'


async def test_environment_is_an_allowlist(host: DiskToolHost, monkeypatch: pytest.MonkeyPatch) -> None:
    """4: GITHUB_TOKEN, AWS_SECRET_ACCESS_KEY reached the command; /etc/shadow was readable as root."""
    sandbox = _require()
    for name in ("GITHUB_TOKEN", "AWS_SECRET_ACCESS_KEY", "OPENAI_API_KEY", "MY_DB_PASSWORD", "SOME_SETTING"):
        monkeypatch.setenv(name, f"value-of-{name}")
    monkeypatch.setenv("LC_TIME", "C")
    _, out = await run(sandbox, host, "env; cat /etc/shadow")
    assert "value-of-" not in out
    assert "LC_TIME=C" in out and "PATH=" in out and "HOME=" in out
    assert "root:" not in out  # /etc/shadow
    listed = Sandbox(sandbox.mode, sandbox.bwrap, env_names=("GITHUB_TOKEN", "SOME_SETTING"))
    _, more = await run(listed, host, "env")
    assert "GITHUB_TOKEN=value-of-GITHUB_TOKEN" in more and "SOME_SETTING=value-of-SOME_SETTING" in more
    assert "AWS_SECRET_ACCESS_KEY" not in more and "OPENAI_API_KEY" not in more
    # sandbox "off": the server's environment except what is named like a credential
    _, off = await run(None, host, "env")
    assert "SOME_SETTING=value-of-SOME_SETTING" in off
    assert "value-of-GITHUB_TOKEN" not in off and "value-of-AWS" not in off and "value-of-MY_DB" not in off


async def test_credential_stores_and_config_are_hidden(host: DiskToolHost, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Credential stores under HOME, shiro-neko's user config and `sandboxHide` paths."""
    home = Path.home() / f".shiro-sandbox-home-{uuid.uuid4().hex}"  # not under /tmp: that is private
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    files = {
        ".ssh/id_ed25519": "PRIVATE-KEY", ".aws/credentials": "AWS-SECRET", ".netrc": "machine x password NETRC",
        ".config/gh/hosts.yml": "GH-TOKEN", ".docker/config.json": "DOCKER-AUTH", ".kube/config": "KUBE-TOKEN",
        ".gnupg/private-keys-v1.d/k.key": "GPG-KEY", ".config/shiro-neko/settings.json": "USER-CONFIG",
        "projects/secret-notes.txt": "EXTRA-HIDDEN", "projects/readable.txt": "READABLE",
    }
    for rel, text in files.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    sandbox = _require()
    paths = " ".join(str(home / rel) for rel in files)
    try:
        # The home is hidden but for what `sandboxAllowRead` brings back (tests/unit/test_sandbox_home.py);
        # even then the credential stores stay hidden.
        allowed = ("~/projects", "~/.ssh/id_ed25519", "~/.config/gh/hosts.yml")
        _, out = await run(Sandbox(sandbox.mode, sandbox.bwrap, allow_read=allowed), host, f"cat {paths} 2>/dev/null; ls -A {home}/.ssh")
        assert "READABLE" in out and "EXTRA-HIDDEN" in out  # reads the user allows ...
        leaked = [text for text in files.values() if text not in ("READABLE", "EXTRA-HIDDEN") and text in out]
        assert not leaked and "id_ed25519" not in out  # ... except the hidden paths
        boxed = Sandbox(sandbox.mode, sandbox.bwrap, hide=(str(home / "projects" / "secret-notes.txt"),), allow_read=allowed)
        _, more = await run(boxed, host, f"cat {paths} 2>/dev/null")
        assert "READABLE" in more and "EXTRA-HIDDEN" not in more  # `sandboxHide`
    finally:
        shutil.rmtree(home)


async def test_product_install_is_read_only_inside_the_workspace(tmp_path: Path) -> None:
    """The product's own install stays read-only even when it lies inside the workspace."""
    import shiro_neko

    sandbox = _require()
    product = Path(shiro_neko.__file__).resolve().parent  # the package directory
    host = DiskToolHost(product.parent)
    marker = product / f"probe-{uuid.uuid4().hex}.py"
    _, out = await run(sandbox, host, f"echo 'import os' > {marker}; echo x > ws-probe-{marker.name}; echo done")
    try:
        assert not marker.exists() and "Read-only file system" in out
        assert (product.parent / f"ws-probe-{marker.name}").exists()  # the rest of the workspace is writable
    finally:
        (product.parent / f"ws-probe-{marker.name}").unlink(missing_ok=True)
        marker.unlink(missing_ok=True)


async def test_server_processes_are_out_of_reach(host: DiskToolHost) -> None:
    """The server's processes (its MCP servers among them) are neither seen nor signalled, and
    their environment is not readable through /proc."""
    import subprocess

    sandbox = _require()
    child = subprocess.Popen(["sleep", "30"])  # stands for an MCP server the server started
    try:
        _, out = await run(sandbox, host, f"kill -9 {child.pid}; cat /proc/{os.getpid()}/environ; ls /proc | grep -c '^[0-9]'")
        assert child.poll() is None
        assert "OPENAI_API_KEY" not in out and "SHIRO_NEKO_HOME" not in out
        assert int(out.splitlines()[-1]) < 10  # only the command's own processes
    finally:
        child.kill()
        child.wait()


@pytest.fixture
def no_bwrap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> str:
    """PATH without a working bubblewrap: none at all, or one that fails at start as it does in a
    container without user namespaces."""
    from shiro_neko.agent.tools import sandbox as sandbox_module

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if request.param == "failing":
        fake = bin_dir / "bwrap"
        fake.write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n")
        fake.chmod(0o755)
        monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    else:
        for name in ("bash", "sh", "env", "cat", "touch"):
            target = shutil.which(name)
            if target:
                (bin_dir / name).symlink_to(target)
        monkeypatch.setenv("PATH", str(bin_dir))
    sandbox_module._probes.clear()  # probed again, on this PATH
    yield str(request.param)
    sandbox_module._probes.clear()


@pytest.mark.parametrize("no_bwrap", ["missing", "failing"], indirect=True)
async def test_an_unenforceable_sandbox_never_runs_a_command_unasked(
    no_bwrap: str, shiro_home: Path, fake: FakeProvider, workspace: Path
) -> None:
    """5: with bwrap missing or failing, commands under `approvals: auto` ran unsandboxed, with no
    notice or log line. Now: asked even under `auto`; a deny (no one to ask) names bubblewrap and
    `sandbox: "off"`; one notice per session; `shiro/status.sandbox` says it."""
    marker = workspace / "ran"
    call = Call("run_command", {"command": f"touch {marker}"})
    fake.script(Reply(calls=[call]), Reply(text="first"), Reply(calls=[Call("run_command", {"command": f"touch {marker}"})]), Reply(text="second"))
    async with running_service(fake, workspace, approvals="auto") as service:
        sink = service.bridge.sink
        sink.answers = ["deny"]
        session, outcome = await chat(service, "run it")
        assert outcome.status == "completed"
        assert not marker.exists()
        assert [name for name, _ in sink.asked] == ["run_command"]
        assert "WITHOUT the sandbox" in sink.asked[0][1]
        results = [e for e in sink.events if e["type"] == "tool_result"]
        assert results[0]["isError"] and results[0]["output"].startswith("denied")
        assert "bubblewrap" in results[0]["output"] and 'shiro.sandbox = "off"' in results[0]["output"]
        status = sink.statuses[-1]["sandbox"]
        assert status["mode"] == "workspace-write" and status["enforced"] is False and "bubblewrap" in status["reason"]
        if no_bwrap == "failing":
            assert "uid map" in status["reason"]
        sink.answers = ["allow"]  # the user's yes runs it
        await chat(service, "again")
        assert marker.exists()
        notices = [e["message"] for e in sink.events if e["type"] == "notice" and "sandbox" in e["message"]]
        assert len(notices) == 1 and "NOT enforced" in notices[0]  # once per session


async def test_status_says_the_sandbox_holds(shiro_home: Path, fake: FakeProvider, workspace: Path) -> None:
    _require()
    fake.script(Reply(text="hi"))
    async with running_service(fake, workspace) as service:
        await chat(service, "hi")
        assert service.bridge.sink.statuses[-1]["sandbox"] == {"mode": "workspace-write", "enforced": True}
        service.update_settings({"sandbox": "off"})
        assert service.status(SessionArgs()).sandbox.enforced is False
        assert not [e for e in service.bridge.sink.events if e["type"] == "notice"]


_KILLED_SERVER = """
import asyncio, sys
from pathlib import Path
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.registry import run_tool
from shiro_neko.agent.tools.shell import RUN_COMMAND
root = Path(sys.argv[1])
command = "(sleep 20; touch late) > /dev/null 2>&1 & echo $! > bg.pid; sleep 60"
asyncio.run(run_tool(RUN_COMMAND, DiskToolHost(root), {"command": command, "timeout_seconds": 100}))
"""


# The server descheduled between the spawn and its own registration of the group (CI, a loaded
# machine): the shell had written bg.pid and the server was killed before it said `+pgid`.
_STALLED_SERVER = """
import time
from shiro_neko.agent.tools import group_watch
group_watch.watch = lambda pgid: time.sleep(60)
""" + _KILLED_SERVER


async def test_off_commands_die_with_a_sigkilled_server(host: DiskToolHost) -> None:
    """6: without the sandbox, a command's background processes outlived a SIGKILLed server."""
    await _killed_server_leaves_nothing(host, _KILLED_SERVER)


async def test_off_commands_die_with_a_server_killed_right_after_the_spawn(host: DiskToolHost) -> None:
    """The command's shell registers its group before the command runs: a server killed before
    it registered the group itself leaves nothing behind."""
    await _killed_server_leaves_nothing(host, _STALLED_SERVER)


async def _killed_server_leaves_nothing(host: DiskToolHost, script: str) -> None:
    import subprocess
    import sys
    import time

    server = subprocess.Popen([sys.executable, "-c", script, str(host.root)])
    pid_file = host.root / "bg.pid"
    background = 0
    try:
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text().strip()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        background = int(pid_file.read_text())
        server.kill()
        server.wait()
        deadline = time.monotonic() + 15  # a bound, not a figure: a loaded machine starts the watcher late
        while not _gone(background) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        assert _gone(background)
    finally:
        server.kill()
        if background and not _gone(background):
            os.kill(background, 9)  # left over by a failure: do not leave it to touch `late`


def _gone(pid: int) -> bool:
    """True once the process no longer runs (an unreaped zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


async def test_off_stops_background_processes_when_the_call_ends(host: DiskToolHost) -> None:
    _, out = await run(None, host, "sleep 30 > /dev/null 2>&1 & echo $!")
    assert "background processes the command left running were stopped" in out
    assert _gone(int(out.splitlines()[1]))


def test_the_terminal_status_line_shows_an_unenforced_sandbox() -> None:
    from shiro_neko.client import render
    from shiro_neko.protocol import SandboxStatus, StatusPayload

    def status(sandbox: SandboxStatus) -> StatusPayload:
        return StatusPayload("s", 0, 1, 0.0, "normal", "p", "m", 0, 0, None, False, 0, sandbox)

    assert render.sandbox_badge(status(SandboxStatus("workspace-write", False, "x"))) == (
        "red", "  sandbox workspace-write NOT enforced")
    assert render.sandbox_badge(status(SandboxStatus("workspace-write", True))) is None
    assert render.sandbox_badge(status(SandboxStatus("off", False))) is None
    assert render.sandbox_badge(None) is None
