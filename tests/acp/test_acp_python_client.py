"""`shiro acp` driven by the official Python ACP client (agent-client-protocol's ClientSideConnection)."""

from __future__ import annotations

import asyncio
import hashlib
import json
from pathlib import Path

import pytest
from acp import RequestError, schema

from tests.acp.conftest import EditorClient, records, run_acp, settings_file
from tests.fake_provider import Call, Reply


async def test_initialize_advertises_what_we_support(acp):
    caps = acp.init.agent_capabilities
    assert acp.init.protocol_version == 1
    assert caps.load_session is True
    assert caps.prompt_capabilities.embedded_context is True and caps.prompt_capabilities.image is True
    assert caps.mcp_capabilities.http is True
    assert caps.session_capabilities.list is not None
    assert acp.init.agent_info.name == "shiro-neko"


async def test_new_session_streams_a_turn_and_saves_it_under_the_workspace(acp):
    acp.fake.script(Reply(text="Hello from the fake.", reasoning="thinking first"))
    session_id = await acp.new_session()
    assert [c.name for c in acp.client.of_kind("available_commands_update")[0].available_commands] == [
        "compact", "notes", "todos", "memory", "sessions", "save", "effort", "model", "rewind"]  # /model: issue 39
    answer = await acp.prompt(session_id, "say hello")
    assert answer.stop_reason == "end_turn"
    assert acp.client.text() == "Hello from the fake."
    assert acp.client.text("agent_thought_chunk") == "thinking first"
    usage = acp.client.of_kind("usage_update")[-1]
    assert usage.used > 0 and usage.size == 120_000 and usage.field_meta["shiro"]["contextPercent"] >= 0
    # The same record and workspace key the LSP server uses for this folder.
    for _ in range(100):
        if records(acp.home):
            break
        await asyncio.sleep(0.05)
    [record] = records(acp.home)
    assert record["id"] == session_id and record["cwd"] == str(acp.root.resolve())
    key = hashlib.sha256(str(acp.root.resolve()).encode()).hexdigest()[:16]
    history = json.loads((acp.home / "history" / f"{key}.json").read_text())
    assert history == ["say hello"]


async def test_tool_call_with_approval_and_diff(acp):
    acp.fake.script(
        Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"}, "call_e1")]),
        Reply(text="Changed."),
    )
    session_id = await acp.new_session()
    answer = await acp.prompt(session_id, "change it")
    assert answer.stop_reason == "end_turn"
    [start] = acp.client.of_kind("tool_call")
    assert start.tool_call_id == "call_e1" and start.kind == "edit" and start.status == "pending"
    assert start.title == "Edit hello.py" and start.locations[0].path == str(acp.root / "hello.py")
    [asked] = acp.client.permissions
    assert asked.tool_call.tool_call_id == "call_e1"
    assert [(o.option_id, o.kind) for o in asked.options] == [
        ("allow", "allow_once"), ("always", "allow_always"), ("deny", "reject_once")]
    [running, done] = acp.client.of_kind("tool_call_update")
    assert running.status == "in_progress"
    assert done.status == "completed"
    diff = done.content[0]
    assert diff.type == "diff" and diff.path == str(acp.root / "hello.py")
    assert diff.old_text == "print('hello')\n" and diff.new_text == "print('bye')\n"
    assert (acp.root / "hello.py").read_text() == "print('bye')\n"  # no fs capability: the disk


async def test_rejected_call_fails_and_always_allow_stops_asking(acp):
    acp.client.answers = ["deny", "always"]
    acp.fake.script(
        Reply(calls=[Call("write_file", {"path": "a.txt", "content": "a"}, "call_w1")]),
        Reply(calls=[Call("write_file", {"path": "b.txt", "content": "b"}, "call_w2")]),
        Reply(calls=[Call("write_file", {"path": "b.txt", "content": "c"}, "call_w3")]),
        Reply(text="done"),
    )
    session_id = await acp.new_session()
    await acp.prompt(session_id, "write files")
    updates = {u.tool_call_id: u for u in acp.client.of_kind("tool_call_update") if u.status != "in_progress"}
    assert updates["call_w1"].status == "failed" and "denied" in updates["call_w1"].raw_output
    assert updates["call_w2"].status == "completed" and updates["call_w3"].status == "completed"
    assert len(acp.client.permissions) == 2  # the third write (the same file) was always allowed
    assert not (acp.root / "a.txt").exists() and (acp.root / "b.txt").read_text() == "c"


