"""Sessions end to end: restart and resume, prefixes, corrupt files, kills, two windows, history."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
from typing import Any
from dataclasses import dataclass

import pytest
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

from shiro_neko.state.session_store import SessionStore
from tests.fake_provider import Call, Reply
from tests.support.lsp import HANG, server_env, start_client, start_server, stop
from tests.lsp.kill_on_save import kill_on_next_save, temp_files
from tests.lsp.state_files import every_state_file_parses

FULL = os.environ.get("SHIRO_FULL_FAULTS") == "1"


def dialogue(messages: list[Any]) -> list[Any]:
    """A record's messages without its context messages (server/agent/context_messages.py)."""
    return [m for m in messages if not m.get("context")]


def _session_files(home):
    return sorted((home / "sessions").glob("*.json"))


async def test_restart_and_resume_latest(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace)
    fake.script(Reply(calls=[Call("todo_write", {"todos": [{"content": "fix it", "status": "in_progress"}]})]), Reply(text="on it"))
    first = await h.chat("why does the pagination test fail?")
    await stop(h)
    logs = [m.message for m in h.client.log_messages]
    assert any(line.startswith('Saved 4 messages: "why does the pagination test fail?"') for line in logs), logs
    # A client's own way to resume (this test client gives no clientInfo: the command), never the
    # terminal's `shiro -c` (server/resume_hints.py; tests/unit/test_client_hints.py for the rest).
    assert any(first["sessionId"][:8] in line and "shiro.resume" in line for line in logs), logs
    assert not any("shiro -c" in line for line in logs)

    h2 = await start_server(tmp_path, fake, workspace, "neovim", init_options={"model": "gpt-5-mini"})
    try:
        resumed = await h2.command("shiro.resume", {"latest": True})
        assert resumed["sessionId"] == first["sessionId"]
        assert resumed["title"] == "why does the pagination test fail?"
        assert len(resumed["messages"]) == 4 and resumed["todos"] == [{"content": "fix it", "status": "in_progress"}]
        assert any(t["sessionId"] == first["sessionId"] and t["todos"] for t in h2.todos)
        assert any(s["sessionId"] == first["sessionId"] for s in h2.statuses)
        fake.script(Reply(text="continuing"))
        again = await h2.chat("go on")
        assert again["sessionId"] == first["sessionId"]
        body = fake.requests[-1].body
        assert body["model"] == "gpt-5-mini"  # model from current settings, not the record
        assert "[~] fix it" in json.dumps(body["input"])  # the task list as a context message
        roles = [i.get("role") or i.get("type") for i in body["input"]]
        assert roles[0] == "user" and roles[-1] == "user" and len(body["input"]) >= 4
    finally:
        await stop(h2)
    record = json.loads((tmp_path / "home" / "sessions" / f"{first['sessionId']}.json").read_text())
    assert len(dialogue(record["messages"])) == 6 and record["model"] == "gpt-5-mini"
    assert record["inputTokens"] > 0 and isinstance(record["costUsd"], float)


