"""Permission rules over apply_patch, the edit tool of the default model (gpt-5, issue 37): its files
are in the patch text, and a path rule judges every one of them. A deny (or ask) rule speaks when
it covers any file of the patch; an allow rule only when it covers all of them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.fake_provider import Call, Reply
from tests.support.service import service_harness


def patch(*files: str) -> str:
    body = "".join(f"*** Add File: {f}\n+x = 1\n" for f in files)
    return f"*** Begin Patch\n{body}*** End Patch"


def results(h: Any, result: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in h.of_turn(result["turnId"]) if e["type"] == "tool_result"]


async def test_a_deny_rule_covers_any_file_of_a_patch(shiro_home: Path, fake: Any, workspace: Path) -> None:
    rules = {"deny": ["Edit(secrets/**)"]}
    async with service_harness(fake, shiro_home, workspace, approvals="auto", permissions=rules) as h:
        h.fake.script(Reply(calls=[Call("apply_patch", {"input": patch("src/a.py", "secrets/key.py")})]), Reply(text="ok"))
        [denied] = results(h, await h.chat("add two files"))
        assert denied["isError"] and "Edit(secrets/**)" in denied["output"]
        assert not (workspace / "secrets").exists() and not (workspace / "src").exists()


async def test_an_allow_rule_covers_a_patch_only_when_it_covers_every_file(shiro_home: Path, fake: Any, workspace: Path) -> None:
    rules = {"allow": ["Edit(src/**)"]}
    async with service_harness(fake, shiro_home, workspace, approvals="ask", permissions=rules) as h:
        h.sink.answers = ["deny"]
        h.fake.script(
            Reply(calls=[Call("apply_patch", {"input": patch("src/a.py", "src/b.py")}, "p1")]),
            Reply(calls=[Call("apply_patch", {"input": patch("src/c.py", "setup.py")}, "p2")]),
            Reply(text="ok"),
        )
        inside, mixed = results(h, await h.chat("add files"))
        assert not inside["isError"] and (workspace / "src" / "b.py").exists()
        # Half outside src: asked (and denied here), never allowed by the rule.
        assert len(h.sink.asked) == 1 and "setup.py" in h.sink.asked[0][1]
        assert mixed["isError"] and not (workspace / "setup.py").exists()