async def test_session_mode_auto_runs_without_asking(acp):
    acp.fake.script(Reply(calls=[Call("write_file", {"path": "m.txt", "content": "m"}, "call_m")]), Reply(text="ok"))
    session_id = await acp.new_session()
    await acp.conn.set_session_mode(session_id=session_id, mode_id="auto")
    assert acp.client.of_kind("current_mode_update")[-1].current_mode_id == "auto"
    await acp.prompt(session_id, "write m")
    assert acp.client.permissions == [] and (acp.root / "m.txt").read_text() == "m"
    with pytest.raises(RequestError) as bad:
        await acp.conn.set_session_mode(session_id=session_id, mode_id="yolo")
    assert bad.value.code == -32602 and "yolo" in str(bad.value)


async def test_cancel_mid_stream_answers_cancelled_and_keeps_serving(acp):
    acp.fake.script(Reply(text="a long answer that never ends", chunks=6, hang_after=7), Reply(text="next"))
    session_id = await acp.new_session()
    turn = asyncio.ensure_future(acp.prompt(session_id, "go on forever"))
    for _ in range(1000):
        if acp.client.of_kind("agent_message_chunk"):
            break
        await asyncio.sleep(0.02)
    assert acp.client.of_kind("agent_message_chunk"), "no chunk streamed before cancel"
    await acp.conn.cancel(session_id=session_id)
    answer = await asyncio.wait_for(turn, 10)
    assert answer.stop_reason == "cancelled"
    assert (await acp.prompt(session_id, "again")).stop_reason == "end_turn"


async def test_cancel_while_permission_is_open(acp):
    acp.client.hold_permission = asyncio.Event()
    acp.fake.script(Reply(calls=[Call("run_command", {"command": "echo hi"}, "call_x")]))
    session_id = await acp.new_session()
    turn = asyncio.ensure_future(acp.prompt(session_id, "run it"))
    for _ in range(1000):
        if acp.client.permissions:
            break
        await asyncio.sleep(0.02)
    assert acp.client.permissions[0].tool_call.kind == "execute"
    await acp.conn.cancel(session_id=session_id)
    assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
    acp.client.hold_permission.set()


async def test_plan_updates_from_todo_write_keep_a_blocked_note(acp):
    todos = [
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress"},
        {"content": "ship it", "status": "blocked", "note": "waiting for review"},
        {"content": "celebrate", "status": "pending"},
    ]
    acp.fake.script(Reply(calls=[Call("todo_write", {"todos": todos}, "call_t")]), Reply(text="planned"))
    session_id = await acp.new_session()
    await acp.prompt(session_id, "plan it")
    plan = acp.client.of_kind("plan")[-1]
    assert [(e.content, e.status) for e in plan.entries] == [
        ("read the code", "completed"),
        ("fix the bug", "in_progress"),
        ("ship it (blocked: waiting for review)", "pending"),
        ("celebrate", "pending"),
    ]
    [start] = [u for u in acp.client.of_kind("tool_call") if u.tool_call_id == "call_t"]
    assert start.kind == "think"


async def test_max_steps_ends_with_max_turn_requests(tmp_path, fake, workspace):
    config = settings_file(tmp_path, {"maxSteps": 1, "approvals": "auto"})
    async with run_acp(tmp_path / "home", workspace, fake, SHIRO_NEKO_CONFIG=config) as acp:
        fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"}, "call_r")]))
        session_id = await acp.new_session()
        assert (await acp.prompt(session_id, "read")).stop_reason == "max_turn_requests"
        # A notice: shown apart from the answer's text (issue 26), as a finished `other` call.
        assert "maxSteps = 1" not in acp.client.text()
        notices = [u for u in acp.client.of_kind("tool_call") if (u.field_meta or {}).get("shiro", {}).get("notice")]
        assert any("maxSteps = 1" in n.title for n in notices)


