"""edit_file and apply_patch replayed on real hunks from public repositories' history, as a model
would send them.

Each hunk of `git log -p` (3 lines of context) becomes, on the file's pre-image, one call of each
track (`TRACKS`):
- edit_file: old_text = the hunk's context and removed lines, new_text = its context and added
  lines;
- apply_patch: the patch a model trained on Codex's format writes for it (`*** Begin Patch`,
  `*** Update File: path`, `@@ <line>`, the ' ' / '-' / '+' lines, `*** End Patch`), the `@@`
  anchor being the line git names in the hunk header (its section heading: the function or class
  the hunk is in), copied whole from the file as the model sees it; a bare `@@` when git names none;
- apply_patch_without_anchor: the same patch with a bare `@@` always (what the anchor is worth).
The call runs through the real tool (tools/registry.py `run_tool` with `EDIT_FILE` or
`APPLY_PATCH` on a DiskToolHost in a temporary folder) and the file it leaves is compared with the
real post-image of that hunk.

Variants (issue 37), each the slip a model makes:
- exact: copied exactly;
- crlf: the file has CRLF line ends, the model sends bare \\n (read_file shows none);
- prefixes: old_text still carries read_file's `<number><TAB>` prefixes (in a patch: its context
  and removed lines, copied from read_file, carry them after the ' ' / '-'; added lines do not);
- lost_indent: the snippet's common indentation is lost (old and new), only hunks that have one;
- tabs_as_spaces: leading tabs written as 4 spaces (old and new), only hunks with tab indentation;
- changed_only: the context lines around the change left out (hunks that remove or change lines).
The anchor line takes each variant's slip too (it is compared without its indentation anyway).

Outcomes: right (the file equals the post-image), refused (an error the model reads; the file
untouched) and wrong (the tool said it edited, but the file differs: a silent wrong edit).

Some hunks cannot be placed by any matcher: their context and removed lines occur more than once
in the file even copied exactly (git's 3 lines of context are not always unique), so the exact
variant refuses them too, naming every occurrence. Each variant is also reported over the hunks
whose exact text is unique (`unique`: what the slip itself costs), besides over all of them.

Run: python bench/edit_replay.py REPO_GIT_DIR... [--hunks-per-repo 600] [--out PATH]
The repositories are git directories (bare ones too); nothing of them is stored here.
Writes bench/results/edit_replay.json (or PATH).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from server.agent.tools.apply_patch import APPLY_PATCH  # noqa: E402
from server.agent.tools.base import Tool  # noqa: E402
from server.agent.tools.disk_host import DiskToolHost  # noqa: E402
from server.agent.tools.files import EDIT_FILE  # noqa: E402
from server.agent.tools.registry import run_tool  # noqa: E402

EXTENSIONS = (".py", ".go", ".ts", ".tsx")
TRACKS = ("edit_file", "apply_patch", "apply_patch_without_anchor")
VARIANTS = ("exact", "crlf", "prefixes", "lost_indent", "tabs_as_spaces", "changed_only")
TARGETS = {"exact": 97.0, "crlf": 97.0, "prefixes": 97.0, "lost_indent": 97.0, "tabs_as_spaces": 90.0,
           "changed_only": 85.0}


@dataclass
class Hunk:
    repo: str
    commit: str
    path: str
    pre_image: str  # the whole file before the commit
    start: int  # 0-based line of the hunk in the pre-image
    old: list[str]  # context and removed lines
    new: list[str]  # context and added lines
    rows: list[tuple[str, str]]  # the hunk's lines: (' ', '-' or '+', the line)
    anchor: str  # the pre-image line git names in the hunk header ('' when none)


def git(repo: str, *args: str) -> str:
    return subprocess.run(["git", "--git-dir", repo, *args], capture_output=True, check=True).stdout.decode(
        "utf-8", "replace")


def _parse_hunks(repo: str, commit: str, patch: str) -> list[Hunk]:
    hunks: list[Hunk] = []
    path: str | None = None
    pre: list[str] | None = None
    pre_text = ""
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("diff --git "):
            path, pre = None, None
        elif line.startswith("--- "):
            path = line[6:] if line.startswith("--- a/") else None
        elif line.startswith("+++ ") and path is not None:
            if line == "+++ /dev/null" or not path.endswith(EXTENSIONS):
                path = None
                i += 1
                continue
            try:
                pre_text = git(repo, "show", f"{commit}^:{path}")
            except subprocess.CalledProcessError:
                path = None
                i += 1
                continue
            pre = None if "\r" in pre_text or "\x00" in pre_text else pre_text.split("\n")
        elif line.startswith("@@ ") and path is not None and pre is not None:
            start = int(line.split()[1].lstrip("-").split(",")[0])
            heading = line.split(" @@", 1)[1].strip() if " @@ " in line else ""
            old: list[str] = []
            new: list[str] = []
            rows: list[tuple[str, str]] = []
            bad = False
            i += 1
            while i < len(lines) and lines[i][:1] in (" ", "-", "+", "\\"):
                body = lines[i]
                if not body.startswith("\\"):
                    rows.append((body[:1], body[1:]))
                if body.startswith("\\"):
                    bad = True  # "\ No newline at end of file": leave these out
                elif body.startswith(" "):
                    old.append(body[1:])
                    new.append(body[1:])
                elif body.startswith("-"):
                    old.append(body[1:])
                else:
                    new.append(body[1:])
                i += 1
            begin = max(start - 1, 0) if old else start
            if not bad and old and pre[begin : begin + len(old)] == old:
                hunks.append(Hunk(repo, commit, path, pre_text, begin, old, new, rows,
                                  _heading_line(pre, begin, heading)))
            continue
        i += 1
    return hunks


def _heading_line(pre: list[str], begin: int, heading: str) -> str:
    """The whole line git's section heading names (git cuts it at 80 bytes): the nearest line
    before the hunk that starts with it, as the model would copy it after '@@ '."""
    if not heading:
        return ""
    for k in range(begin - 1, -1, -1):
        if pre[k].strip().startswith(heading):
            return pre[k].strip()
    return ""


def collect(repo: str, limit: int) -> list[Hunk]:
    commits = git(repo, "log", "--no-merges", "--format=%H", "-n", "3000", "HEAD").split()
    hunks: list[Hunk] = []
    for commit in commits:
        if len(hunks) >= limit:
            break
        try:
            patch = git(repo, "show", "--format=", "-U3", "--no-color", "--no-ext-diff", "--no-renames", commit)
        except subprocess.CalledProcessError:
            continue
        if len(patch) > 400_000:
            continue  # vendored or generated bulk changes
        hunks += _parse_hunks(repo, commit, patch)[: limit - len(hunks)]
    return hunks


def expected(hunk: Hunk) -> str:
    lines = hunk.pre_image.split("\n")
    return "\n".join(lines[: hunk.start] + hunk.new + lines[hunk.start + len(hunk.old) :])


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip(" \t"))]


def _common_indent(lines: list[str]) -> str:
    indents = [_indent(line) for line in lines if line.strip()]
    if not indents:
        return ""
    common = indents[0]
    for ind in indents[1:]:
        while not ind.startswith(common):
            common = common[:-1]
    return common


def _detabbed(line: str) -> str:
    ind = _indent(line)
    return ind.replace("\t", "    ") + line[len(ind) :]


# Each variant: (file text, old_text, new_text, expected file) or None when it does not apply.
Case = tuple[str, str, str, str]


def variant(name: str, hunk: Hunk) -> Case | None:
    want = expected(hunk)
    old, new = "\n".join(hunk.old), "\n".join(hunk.new)
    if name == "exact":
        return hunk.pre_image, old, new, want
    if name == "crlf":
        return hunk.pre_image.replace("\n", "\r\n"), old, new, want.replace("\n", "\r\n")
    if name == "prefixes":
        numbered = "\n".join(f"{hunk.start + 1 + k:>5}\t{line}" for k, line in enumerate(hunk.old))
        return hunk.pre_image, numbered, new, want
    if name == "lost_indent":
        # Over old and new: a new line less indented than the snippet cannot be written without
        # indentation at all, so such hunks have no "lost indentation" form.
        common = _common_indent(hunk.old + hunk.new)
        if not common:
            return None
        cut = [line[len(common) :] if line.startswith(common) else line.lstrip(" \t") for line in hunk.old]
        cut_new = [line[len(common) :] if line.startswith(common) else line.lstrip(" \t") for line in hunk.new]
        return hunk.pre_image, "\n".join(cut), "\n".join(cut_new), want
    if name == "tabs_as_spaces":
        if not any(line.startswith("\t") for line in hunk.old):
            return None
        return hunk.pre_image, "\n".join(map(_detabbed, hunk.old)), "\n".join(map(_detabbed, hunk.new)), want
    if name == "changed_only":
        head = 0
        while head < min(len(hunk.old), len(hunk.new)) and hunk.old[head] == hunk.new[head]:
            head += 1
        tail = 0
        while (tail < min(len(hunk.old), len(hunk.new)) - head
               and hunk.old[len(hunk.old) - 1 - tail] == hunk.new[len(hunk.new) - 1 - tail]):
            tail += 1
        old_core = hunk.old[head : len(hunk.old) - tail]
        if not old_core or not "".join(old_core).strip():
            return None  # a pure insertion has no changed old lines to name
        new_core = hunk.new[head : len(hunk.new) - tail]
        # As whole lines, each with its line break: "a\n" alone could not say that a blank line
        # after it goes too.
        old_text = "\n".join(old_core) + "\n"
        new_text = "\n".join(new_core) + "\n" if new_core else ""
        return hunk.pre_image, old_text, new_text, want
    raise ValueError(name)


def _patch_rows(name: str, hunk: Hunk) -> list[tuple[str, str]] | None:
    """The hunk's lines as a model slipping this way writes them in a patch (None: not this hunk)."""
    rows = list(hunk.rows)
    if name in ("exact", "crlf"):
        return rows
    if name == "prefixes":
        out, number = [], hunk.start + 1
        for mark, line in rows:
            if mark == "+":
                out.append((mark, line))
            else:
                out.append((mark, f"{number:>5}\t{line}"))
                number += 1
        return out
    if name == "lost_indent":
        common = _common_indent(hunk.old + hunk.new)
        if not common:
            return None
        return [(m, line[len(common) :] if line.startswith(common) else line.lstrip(" \t")) for m, line in rows]
    if name == "tabs_as_spaces":
        if not any(line.startswith("\t") for line in hunk.old):
            return None
        return [(m, _detabbed(line)) for m, line in rows]
    if name == "changed_only":
        changed = [k for k, (m, _) in enumerate(rows) if m != " "]
        core = rows[changed[0] : changed[-1] + 1]
        if not "".join(line for m, line in core if m == "-").strip():
            return None  # a pure insertion has no changed old lines to name
        return core
    raise ValueError(name)


