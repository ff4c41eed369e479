"""Transcript builders: the messages and parts tests feed the loop, the pruner and the wire."""

from __future__ import annotations

from shiro_neko.model.transcript import AssistantMessage, AssistantPart, Message, ReasoningPart, TextPart
from shiro_neko.model.transcript import ToolCallPart, ToolMessage, ToolResultPart, UserMessage


def user(text: str) -> UserMessage:
    return UserMessage(content=[TextPart(text=text)])


def assistant(*parts: str | AssistantPart) -> AssistantMessage:
    """An assistant message; a string is a text part: `assistant("ok")`, `assistant("on it", call("c1"))`."""
    return AssistantMessage(content=[TextPart(text=p) if isinstance(p, str) else p for p in parts])


def call(cid: str, name: str = "read_file", item_id: str | None = None, **args: object) -> ToolCallPart:
    """A tool call part; without arguments it reads a.py."""
    return ToolCallPart(tool_call_id=cid, tool_name=name, input=args or {"path": "a.py"}, item_id=item_id)


def results(*pairs: tuple[str, str]) -> ToolMessage:
    """A tool message answering read_file calls: `results(("c1", "output"), ...)`."""
    return ToolMessage(content=[ToolResultPart(tool_call_id=c, tool_name="read_file", output=o) for c, o in pairs])


def step(n: int, *, output: str = "x" * 400, reasoning: bool = True, text: str | None = None) -> list[Message]:
    """One stored response (reasoning, optional text, one call) and its tool message."""
    parts: list[AssistantPart] = []
    if reasoning:
        parts.append(ReasoningPart(text=f"think {n}", item_id=f"rs_{n}", encrypted_content="gAAA" * 20))
    if text is not None:
        parts.append(TextPart(text=text, item_id=f"msg_{n}"))
    parts.append(call(f"call_{n}", item_id=f"fc_{n}", path=f"f{n}.py"))
    return [AssistantMessage(content=parts), results((f"call_{n}", output))]


def long_task(turns: int = 3, steps_per_turn: int = 20, output: str = "x" * 400) -> list[Message]:
    """`turns` prompts, each followed by `steps_per_turn` steps and a closing answer."""
    out: list[Message] = []
    k = 0
    for t in range(turns):
        out.append(user(f"task {t}"))
        for _ in range(steps_per_turn):
            out += step(k, output=output, text=f"looking at f{k}.py")
            k += 1
        out.append(AssistantMessage(content=[TextPart(text=f"done with task {t}", item_id=f"msg_end{t}")]))
    return out


# ------------------------------------------------------------------------- readers
def markers(messages: list[Message]) -> list[str]:
    """The texts of the pruner's markers ("history was pruned") in a wire view."""
    return [m.content[0].text for m in messages if isinstance(m, UserMessage) and "history was pruned" in m.content[0].text]
