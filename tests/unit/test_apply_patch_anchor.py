"""apply_patch's `@@ <line>` anchor and the slips it forgives (issue 37), through the real tool
(`run_tool` on a DiskToolHost): the anchor makes text repeated elsewhere in the file unambiguous
while "exactly one match" still holds inside its scope; line-number prefixes copied from read_file
never reach the file; and the matcher's `starts` (edit_match.plan_edit) on its own."""

from __future__ import annotations

from pathlib import Path

import pytest

from shiro_neko.agent.tools.apply_patch import APPLY_PATCH
from shiro_neko.agent.tools.base import ToolError, ToolResult
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.edit_match import plan_edit
from shiro_neko.agent.tools.registry import run_tool

# The same three lines in two functions (git's 3 lines of context are not always unique).
TWICE = (
    "def a():\n"
    "    x = 1\n"
    "    return x\n"
    "\n"
    "\n"
    "def b():\n"
    "    x = 1\n"
    "    return x\n"
)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "m.py").write_text(TWICE)
    return root


async def patch(ws: Path, *body: str) -> ToolResult:
    text = "\n".join(("*** Begin Patch", "*** Update File: m.py", *body, "*** End Patch"))
    return await run_tool(APPLY_PATCH, DiskToolHost(ws), {"input": text})


@pytest.mark.parametrize("anchor", ["@@ def b():", "@@ def b", "@@ -6,3 +6,3 @@ def b():", "@@     def b():  "])
async def test_the_anchor_picks_the_function_the_text_repeats_in(ws, anchor):
    # Without the anchor this is ambiguous (lines 2 and 7); with it, only b's copy is in scope.
    result = await patch(ws, anchor, "     x = 1", "-    return x", "+    return x + 1")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == TWICE.replace("    return x\n", "    return x + 1\n").replace(
        "    return x + 1\n", "    return x\n", 1)


async def test_the_first_function_by_its_anchor(ws):
    result = await patch(ws, "@@ def a():", "     x = 1", "-    return x", "+    return 0")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == TWICE.replace("    return x\n", "    return 0\n", 1)


async def test_without_an_anchor_repeated_text_is_refused_naming_both_places_and_the_anchor(ws):
    result = await patch(ws, "@@", "     x = 1", "-    return x", "+    return 0")
    assert result.is_error
    assert "lines 2, 7" in result.output and "'@@ <the header line" in result.output
    assert "replace_all" not in result.output  # edit_file's advice, not a patch's
    assert (ws / "m.py").read_text() == TWICE


async def test_an_anchor_that_occurs_twice_still_needs_one_match(ws):
    # Both `def` lines start with "def" and both scopes hold the text: still ambiguous, refused.
    result = await patch(ws, "@@ def", "     x = 1", "-    return x", "+    return 0")
    assert result.is_error and "lines 2, 7" in result.output and "(within '@@ def')" in result.output
    assert (ws / "m.py").read_text() == TWICE


async def test_text_outside_the_anchor_scope_is_found_as_edit_file_would(ws):
    # The anchor names a() but the (unique) text is in b(): the anchor only narrows, never refuses
    # what the whole file places once.
    result = await patch(ws, "@@ def a():", "-def b():", "+def c():")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == TWICE.replace("def b():", "def c():")


async def test_nested_anchors_and_lost_indentation_in_scope(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    source = ("class A:\n    def f(self):\n        x = 1\n        return x\n\n\n"
              "class B:\n    def f(self):\n        x = 1\n        return x\n")
    (ws / "m.py").write_text(source)
    # The model lost the snippet's indentation; the anchors say which f.
    result = await patch(ws, "@@ class B:", "@@ def f(self):", " x = 1", "-return x", "+return -x")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == source[::-1].replace("x nruter", "x- nruter", 1)[::-1]


async def test_read_file_prefixes_on_context_lines_are_never_written(ws):
    # Copied from read_file: the context and removed lines carry "<number><TAB>", the added line
    # does not. Before, the context line went into the file with its number.
    result = await patch(ws, "@@ def b():", "    7\t    x = 1", "-    8\t    return x", "+    return 2")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == TWICE[::-1].replace("x nruter", "2 nruter", 1)[::-1]


def test_plan_edit_starts_limits_every_stage_to_whole_lines_in_scope():
    text = "ax = 1\nx = 1\n    x = 1\n"
    # Exact stage: "x = 1\n" also ends line 1 ("ax = 1"): not a whole line, not a start in scope.
    assert plan_edit(text, "x = 1\n", "y\n", shown="f", starts=frozenset({0, 1})).text == "ax = 1\ny\n    x = 1\n"
    # Indentation stage, limited to line 3.
    assert plan_edit(text, "x = 1\n", "y\n", shown="f", starts=frozenset({2})).text == "ax = 1\nx = 1\n    y\n"
    with pytest.raises(ToolError, match="found 2 times"):
        plan_edit("x = 1\nx = 1\nx = 1\n", "x = 1\n", "y\n", shown="f", starts=frozenset({1, 2}))
    with pytest.raises(ToolError, match="not found"):
        plan_edit(text, "x = 1\n", "y\n", shown="f", starts=frozenset())


# -- the patch's order decides between repeated places (as Codex reads its own format) ----------

async def test_a_later_chunk_is_looked_for_after_the_one_before_it(ws):
    # The second chunk's lines occur in a() and b(); after the first chunk (in a) only b's remain.
    result = await patch(ws, "@@", "-def a():", "+def a(y):", "     x = 1", "@@", "     x = 1", "-    return x", "+    return -x")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == TWICE.replace("def a():", "def a(y):").replace("    return x\n", "    return -x\n").replace(
        "    return -x\n", "    return x\n", 1)


async def test_a_later_chunk_still_repeated_after_the_one_before_is_refused(ws):
    (ws / "m.py").write_text("import os\n\n" + TWICE)
    result = await patch(ws, "@@", " import os", "+import sys", "@@", "     x = 1", "-    return x", "+    return 0")
    assert result.is_error and "chunk 2: old_text found 2 times" in result.output, result.output
    assert (ws / "m.py").read_text() == "import os\n\n" + TWICE


async def test_an_end_of_file_chunk_is_the_place_that_ends_the_file(ws):
    result = await patch(ws, "@@", "     x = 1", "-    return x", "+    return x * 2", "*** End of File")
    assert not result.is_error, result.output
    assert (ws / "m.py").read_text() == TWICE[: TWICE.rindex("    return x\n")] + "    return x * 2\n"
