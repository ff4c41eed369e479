"""Median / min / max summaries, the one shape every bench result uses."""

from __future__ import annotations

import os
import platform
import statistics
import sys
from typing import Any, Iterable


def summary(samples: Iterable[float], unit: str = "ms", digits: int = 2) -> dict[str, Any]:
    values = [float(s) for s in samples]
    if not values:
        return {"n": 0}
    ordered = sorted(values)
    p99 = ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]
    return {
        f"median_{unit}": round(statistics.median(values), digits),
        f"min_{unit}": round(ordered[0], digits),
        f"max_{unit}": round(ordered[-1], digits),
        f"p99_{unit}": round(p99, digits),
        "n": len(values),
    }


def environment() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "interpreter": sys.executable,
        "cpus": os.cpu_count(),
        "loadavg": [round(x, 2) for x in os.getloadavg()],
        "machine": platform.machine(),
    }


def write_result(path: Any, result: dict[str, Any]) -> None:
    """Write one topic's result (with the environment it was measured in) and say where."""
    import json
    from pathlib import Path

    out = Path(path)
    result.setdefault("environment", environment())
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
