"""Project memory across processes: two servers writing one memory file at once lose nothing
(the rest of project memory is tested in-process, tests/core/test_notebook.py)."""

from __future__ import annotations

import asyncio

from tests.support.lsp import server_env, start_client


async def test_two_servers_remember_concurrently(tmp_path, fake, workspace):
    home = tmp_path / "home"
    env = server_env(home, fake.base_url)
    kwargs = {"fake": fake, "home": home, "root": workspace}
    a = await start_client(kwargs, "visual-studio-code", env)
    b = await start_client(kwargs, "neovim", env)
    try:
        async def many(h, tag):
            for i in range(100):
                await h.command("shiro.remember", {"kind": "fact", "text": f"{tag} entry {i}"})

        await asyncio.gather(many(a, "alpha"), many(b, "beta"))
        notes = await a.command("shiro.notes")
        texts = {e["text"] for e in notes["entries"]}
        assert len(texts) == 200
    finally:
        for h in (a, b):
            await h.client.shutdown_session()
            await h.client.stop()