async def test_files_go_through_the_editor_when_it_offers_fs(tmp_path, fake, workspace):
    client = EditorClient(buffers={str(workspace / "hello.py"): "print('unsaved buffer')\n"})
    async with run_acp(tmp_path / "home", workspace, fake, client, fs=True, args=("--approvals", "auto")) as acp:
        fake.script(
            Reply(calls=[Call("read_file", {"path": "hello.py"}, "call_r")]),
            Reply(calls=[Call("edit_file", {"path": "hello.py", "old_text": "unsaved buffer", "new_text": "edited"}, "call_e")]),
            Reply(text="done"),
        )
        session_id = await acp.new_session()
        await acp.prompt(session_id, "edit the buffer")
        second = (await acp.requests(2))[1].body["input"]
        assert "unsaved buffer" in json.dumps(second)  # the model saw the editor's text, not the disk's
        assert client.writes == [(str(workspace / "hello.py"), "print('edited')\n")]
        assert (workspace / "hello.py").read_text() == "print('hello')\n"  # the editor owns the save
        diff = [u for u in client.of_kind("tool_call_update") if u.tool_call_id == "call_e" and u.status != "in_progress"][0].content[0]
        assert diff.old_text == "print('unsaved buffer')\n" and diff.new_text == "print('edited')\n"


async def test_slash_commands_answer_without_the_model(acp):
    acp.fake.script(Reply(calls=[Call("todo_write", {"todos": [{"content": "one", "status": "pending"}]}, "c")]), Reply(text="ok"))
    session_id = await acp.new_session()
    await acp.prompt(session_id, "plan")
    before = len(acp.fake.requests)
    acp.client.updates.clear()
    assert (await acp.prompt(session_id, "/todos")).stop_reason == "end_turn"
    assert "[ ] one" in acp.client.text()
    acp.client.updates.clear()
    await acp.prompt(session_id, "/save")
    assert acp.client.text().startswith("Saved 4 messages")
    acp.client.updates.clear()
    await acp.prompt(session_id, "/sessions")
    assert session_id[:8] in acp.client.text()
    acp.client.updates.clear()
    await acp.prompt(session_id, "/notes")
    assert acp.client.text() == "Project memory is empty."
    assert len(acp.fake.requests) == before


async def test_list_and_load_replay_history(tmp_path, fake, workspace):
    fake.script(Reply(calls=[Call("read_file", {"path": "hello.py"}, "call_r")]), Reply(text="It prints hello."))
    async with run_acp(tmp_path / "home", workspace, fake, args=("--approvals", "auto")) as acp:
        session_id = await acp.new_session()
        await acp.prompt(session_id, "what does hello.py do?")
    async with run_acp(tmp_path / "home", workspace, fake) as acp:
        listed = await acp.conn.list_sessions(cwd=str(workspace))
        assert [(s.session_id, s.title) for s in listed.sessions] == [(session_id, "what does hello.py do?")]
        await acp.conn.load_session(cwd=str(workspace), session_id=session_id, mcp_servers=[])
        kinds = [u.session_update for _, u in acp.client.updates]
        replayed = [k for k in kinds if k in ("user_message_chunk", "agent_message_chunk", "tool_call", "tool_call_update")]
        assert replayed == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk"]
        assert acp.client.text("user_message_chunk") == "what does hello.py do?"
        assert acp.client.text() == "It prints hello."
        fake.script(Reply(text="still here"))
        assert (await acp.prompt(session_id, "and now?")).stop_reason == "end_turn"
        assert len(fake.requests[-1].body["input"]) > 2  # the loaded history went to the model


