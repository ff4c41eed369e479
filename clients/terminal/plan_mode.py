"""Plan mode in the terminal (issue 39): `/plan` (optionally with a prompt), `/act`, Shift+Tab to
switch, a badge in the bottom bar, and after a plan-mode turn a line offering `/start`: act mode
(with the approvals the user picks) and the prompt "Carry out the plan." (docs/terminal.md)."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from .. import protocol as wire
from . import render

Command = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
START_PROMPT = "Carry out the plan."
APPROVALS = ("ask", "auto-edit", "auto")
BADGE = "  ⏸ plan mode (shift+tab: act)"
READY = "plan ready: /start carries it out (approvals as they are), /start auto-edit lets edits run unasked; or keep planning"


class PlanMode:
    def __init__(self, command: Command, send: Callable[[str], Awaitable[None]], say: Callable[..., None]) -> None:
        self.command = command
        self.send = send  # a prompt, awaited to its turn's end
        self.say = say

    async def switch(self, mode: wire.Mode, approvals: str | None = None) -> None:
        args: dict[str, Any] = {"mode": mode}
        if approvals is not None:
            args["approvals"] = approvals
        result = await self.command(wire.SET_MODE, args)
        if result.get("mode") == "plan":
            self.say([("cyan", "plan mode"), ("dim", ": the model reads and plans; nothing is changed (/act or shift+tab to leave)")])
        else:
            self.say([("green", "act mode"), ("dim", f": approvals {result.get('approvals')}")])

    async def toggle(self, status: wire.StatusPayload | None) -> None:
        """Shift+Tab: plan <-> act."""
        await self.switch("act" if status is not None and status.mode == "plan" else "plan")

    async def plan(self, arg: str) -> None:
        """`/plan [prompt]`: plan mode on, and the prompt sent in it."""
        await self.switch("plan")
        if arg:
            await self.send(arg)

    async def act(self, arg: str) -> None:
        """`/act [ask|auto-edit|auto]`."""
        if self._usable(arg):
            await self.switch("act", arg.strip().lower() or None)

    async def start(self, arg: str) -> None:
        """`/start [ask|auto-edit|auto]`: act mode, then the plan carried out."""
        if self._usable(arg):
            await self.switch("act", arg.strip().lower() or None)
            await self.send(START_PROMPT)

    def _usable(self, arg: str) -> bool:
        word = arg.strip().lower()
        if word and word not in APPROVALS:
            self.say([("yellow", f"usage: /act or /start [{'|'.join(APPROVALS)}]")])
            return False
        return True


def badge(status: wire.StatusPayload | None) -> render.Fragment | None:
    return ("cyan", BADGE) if status is not None and status.mode == "plan" else None


def ended_lines(event: wire.TurnEndEvent, status: wire.StatusPayload | None) -> list[render.Line]:
    """After a turn: the /start offer when it was a completed plan-mode turn."""
    if event.status != "completed" or status is None or status.mode != "plan":
        return []
    return [[("cyan", READY)]]
