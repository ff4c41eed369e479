"""`shiro -p --output-format text|json|stream-json`: what a script reads on stdout (docs/terminal.md).

- `text` (the default): the answer, as before (clients/terminal/oneshot.py).
- `json`: one object when the turn ends (`result` below), nothing else on stdout.
- `stream-json`: one `shiro/event` per line as the server sent it (docs/protocol.md "Events and
  notifications": `turn_start`, `text_delta`, `tool_call`, `tool_result`, `notice`, …,
  `turn_end`), then the same `result` object as `json`, with `"type": "result"`, as the last line.

`result`: `{type: "result", status, answer, sessionId, turnId, error?, usage: {inputTokens,
outputTokens, cachedTokens}, costUsd, toolCalls: [{id, name, input, output, isError}],
stoppedBy?: "costLimit", exitCode}`. Progress and errors stay on stderr in every format.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from .. import protocol as wire

# Exit statuses of `shiro -p` (docs/terminal.md "Exit status").
EXIT_OK, EXIT_ERROR, EXIT_USAGE, EXIT_COST_LIMIT, EXIT_ABORTED = 0, 1, 2, 3, 130
# How the server words a turn stopped by maxCostUsd (server/agent/cost_limit.py).
COST_LIMIT_NOTICE = "cost limit:"
MAX_TOOL_CALLS = 1000  # kept for the result; a longer turn keeps its last ones (the count says how many)


class Collector:
    """The events of one `-p` turn, for the result object (and, in stream-json, each as a line)."""

    def __init__(self, fmt: str, out: TextIO) -> None:
        self.fmt = fmt
        self.out = out
        self.calls: dict[str, dict[str, Any]] = {}
        self.call_count = 0
        self.cost_limited = False

    def event(self, event: wire.Event) -> None:
        if isinstance(event, wire.ToolCallEvent):
            self.call_count += 1
            self.calls[event.toolCallId] = {"id": event.toolCallId, "name": event.toolName, "input": event.input}
            if len(self.calls) > MAX_TOOL_CALLS:
                del self.calls[next(iter(self.calls))]
        elif isinstance(event, wire.ToolResultEvent) and event.toolCallId in self.calls:
            self.calls[event.toolCallId].update(output=event.output, isError=event.isError)
        elif isinstance(event, wire.NoticeEvent) and event.message.startswith(COST_LIMIT_NOTICE):
            self.cost_limited = True
        if self.fmt == "stream-json":
            self.line(wire.to_wire(event))

    def line(self, obj: Any) -> None:
        self.out.write(json.dumps(obj, ensure_ascii=False) + "\n")
        self.out.flush()

    def result(self, chat: dict[str, Any], status: dict[str, Any] | None, before: dict[str, Any] | None,
               code: int) -> dict[str, Any]:
        def spent(key: str) -> Any:
            now = (status or {}).get(key)
            then = (before or {}).get(key)
            if isinstance(now, (int, float)) and isinstance(then, (int, float)):
                return round(now - then, 6) if isinstance(now, float) or isinstance(then, float) else now - then
            return now if before is None else None

        out: dict[str, Any] = {
            "type": "result",
            "status": chat.get("status"),
            "answer": str(chat.get("text") or ""),
            "sessionId": chat.get("sessionId"),
            "turnId": chat.get("turnId"),
            "usage": {"inputTokens": spent("inputTokens") or 0, "outputTokens": spent("outputTokens") or 0,
                      "cachedTokens": spent("cachedTokens") or 0},
            "costUsd": spent("costUsd"),
            "toolCalls": list(self.calls.values()),
            "exitCode": code,
        }
        if self.call_count > len(self.calls):
            out["toolCallCount"] = self.call_count
        if chat.get("error"):
            out["error"] = chat["error"]
        if self.cost_limited:
            out["stoppedBy"] = "costLimit"
        return out
