"""Short-term memory, the service in-process: positions in the exact request the fake provider
receives (two servers sharing one memory: tests/lsp/test_short_term_memory.py).

One label per request item: `user:<text>`, `assistant:<text>`, `call`, `output`, and for the
plain notes `OWN`, `OTHERS`, `NUDGE` (on Responses they are developer messages; on Chat
Completions system messages). `INSTR+OWN` etc. say what the system prompt carries.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from shiro_neko.state.short_term_memory import FILE_NAME
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.service import ServiceHarness as Harness
from tests.support.service import start_service_harness


@pytest.fixture(autouse=True)
def _home(shiro_home):
    """Every service here keeps its state in tmp_path/"home", the `shiro_home` of the test."""


def note_label(text: str) -> str | None:
    if text.startswith("Short-term memory of this session"):
        return "OWN"
    if text.startswith("Short-term memory of other"):
        return "OTHERS"
    if text.startswith("Short-term memory: "):
        return "NUDGE"
    return None


def is_context(text: Any) -> bool:
    """A context message (server/agent/context_messages.py): no part of what these tests place."""
    return isinstance(text, str) and text.startswith(("<environment_context>", "<todos>", "<project_instructions", "<project_memory>", "<short_term_memory>"))


def labels(fake: FakeProvider, req: Any) -> list[str]:
    out: list[str] = []
    if req.api == "chat":
        for i, m in enumerate(req.body["messages"]):
            if m["role"] == "system":
                label = note_label(m["content"])
                out.append(label or "INSTR" if i == 0 else label or "system?")
            elif m["role"] == "tool":
                out.append("output")
            elif m["role"] == "assistant" and m.get("tool_calls"):
                out.append("call")
            elif not is_context(m["content"]):
                out.append(f"{m['role']}:{m['content']}")
        return out
    for item in req.body["input"]:
        if item.get("type") == "item_reference":
            item = fake.stored[item["id"]]
        if item.get("role") == "developer":
            out.append(note_label(item["content"]) or "developer?")
        elif item.get("role") == "user":
            if not is_context(item["content"][0]["text"]):
                out.append("user:" + item["content"][0]["text"])
        elif item.get("type") == "message":
            out.append("assistant:" + item["content"][0]["text"])
        elif item.get("type") == "function_call":
            out.append("call")
        elif item.get("type") == "function_call_output":
            out.append("output")
    return out


def user_texts(fake: FakeProvider, req: Any) -> list[str]:
    """The texts of a request's user messages (context messages included), in order."""
    if req.api == "chat":
        return [m["content"] for m in req.body["messages"] if m["role"] == "user" and isinstance(m["content"], str)]
    items = [fake.stored[i["id"]] if i.get("type") == "item_reference" else i for i in req.body["input"]]
    return [i["content"][0]["text"] for i in items if i.get("role") == "user"]


def system_of(req: Any) -> str:
    return req.body["instructions"] if req.api == "responses" else req.body["messages"][0]["content"]


def tool_names(req: Any) -> list[str]:
    return [t.get("name") or t["function"]["name"] for t in req.body.get("tools", [])]


def stm_call(summary: str | None = None, **categories: str) -> Call:
    args: dict[str, Any] = {}
    if summary is not None:
        args["summary"] = summary
    if categories:
        args["categories"] = categories
    return Call("update_short_term_memory", args)


async def client(tmp_path: Path, fake: FakeProvider, root: Path, home: Path | None = None, folders: list[Path] | None = None, **stm: Any) -> Harness:
    home = home or tmp_path / "home"
    options: dict[str, Any] = {"shortTermMemory": stm} if stm else {}
    for key in ("supportsTools", "wireApi"):
        if key in stm:
            options[key] = stm.pop(key)
    assert home == tmp_path / "home"  # the SHIRO_NEKO_HOME the `_home` fixture set
    return await start_service_harness(fake, home, root, folders=folders, **options)


async def stop(h: Harness) -> None:
    await h.close()


async def write_memory(h: Harness, summary: str, prompt: str = "start", **extra: Any) -> dict[str, Any]:
    """One turn in which the model answers and then records its running summary."""
    h.fake.script(Reply(text="ok", calls=[stm_call(summary)]), Reply(text="noted"))
    result = await h.chat(prompt, **extra)
    assert result["status"] == "completed"
    return result


