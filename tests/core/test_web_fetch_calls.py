"""web_fetch through the service (issue 37): asked about unless the user allowed the host,
under `approvals: auto` too; a private address refused after the yes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fake_provider import Call, Reply
from tests.support.service import service_harness


async def test_web_fetch_asks_then_refuses_a_private_address(shiro_home: Path, fake: Any, workspace: Path) -> None:
    async with service_harness(fake, shiro_home, workspace, approvals="auto") as h:
        h.fake.script(Reply(calls=[Call("web_fetch", {"url": "http://169.254.169.254/latest/meta-data/"})]),
                      Reply(text="ok"))
        result = await h.chat("fetch the metadata")
        [(tool, summary)] = h.sink.asked
        assert tool == "web_fetch" and "fetch http://169.254.169.254/latest/meta-data/" in summary
        [res] = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert res["isError"] and "non-public address" in res["output"]


async def test_an_allowed_domain_is_not_asked_and_is_still_checked(shiro_home: Path, fake: Any, workspace: Path) -> None:
    async with service_harness(fake, shiro_home, workspace, webFetchAllowedDomains=["localhost"]) as h:
        h.sink.answers = ["deny"]
        h.fake.script(Reply(calls=[Call("web_fetch", {"url": "http://localhost:8000/"}, "a"),
                                   Call("web_fetch", {"url": "https://example.org/"}, "b")]), Reply(text="ok"))
        result = await h.chat("fetch")
        assert [name for name, _ in h.sink.asked] == ["web_fetch"]  # only the host not allowed
        allowed, other = [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]
        assert allowed["isError"] and "non-public address" in allowed["output"]
        assert other["isError"] and "denied" in other["output"]
