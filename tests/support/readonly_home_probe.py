"""Run inside a sandbox where SHIRO_NEKO_HOME is mounted read-only (tests/unit/test_readonly_home.py):
two chats, a `remember` and a `/save` on the service, each outcome printed as one JSON line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from shiro_neko.errors import Refused
from tests.fake_provider import FakeProvider, Reply
from tests.support.service import chat, running_service


async def main(root: Path) -> None:
    out: dict[str, object] = {}
    with FakeProvider() as fake:
        fake.script(Reply(text="hello"), Reply(text="again"))
        async with running_service(fake, root) as service:
            for name in ("chat1", "chat2"):
                session, outcome = await chat(service, "hi")
                out[name] = [outcome.status, outcome.error]
            workspace = service.workspace_of(session)
            for name, run in [
                ("remember", lambda: service.memory.run(workspace, lambda store: store.remember("fact", "a fact"))),
                ("save", lambda: service.persistence.save_command(session)),
            ]:
                try:
                    await run()
                    out[name] = "answered"
                except Refused as exc:
                    out[name] = f"refused: {exc}"
                except Exception as exc:  # the bug: a raw OSError, -32603 on the wire
                    out[name] = f"{type(exc).__name__}: {exc}"
            out["notices"] = [e["message"] for e in service.bridge.sink.events if e["type"] == "notice"]  # type: ignore[attr-defined]
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(Path(sys.argv[1])))
