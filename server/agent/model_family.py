"""Which family a model id belongs to: the prompt variant (agent/prompt.py) and the edit tool
offered (`apply_patch` for the families trained on it, else `edit_file`) follow from it.

Chosen from the model id alone so it is known before the first request; the `promptFamily`
setting overrides it for ids this table does not know (a proxy's alias, a fine-tune).
"""

from __future__ import annotations

import re
from typing import Literal

ModelFamily = Literal["codex", "small", "default"]

# OpenAI's GPT-5 and Codex models (and the o-series reasoning models) are trained on the
# `apply_patch` format and follow long procedural prompts well.
_CODEX = re.compile(r"(^|[/:])(gpt-5|gpt-4\.1|codex|o3|o4)", re.IGNORECASE)
# A parameter count in the id (`qwen2.5-coder:7b`, `llama3.2-3b-instruct`, `phi-4-mini`): local
# models of 14B and fewer parameters get the shorter prompt with fewer tool words.
_SIZE = re.compile(r"(?<![\d.])(\d+(?:\.\d+)?)b(?![a-z])", re.IGNORECASE)
_SMALL_NAMES = re.compile(r"(mini|tiny|small|nano)(?![a-z])", re.IGNORECASE)


def model_family(model: str | None, override: ModelFamily | None = None) -> ModelFamily:
    if override is not None:
        return override
    if not model:
        return "default"
    if _CODEX.search(model):
        return "codex"
    sizes = [float(m) for m in _SIZE.findall(model)]
    if sizes and max(sizes) <= 14:
        return "small"
    # Hosted "mini"/"nano" models of large vendors are capable enough for the full prompt; only a
    # local-looking id (a tag after ':' as Ollama writes them) with such a name counts as small.
    if ":" in model and _SMALL_NAMES.search(model):
        return "small"
    return "default"