def _changed_anchor(hunk: Hunk) -> str:
    """The anchor of the changed lines alone: what `git diff -U0` names for them, the nearest line
    before the first changed one that git's default section rule takes (a line starting with a
    letter, '_' or '$'), when the dropped context holds one; else the hunk's own heading. (The
    hunk's heading can name the function before the one the change is in: its first context
    lines may be the next function's header.)"""
    first = next(k for k, (m, _) in enumerate(hunk.rows) if m != " ")
    lines = hunk.pre_image.split("\n")
    for k in range(hunk.start + first - 1, hunk.start - 1, -1):
        if lines[k][:1].isalpha() or lines[k][:1] in ("_", "$"):
            return lines[k].strip()
    return hunk.anchor


def patch_case(name: str, hunk: Hunk, path: str, anchored: bool) -> Case | None:
    """(file text, the patch, unused, expected file) for the apply_patch tracks."""
    rows = _patch_rows(name, hunk)
    if rows is None:
        return None
    anchor = (_changed_anchor(hunk) if name == "changed_only" else hunk.anchor) if anchored else ""
    if anchor and name == "tabs_as_spaces":
        anchor = _detabbed(anchor)
    body = "\n".join(mark + line for mark, line in rows)
    patch = f"*** Begin Patch\n*** Update File: {path}\n@@{' ' + anchor if anchor else ''}\n{body}\n*** End Patch"
    want = expected(hunk)
    if name == "crlf":
        return hunk.pre_image.replace("\n", "\r\n"), patch, "", want.replace("\n", "\r\n")
    return hunk.pre_image, patch, "", want