async def restarted_with_memory(tmp_path: Path, fake: FakeProvider, root: Path, summary: str, **settings: Any) -> Harness:
    """A first server writes this session's memory; a second one, with `settings`, resumes it."""
    home = tmp_path / "home"
    first = await client(tmp_path, fake, root, home=home)
    sid = (await write_memory(first, summary))["sessionId"]
    await stop(first)
    h = await client(tmp_path, fake, root, home=home, **settings)
    await h.command("shiro.resume", {"id": sid})
    return h


def age_memory(home: Path, seconds: float) -> None:
    conn = sqlite3.connect(home / FILE_NAME)
    conn.execute("UPDATE memories SET updated_at = updated_at - ?", (seconds,))
    conn.commit()
    conn.close()


# ------------------------------------------------------------------------------------ cadence


async def test_cadence_nudge_counter_and_reset(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, refreshCadence=2)
    try:
        fake.script(Reply(text="a1"), Reply(text="a2"), Reply(text="a3", calls=[stm_call("goal: fix the bug")]), Reply(text="done3"), Reply(text="a4"))
        for prompt in ("p1", "p2"):
            await h.chat(prompt)
        assert "NUDGE" not in labels(fake, fake.requests[0]) + labels(fake, fake.requests[1])
        assert labels(fake, fake.requests[0]) == ["user:p1"]
        await h.chat("p3")
        # Two completed turns since the session began: the third gets the nudge, at depth 2
        # (before the latest user/assistant pair), and the write tool is offered.
        assert labels(fake, fake.requests[2]) == ["user:p1", "assistant:a1", "user:p2", "NUDGE", "assistant:a2", "user:p3"]
        assert "update_short_term_memory" in tool_names(fake.requests[2])
        # The step after the call: the nudge has done its job and goes; the memory is not yet
        # shown (the turn's plan was made before it existed).
        assert "NUDGE" not in labels(fake, fake.requests[3])
        await h.chat("p4")
        # The counter was reset by the call: no nudge; the fresh memory sits in the tail slot.
        assert labels(fake, fake.requests[4])[-2:] == ["OWN", "user:p4"]
        assert "NUDGE" not in labels(fake, fake.requests[4])
        saved = await h.command("shiro.save", {})
        record = json.loads(Path(saved["path"]).read_text())
        assert record["turnsSinceRefresh"] == 1  # p4 completed since the refresh in p3
    finally:
        await stop(h)


async def test_counter_survives_resume(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, refreshCadence=2)
    fake.script(Reply(text="a1"), Reply(text="a2"))
    first = await h.chat("p1")
    await h.chat("p2")
    await stop(h)
    h = await client(tmp_path, fake, workspace, refreshCadence=2)
    try:
        await h.command("shiro.resume", {"id": first["sessionId"]})
        fake.script(Reply(text="a3"))
        await h.chat("p3")
        assert "NUDGE" in labels(fake, fake.requests[2])
    finally:
        await stop(h)


# ------------------------------------------------------------------------------ suppressions


async def test_explicit_long_term_intent_suppresses_the_nudge(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, refreshCadence=0)
    try:
        fake.script(Reply(text="a"), Reply(text="b"))
        await h.chat("remember that the tests run with pytest -q")
        await h.chat("what next?")
        assert "NUDGE" not in labels(fake, fake.requests[0])
        assert labels(fake, fake.requests[1]) == ["user:remember that the tests run with pytest -q", "NUDGE", "assistant:a", "user:what next?"]
        assert "remember" in tool_names(fake.requests[0])  # the model has the right tool for it
    finally:
        await stop(h)


async def test_provider_without_tools_gets_no_nudge_but_memory(tmp_path, fake, workspace):
    h = await restarted_with_memory(tmp_path, fake, workspace, "we are fixing pagination", refreshCadence=0, supportsTools=False)
    try:
        fake.script(Reply(text="plain"))
        await h.chat("next")
        req = fake.requests[-1]
        assert "tools" not in req.body
        assert labels(fake, req)[-2:] == ["OWN", "user:next"] and "NUDGE" not in labels(fake, req)
    finally:
        await stop(h)


async def test_tool_less_retry_drops_own_block_and_nudge_keeps_others(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, refreshCadence=1)
    try:
        await write_memory(h, "other session: the parser rewrite", prompt="parser work")
        await h.command("shiro.newSession", {})
        await write_memory(h, "this session: docs", prompt="docs work")
        fake.script(Reply(text="x"))
        await h.chat("more docs")  # the counter is now 1: the next turn is nudged
        fake.supports_tools = False  # the endpoint now answers 400 to any tools
        fake.script(Reply(text="without tools"))
        result = await h.chat("and now?")
        assert result["status"] == "completed"
        rejected, retried = fake.rejections[-1], fake.requests[-1]
        assert rejected.error["param"] == "tools"
        assert {"OWN", "OTHERS", "NUDGE"} <= set(labels(fake, rejected))
        assert "tools" not in retried.body
        assert labels(fake, retried)[-2:] == ["OTHERS", "user:and now?"]
        assert "OWN" not in labels(fake, retried) and "NUDGE" not in labels(fake, retried)
        assert "this session: docs" not in system_of(retried)
    finally:
        await stop(h)