async def test_save_listing_and_prefixes(harness):
    assert (await harness.command("shiro.save")) == {"saved": False, "messageCount": 0, "reason": "the session has no messages, so nothing was written"}
    assert _session_files(harness.home) == []
    ids = []
    for i in range(3):
        harness.fake.script(Reply(text=f"answer {i}"))
        result = await harness.chat(f"question {i}")
        ids.append(result["sessionId"])
        saved = await harness.command("shiro.save")
        assert saved["saved"] is True and saved["messageCount"] == 2 and os.path.exists(saved["path"])
        await harness.command("shiro.newSession")
    listed = (await harness.command("shiro.sessions"))["sessions"]
    assert [s["id"] for s in listed] == ids[::-1]
    assert listed[0]["title"] == "question 2" and listed[0]["messageCount"] == 2 and listed[0]["cwd"] == str(harness.root)
    assert len((await harness.command("shiro.sessions", {"limit": 2}))["sessions"]) == 2
    # UUIDv7 ids made within a second share a long prefix: the shared part is ambiguous.
    common = os.path.commonprefix(ids)
    with pytest.raises(JsonRpcException) as caught:
        await harness.command("shiro.resume", {"id": common[:6]})
    assert caught.value.code == -32803
    # Each candidate is named by a prefix that picks it alone, beside its own title (ids made within
    # a minute share their first 8 hex digits, so `sid[:8] in message` would pass for any of them).
    shown = {}
    for line in caught.value.message.splitlines():
        if line.startswith("  "):  # the candidates: "  <prefix>  <title>"
            hint, _, title = line.strip().partition("  ")
            shown[title] = hint
    assert set(shown) == {f"question {i}" for i in range(3)}
    for i, sid in enumerate(ids):
        hint = shown[f"question {i}"]
        assert sid.startswith(hint) and not any(o.startswith(hint) for o in ids if o != sid), (hint, ids)
    unique = next(ids[1][:k] for k in range(8, 37) if not any(o.startswith(ids[1][:k]) for o in ids if o != ids[1]))
    resumed = await harness.command("shiro.resume", {"id": unique})
    assert resumed["sessionId"] == ids[1]
    with pytest.raises(JsonRpcException) as caught:
        await harness.command("shiro.resume", {"id": "ffffffff"})
    assert "ffffffff" in caught.value.message
    with pytest.raises(JsonRpcInvalidParams):
        await harness.command("shiro.resume", {"id": "x", "latest": True})


CORRUPTIONS = {
    "empty": b"",
    "truncated": None,  # filled from a real record
    "null bytes": b"\x00" * 64,
    "wrong types": b'{"id": 5, "createdAt": [], "messages": "no"}',
    "not json": b"this is not json {",
}


