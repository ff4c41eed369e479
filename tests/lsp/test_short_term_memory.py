"""Short-term memory across processes: two servers on one home share what each records (the
rest of short-term memory is tested in-process, tests/core/test_short_term_memory.py)."""

from __future__ import annotations

import json

from tests.core.test_short_term_memory import write_memory
from tests.fake_provider import Reply
from tests.support.lsp import start_server, stop


async def test_two_servers_share_memory(tmp_path, fake, workspace):
    one = await start_server(tmp_path, fake, workspace)
    two = await start_server(tmp_path, fake, workspace)
    try:
        await write_memory(one, "FROM SERVER ONE")
        fake.script(Reply(text="x"))
        await two.chat("in server two")
        assert "FROM SERVER ONE" in json.dumps(fake.requests[-1].body)
        assert [o["text"] for o in (await two.command("shiro.stm", {}))["others"]] == ["FROM SERVER ONE"]
    finally:
        await stop(one)
        await stop(two)