# ------------------------------------------------------------------------ privacy and opt-in


async def test_private_sessions_stay_out_unless_bypassed(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await client(tmp_path, fake, workspace, home=home)
    try:
        await h.command("shiro.newSession", {"private": True})
        await write_memory(h, "PRIVATE: salary negotiation notes")
        await h.command("shiro.newSession", {})
        fake.script(Reply(text="hi"))
        await h.chat("hello")
        assert "OTHERS" not in labels(fake, fake.requests[-1])
        assert (await h.command("shiro.stm", {}))["others"] == []
    finally:
        await stop(h)
    h = await client(tmp_path, fake, workspace, home=home, privacyBypass=True)
    try:
        fake.script(Reply(text="hi"))
        await h.chat("hello again")
        req = fake.requests[-1]
        assert labels(fake, req)[-2:] == ["OTHERS", "user:hello again"]
        assert "PRIVATE: salary" in json.dumps(req.body)
    finally:
        await stop(h)


async def test_other_workspaces_only_with_cross_workspace(tmp_path, fake, workspace):
    other = tmp_path / "other"
    other.mkdir()
    home = tmp_path / "home"
    h = await client(tmp_path, fake, workspace, home=home, folders=[workspace, other])
    try:
        await write_memory(h, "OTHER-WS: migrating the build", workspace=other.as_uri())
        fake.script(Reply(text="a"))
        await h.chat("here", workspace=workspace.as_uri())
        assert "OTHERS" not in labels(fake, fake.requests[-1])
    finally:
        await stop(h)
    h = await client(tmp_path, fake, workspace, home=home, folders=[workspace, other], crossWorkspace=True)
    try:
        fake.script(Reply(text="a"))
        await h.chat("here", workspace=workspace.as_uri())
        req = fake.requests[-1]
        assert labels(fake, req)[-2:] == ["OTHERS", "user:here"]
        assert "OTHER-WS: migrating" in json.dumps(req.body) and str(other) in json.dumps(req.body)
        shown = await h.command("shiro.stm", {})
        assert [o["workspace"] for o in shown["others"]] == [other.resolve().as_uri()]
    finally:
        await stop(h)


async def test_at_most_three_others_newest_first(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace)
    try:
        for i in range(4):
            await h.command("shiro.newSession", {})
            await write_memory(h, f"memory number {i}", prompt=f"task {i}")
        await h.command("shiro.newSession", {})
        shown = await h.command("shiro.stm", {})
        assert [o["text"] for o in shown["others"]] == ["memory number 3", "memory number 2", "memory number 1"]
        assert [o["title"] for o in shown["others"]] == ["task 3", "task 2", "task 1"]
        fake.script(Reply(text="a"))
        await h.chat("fifth")
        body = json.dumps(fake.requests[-1].body)
        assert "memory number 0" not in body and body.index("memory number 3") < body.index("memory number 1")
    finally:
        await stop(h)


# ----------------------------------------------------------------------------- render modes


async def test_crude_summary_shows_others_recent_messages_and_all_of_this_session(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace)
    try:
        await write_memory(h, "other: parser", prompt="rewrite the parser please")
        await h.command("shiro.newSession", {})
        await write_memory(h, "mine: docs", prompt="first docs prompt")
        fake.script(Reply(text="c"))
        await h.chat("second docs prompt")
        req = fake.requests[-1]
        others = next(i["content"] for i in req.body["input"] if i.get("role") == "developer" and note_label(i["content"]) == "OTHERS")
        assert "Recent messages:" in others and "user: rewrite the parser please" in others and "assistant: noted" in others
        assert labels(fake, req)[0] == "user:first docs prompt"  # nothing of this session left out
        assert labels(fake, req)[-3:] == ["OWN", "OTHERS", "user:second docs prompt"]  # own first
    finally:
        await stop(h)


async def test_supersede_omits_covered_messages_and_others_raw_text(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, renderMode="supersede")
    try:
        await write_memory(h, "other: parser", prompt="rewrite the parser please")
        await h.command("shiro.newSession", {})
        fake.script(Reply(text="r0"))
        await h.chat("old prompt")
        await write_memory(h, "mine: docs", prompt="summarised prompt")
        fake.script(Reply(text="c"))
        await h.chat("latest prompt")
        req = fake.requests[-1]
        got = labels(fake, req)
        # The summary covers everything up to its update: only the latest turn goes raw.
        assert got == ["OWN", "OTHERS", "user:latest prompt"]
        assert "Recent messages" not in json.dumps(req.body)
    finally:
        await stop(h)


async def test_supersede_tool_less_retry_sends_the_covered_messages_with_the_summary_gone(tmp_path, fake, workspace):
    # The retry without tools drops this session's summary; the messages it stood for come back,
    # else the model gets neither (issue 36 item 1: the covered fact "8123" never reached it).
    h = await client(tmp_path, fake, workspace, renderMode="supersede")
    try:
        fake.script(Reply(text="noted the port"))
        await h.chat("the service listens on port 8123")
        await write_memory(h, "mine: docs", prompt="summarised prompt")
        fake.supports_tools = False  # the endpoint now answers 400 to any tools
        fake.script(Reply(text="without tools"))
        result = await h.chat("which port?")
        assert result["status"] == "completed"
        rejected, retried = fake.rejections[-1], fake.requests[-1]
        assert labels(fake, rejected) == ["OWN", "user:which port?"]  # the summary stands for them
        assert "8123" not in json.dumps(rejected.body)
        assert "tools" not in retried.body and "OWN" not in labels(fake, retried)
        got = labels(fake, retried)
        assert got[:2] == ["user:the service listens on port 8123", "assistant:noted the port"]
        assert got[-1] == "user:which port?"
    finally:
        await stop(h)


# --------------------------------------------------------------------------- tail slot/depth


async def test_fresh_memory_depth_zero_goes_to_the_end(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, depth=0)
    try:
        await write_memory(h, "fresh")
        fake.script(Reply(text="x"))
        await h.chat("now")
        assert labels(fake, fake.requests[-1])[-2:] == ["user:now", "OWN"]
    finally:
        await stop(h)


async def test_stale_memory_keeps_its_configured_place(tmp_path, fake, workspace):
    home = tmp_path / "home"
    h = await client(tmp_path, fake, workspace, home=home)
    sid = (await write_memory(h, "STALE SUMMARY"))["sessionId"]
    fake.script(Reply(text="a2"))
    await h.chat("p2")
    await stop(h)
    age_memory(home, 2 * 3600)
    # depth -1 (the default): a context message right before the turn's prompt, never the
    # instructions, which stay the same bytes (issue 37); said again only when it changes.
    h = await client(tmp_path, fake, workspace, home=home)
    try:
        await h.command("shiro.resume", {"id": sid})
        fake.script(Reply(text="x"), Reply(text="x2"))
        await h.chat("p3")
        await h.chat("p3b")
        req, after = fake.requests[-2:]
        assert "OWN" not in labels(fake, req) and "STALE SUMMARY" not in system_of(req)
        assert system_of(req) == system_of(after) == system_of(fake.requests[0])
        texts = user_texts(fake, req)
        memory = [t for t in texts if t.startswith("<short_term_memory>\n")]
        assert len(memory) == 1 and "STALE SUMMARY" in memory[0] and "last updated" in memory[0]
        assert texts.index(memory[0]) == texts.index("p3") - 1
        assert [t for t in user_texts(fake, after) if t.startswith("<short_term_memory>")] == memory  # not said again
    finally:
        await stop(h)
    # depth 3: before the 3rd last dialogue item (counted back from the turn's prompt).
    h = await client(tmp_path, fake, workspace, home=home, depth=3)
    try:
        await h.command("shiro.resume", {"id": sid})
        fake.script(Reply(text="y"))
        await h.chat("p4")
        got = labels(fake, fake.requests[-1])
        assert got[-4:] == ["OWN", "user:p3b", "assistant:x2", "user:p4"]
        assert "STALE SUMMARY" not in system_of(fake.requests[-1])
    finally:
        await stop(h)


async def test_others_and_fresh_memory_never_in_the_system_prompt_and_memory_before_nudge(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, depth=-1, nudgeDepth=1, refreshCadence=1)
    try:
        await write_memory(h, "OTHER CONTENT")
        await h.command("shiro.newSession", {})
        await write_memory(h, "OWN CONTENT", prompt="mine")
        fake.script(Reply(text="z"))
        await h.chat("go")  # counter 1 after this turn
        fake.script(Reply(text="z2"))
        await h.chat("go again")
        req = fake.requests[-1]
        assert labels(fake, req)[-4:] == ["OWN", "OTHERS", "NUDGE", "user:go again"]
        assert "OTHER CONTENT" not in system_of(req) and "OWN CONTENT" not in system_of(req)
    finally:
        await stop(h)


async def test_chat_completions_gets_system_notes(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace, wireApi="chat", refreshCadence=0)
    try:
        await write_memory(h, "on chat")
        fake.script(Reply(text="x"))
        await h.chat("again")
        got = labels(fake, fake.requests[-1])
        assert got[0] == "INSTR" and got[-2:] == ["OWN", "user:again"] and "NUDGE" in got
    finally:
        await stop(h)


# -------------------------------------------------------------- disabled, tool, commands, file


async def test_disabled_no_nudge_no_tool_but_memory_renders(tmp_path, fake, workspace):
    h = await restarted_with_memory(tmp_path, fake, workspace, "EXISTING", enabled=False, refreshCadence=0)
    try:
        fake.script(Reply(text="x"))
        await h.chat("more")
        req = fake.requests[-1]
        assert "update_short_term_memory" not in tool_names(req) and "NUDGE" not in labels(fake, req)
        assert labels(fake, req)[-2:] == ["OWN", "user:more"]
        assert (await h.command("shiro.stm", {}))["current"]["text"] == "EXISTING"
    finally:
        await stop(h)


async def test_categories_stm_command_and_clear(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace)
    try:
        assert await h.command("shiro.stm", {}) == {"others": []}
        fake.script(Reply(text="ok", calls=[stm_call("plain first")]), Reply(text="a"),
                    Reply(text="ok", calls=[stm_call(goal="ship v2", risks="flaky CI")]), Reply(text="b"))
        await h.chat("one")
        result = await h.chat("two")
        outputs = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert outputs and not outputs[0]["isError"] and "category block" in outputs[0]["output"]
        shown = await h.command("shiro.stm", {})
        assert shown["current"]["kind"] == "categories"
        assert shown["current"]["text"] == "summary:\nplain first\ngoal:\nship v2\nrisks:\nflaky CI"
        assert shown["current"]["updatedAt"].endswith("Z")
        assert await h.command("shiro.stmClear", {}) == {"cleared": True}
        assert await h.command("shiro.stmClear", {}) == {"cleared": False}
        assert "current" not in await h.command("shiro.stm", {})
        with pytest.raises(JsonRpcException, match="unknown|Unknown|invalid"):
            await h.command("shiro.stm", {"bogus": 1})
    finally:
        await stop(h)


async def test_bad_tool_arguments_are_an_error_result(tmp_path, fake, workspace):
    h = await client(tmp_path, fake, workspace)
    try:
        fake.script(Reply(text="", calls=[Call("update_short_term_memory", {})]), Reply(text="sorry"))
        result = await h.chat("x")
        out = next(e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result")
        assert out["isError"] and "summary" in out["output"]
    finally:
        await stop(h)


async def test_broken_database_file_is_kept_and_turns_go_on(tmp_path, fake, workspace):
    home = tmp_path / "home"
    home.mkdir()
    garbage = b"this is not sqlite " * 100
    (home / FILE_NAME).write_bytes(garbage)
    h = await client(tmp_path, fake, workspace, home=home, refreshCadence=0)
    try:
        fake.script(Reply(text="fine"))
        result = await h.chat("hello")
        assert result["status"] == "completed" and result["text"] == "fine"
        got = labels(fake, fake.requests[-1])
        assert got == ["user:hello"]  # nothing from short-term memory, not even a nudge
        notices = [e["message"] for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]
        assert len(notices) == 1 and "corrupt" in notices[0] and ".corrupt-" in notices[0]
        copies = list(home.glob(FILE_NAME + ".corrupt-*"))
        assert len(copies) == 1 and copies[0].read_bytes() == garbage
        fake.script(Reply(text="", calls=[stm_call("try")]), Reply(text="ok"))
        result = await h.chat("again")
        out = next(e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result")
        assert out["isError"] and "corrupt" in out["output"]
        assert not [e for e in h.of_turn(result["turnId"]) if e["type"] == "notice"]  # told once
        with pytest.raises(JsonRpcException, match="corrupt"):
            await h.command("shiro.stm", {})
        assert (home / FILE_NAME).read_bytes() == garbage  # never written
    finally:
        await stop(h)
