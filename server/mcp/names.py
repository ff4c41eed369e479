"""The tool names the model sees: `mcp__<server>__<tool>` within the providers' name rule.

OpenAI-compatible endpoints accept `^[A-Za-z0-9_-]{1,64}$`. Names are assigned over the whole set
at once and a clash (after replacing and cutting) gives every member a hash suffix, so the result
never depends on which server happened to start first.
"""

from __future__ import annotations

import hashlib
import re
from collections import defaultdict

MAX_NAME = 64
PREFIX = "mcp__"
_SUFFIX_DIGITS = 8
_NOT_ALLOWED = re.compile(r"[^A-Za-z0-9_-]")


def plain_name(server: str, tool: str) -> str:
    """The name before clash resolution: characters replaced, cut to 64."""
    return (PREFIX + _NOT_ALLOWED.sub("_", server) + "__" + _NOT_ALLOWED.sub("_", tool))[:MAX_NAME]


def _suffixed(server: str, tool: str) -> str:
    digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_SUFFIX_DIGITS]
    return plain_name(server, tool)[: MAX_NAME - _SUFFIX_DIGITS - 1] + "_" + digest


def assign_names(pairs: list[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """(server, tool) -> the unique name the model sees."""
    groups: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for pair in dict.fromkeys(pairs):
        groups[plain_name(*pair)].append(pair)
    names: dict[tuple[str, str], str] = {}
    for name, members in groups.items():
        if len(members) == 1:
            names[members[0]] = name
        else:
            for pair in members:
                names[pair] = _suffixed(*pair)
    return names
