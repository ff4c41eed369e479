"""`/compact`: the model summarises the whole conversation, and the summary replaces it.

Unlike automatic pruning this destroys history (the seed: use it when a session has drifted
across unrelated tasks). The task list lives outside the transcript and survives.
"""

from __future__ import annotations

from typing import Callable

from .prune import render_message
from .provider.base import Provider, Usage
from .side_request import ask_model
from ..model.transcript import Message, TextPart, UserMessage

INPUT_CHARS = 200_000  # of rendered transcript sent to the summary request (head and tail kept)

INSTRUCTIONS = """You compact a coding agent's conversation. Write a summary that replaces the whole conversation: the agent continues from it alone, so keep everything needed to carry on and nothing else.

Use exactly these sections, as markdown headings, with terse bullet points:
## Goal
## Files touched
## Decisions
## Commands and outcomes
## What remains

Name files with their paths, commands exactly as run, and errors with their key message. No preamble."""

HEADER = "Summary of the conversation so far (the earlier messages were replaced by it with /compact):"


def compaction_request(messages: list[Message], focus: str | None) -> tuple[str, str]:
    body = "\n".join(line for m in messages for line in render_message(m))
    if len(body) > INPUT_CHARS:
        head = INPUT_CHARS // 4
        tail = INPUT_CHARS - head
        body = f"{body[:head]}\n[… {len(body) - head - tail} characters omitted …]\n{body[-tail:]}"
    text = f"<conversation>\n{body}\n</conversation>"
    if focus:
        text += f"\n\nThe user asks the summary to focus on: {focus}\nAdd a section ## Focus for it."
    return INSTRUCTIONS, text


async def compact_transcript(
    provider: Provider, model: str, messages: list[Message], focus: str | None,
    usage: Callable[[Usage], None] | None = None,
) -> tuple[str, list[Message]]:
    """(summary, the new transcript): one user message carrying the summary."""
    instructions, text = compaction_request(messages, focus)
    summary = (await ask_model(provider, model, instructions, text, usage)).strip()
    if not summary:
        raise ValueError("the model returned an empty summary; the conversation was left as it was")
    return summary, [UserMessage(content=[TextPart(text=f"{HEADER}\n\n{summary}")])]
