"""The status bar's context level: amber from two thirds of the threshold, red from 90 %.

Compared on the unrounded figures (integer arithmetic), not on the percentage shown with one
decimal: 89.96 % shows as 90.0 but is still amber.
"""

from __future__ import annotations

from ..protocol import ContextLevel


def context_level(tokens: int, threshold: int) -> ContextLevel:
    if tokens * 10 >= threshold * 9:
        return "red"
    if tokens * 3 >= threshold * 2:
        return "amber"
    return "normal"