async def test_corrupt_files_are_skipped_and_kept(harness, caplog):
    good = []
    for i in range(2):
        harness.fake.script(Reply(text=f"a{i}"))
        good.append((await harness.chat(f"good {i}"))["sessionId"])
        await harness.command("shiro.save")
        await harness.command("shiro.newSession")
    sessions = harness.home / "sessions"
    real = (sessions / f"{good[0]}.json").read_bytes()
    bad_ids = []
    for n, (name, data) in enumerate(CORRUPTIONS.items()):
        sid = f"01900000-0000-7000-8000-{n:012d}"
        bad_ids.append(sid)
        payload = real.replace(good[0].encode(), sid.encode())[: len(real) // 2] if data is None else data
        (sessions / f"{sid}.json").write_bytes(payload)
    before = {sid: (sessions / f"{sid}.json").read_bytes() for sid in bad_ids}
    listed = (await harness.command("shiro.sessions"))["sessions"]
    assert sorted(s["id"] for s in listed) == sorted(good)
    for sid in bad_ids:
        with pytest.raises(JsonRpcException) as caught:
            await harness.command("shiro.resume", {"id": sid})
        assert caught.value.code == -32803 and sid in caught.value.message
        assert (sessions / f"{sid}.json").read_bytes() == before[sid]  # left as it was
    copies = list(sessions.glob("*.corrupt-*"))
    assert len(copies) >= 4  # the empty file may count as nothing to copy
    listed_again = (await harness.command("shiro.sessions"))["sessions"]
    assert sorted(s["id"] for s in listed_again) == sorted(good)


@dataclass
class KillRound:
    session_id: str
    seen: int  # the most messages a reader saw in the saved record before the kill
    mid_save: bool  # the kill landed while a save of this session was being written
    turns_ended: int  # turns that had ended before the kill
    turns_required: int  # of those, the ones that ended more than a second before it (all found on disk)


TURNS = 40  # scripted per round, more than a round ever gets through
STEPS_PER_TURN = 3  # tool steps before each turn's final answer


def _round_script(round_: int) -> list[Reply]:
    script: list[Reply] = []
    for turn in range(TURNS):
        # A new Call per step: each gets its own call id.
        script += [Reply(text="step " * 400, calls=[Call("read_file", {"path": "hello.py"})], chunks=5, delay=0.002) for _ in range(STEPS_PER_TURN)]
        script.append(Reply(text=f"done {round_}.{turn}", chunks=2))
    return script


async def kill_round(root, round_: int, rng: random.Random, on_save: bool) -> KillRound:
    """One server on a fresh home and workspace runs a scripted multi-turn session (each turn a
    few tool steps and an answer) and is SIGKILLed: the moment a save of its session starts
    (`on_save`) or at a random instant. Afterwards every state file parses, its own session loads
    (the old record or the new one, never a torn one) with at least what a reader saw, and a new
    server's `shiro.resume {latest: true}` brings it back with every turn that ended more than a
    second before the kill."""
    from tests.fake_provider import FakeProvider

    home, workspace = root / "home", root / "workspace"
    workspace.mkdir(parents=True)
    (workspace / "hello.py").write_text("print('hello')\n")
    sessions = home / "sessions"
    ended: list[tuple[str, str, float]] = []  # prompt, answer, when the turn ended
    loop = asyncio.get_running_loop()
    with FakeProvider() as fake:
        h = await start_client(
            {"fake": fake, "home": home, "root": workspace}, "visual-studio-code",
            server_env(home, fake.base_url), init_options={"approvals": "auto", "maxSteps": 500},
            cold=True,  # the kill is of the server's own process
        )
        fake.script(*_round_script(round_))

        async def drive() -> None:
            for turn in range(TURNS):
                prompt = f"task {round_}.{turn}"
                try:
                    result = await h.chat(prompt)
                except RuntimeError:  # pytest-lsp: the server process exited (the kill)
                    return
                assert result["status"] == "completed", result.get("error")
                ended.append((prompt, result["text"], loop.time()))

        driver = asyncio.ensure_future(drive())
        await h.wait_for(lambda: any(e["type"] == "turn_start" for e in h.events))
        session_id = next(e["sessionId"] for e in h.events if e["type"] == "turn_start")
        path = sessions / f"{session_id}.json"
        seen = 0

        async def read_saved() -> None:
            nonlocal seen
            while True:
                try:
                    seen = max(seen, len(json.loads(path.read_bytes())["messages"]))
                except FileNotFoundError:
                    pass
                await asyncio.sleep(0.01)

        # Arm after the first save: a kill then has an old record to keep. (Generous: a loaded
        # machine can take seconds to start the server and run the first steps.)
        await h.wait_for(lambda: path.exists() or driver.done(), timeout=60)
        if driver.done():
            driver.result()  # the session ended before its first save: say why
        reader = asyncio.ensure_future(read_saved())
        if not on_save:
            # A random instant after the first turn ended, a second or more later: on a loaded machine
            # (the suite on 2 cores) turns are slow, and a kill before any turn was over a second old
            # would leave `required` at 0 in every round (the check below) and test nothing.
            await h.wait_for(lambda: bool(ended) or driver.done(), timeout=60)
        await asyncio.sleep(rng.uniform(0.0, 3.0) if on_save else rng.uniform(1.0, 3.0))
        if on_save:
            await kill_on_next_save(sessions, session_id, h.client._server.pid)
        else:
            h.client._server.send_signal(signal.SIGKILL)
        killed_at = loop.time()
        await h.client._server.wait()
        reader.cancel()
        if driver.done():  # a turn went wrong before the kill
            driver.result()
        driver.cancel()
        await h.client.stop()
    mid_save = bool(temp_files(sessions, session_id))
    assert every_state_file_parses(home) >= 1
    record = SessionStore(home).load(session_id)  # decodes and checks as a record, not only as JSON
    assert record.id == session_id and record.title == f"task {round_}.0"
    assert len(record.messages) >= max(seen, 1)
    required = [(p, a) for p, a, at in ended if at < killed_at - 1.0]
    with FakeProvider() as fake:
        h = await start_client({"fake": fake, "home": home, "root": workspace}, "neovim", server_env(home, fake.base_url))
        try:
            resumed = await h.command("shiro.resume", {"latest": True})
        finally:
            await stop(h)
    assert resumed["sessionId"] == session_id
    texts = [part.get("text") for m in resumed["messages"] for part in m["content"] if isinstance(part, dict)]
    for prompt, answer in required:
        assert prompt in texts and answer in texts, f"turn {prompt!r} ended over a second before the kill but is not on disk"
    return KillRound(session_id, seen, mid_save, len(ended), len(required))


@pytest.mark.xdist_group("heavy")  # a soak: not side by side with the others (pyproject.toml)
async def test_sigkill_during_a_multi_turn_session(tmp_path, capsys):
    """Servers SIGKILLed during a scripted multi-turn session, half of the kills timed to land
    while a save is written (at least half of those must), half at random instants: nothing that
    was saved is lost. SHIRO_FULL_FAULTS=1 runs 50 rounds (a reduced 6 by default)."""
    rounds = 50 if FULL else 6
    rng = random.Random(7)
    results = [await kill_round(tmp_path / f"round{n}", n, rng, on_save=n % 2 == 0) for n in range(rounds)]
    on_save = results[::2]
    landed = sum(r.mid_save for r in on_save)
    turns = sum(r.turns_ended for r in results)
    required = sum(r.turns_required for r in results)
    with capsys.disabled():
        print(
            f"\nSIGKILL: {rounds} kills survived ({landed} of {len(on_save)} timed kills landed mid-save); "
            f"{turns} turns ended, {required} of them over 1 s before a kill, all {required} on disk"
        )
    assert 2 * landed >= len(on_save), f"only {landed} of {len(on_save)} timed kills landed mid-save"
    assert required > 0, "no turn ended a second before any kill: the rounds are too short to test anything"


async def test_two_windows_on_one_workspace(tmp_path, fake, workspace):
    a = await start_server(tmp_path, fake, workspace)
    b = await start_server(tmp_path, fake, workspace, "neovim")
    try:
        fake.script(Reply(text="from a"), Reply(text="from b"))
        ra, rb = await asyncio.gather(a.chat("window a"), b.chat("window b"))
        assert ra["sessionId"] != rb["sessionId"]
        await asyncio.gather(a.command("shiro.save"), b.command("shiro.save"))
        for h in (a, b):
            ids = {s["id"] for s in (await h.command("shiro.sessions"))["sessions"]}
            assert ids == {ra["sessionId"], rb["sessionId"]}
        # b resumes the session a is writing: it gets a fork, a keeps writing its own.
        resumed = await b.command("shiro.resume", {"id": ra["sessionId"]})
        assert resumed["forkedFrom"] == ra["sessionId"] and resumed["sessionId"] != ra["sessionId"]
        assert len(resumed["messages"]) == 2
        fake.script(Reply(text="a again"), Reply(text="b in the fork"))
        await a.chat("more in a")
        await b.chat("more in b")
        await asyncio.gather(a.command("shiro.save"), b.command("shiro.save"))
        home = tmp_path / "home"
        original = json.loads((home / "sessions" / f"{ra['sessionId']}.json").read_text())
        fork = json.loads((home / "sessions" / f"{resumed['sessionId']}.json").read_text())
        assert [m["content"][0]["text"] for m in dialogue(original["messages"]) if m["role"] == "user"] == ["window a", "more in a"]
        assert [m["content"][0]["text"] for m in dialogue(fork["messages"]) if m["role"] == "user"] == ["window a", "more in b"]
        assert len((await a.command("shiro.sessions"))["sessions"]) == 3
    finally:
        await stop(a)
        await stop(b)


async def test_history_cap_dedup_and_two_servers(tmp_path, workspace):
    from tests.fake_provider import FakeProvider

    home = tmp_path / "home"
    env = server_env(home, base_url=None, api_key=None)  # every chat fails fast; prompts still count
    kwargs = {"fake": FakeProvider(), "home": home, "root": workspace}
    a = await start_client(kwargs, "visual-studio-code", env)
    b = await start_client(kwargs, "neovim", env)
    try:
        await a.chat("same")
        await a.chat("same")
        assert (await a.command("shiro.history"))["prompts"] == ["same"]

        async def many(h, tag, n):
            for i in range(n):
                await h.chat(f"{tag} {i}")

        await asyncio.gather(many(a, "a", 110), many(b, "b", 110))
        # Each server appends on a worker thread of its own (features/history.py), and a read waits
        # only for its own server's: `a`'s last appends are in once `a` has answered a read.
        await a.command("shiro.history")
        prompts = (await b.command("shiro.history"))["prompts"]
        assert len(prompts) == 200
        assert {f"a {i}" for i in range(100, 110)} <= set(prompts) and {f"b {i}" for i in range(100, 110)} <= set(prompts)
        on_disk = json.loads(next((home / "history").glob("*.json")).read_text())
        assert on_disk == prompts
    finally:
        await stop(a)
        await stop(b)


async def test_suspended_approval_survives_a_restart(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace)
    h.answers = [HANG]
    fake.script(Reply(text="I will write it.", calls=[Call("write_file", {"path": "new.txt", "content": "hello\n"}, "call_w")]))
    running = h.start_chat("create new.txt")
    await h.wait_for(lambda: len(h.asked) == 1)
    await h.client.shutdown_async(None)  # the dialog is still open
    h.hang.set()
    h.client.exit(None)
    await h.client._server.wait()
    await h.client.stop()
    running.cancel()
    assert not (workspace / "new.txt").exists()
    [path] = _session_files(tmp_path / "home")
    record = json.loads(path.read_text())
    assert record["messages"][-1]["role"] == "assistant"
    assert record["messages"][-1]["content"][-1]["toolCallId"] == "call_w"  # still pending

    h2 = await start_server(tmp_path, fake, workspace, "neovim")
    try:
        h2.answers = ["Allow"]
        fake.script(Reply(text="Written."))
        resumed = await h2.command("shiro.resume", {"latest": True})
        await h2.wait_for(lambda: any(e["type"] == "turn_end" for e in h2.events))
        assert len(h2.asked) == 1 and "new.txt" in h2.asked[0]
        assert (workspace / "new.txt").read_text() == "hello\n"
        end = next(e for e in h2.events if e["type"] == "turn_end")
        assert end["status"] == "completed" and end["text"] == "Written." and end["sessionId"] == resumed["sessionId"]
        outputs = [i for i in fake.requests[-1].body["input"] if i.get("type") == "function_call_output"]
        assert outputs and outputs[0]["call_id"] == "call_w"
        assert not fake.rejections
    finally:
        await stop(h2)


async def test_resume_keeps_a_sessions_workspace(tmp_path, fake, workspace):
    """A record's cwd is never rewritten: another directory's session is refused (with the way
    out), forked into this one on request, or run in its own folder when this server has it open."""
    other = tmp_path / "other"
    other.mkdir()
    a = await start_server(tmp_path, fake, workspace)
    fake.script(Reply(text="first"))
    first = await a.chat("work in the workspace")
    await stop(a)
    path = tmp_path / "home" / "sessions" / f"{first['sessionId']}.json"
    original = path.read_bytes()

    b = await start_client({"fake": fake, "home": tmp_path / "home", "root": other}, "neovim",
                           server_env(tmp_path / "home", fake.base_url))
    try:
        with pytest.raises(JsonRpcException) as caught:
            await b.command("shiro.resume", {"id": first["sessionId"]})
        assert caught.value.code == -32803 and str(workspace) in caught.value.message and "fork" in caught.value.message
        forked = await b.command("shiro.resume", {"id": first["sessionId"], "fork": True})
        assert forked["forkedFrom"] == first["sessionId"] and forked["sessionId"] != first["sessionId"]
        assert forked["workspace"] == other.as_uri() and len(forked["messages"]) == 2
        fake.script(Reply(text="in the copy"))
        await b.chat("go on here")
        await b.command("shiro.save")
    finally:
        await stop(b)
    assert path.read_bytes() == original  # the original record is untouched
    copy = json.loads((tmp_path / "home" / "sessions" / f"{forked['sessionId']}.json").read_text())
    assert copy["cwd"] == str(other) and len(dialogue(copy["messages"])) == 4

    c = await start_client({"fake": fake, "home": tmp_path / "home", "root": other}, "visual-studio-code",
                           server_env(tmp_path / "home", fake.base_url), folders=[other, workspace])
    try:
        resumed = await c.command("shiro.resume", {"id": first["sessionId"]})  # asked in `other`, the first folder
        assert resumed["sessionId"] == first["sessionId"] and resumed["workspace"] == workspace.as_uri()
        fake.script(Reply(text="in its own folder"))
        await c.chat("continue", sessionId=first["sessionId"])
        await c.command("shiro.save", {"sessionId": first["sessionId"]})
    finally:
        await stop(c)
    record = json.loads(path.read_text())
    assert record["cwd"] == str(workspace) and len(dialogue(record["messages"])) == 4
