"""run_command in the background, its workdir, its output file and one call's widened sandbox
(issue 37), in-process through the command glue with the real fake provider, real processes and
(where this machine runs it) the real bubblewrap sandbox."""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import stat
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.agent.tools.background import MAX_RUNNING
from shiro_neko.agent.tools.sandbox import sandbox_status
from tests.fake_provider import Call, Reply
from tests.support.service import ServiceHarness, service_harness

needs_sandbox = pytest.mark.skipif(not sandbox_status("workspace-write").enforced, reason="bubblewrap does not work here")


def _pids_with(marker: str) -> list[int]:
    """Host pids whose command line holds `marker` (inside the sandbox or not)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if marker.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return [p for p in found if p != os.getpid()]


async def _until(check: Any, what: str, limit: float = 20.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit
    while not check():
        assert loop.time() < deadline, f"still waiting for {what}"
        await asyncio.sleep(0.05)


def _results(h: ServiceHarness, turn_id: str) -> list[dict[str, Any]]:
    return [e for e in h.of_turn(turn_id) if e["type"] == "tool_result"]


def _sleeper(marker: str, text: str = "started") -> str:
    # `exec -a` names the process after the marker, so the test finds it in /proc from outside.
    return f"echo {text}; exec -a {marker} sleep 300"


async def test_a_background_command_is_read_then_stopped(harness: ServiceHarness) -> None:
    marker = f"shiro-bg-{secrets.token_hex(4)}"
    harness.fake.script(Reply(calls=[Call("run_command", {"command": _sleeper(marker), "background": True})]),
                        Reply(text="started it"))
    result = await harness.chat("start the server")
    [started] = _results(harness, result["turnId"])
    assert not started["isError"] and "bg1" in started["output"], started["output"]
    await _until(lambda: _pids_with(marker), "the background process")
    log = Path(re.search(r"goes to (\S+)", started["output"]).group(1))  # type: ignore[union-attr]
    await _until(lambda: log.exists() and b"started" in log.read_bytes(), "its first output")

    harness.fake.script(Reply(calls=[Call("command_output", {"handle": "bg1"}, "c1"),
                                     Call("command_output", {"handle": "bg1"}, "c2")]), Reply(text="read"))
    result = await harness.chat("how is it doing?")
    first, second = _results(harness, result["turnId"])
    assert "running" in first["output"] and "started" in first["output"]
    assert "(no new output)" in second["output"]  # each read returns only what is new
    assert stat.S_IMODE(log.stat().st_mode) == 0o600

    harness.fake.script(Reply(calls=[Call("command_stop", {"handle": "bg1"})]), Reply(text="stopped"))
    result = await harness.chat("stop it")
    [stopped] = _results(harness, result["turnId"])
    assert stopped["output"].startswith("stopped.") and "killed by signal" in stopped["output"]
    assert _pids_with(marker) == []

    harness.fake.script(Reply(calls=[Call("command_output", {"handle": "bg9"})]), Reply(text="?"))
    result = await harness.chat("and bg9?")
    [unknown] = _results(harness, result["turnId"])
    assert unknown["isError"] and "no background command 'bg9'" in unknown["output"]


async def test_background_commands_end_with_the_server(shiro_home: Path, fake: Any, workspace: Path) -> None:
    marker = f"shiro-bg-{secrets.token_hex(4)}"
    async with service_harness(fake, shiro_home, workspace) as h:
        h.fake.script(Reply(calls=[Call("run_command", {"command": _sleeper(marker), "background": True})]),
                      Reply(text="started"))
        await h.chat("start it")
        await _until(lambda: _pids_with(marker), "the background process")
        out_dir = shiro_home / "command-output"
        assert any(out_dir.rglob("bg1-*.log"))
    # The harness stopped the service as `shutdown` does: the process and its output file are gone.
    assert _pids_with(marker) == []
    assert not any(out_dir.rglob("*.log"))


async def test_background_commands_end_with_their_session(harness: ServiceHarness) -> None:
    marker = f"shiro-bg-{secrets.token_hex(4)}"
    harness.fake.script(Reply(calls=[Call("run_command", {"command": _sleeper(marker), "background": True})]),
                        Reply(text="started"))
    first = await harness.chat("start it")
    await _until(lambda: _pids_with(marker), "the background process")
    session_id = first["sessionId"]
    # A new session replaces it; once saved, the old one leaves memory (features/sessions.py
    # release_idle), and its background command with it.
    await harness.command("shiro.save")
    await harness.command("shiro.newSession", {})
    await _until(lambda: session_id not in harness.service.sessions, "the old session to be released")
    await _until(lambda: not _pids_with(marker), "the background process to end with its session")
    await _until(lambda: not (harness.home / "command-output" / session_id).exists(), "its output files to go")


async def test_the_number_of_background_commands_is_capped(harness: ServiceHarness) -> None:
    marker = f"shiro-bg-{secrets.token_hex(4)}"
    calls = [Call("run_command", {"command": _sleeper(marker), "background": True}, f"c{i}") for i in range(MAX_RUNNING + 1)]
    harness.fake.script(Reply(calls=calls), Reply(text="many"))
    result = await harness.chat("start many")
    results = _results(harness, result["turnId"])
    assert [r["isError"] for r in results] == [False] * MAX_RUNNING + [True]
    assert f"already {MAX_RUNNING} background commands running" in results[-1]["output"]
    harness.fake.script(Reply(calls=[Call("command_stop", {"handle": "bg1"})]), Reply(calls=[
        Call("run_command", {"command": _sleeper(marker), "background": True})]), Reply(text="room again"))
    result = await harness.chat("stop one, start one")
    assert [r["isError"] for r in _results(harness, result["turnId"])] == [False, False]


async def test_workdir_is_guarded_like_a_file_path(harness: ServiceHarness) -> None:
    (harness.root / "sub").mkdir()
    outside = harness.root.parent / f"outside-{secrets.token_hex(3)}"
    outside.mkdir()
    os.symlink(outside, harness.root / "out-link")
    harness.fake.script(Reply(calls=[
        Call("run_command", {"command": "pwd", "workdir": "sub"}, "ok"),
        Call("run_command", {"command": "pwd", "workdir": "../"}, "up"),
        Call("run_command", {"command": "pwd", "workdir": "out-link"}, "link"),
        Call("run_command", {"command": "pwd", "workdir": "hello.py"}, "file"),
    ]), Reply(text="done"))
    result = await harness.chat("where am I")
    ok, up, link, file = _results(harness, result["turnId"])
    assert not ok["isError"] and ok["output"].splitlines()[1].endswith("/sub")
    assert up["isError"] and "outside the workspace" in up["output"]
    assert link["isError"] and "symbolic link" in link["output"]
    assert file["isError"] and "not a folder" in file["output"]


async def test_the_result_counts_lines_and_keeps_long_output_in_a_file(harness: ServiceHarness) -> None:
    harness.fake.script(Reply(calls=[Call("run_command", {"command": "seq 1 100000"})]), Reply(text="long"))
    result = await harness.chat("count")
    [run] = _results(harness, result["turnId"])
    first_line = run["output"].splitlines()[0]
    assert re.fullmatch(r"exit code 0; \d+\.\d s; 100000 lines of output", first_line), first_line
    path = Path(re.search(r"the whole output is in (\S+);", run["output"]).group(1))  # type: ignore[union-attr]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    kept = path.read_text()
    assert kept.startswith("1\n2\n") and kept.endswith("99999\n100000\n")
    assert "50000\n" not in run["output"]  # the model was shown its ends only

    # The model reads and searches that file with the file tools, though it lies outside the
    # workspace; nothing else of the state home opens that way.
    (harness.home / "settings-secret.json").write_text("TOKEN=abc\n")
    (path.parent / "planted.log").write_text("planted\n")
    harness.fake.script(Reply(calls=[
        Call("read_file", {"path": str(path), "start_line": 50000, "end_line": 50001}, "r"),
        Call("grep", {"pattern": "^7777[0-9]$", "path": str(path)}, "g"),
        Call("read_file", {"path": str(harness.home / "settings-secret.json")}, "secret"),
        Call("read_file", {"path": str(path.parent)}, "folder"),
        Call("grep", {"pattern": "TOKEN", "path": str(harness.home)}, "gsecret"),
        Call("read_file", {"path": str(path.parent / "planted.log")}, "planted"),
    ]), Reply(text="read"))
    result = await harness.chat("look at the output")
    read, grep, secret, folder, gsecret, planted = _results(harness, result["turnId"])
    assert not read["isError"] and "50000" in read["output"] and "50001" in read["output"], read["output"]
    assert not grep["isError"] and grep["output"].count("\n") >= 9 and "77779" in grep["output"], grep["output"]
    for refused in (secret, folder, gsecret, planted):  # only the files the server wrote, by exact path
        assert refused["isError"] and "outside the workspace" in refused["output"], refused["output"]


@needs_sandbox
@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
async def test_a_widened_sandbox_is_asked_about_and_applies_to_that_call(
        shiro_home: Path, fake: Any, workspace: Path, tmp_path: Path, mode: str) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    async with service_harness(fake, shiro_home, workspace, approvals="auto", sandbox=mode) as h:
        plain = {"command": f"touch {outside}/plain"}
        widened = {"command": f"touch {outside}/widened", "write_paths": [str(outside)], "reason": "the build writes there"}
        again = {"command": f"touch {outside}/again"}
        h.fake.script(Reply(calls=[Call("run_command", plain, "p"), Call("run_command", widened, "w"),
                                   Call("run_command", again, "a")]), Reply(text="done"))
        result = await h.chat("write outside")
        p, w, a = _results(h, result["turnId"])
        # Under `approvals: auto` only the widened call was asked about, naming what and why.
        [(tool, summary)] = h.sink.asked
        assert tool == "run_command" and f"WRITE {outside}" in summary and "the build writes there" in summary
        assert (outside / "widened").exists()
        assert p["output"].startswith("exit code 1") and not (outside / "plain").exists()
        assert not (outside / "again").exists()  # the yes held for that one call

        h.sink.answers = ["deny"]
        h.fake.script(Reply(calls=[Call("run_command", {**widened, "command": f"touch {outside}/denied"})]),
                      Reply(text="ok"))
        result = await h.chat("again")
        [denied] = _results(h, result["turnId"])
        assert denied["isError"] and "denied" in denied["output"] and not (outside / "denied").exists()

        h.sink.answers = ["deny"]
        h.fake.script(Reply(calls=[Call("run_command", {"command": "true", "network": True, "reason": "npm install"})]),
                      Reply(text="ok"))
        result = await h.chat("network")
        assert "NETWORK access" in h.sink.asked[-1][1] and "npm install" in h.sink.asked[-1][1]
        [net] = _results(h, result["turnId"])
        assert net["isError"] and "denied" in net["output"]


@needs_sandbox
async def test_a_widened_path_never_opens_the_hidden_state(shiro_home: Path, fake: Any, workspace: Path) -> None:
    """The user's yes to writing a folder that holds the state home does not show the state home:
    the sandbox's hides are mounted after the widening (agent/tools/sandbox.py mount_args)."""
    shiro_home.mkdir(parents=True, exist_ok=True)
    (shiro_home / "secret-state.txt").write_text("state\n")
    async with service_harness(fake, shiro_home, workspace, approvals="auto") as h:
        h.fake.script(Reply(calls=[Call("run_command", {
            "command": f"ls -a {shiro_home}; cat {shiro_home}/secret-state.txt",
            "read_paths": [str(shiro_home.parent)], "write_paths": [str(shiro_home.parent)], "reason": "look"})]),
            Reply(text="ok"))
        result = await h.chat("peek")
        [run] = _results(h, result["turnId"])
        assert "secret-state" not in run["output"].split("\n", 1)[1].replace(f"{shiro_home}/secret-state.txt", "")
        assert "No such file" in run["output"]


