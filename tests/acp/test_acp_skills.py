"""Skills and custom commands in an ACP editor (docs/extending.md): `available_commands_update`
lists them after the built-in ones, and a prompt `/name args` reaches the model expanded."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fake_provider import FakeProvider, Reply

from .conftest import run_acp


async def test_a_user_command_is_advertised_and_expanded(tmp_path: Path, fake: FakeProvider, workspace: Path) -> None:
    user = tmp_path / "user"
    command = user / ".claude" / "commands" / "explain.md"
    command.parent.mkdir(parents=True)
    command.write_text("---\ndescription: Explain a file to a newcomer\nargument-hint: [file]\n---\nExplain $ARGUMENTS simply.\n")
    fake.script(Reply(text="explained"))
    async with run_acp(tmp_path / "home", workspace, fake, HOME=str(user)) as acp:
        session_id = await acp.new_session()
        offered = acp.client.of_kind("available_commands_update")[0].available_commands
        names = [c.name for c in offered]
        assert names[0] == "compact" and names[-1] == "explain"  # the built-in ones first
        explain = next(c for c in offered if c.name == "explain")
        assert explain.description == "Explain a file to a newcomer" and explain.input.root.hint == "[file]"
        answer = await acp.prompt(session_id, "/explain hello.py")
        assert answer.stop_reason == "end_turn"
        body = json.dumps(fake.requests[-1].body)
        assert "Explain hello.py simply." in body and "/explain hello.py" in body
        # A command added since: the next prompt's end sends the list again, with it.
        (command.parent / "fix.md").write_text("Fix $ARGUMENTS.\n")
        fake.script(Reply(text="ok"), Reply(text="ok"))
        await acp.prompt(session_id, "anything")
        updates = acp.client.of_kind("available_commands_update")
        assert len(updates) == 2 and "fix" in [c.name for c in updates[-1].available_commands]
        await acp.prompt(session_id, "again")
        assert len(acp.client.of_kind("available_commands_update")) == 2  # unchanged: not sent again
