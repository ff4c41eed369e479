"""What both test harnesses (tests/support/lsp.py `Harness`, tests/support/service.py
`ServiceHarness`) read from their recorded events and the fake provider: one definition, so a
test reads the same whichever tier it runs on. A harness has `events` and `fake`."""

from __future__ import annotations

import asyncio
from typing import Any


class EventWaits:
    events: list[dict[str, Any]]
    fake: Any

    def of_turn(self, turn_id: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["turnId"] == turn_id]

    def types_of(self, turn_id: str) -> list[str]:
        return [e["type"] for e in self.of_turn(turn_id)]

    # Waits are for conditions: a generous deadline costs a passing run nothing, and a machine
    # shared by many jobs may take many seconds for a step.
    async def wait_for(self, predicate: Any, timeout: float = 60.0) -> None:
        deadline = asyncio.get_running_loop().time() + timeout
        while not predicate():
            if asyncio.get_running_loop().time() > deadline:
                raise AssertionError("condition not met in time")
            await asyncio.sleep(0.02)

    async def requests(self, n: int, timeout: float = 60.0) -> list[Any]:
        return await asyncio.to_thread(self.fake.wait_for_requests, n, timeout)
