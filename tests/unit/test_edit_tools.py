"""Issue 37's file tools through the real tools (`run_tool` on a DiskToolHost): read_file's
continuation note over the caps, each edit_file fallback, the ambiguity and miss messages,
replace_all, several edits all or none, and write_file's refusal of a file changed since read."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from shiro_neko.agent.tools.base import ToolResult
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.files import DEFAULT_MAX_LINES, READ_BUDGET
from shiro_neko.agent.tools.registry import core_tools, run_tool

TOOLS = {t.name: t for t in core_tools()}


async def call(host: Any, name: str, args: dict[str, Any]) -> ToolResult:
    return await run_tool(TOOLS[name], host, args)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def host(ws: Path) -> DiskToolHost:
    return DiskToolHost(ws)


# --- read_file: the note survives every cap ---------------------------------------------------


async def test_read_file_over_the_character_cap_says_where_to_go_on(ws: Path, host: DiskToolHost) -> None:
    # 1,000 lines of 100 characters: far over the output cap, under the line cap.
    (ws / "big.py").write_text("".join(f"{i:04d} " + "x" * 95 + "\n" for i in range(1, 1001)))
    first = await call(host, "read_file", {"path": "big.py"})
    assert not first.is_error and len(first.output) <= READ_BUDGET + 200
    note = first.output.splitlines()[-1]
    last = int(first.output.splitlines()[-2].split("\t")[0])
    assert note == (f"[showing lines 1-{last} of 1000 (output limit of {READ_BUDGET:,} characters); "
                    f"pass start_line={last + 1} to read on]")
    # Following the notes reads every line exactly once.
    seen, start = [], 1
    while True:
        page = await call(host, "read_file", {"path": "big.py", "start_line": start})
        body = [line for line in page.output.splitlines() if not line.startswith("[showing")]
        seen += [int(line.split("\t")[0]) for line in body]
        if not page.output.endswith("to read on]"):
            break
        start = int(page.output.rsplit("start_line=", 1)[1].split()[0])
    assert seen == list(range(1, 1001))


async def test_read_file_line_cap_and_long_lines(ws: Path, host: DiskToolHost) -> None:
    (ws / "many.txt").write_text("".join(f"l{i}\n" for i in range(1, 3001)))
    page = await call(host, "read_file", {"path": "many.txt"})
    assert page.output.endswith(f"[showing lines 1-{DEFAULT_MAX_LINES} of 3000; pass start_line={DEFAULT_MAX_LINES + 1} to read on]")
    (ws / "min.js").write_text("a" * 50_000 + "\nshort\n" + "b" * 50_000 + "\n")
    cut = await call(host, "read_file", {"path": "min.js"})
    assert "[line cut: 50,000 characters]" in cut.output and "    2\tshort" in cut.output
    assert "    3\t" in cut.output and not cut.output.endswith("to read on]")


# --- edit_file: each fallback, and the guarantees around them ----------------------------------


async def edit(host: DiskToolHost, path: str, **args: Any) -> ToolResult:
    return await call(host, "edit_file", {"path": path, **args})


async def test_exact_and_crlf(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_bytes(b"def f():\r\n    return 1\r\n")
    done = await edit(host, "a.py", old_text="def f():\n    return 1", new_text="def f():\n    return 2")
    assert not done.is_error and "matched" not in done.output
    assert (ws / "a.py").read_bytes() == b"def f():\r\n    return 2\r\n"


async def test_line_number_prefixes_are_stripped_only_when_consecutive(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    done = await edit(host, "a.py", old_text="    2\tb = 2\n    3\tc = 3", new_text="b = 20\nc = 30")
    assert "without the line-number prefixes" in done.output
    assert (ws / "a.py").read_text() == "a = 1\nb = 20\nc = 30\n"
    (ws / "a.py").write_text("a = 1\nb = 2\nc = 3\n")
    refused = await edit(host, "a.py", old_text="    1\ta = 1\n    3\tc = 3", new_text="x")
    assert refused.is_error and (ws / "a.py").read_text() == "a = 1\nb = 2\nc = 3\n"


async def test_trailing_whitespace_is_ignored(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("x = 1   \ny = 2\t\n")
    done = await edit(host, "a.py", old_text="x = 1\ny = 2", new_text="x = 1\ny = 3")
    assert "ignoring trailing whitespace" in done.output
    assert (ws / "a.py").read_text() == "x = 1\ny = 3\n"


async def test_lost_indentation_is_restored_the_way_the_file_indents(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("class A:\n    def f(self):\n        if x:\n            return 1\n        return 2\n")
    done = await edit(host, "a.py", old_text="if x:\n    return 1", new_text="if x:\n    y()\n    return 1\nelse:\n    pass")
    assert "ignoring indentation" in done.output
    assert (ws / "a.py").read_text() == (
        "class A:\n    def f(self):\n        if x:\n            y()\n            return 1\n"
        "        else:\n            pass\n        return 2\n"
    )


async def test_tabs_written_as_spaces_become_tabs(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.go").write_text("func f() {\n\tif x {\n\t\treturn\n\t}\n}\n")
    done = await edit(host, "a.go", old_text="    if x {\n        return\n    }",
                      new_text="    if x {\n        log()\n        return\n    }\n    for {\n    }")
    assert not done.is_error, done.output
    assert (ws / "a.go").read_text() == "func f() {\n\tif x {\n\t\tlog()\n\t\treturn\n\t}\n\tfor {\n\t}\n}\n"


async def test_typographic_quotes_and_dashes(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text('msg = "it\'s -- fine"\n')
    done = await edit(host, "a.py", old_text="msg = \u201cit\u2019s \u2014- fine\u201d", new_text='msg = "ok"')
    assert "typographic" in done.output
    assert (ws / "a.py").read_text() == 'msg = "ok"\n'


async def test_inconsistent_indentation_is_not_guessed(ws: Path, host: DiskToolHost) -> None:
    # The same words, but the snippet's nesting differs from the file's: no match, nothing written.
    original = "if a:\n    b()\nc()\n"
    (ws / "a.py").write_text(original)
    refused = await edit(host, "a.py", old_text="if a:\nb()\n    c()", new_text="x")
    assert refused.is_error and (ws / "a.py").read_text() == original


async def test_ambiguity_names_every_line_at_every_stage(ws: Path, host: DiskToolHost) -> None:
    original = "def f():\n    x = 1\n\ndef g():\n    x = 1\n\nx = 1\n"
    (ws / "a.py").write_text(original)
    exact = await edit(host, "a.py", old_text="x = 1", new_text="x = 2")
    assert exact.is_error and "found 3 times" in exact.output and "lines 2, 5, 7" in exact.output
    # At the indentation stage too: two places once indentation is ignored, none exactly.
    (ws / "b.py").write_text("def f():\n    y = 1\n    z = 2\ndef g():\n\ty = 1\n\tz = 2\n")
    loose = await edit(host, "b.py", old_text="y = 1\nz = 2", new_text="y = 2")
    assert loose.is_error and "ignoring indentation" in loose.output and "lines 2, 5" in loose.output
    assert (ws / "a.py").read_text() == original


async def test_a_miss_shows_the_closest_lines(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("import os\n\ndef compute_total(items):\n    return sum(items)\n")
    miss = await edit(host, "a.py", old_text="def compute_totals(items):\n    return sum(item)", new_text="pass")
    assert miss.is_error and "not found" in miss.output
    assert "closest lines" in miss.output and "    3\tdef compute_total(items):" in miss.output


async def test_replace_all(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("foo(1)\nbar(foo)\nfoo(2)\n")
    done = await edit(host, "a.py", old_text="foo", new_text="baz", replace_all=True)
    assert "3 places" in done.output
    assert (ws / "a.py").read_text() == "baz(1)\nbar(baz)\nbaz(2)\n"


async def test_several_edits_all_or_none(ws: Path, host: DiskToolHost) -> None:
    original = "a = 1\nb = 2\nc = 3\n"
    (ws / "a.py").write_text(original)
    bad = await edit(host, "a.py", edits=[{"old_text": "a = 1", "new_text": "a = 10"},
                                          {"old_text": "zzz", "new_text": "q"}])
    assert bad.is_error and "edit 2 of 2" in bad.output and "unchanged" in bad.output
    assert (ws / "a.py").read_text() == original
    good = await edit(host, "a.py", edits=[{"old_text": "a = 1", "new_text": "a = 10"},
                                           {"old_text": "c = 3", "new_text": "c = 30"}])
    assert not good.is_error and (ws / "a.py").read_text() == "a = 10\nb = 2\nc = 30\n"
    both = await edit(host, "a.py", old_text="b", new_text="x", edits=[{"old_text": "a", "new_text": "y"}])
    assert both.is_error and "not both" in both.output


async def test_deleting_whole_lines_takes_their_line_break(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("import os\nimport sys\nprint(1)\n")
    await edit(host, "a.py", old_text="import sys", new_text="")
    assert (ws / "a.py").read_text() == "import os\nprint(1)\n"


# --- write_file: no silent overwrite of a change the agent has not seen ------------------------


async def test_write_refuses_a_file_changed_since_read(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("v1\n")
    await call(host, "read_file", {"path": "a.py"})
    (ws / "a.py").write_text("v1 and the user's change\n")  # the user edits it meanwhile
    refused = await call(host, "write_file", {"path": "a.py", "content": "agent\n"})
    assert refused.is_error and "read it again" in refused.output
    assert (ws / "a.py").read_text() == "v1 and the user's change\n"
    await call(host, "read_file", {"path": "a.py"})
    done = await call(host, "write_file", {"path": "a.py", "content": "agent\n"})
    assert not done.is_error and (ws / "a.py").read_text() == "agent\n"
    # Its own write counts as seen: writing again is fine; a new file is always fine.
    assert not (await call(host, "write_file", {"path": "a.py", "content": "agent 2\n"})).is_error
    assert not (await call(host, "write_file", {"path": "new.py", "content": "x\n"})).is_error


async def test_stale_write_is_per_session(ws: Path) -> None:
    (ws / "a.py").write_text("v1\n")
    reader, other = DiskToolHost(ws), DiskToolHost(ws)
    await call(reader, "read_file", {"path": "a.py"})
    await call(other, "write_file", {"path": "a.py", "content": "other session\n"})
    refused = await call(reader, "write_file", {"path": "a.py", "content": "mine\n"})
    assert refused.is_error and (ws / "a.py").read_text() == "other session\n"


# --- grep: context, files, count, paging -------------------------------------------------------


async def test_grep_modes_and_paging(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("one\nneedle 1\ntwo\nthree\nfour\nneedle 2\nfive\n")
    (ws / "b.py").write_text("needle 3\n")
    ctx = await call(host, "grep", {"pattern": "needle", "path": "a.py", "context": 1})
    assert ctx.output.splitlines() == [
        "a.py-1- one", "a.py:2: needle 1", "a.py-3- two", "--", "a.py-5- four", "a.py:6: needle 2", "a.py-7- five",
    ]
    after = await call(host, "grep", {"pattern": "needle", "path": "a.py", "after": 4})
    assert after.output.splitlines()[:6] == ["a.py:2: needle 1", "a.py-3- two", "a.py-4- three", "a.py-5- four",
                                             "a.py:6: needle 2", "a.py-7- five"]
    files = await call(host, "grep", {"pattern": "needle", "output_mode": "files"})
    assert files.output.splitlines() == ["a.py", "b.py"]
    count = await call(host, "grep", {"pattern": "needle", "output_mode": "count"})
    assert count.output.splitlines() == ["a.py: 2", "b.py: 1"]
    first = await call(host, "grep", {"pattern": "needle", "limit": 2})
    assert first.output.splitlines()[:2] == ["a.py:2: needle 1", "a.py:6: needle 2"]
    assert "[showing matches 1-2 of 3; pass offset=2 to continue" in first.output
    rest = await call(host, "grep", {"pattern": "needle", "limit": 2, "offset": 2})
    assert rest.output == "b.py:1: needle 3"
    past = await call(host, "grep", {"pattern": "needle", "offset": 10})
    assert past.is_error is False and "past the last" in past.output


# --- apply_patch --------------------------------------------------------------------------------

from shiro_neko.agent.tools.apply_patch import APPLY_PATCH  # noqa: E402


async def patch(host: DiskToolHost, text: str) -> ToolResult:
    return await run_tool(APPLY_PATCH, host, {"input": text})


async def test_apply_patch_add_update_delete_move(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("def f():\n    return 1\n\n\ndef g():\n    return 2\n")
    (ws / "gone.py").write_text("x\n")
    (ws / "old.py").write_text("keep = 1\nchange = 2\n")
    done = await patch(host, "\n".join([
        "*** Begin Patch",
        "*** Add File: pkg/new.py",
        "+print('new')",
        "*** Update File: a.py",
        "@@ def g():",
        " def g():",
        "-    return 2",
        "+    return 3",
        "*** Delete File: gone.py",
        "*** Update File: old.py",
        "*** Move to: moved.py",
        "@@",
        " keep = 1",
        "-change = 2",
        "+change = 20",
        "*** End Patch",
    ]))
    assert not done.is_error, done.output
    assert (ws / "pkg/new.py").read_text() == "print('new')\n"
    assert (ws / "a.py").read_text() == "def f():\n    return 1\n\n\ndef g():\n    return 3\n"
    assert not (ws / "gone.py").exists() and not (ws / "old.py").exists()
    assert (ws / "moved.py").read_text() == "keep = 1\nchange = 20\n"


async def test_a_bad_patch_writes_nothing(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")
    bad = await patch(host, "\n".join([
        "*** Begin Patch",
        "*** Update File: a.py", "@@", "-a = 1", "+a = 2",
        "*** Update File: b.py", "@@", "-b = 404", "+b = 2",
        "*** Add File: c.py", "+c",
        "*** End Patch",
    ]))
    assert bad.is_error and "'b.py', chunk 1" in bad.output and "not found" in bad.output
    assert (ws / "a.py").read_text() == "a = 1\n" and (ws / "b.py").read_text() == "b = 1\n"
    assert not (ws / "c.py").exists()
    unframed = await patch(host, "*** Update File: a.py\n-a = 1\n+a = 2\n")
    assert unframed.is_error and "*** Begin Patch" in unframed.output
    escape = await patch(host, "*** Begin Patch\n*** Add File: ../out.py\n+x\n*** End Patch")
    assert escape.is_error and not (ws.parent / "out.py").exists()
    git = await patch(host, "*** Begin Patch\n*** Add File: .git/hooks/pre-commit\n+evil\n*** End Patch")
    assert git.is_error and "git metadata" in git.output and not (ws / ".git").exists()
    exists = await patch(host, "*** Begin Patch\n*** Add File: a.py\n+x\n*** End Patch")
    assert exists.is_error and "already exists" in exists.output and (ws / "a.py").read_text() == "a = 1\n"


async def test_mixed_tab_and_space_indentation_is_not_guessed(ws: Path, host: DiskToolHost) -> None:
    # From the replay (bench/edit_replay.py): a doc comment indented "\t" and "\t ", sent with
    # spaces; a new line indented 6 spaces has no translation, and was once written as 3 tabs.
    original = "x {\n\tNotes:\n\t - a\n}\n"
    (ws / "a.ts").write_text(original)
    refused = await edit(host, "a.ts", old_text="    Notes:\n     - a", new_text="    Notes:\n      - b\n     - a")
    assert refused.is_error and "cannot be translated" in refused.output
    assert (ws / "a.ts").read_text() == original


async def test_lost_indentation_shifts_an_indentation_off_the_levels(ws: Path, host: DiskToolHost) -> None:
    # From the replay (bench/edit_replay.py, psf/requests models.py): a method sent without its
    # class indentation; new_text adds a docstring line aligned at 7 spaces (3 in the snippet),
    # which no indentation level gives: the snippet's whole indentation was lost, so the same 4
    # spaces go in front of it too.
    original = "class R:\n    def json(self):\n        \"\"\"Decode.\n        \"\"\"\n        return 1\n"
    (ws / "r.py").write_text(original)
    done = await edit(host, "r.py", old_text='def json(self):\n    """Decode.\n    """',
                      new_text='def json(self):\n    """Decode.\n\n       (aligned)\n    """')
    assert not done.is_error, done.output
    assert (ws / "r.py").read_text() == (
        "class R:\n    def json(self):\n        \"\"\"Decode.\n\n           (aligned)\n        \"\"\"\n        return 1\n")