async def test_bad_input_gets_errors_and_the_agent_keeps_serving(acp):
    with pytest.raises(RequestError) as unknown:
        await acp.prompt("no-such-session", "hi")
    assert unknown.value.code == -32602 and "no-such-session" in str(unknown.value)
    session_id = await acp.new_session()
    image = schema.ImageContentBlock(type="image", data="aGk=", mime_type="image/png")  # "hi": no PNG
    with pytest.raises(RequestError) as unsupported:
        await acp.conn.prompt(session_id=session_id, prompt=[image])
    assert unsupported.value.code == -32602 and "is not a PNG, JPEG, GIF or WebP image" in str(unsupported.value)
    with pytest.raises(RequestError) as missing:
        await acp.conn.load_session(cwd=str(acp.root), session_id="0000dead", mcp_servers=[])
    assert missing.value.code == -32602
    with pytest.raises(RequestError) as relative:
        await acp.conn.new_session(cwd="relative/dir", mcp_servers=[])
    assert relative.value.code == -32602
    acp.fake.script(Reply(text="fine"))
    assert (await acp.prompt(session_id, "still there?")).stop_reason == "end_turn"


async def test_embedded_resource_and_link_reach_the_model(acp):
    (acp.root / "notes.md").write_text("linked file text\n")
    acp.fake.script(Reply(text="read them"))
    session_id = await acp.new_session()
    blocks = [
        schema.TextContentBlock(type="text", text="look at these"),
        schema.ResourceContentBlock(type="resource_link", uri=(acp.root / "notes.md").as_uri(), name="notes.md"),
        schema.EmbeddedResourceContentBlock(type="resource", resource=schema.TextResourceContents(
            uri=(acp.root / "sel.py").as_uri(), text="selected text")),
    ]
    await acp.conn.prompt(session_id=session_id, prompt=blocks)
    sent = json.dumps((await acp.requests(1))[0].body["input"])
    assert "linked file text" in sent and "selected text" in sent and 'path=\\"sel.py\\"' in sent


async def test_load_a_session_made_by_the_lsp_server(tmp_path, fake, workspace):
    from tests.support.lsp import EDIT_FILE_MODEL, server_env, start_client

    home = tmp_path / "home"
    fake.script(Reply(text="Made in the language server."))
    lsp = await start_client({"fake": fake, "home": home, "root": workspace}, "neovim",
                             server_env(home, fake.base_url, SHIRO_MODEL=EDIT_FILE_MODEL, SHIRO_NEKO_CONFIG=str(tmp_path / "none.json")))
    chat = await lsp.chat("hello from neovim")
    await lsp.client.shutdown_session()
    await lsp.client.stop()
    async with run_acp(home, workspace, fake) as acp:
        listed = await acp.conn.list_sessions(cwd=str(workspace))
        assert [s.session_id for s in listed.sessions] == [chat["sessionId"]]
        await acp.conn.load_session(cwd=str(workspace), session_id=chat["sessionId"], mcp_servers=[])
        assert acp.client.text("user_message_chunk") == "hello from neovim"
        assert acp.client.text() == "Made in the language server."
        fake.script(Reply(text="and continued in the editor"))
        assert (await acp.prompt(chat["sessionId"], "carry on")).stop_reason == "end_turn"
    [record] = records(home)
    # The dialogue's 4 messages; the record also keeps the context message (server/agent/context_messages.py).
    assert record["id"] == chat["sessionId"] and len([m for m in record["messages"] if not m.get("context")]) == 4


async def test_sigterm_saves_like_a_closed_pipe(tmp_path, fake, workspace):
    import signal

    async with run_acp(tmp_path / "home", workspace, fake) as acp:
        fake.script(Reply(text="remember me"))
        session_id = await acp.new_session()
        await acp.prompt(session_id, "a turn to save")
        acp.process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(acp.process.wait(), 30) == 0
    [record] = records(tmp_path / "home")
    assert record["id"] == session_id and record["messages"][-1]["content"][0]["text"] == "remember me"


