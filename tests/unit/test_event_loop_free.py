"""Work that grows with the history never runs on the event loop's thread.

After a 50 MB prompt the next request of the editor went unanswered for seconds (30 s once on a
loaded machine): pruning the history for the wire encoded every message and hashed every span on
the loop's thread, between two awaits (bench/big_prompt.py measures the wait). Which thread a
function runs on is seen with `sys.setprofile`, which hooks only the thread that installs it: here
the test's event loop, which is the service's.
"""

from __future__ import annotations

import inspect
import json
import os
import subprocess
import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, Callable

import pytest

from shiro_neko.agent.prune import prune_for_wire
from tests.fake_provider import FakeProvider, Reply
from tests.support.service import chat, running_service

REPO = Path(__file__).resolve().parents[2]


class LoopThreadCalls:
    """The names of `functions` called on this thread while the block runs."""

    def __init__(self, *functions: Callable[..., Any]) -> None:
        self.codes: dict[CodeType, str] = {f.__code__: f.__qualname__ for f in functions}
        self.seen: list[str] = []

    def __enter__(self) -> "LoopThreadCalls":
        sys.setprofile(self._hook)
        return self

    def __exit__(self, *exc: object) -> None:
        sys.setprofile(None)

    def _hook(self, frame: FrameType, event: str, arg: object) -> None:
        if event == "call" and frame.f_code in self.codes:
            self.seen.append(self.codes[frame.f_code])


async def test_pruning_a_history_that_does_not_fit_runs_beside_the_event_loop(
    shiro_home: Path, fake: FakeProvider, workspace: Path
) -> None:
    fake.script(*[Reply(text=f"noted {i}") for i in range(8)])
    prompts = [f"prompt {i}: " + f"line {i} of a long paste\n" * 200 for i in range(4)]  # ~5 KB each
    async with running_service(fake, workspace, compactThreshold=2_500) as service:
        session, _ = await chat(service, prompts[0])
        with LoopThreadCalls(prune_for_wire) as loop_calls:
            for prompt in prompts[1:]:
                session, outcome = await chat(service, prompt, sessionId=session.id)
                assert outcome.status == "completed"
    last = json.dumps(fake.main_requests[-1].body)
    assert "prompt 3:" in last and "prompt 1:" not in last, "the history was pruned for the last request"
    assert loop_calls.seen == [], "prune_for_wire ran on the event loop's thread"


@pytest.mark.parametrize("sdk_headers", [False, True], ids=["early-request", "sdk-path"])
def test_a_fresh_process_imports_the_sdk_beside_the_event_loop(
    shiro_home: Path, fake: FakeProvider, workspace: Path, sdk_headers: bool
) -> None:
    """The first request of a process imports the SDK (0.56 s on a quiet machine, seconds on a
    loaded one) and builds its HTTP client and TLS context: on the loop's thread that held every
    other request of the editor as long. Both ways a first request goes: over httpx2 before the
    SDK (server/agent/provider/early_request.py), and through the SDK when an organisation header
    rules that out."""
    fake.script(Reply(text="hi"))
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    env.update(OPENAI_API_KEY="sk-test", SHIRO_NEKO_HOME=str(shiro_home), PYTHONPATH=str(REPO))
    if sdk_headers:
        env["OPENAI_ORG_ID"] = "org-test"
    probe = subprocess.run([sys.executable, "-m", "tests.support.sdk_import_probe", fake.base_url, str(workspace)],
                           cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0, probe.stderr[-3000:]
    report = json.loads(probe.stdout.strip().splitlines()[-1])
    assert report["status"] == "completed", report
    assert report["imported_before"] == [], "the probe must start without the SDK"
    assert report["on_loop"] == [], f"imported on the event loop's thread: {report['on_loop']}"


async def test_the_bubblewrap_probe_runs_beside_the_event_loop(
    shiro_home: Path, fake: FakeProvider, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whether bubblewrap works is probed by running it (agent/tools/sandbox.py): a process start
    and wait, tens of ms on a quiet machine and up to its 10 s timeout, that the first
    `shiro/status` of a process asked for on the loop's thread."""
    from shiro_neko.agent.tools import sandbox

    fake_bwrap = workspace.parent / "bin" / "bwrap"  # a slow bubblewrap that works: the probe waits for it
    fake_bwrap.parent.mkdir()
    fake_bwrap.write_text("#!/bin/sh\nsleep 0.3\nexit 0\n")
    fake_bwrap.chmod(0o755)
    monkeypatch.setenv("PATH", f"{fake_bwrap.parent}{os.pathsep}{os.environ['PATH']}")
    fake.script(Reply(text="hi"))
    with LoopThreadCalls(inspect.unwrap(sandbox._probe)) as loop_calls:
        async with running_service(fake, workspace) as service:
            _, outcome = await chat(service, "hi")
            assert outcome.status == "completed"
            status = service.bridge.sink.statuses[-1]["sandbox"]
    assert status["enforced"] is True, status  # the probe's answer did reach the status
    assert loop_calls.seen == [], "the bubblewrap probe ran on the event loop's thread"
