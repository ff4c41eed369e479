"""Plan mode in-process (the service through the command glue, the real HTTP fake): shiro.setMode,
what a plan-mode request offers and says, refusals, the mode in the status and the record, Start.
The attack (every writing tool called, the workspace compared byte for byte) runs through the real
server in tests/lsp/test_plan_mode.py."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from shiro_neko.agent import plan_mode
from tests.fake_provider import Call, RecordedRequest, Reply
from tests.support.lsp import EDIT_FILE_MODEL
from tests.support.service import service_harness

WIRES = ["responses", "chat"]


def tool_names(req: RecordedRequest) -> list[str]:
    tools = req.body.get("tools") or []
    return [t.get("name") or t.get("function", {}).get("name") for t in tools]


def instructions(req: RecordedRequest) -> Any:
    return req.body["instructions"] if req.api == "responses" else req.body["messages"][0]


def sent_text(req: RecordedRequest) -> str:
    return json.dumps(req.body["input"] if req.api == "responses" else req.body["messages"])


def outputs(harness: Any, turn_id: str) -> list[dict[str, Any]]:
    return [e for e in harness.of_turn(turn_id) if e["type"] == "tool_result"]


@pytest.mark.parametrize("wire", WIRES)
async def test_plan_mode_offers_only_read_only_tools_and_keeps_the_instructions(shiro_home, fake, workspace, wire):
    async with service_harness(fake, shiro_home, workspace, model=EDIT_FILE_MODEL, wireApi=wire, approvals="auto") as h:
        fake.script(Reply(text="act answer"), Reply(text="the plan"), Reply(text="acting again"))
        await h.chat("hello")
        assert await h.command("shiro.setMode", {"mode": "plan"}) == {"mode": "plan", "approvals": "auto"}
        assert h.statuses[-1]["mode"] == "plan"
        assert (await h.command("shiro.status"))["mode"] == "plan"
        await h.chat("plan the change")
        await h.command("shiro.setMode", {"mode": "act"})
        await h.chat("go")
        act, plan, back = fake.main_requests[-3:]
        assert {"edit_file", "write_file", "run_command"} <= set(tool_names(act))
        offered = set(tool_names(plan))
        assert not offered & {"edit_file", "write_file", "apply_patch"}
        assert {"read_file", "grep", "list_files", "todo_write", "run_command"} <= offered
        # The instructions are the same bytes in both modes; the switch is a context message.
        assert instructions(act) == instructions(plan) == instructions(back)
        assert plan_mode.PLAN_TEXT in sent_text(plan) and plan_mode.PLAN_TEXT not in sent_text(act)
        assert plan_mode.ACT_TEXT in sent_text(back)
        assert tool_names(back) == tool_names(act)
        # The plan request repeats the act request's conversation (the prefix cache keeps it).
        assert sent_text(plan)[: len(sent_text(act)) - 2] == sent_text(act)[:-2]


async def test_a_refused_call_says_plan_mode_and_how_to_go_on(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace, model=EDIT_FILE_MODEL, approvals="auto") as h:
        await h.command("shiro.setMode", {"mode": "plan"})
        fake.script(Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x"}),
                                 Call("edit_file", {"path": "hello.py", "old_text": "hello", "new_text": "bye"})]),
                    Reply(text="planned"))
        result = await h.chat("change it")
        assert result["status"] == "completed"
        refused = outputs(h, result["turnId"])
        assert len(refused) == 2
        for out in refused:
            assert out["isError"] and "plan mode is on" in out["output"] and "todo_write" in out["output"]
        assert not (workspace / "new.txt").exists()
        assert (workspace / "hello.py").read_text() == "print('hello')\n"
        assert h.asked == []  # refused, never asked


async def test_the_mode_is_saved_and_survives_resume(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace) as h:
        fake.script(Reply(text="ok"))
        first = await h.chat("hello")
        await h.command("shiro.setMode", {"mode": "plan"})
        await h.command("shiro.save")
        record = json.loads(next((shiro_home / "sessions").rglob(f"{first['sessionId']}.json")).read_text())
        assert record["mode"] == "plan"
    async with service_harness(fake, shiro_home, workspace) as h:
        resumed = await h.command("shiro.resume", {"latest": True})
        assert resumed["sessionId"] == first["sessionId"]
        assert (await h.command("shiro.status"))["mode"] == "plan"


async def test_start_switches_to_act_with_the_approvals_picked(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace, model=EDIT_FILE_MODEL) as h:
        await h.command("shiro.setMode", {"mode": "plan"})
        started = await h.command("shiro.setMode", {"mode": "act", "approvals": "auto-edit"})
        assert started == {"mode": "act", "approvals": "auto-edit"}
        fake.script(Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"})]), Reply(text="done"))
        result = await h.chat("Carry out the plan.")
        assert result["status"] == "completed"
        assert (workspace / "new.txt").read_text() == "x\n"
        assert h.asked == []  # auto-edit: the edit ran without a question


async def test_bad_mode_is_invalid_params(shiro_home, fake, workspace):
    async with service_harness(fake, shiro_home, workspace) as h:
        with pytest.raises(JsonRpcInvalidParams, match="mode"):
            await h.command("shiro.setMode", {"mode": "yolo"})
        with pytest.raises(JsonRpcInvalidParams, match="approvals"):
            await h.command("shiro.setMode", {"mode": "act", "approvals": "everything"})


async def test_a_yes_given_after_a_switch_to_plan_mode_does_not_write(shiro_home, fake, workspace):
    """The user switches to plan mode while an edit's question is open, then answers Allow: the
    yes was for act mode, so the call is refused (agent/tool_calls.py checks again after the answer)."""
    async with service_harness(fake, shiro_home, workspace, model=EDIT_FILE_MODEL, approvals="ask") as h:
        answered = h.sink.approve

        async def switch_then_allow(request: Any) -> Any:
            await h.command("shiro.setMode", {"sessionId": request.session_id, "mode": "plan"})
            return await answered(request)

        h.sink.approve = switch_then_allow  # type: ignore[method-assign]
        fake.script(Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x"})]), Reply(text="ok"))
        result = await h.chat("write it")
        [out] = outputs(h, result["turnId"])
        assert h.asked and out["isError"] and "plan mode is on" in out["output"]
        assert not (workspace / "new.txt").exists()