async def test_a_failed_turn_is_an_error_with_the_reason(acp):
    from tests.fake_provider import HttpError

    acp.fake.script(HttpError(400, "the model does not exist", type="invalid_request_error"))
    session_id = await acp.new_session()
    with pytest.raises(RequestError) as failed:
        await acp.prompt(session_id, "hi")
    assert failed.value.code == -32603 and "the model does not exist" in str(failed.value)
    acp.fake.script(Reply(text="recovered"))
    assert (await acp.prompt(session_id, "again")).stop_reason == "end_turn"


async def test_rewind_lists_and_restores_through_the_slash_command(acp):
    acp.fake.script(Reply(calls=[Call("write_file", {"path": "hello.py", "content": "print('bye')\n"}, "call_w")]), Reply(text="Changed."))
    session_id = await acp.new_session()
    await acp.prompt(session_id, "change hello")
    assert (acp.root / "hello.py").read_text() == "print('bye')\n"
    before = len(acp.fake.requests)
    acp.client.updates.clear()
    await acp.prompt(session_id, "/rewind")
    assert acp.client.text().startswith("1. change hello (") and "`~hello.py`" in acp.client.text()
    acp.client.updates.clear()
    assert (await acp.prompt(session_id, "/rewind 1")).stop_reason == "end_turn"
    answer = acp.client.text()
    assert answer.startswith("Restored 1 file(s): `hello.py`") and "> change hello" in answer
    assert (acp.root / "hello.py").read_text() == "print('hello')\n"
    acp.client.updates.clear()
    await acp.prompt(session_id, "/rewind 1")  # the rewind is the newest checkpoint: undone
    assert (acp.root / "hello.py").read_text() == "print('bye')\n"
    assert len(acp.fake.requests) == before


async def test_new_session_with_private_meta_is_a_private_session(acp):
    """ACP has no private flag of its own: `_meta: {"shiroNeko": {"private": true}}` on session/new."""
    private = (await acp.conn.new_session(cwd=str(acp.root), mcp_servers=[], shiroNeko={"private": True})).session_id
    plain = await acp.new_session()
    for session_id in (private, plain):
        acp.fake.script(Reply(text="ok"))
        assert (await acp.prompt(session_id, "hello")).stop_reason == "end_turn"
    for _ in range(100):
        if len(records(acp.home)) == 2:
            break
        await asyncio.sleep(0.05)
    kinds = {r["id"]: r.get("private", False) for r in records(acp.home)}
    assert kinds == {private: True, plain: False}


async def test_an_image_block_reaches_the_model(tmp_path, fake, workspace):
    """Issue 40: an ACP image content block goes to the model as shiro.chat's images do (an image
    alone is a prompt too)."""
    import base64
    import io

    from PIL import Image

    out = io.BytesIO()
    Image.new("RGB", (12, 10), (0, 128, 0)).save(out, "PNG")
    image = schema.ImageContentBlock(type="image", data=base64.b64encode(out.getvalue()).decode(), mime_type="image/png")
    async with run_acp(tmp_path / "home", workspace, fake, SHIRO_MODEL="gpt-5") as acp:
        session_id = await acp.new_session()
        fake.script(Reply(text="green"))
        assert (await acp.conn.prompt(session_id=session_id, prompt=[image])).stop_reason == "end_turn"
    [part] = [p for i in fake.requests[-1].body["input"] if i.get("role") == "user" for p in i["content"]
              if p["type"] == "input_image"]
    assert part["image_url"].startswith("data:image/png;base64,")


async def test_a_subagents_text_is_a_thought_not_the_answer(acp):
    """Issue 40: a `task` subagent's streamed text goes as agent_thought_chunk (ACP has no nesting),
    so the answer's agent_message_chunk text is the main model's alone; its calls are tool calls."""
    session_id = await acp.new_session()
    acp.fake.script(
        Reply(calls=[Call("task", {"description": "look", "prompt": "look around"})]),
        Reply(text="SUBAGENT REPORT"),
        Reply(text="main answer"),
    )
    assert (await acp.prompt(session_id, "go")).stop_reason == "end_turn"
    assert acp.client.text() == "main answer"
    assert "SUBAGENT REPORT" in acp.client.text("agent_thought_chunk")
