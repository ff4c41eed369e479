"""Plan mode in the Neovim plugin (issue 39), in a real headless Neovim against the real server:
:ShiroPlan with a prompt (a write refused, the statusline's [plan], the plan-ready notice), :ShiroPlan!
and :Shiro plan switching, :ShiroAct refusing a wrong approvals word, :ShiroStart auto-edit carrying
the plan out."""

from __future__ import annotations

from pathlib import Path

from tests.clients.test_nvim import _run, nvim  # noqa: F401 (fixture)
from tests.fake_provider import Call, FakeProvider, Reply

SCRIPT = Path(__file__).with_name("nvim_plan_test.lua")


def test_plan_act_and_start(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:  # noqa: F811
    fake.script(
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"}, "call_w")]),
        Reply(text="The plan: add new.txt."),
        Reply(calls=[Call("write_file", {"path": "new.txt", "content": "x\n"}, "call_w2")]),
        Reply(text="Done."),
    )
    result, _proc, workspace = _run(nvim, fake, tmp_path, SCRIPT)
    assert result["commands"] is True
    assert result["turn_end_1"]["text"] == "The plan: add new.txt." and result["exists_after_plan"] is False
    assert any("plan mode is on" in line for line in result["chat_lines_1"]), result["chat_lines_1"]
    assert result["statusline"].endswith(" [plan]") and "[plan]" not in result["statusline_act"]
    assert any("plan ready: :ShiroStart" in n["msg"] for n in result["notifications"])
    assert result["bad_approvals"] is True
    first = fake.requests[0].body
    assert "write_file" not in [t["name"] for t in first["tools"]]
    assert result["turn_end_2"]["text"] == "Done." and result["new_txt"] == ["x"]
    assert (workspace / "new.txt").read_text() == "x\n"
    assert result["steps"][-1] == "done"
