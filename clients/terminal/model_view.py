"""`/model` in the terminal (issue 39): a numbered list from `shiro.models` (the endpoint's models,
then the settings'), `/model N` or `/model NAME` for this session from its next request,
`/model default` back to the setting. `shiro setup` (clients/terminal/first_run.py) changes the
endpoint and key."""

from __future__ import annotations

from typing import Any, Awaitable, Callable

from .. import protocol as wire
from . import render

Command = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]


class ModelPicker:
    def __init__(self, command: Command) -> None:
        self.command = command
        self.listed: list[str] = []  # the last list shown: `/model N` picks from it

    async def run(self, arg: str) -> list[render.Line]:
        if not arg:
            return await self.show()
        if arg.isdigit():
            index = int(arg) - 1
            if not self.listed or not 0 <= index < len(self.listed):
                return [[("yellow", "/model N picks from the list /model shows: run /model first")]]
            arg = self.listed[index]
        result = await self.command(wire.SET_MODEL, {"model": arg})
        effort = result.get("effort")
        return [[("green", f"model {result.get('model')}"),
                 ("dim", f"{f', effort {effort}' if effort else ''} (from the next request)")]]

    async def show(self) -> list[render.Line]:
        result = await self.command(wire.MODELS, {})
        models = [m for m in result.get("models") or [] if isinstance(m, dict) and isinstance(m.get("id"), str)]
        self.listed = [m["id"] for m in models]
        current = result.get("current")
        lines: list[render.Line] = []
        for n, model in enumerate(models, 1):
            mark = "*" if model["id"] == current else " "
            source = "" if model.get("source") == "endpoint" else "  (from settings)"
            lines.append([("cyan", f"{n:>3}{mark} "), ("bold" if mark == "*" else "", model["id"]), ("dim", source)])
        if result.get("error"):
            lines.append([("yellow", f"! {result['error']}"), ("dim", f"  ({wire.SET_UP_MODEL}: shiro setup)")])
        lines.append([("dim", "/model N or /model NAME picks one for this session; /model default goes back to the setting")])
        return lines
