"""bench/results/README.md (one Markdown table of every topic's figures, and the issue-15 targets
with met / not met) and one PNG per topic whose result has a `curve`. Run by bench/run at the end;
runnable alone: python bench/common/report.py."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "results"


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict) or part not in data:
            return None
        data = data[part]
    return data


# (topic, path to the measured median, target, unit, how it compares, the physical limit measured
# in the same run (path in the same topic's result, or None), what that limit is)
TARGETS = [
    ("oneshot", "cold_oneshot.wall_ms.median_", 1000, "ms", "<=",
     "floors.import_libraries_ms.median_", "import pygls.server, lsprotocol.types, openai"),
    ("oneshot", "cold_oneshot.last_response_to_exit_ms.median_", 60, "ms", "<=",
     "floors.python_-c_pass_ms.median_", "python -c pass"),
    ("oneshot", "cold_oneshot.peak_rss_mb.median_", 120, "MB", "<", None, ""),
    ("oneshot", "repeat_oneshot_warm_server.to_first_request_ms.median_", 300, "ms", "<=",
     "floors.python_-c_pass_ms.median_", "python -c pass"),
    # issue 28: the cold paths against the library each cannot start without
    ("oneshot", "cold_oneshot.wall_ms.median_", 700, "ms", "<=",
     "floors.import_libraries_ms.median_", "import pygls.server, lsprotocol.types, openai"),
    ("oneshot", "cold_oneshot.to_first_request_ms.median_", 550, "ms", "<=",
     "floors.import_pygls_lsprotocol_ms.median_", "import pygls.server, lsprotocol.types"),
    ("editor_start", "cold_editor_start.to_initialize_ms.median_", 300, "ms", "<=",
     "floors.import_pygls_lsprotocol_ms.median_", "import pygls.server, lsprotocol.types"),
    ("editor_start", "cold_editor_start.to_first_request_ms.median_", 550, "ms", "<=",
     "floors.import_pygls_lsprotocol_ms.median_", "import pygls.server, lsprotocol.types"),
    ("steps", "by_history.120k.step_own_ms.median_", 5, "ms", "<",
     "by_history.120k.direct_sdk_step_gap_ms.median_", "the openai SDK alone, same requests"),
    ("steps", "by_history.120k.own_cpu_beyond_sdk_ms.median_", 5, "ms", "<",
     "by_history.120k.direct_sdk_cpu_per_step_ms.median_", "the openai SDK alone, CPU per request"),
    ("steps", "by_history.120k.turn_to_direct_ratio.median_", 1.05, "", "<=", None, "(a ratio to the SDK alone)"),
    ("stream", "by_pace.paced.median_ms.median_", 2, "ms", "<",
     "by_pace.direct_sdk_paced_latency_median_ms.median_", "the openai SDK alone, same stream"),
    ("stream", "by_pace.burst.median_ms.median_", 2, "ms", "<",
     "by_pace.direct_sdk_burst_latency_median_ms.median_", "the openai SDK alone, same burst"),
    ("terminal_sessions", "end_to_end_ms.median_", 300, "ms", "<=", "store_alone_ms.median_",
     "a fresh interpreter listing with the store alone"),
    ("memory", "long_session.peak_rss_mb", 150, "MB", "<", None, ""),
    ("memory", "short_turns_one_session.slope_kb_per_100_turns", 100, "KB/100 turns", "<",
     "short_turns_one_session.after_trim_kb_per_100_turns", "live data: RSS after malloc_trim"),
    ("memory", "short_turns_new_session_each.slope_kb_per_100_turns", 100, "KB/100 turns", "<",
     "short_turns_new_session_each.after_trim_kb_per_100_turns", "live data: RSS after malloc_trim"),
]


def _rows(prefix: str, data: Any, out: list[tuple[str, str]]) -> None:
    if isinstance(data, dict):
        medians = {k: v for k, v in data.items() if k.startswith("median")}
        if medians:
            m = next(iter(medians.values()))
            mn = next((v for k, v in data.items() if k.startswith("min")), None)
            mx = next((v for k, v in data.items() if k.startswith("max")), None)
            out.append((prefix, f"{m} ({mn} – {mx}, n={data.get('n')})"))
            return
        for key, value in data.items():
            if key in ("environment", "curve", "targets", "samples", "samples_ms", "marks"):
                continue
            _rows(f"{prefix}.{key}" if prefix else key, value, out)
    elif isinstance(data, (int, float, str, bool)) and prefix:
        out.append((prefix, str(data)))


def plot(topic: str, curve: dict[str, Any]) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is missing (pip install -e '.[bench]'): no plots", file=sys.stderr)
        return None
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=100)
    series = curve.get("series") or {curve.get("y_label", topic): list(zip(curve["x"], curve["y"]))}
    for name, points in series.items():
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", label=name)
    ax.set_xlabel(curve.get("x_label", "x"))
    ax.set_ylabel(curve.get("y_label", "y"))
    ax.set_title(topic)
    ax.grid(True, alpha=0.3)
    if len(series) > 1:
        ax.legend()
    fig.tight_layout()
    path = RESULTS / f"{topic}.png"
    fig.savefig(path)
    plt.close(fig)
    return path


def main() -> None:
    results = {p.stem: json.loads(p.read_text()) for p in sorted(RESULTS.glob("*.json"))}
    lines = ["# Bench results", "", "Written by `bench/run` (bench/common/report.py); medians, with min – max "
             "and the number of runs. Each topic's JSON has every figure and its environment.", "",
             "## Targets (issue 15)", "",
             "| topic | figure | target | measured | same-run limit (ratio) | met |", "|---|---|---|---|---|---|"]
    for topic, path, target, unit, how, limit_path, limit_name in TARGETS:
        value = _get(results.get(topic), path)
        limit = _get(results.get(topic), limit_path) if limit_path else None
        if isinstance(limit, (int, float)) and isinstance(value, (int, float)) and limit:
            bound = f"{limit} {unit}, {limit_name} ({value / limit:.2f}×)"
        else:
            bound = limit_name or "–"
        if value is None:
            lines.append(f"| {topic} | {path} | {how} {target} {unit} | not measured | {bound} | – |")
            continue
        met = value <= target if how == "<=" else value < target
        lines.append(f"| {topic} | {path} | {how} {target} {unit} | {value} {unit} | {bound} | {'met' if met else 'not met'} |")
    lines += ["", "## Every figure", "", "| topic | figure | value |", "|---|---|---|"]
    for topic, data in results.items():
        rows: list[tuple[str, str]] = []
        _rows("", data, rows)
        load = _get(data, "environment.loadavg")
        for name, value in rows:
            lines.append(f"| {topic} | {name} | {value} |")
        if load is not None:
            lines.append(f"| {topic} | load average at the end | {load} |")
    plots = []
    for topic, data in results.items():
        if isinstance(data, dict) and isinstance(data.get("curve"), dict):
            path = plot(topic, data["curve"])
            if path is not None:
                plots.append(path)
    if plots:
        lines += ["", "## Plots", ""] + [f"![{p.stem}]({p.name})" for p in plots]
    (RESULTS / "README.md").write_text("\n".join(lines) + "\n")
    print(f"wrote {RESULTS / 'README.md'} and {len(plots)} plot(s)")


if __name__ == "__main__":
    main()