@needs_sandbox
async def test_network_for_one_call(shiro_home: Path, fake: Any, workspace: Path) -> None:
    """`network: true` shares the host's network with that call alone: a listener on the host's
    loopback is out of reach of a plain sandboxed command, reached by the widened one."""
    import socket

    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        async with service_harness(fake, shiro_home, workspace, approvals="auto") as h:
            h.fake.script(Reply(calls=[Call("run_command", {"command": connect}, "plain"),
                                       Call("run_command", {"command": connect, "network": True, "reason": "reach the host"}, "net")]),
                          Reply(text="ok"))
            result = await h.chat("connect")
            plain, net = _results(h, result["turnId"])
            assert "connected" not in plain["output"].split("\n", 1)[1]
            assert net["output"].startswith("exit code 0") and "connected" in net["output"], net["output"]
            assert [name for name, _ in h.sink.asked] == ["run_command"]
    finally:
        listener.close()


async def test_finished_commands_and_their_files_are_dropped_past_the_bound(harness: ServiceHarness) -> None:
    from shiro_neko.agent.tools.background import MAX_KEPT

    logs: list[Path] = []
    for i in range(MAX_KEPT + 2):
        harness.fake.script(Reply(calls=[Call("run_command", {"command": f"echo run{i}", "background": True})]),
                            Reply(text="ok"))
        result = await harness.chat(f"run {i}")
        [started] = _results(harness, result["turnId"])
        logs.append(Path(re.search(r"goes to (\S+)", started["output"]).group(1)))  # type: ignore[union-attr]
        commands = harness.service.background_of(harness.service.sessions[result["sessionId"]])
        await _until(lambda: not commands.running(), "the command to finish")
    assert len(commands.commands) == MAX_KEPT
    assert [p.exists() for p in logs] == [False, False] + [True] * MAX_KEPT  # the two oldest went
    assert "bg1" not in commands.commands and f"bg{MAX_KEPT + 2}" in commands.commands

