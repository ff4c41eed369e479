"""Neovim says who asks (clients/nvim/lua/shiro/approve.lua): a real headless Neovim against the
real server; the approval menu of a `task` subagent's call is "shiro-neko's task subagent wants
to …", the main agent's "shiro-neko wants to …" (both denied here)."""

from __future__ import annotations

from pathlib import Path

from tests.clients.test_nvim import _run, nvim  # noqa: F401  (nvim is the binary fixture)
from tests.fake_provider import FakeProvider
from tests.lsp.test_subagent_approval import script

SCRIPT = Path(__file__).with_name("nvim_subagent_approval_test.lua")


def test_the_menu_says_the_task_subagent_asks(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:  # noqa: F811
    script(fake)
    result, _proc, workspace = _run(nvim, fake, tmp_path, SCRIPT)
    prompts = [a["prompt"] for a in result["asked"] if a["kind"] == "shiro_approval"]
    assert len(prompts) == 2, prompts
    assert prompts[0].startswith("shiro-neko's task subagent wants to fetch https://example.invalid/page"), prompts
    assert prompts[1].startswith("shiro-neko wants to run"), prompts
    assert not (workspace / "ran.txt").exists()
