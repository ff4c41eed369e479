"""Run as a script by tests/unit/test_event_loop_free.py, in a fresh interpreter where the openai
SDK is not imported yet: one chat through the service against the fake at argv[1], in the
workspace argv[2]; prints, as one JSON line, the turn's status and every module of the SDK or of
its HTTP client imported on the event loop's thread (an audit hook sees each import and the thread
it runs on). Imports nothing of tests/fake_provider.py, which loads the SDK's types."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path

from tests.support.sink import ListSink
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.protocol import ChatArgs
from shiro_neko.service import ShiroService

WATCHED = ("openai", "httpx2", "httpcore2", "pydantic")


class Bridge:
    def __init__(self) -> None:
        self.sink = ListSink()

    def host_for(self, root: Path, session_id: str) -> DiskToolHost:
        return DiskToolHost(root)

    async def ask(self, message: str, actions: list[str]) -> str | None:
        return None


async def main(base_url: str, root: Path) -> dict[str, object]:
    loop_thread = threading.get_ident()
    on_loop: list[str] = []

    def hook(event: str, args: tuple[object, ...]) -> None:
        if event == "import" and threading.get_ident() == loop_thread and str(args[0]).split(".")[0] in WATCHED:
            on_loop.append(str(args[0]))

    already = sorted(m for m in sys.modules if m.split(".")[0] in WATCHED)
    sys.addaudithook(hook)
    service = ShiroService(Bridge())
    service.update_settings({"baseUrl": base_url, "model": "fake-model"})
    service.workspaces.set_folders([root])
    try:
        session, queued = service.submit_chat(ChatArgs(prompt="hello"))
        outcome = await queued.done
    finally:
        await service.stop()
    return {"status": outcome.status, "error": outcome.error, "imported_before": already, "on_loop": on_loop[:20]}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(sys.argv[1], Path(sys.argv[2])))))