def _call(track: str, v: str, hunk: Hunk, name: str) -> tuple[Case, Tool, dict[str, str]] | None:
    """The variant's case, and the tool call the track makes for it."""
    if track == "edit_file":
        case = variant(v, hunk)
        return None if case is None else (case, EDIT_FILE, {"path": name, "old_text": case[1], "new_text": case[2]})
    case = patch_case(v, hunk, name, anchored=track == "apply_patch")
    return None if case is None else (case, APPLY_PATCH, {"input": case[1]})


async def replay(hunks: list[Hunk], work: Path, on_wrong: Callable[[str, Hunk, str], None],
                 track: str) -> dict[str, Any]:
    host = DiskToolHost(work)
    results: dict[str, dict[str, int]] = {v: {"right": 0, "refused": 0, "wrong": 0} for v in VARIANTS}
    unique: dict[str, dict[str, int]] = {v: {"right": 0, "refused": 0, "wrong": 0} for v in VARIANTS}
    by_repo: dict[str, dict[str, dict[str, int]]] = {}
    for n, hunk in enumerate(hunks):
        name = f"f{n}{Path(hunk.path).suffix}"
        target = work / name
        copied = "\n".join(hunk.old)
        once = hunk.pre_image.count(copied) == 1 and hunk.pre_image.find(copied, hunk.pre_image.find(copied) + 1) < 0
        for v in VARIANTS:
            called = _call(track, v, hunk, name)
            if called is None:
                continue
            (before, _sent, _new, want), tool, args = called
            target.write_bytes(before.encode("utf-8"))
            result = await run_tool(tool, host, args)
            after = target.read_bytes().decode("utf-8")
            if result.is_error:
                outcome = "refused" if after == before else "wrong"
            else:
                outcome = "right" if after == want else "wrong"
            if outcome == "wrong":
                on_wrong(f"{track} {v}", hunk, result.output)
            results[v][outcome] += 1
            if once:
                unique[v][outcome] += 1
            repo_counts = by_repo.setdefault(Path(hunk.repo).parent.name, {}).setdefault(
                v, {"right": 0, "refused": 0, "wrong": 0})
            repo_counts[outcome] += 1
        target.unlink(missing_ok=True)
    summary: dict[str, Any] = {}
    for v, counts in results.items():
        total = sum(counts.values())
        right = 100.0 * counts["right"] / total if total else 0.0
        summary[v] = {**counts, "total": total, "right_pct": round(right, 2), "target_pct": TARGETS[v],
                      "meets_target": right >= TARGETS[v] and counts["wrong"] == 0}
        placeable = sum(unique[v].values())
        summary[v]["unique"] = {**unique[v], "total": placeable,
                                "right_pct": round(100.0 * unique[v]["right"] / placeable, 2) if placeable else 0.0}
    out: dict[str, Any] = {"variants": summary, "by_repository": by_repo}
    if track == "apply_patch":
        out["hunks_with_anchor"] = sum(1 for h in hunks if h.anchor)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("repos", nargs="+", help="git directories (bare ones too)")
    parser.add_argument("--hunks-per-repo", type=int, default=600)
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "edit_replay.json"))
    parser.add_argument("--show-wrong", type=int, default=5, help="print this many silent wrong edits")
    args = parser.parse_args()
    began = time.monotonic()
    hunks: list[Hunk] = []
    for repo in args.repos:
        got = collect(repo, args.hunks_per_repo)
        print(f"{repo}: {len(got)} hunks", file=sys.stderr)
        hunks += got
    shown = [0]

    def on_wrong(v: str, hunk: Hunk, output: str) -> None:
        if shown[0] < args.show_wrong:
            shown[0] += 1
            print(f"WRONG [{v}] {hunk.repo} {hunk.commit[:10]} {hunk.path}:{hunk.start + 1}: {output}", file=sys.stderr)

    report: dict[str, Any] = {"tracks": {}}
    for track in TRACKS:
        with tempfile.TemporaryDirectory() as tmp:
            report["tracks"][track] = asyncio.run(replay(hunks, Path(tmp), on_wrong, track))
    report.update({
        "hunks": len(hunks),
        "repositories": [Path(r).parent.name.replace("+", "/") for r in args.repos],
        "seconds": round(time.monotonic() - began, 1),
        "python": platform.python_version(),
    })
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    for (track, v), s in ((tv, s) for t, r in report["tracks"].items()
                          for tv, s in (((t, v), s) for v, s in r["variants"].items())):
        print(f"{track:26} {v:15} {s['right_pct']:6.2f}% right  {s['refused']:5} refused  {s['wrong']:3} wrong  "
              f"(of {s['total']}, target {s['target_pct']}%); {s['unique']['right_pct']:6.2f}% of the "
              f"{s['unique']['total']} whose exact text is unique")


if __name__ == "__main__":
    main()
