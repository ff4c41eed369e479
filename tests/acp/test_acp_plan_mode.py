"""ACP session modes (issue 39): `plan` beside the approvals modes; in plan mode a write the model
asks for is refused without a question and nothing is written; another mode carries the plan out."""

from __future__ import annotations

from tests.fake_provider import Call, Reply


async def test_plan_mode_is_a_session_mode_and_refuses_writes(acp):
    acp.fake.script(
        Reply(calls=[Call("write_file", {"path": "p.txt", "content": "p"}, "call_p")]), Reply(text="The plan: write p.txt."),
        Reply(calls=[Call("write_file", {"path": "p.txt", "content": "p"}, "call_q")]), Reply(text="Done."),
    )
    session_id = await acp.new_session()
    await acp.conn.set_session_mode(session_id=session_id, mode_id="plan")
    assert acp.client.of_kind("current_mode_update")[-1].current_mode_id == "plan"
    await acp.prompt(session_id, "plan writing p")
    refused = [u for u in acp.client.of_kind("tool_call_update") if u.tool_call_id == "call_p" and u.status == "failed"]
    assert refused and "plan mode is on" in str(refused[-1].raw_output)
    assert acp.client.permissions == [] and not (acp.root / "p.txt").exists()
    tools = [t["name"] for t in acp.fake.main_requests[0].body["tools"]]
    assert "write_file" not in tools and "read_file" in tools
    # "Start": the editor picks an approvals mode, which is act mode.
    await acp.conn.set_session_mode(session_id=session_id, mode_id="auto-edit")
    assert acp.client.of_kind("current_mode_update")[-1].current_mode_id == "auto-edit"
    await acp.prompt(session_id, "Carry out the plan.")
    assert (acp.root / "p.txt").read_text() == "p" and acp.client.permissions == []
