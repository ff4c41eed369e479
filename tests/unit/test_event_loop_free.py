"""Work that grows with the history never runs on the event loop's thread.

After a 50 MB prompt the next request of the editor went unanswered for seconds (30 s once on a
loaded machine): pruning the history for the wire encoded every message and hashed every span on
the loop's thread, between two awaits (bench/big_prompt.py measures the wait). Which thread a
function runs on is seen with `sys.setprofile`, which hooks only the thread that installs it: here
the test's event loop, which is the service's.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from types import CodeType, FrameType
from typing import Any, Callable

from shiro_neko.agent.prune import prune_for_wire
from tests.fake_provider import FakeProvider, Reply
from tests.support.service import chat, running_service


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
