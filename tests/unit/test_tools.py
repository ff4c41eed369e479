"""The core tools against real files in a temporary workspace."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shiro_neko.agent.tools import search, shell
from shiro_neko.agent.tools.base import Tool, ToolError, ToolResult
from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.output_cap import cap_output
from shiro_neko.agent.tools.files import ReadFileArgs
from shiro_neko.agent.tools.registry import core_tools, parse_arguments, run_tool
from shiro_neko.agent.tools.search import ListFilesArgs
from shiro_neko.agent.tools.workspace_paths import resolve_workspace_path

TOOLS: dict[str, Tool] = {t.name: t for t in core_tools()}


class EditorHost(DiskToolHost):
    """A host with open buffers and a user who may reject edits."""

    def __init__(self, root: Path, buffers: dict[Path, str] | None = None, accept: bool = True) -> None:
        super().__init__(root)
        self.buffers = buffers or {}
        self.accept = accept
        self.applied: list[tuple[Path, str, bool]] = []

    def open_document_text(self, path: Path) -> str | None:
        return self.buffers.get(path)

    def open_documents(self) -> list[tuple[Path, str]]:
        return list(self.buffers.items())

    async def apply_text(self, path: Path, new_text: str, *, create: bool) -> bool:
        self.applied.append((path, new_text, create))
        if not self.accept:
            return False
        if path in self.buffers:
            self.buffers[path] = new_text
            return True
        return await super().apply_text(path, new_text, create=create)


async def call(host: Any, name: str, args: str | dict[str, Any]) -> ToolResult:
    return await run_tool(TOOLS[name], host, args)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


@pytest.fixture
def host(ws: Path) -> DiskToolHost:
    return DiskToolHost(ws)


# --- registry ---------------------------------------------------------------------------------


def test_core_tools_order_approvals_and_schemas() -> None:
    tools = core_tools()
    assert [t.name for t in tools] == ["read_file", "list_files", "grep", "edit_file", "write_file", "run_command"]
    assert {t.name: t.approval for t in tools} == {
        "read_file": None, "list_files": None, "grep": None,
        "edit_file": "edit", "write_file": "edit", "run_command": "command",
    }
    for tool in tools:
        params = tool.parameters
        assert params["type"] == "object" and params["additionalProperties"] is False
        assert set(params["required"]) <= set(params["properties"])
        assert len(tool.description) > 80


async def test_invalid_json_arguments(host: DiskToolHost) -> None:
    result = await call(host, "read_file", '{"path": "a.txt"')
    assert result.is_error and result.output.startswith("invalid JSON arguments: ")


async def test_argument_validation(host: DiskToolHost) -> None:
    missing = await call(host, "read_file", {})
    assert missing.is_error and "missing required argument 'path'" in missing.output
    wrong = await call(host, "read_file", {"path": 3})
    assert wrong.is_error and "'path' must be a string" in wrong.output
    unknown = await call(host, "read_file", '{"path": "a", "line": 3}')
    assert unknown.is_error and "unknown argument 'line'" in unknown.output
    not_object = await call(host, "grep", "[1, 2]")
    assert not_object.is_error and "must be a JSON object" in not_object.output
    too_long = await call(host, "run_command", {"command": "true", "timeout_seconds": 601})
    assert too_long.is_error and "at most 600" in too_long.output
    # The tool gets its Struct: null for an optional key means absent (UNSET); 2.0 is an integer
    assert parse_arguments(TOOLS["read_file"], '{"path": "a", "start_line": 2.0, "end_line": null}') == ReadFileArgs(
        path="a", start_line=2,
    )
    assert parse_arguments(TOOLS["list_files"], "") == ListFilesArgs()
    # bool is not an integer, as in JSON
    flag = await call(host, "run_command", {"command": "true", "timeout_seconds": True})
    assert flag.is_error and "'timeout_seconds' must be an integer, got true" in flag.output
    both = await call(host, "edit_file", {"x": 1, "y": 2})
    assert both.is_error and "unknown arguments 'x', 'y' for edit_file; it takes 'path', 'old_text', 'new_text'" in both.output


async def test_a_core_tool_receives_its_struct_and_an_mcp_tool_its_object() -> None:
    """The arguments are decoded once (tools/registry.py `run_tool`): a core tool's `run` gets its
    Struct, never a dict to check again; a tool without one (MCP) gets the JSON object, with the
    nulls of optional keys dropped, for its server's schema to judge."""
    seen: list[Any] = []

    async def run(host: Any, args: Any) -> ToolResult:
        seen.append(args)
        return ToolResult("ok")

    core = Tool(name="core", description="", arguments=ReadFileArgs, run=run)
    mcp = Tool(name="mcp", description="", parameters={"type": "object", "required": ["a"]}, run=run)
    await run_tool(core, None, '{"path": "a", "start_line": 3, "end_line": null}')  # type: ignore[arg-type]
    await run_tool(mcp, None, {"a": None, "b": None, "c": 1})  # type: ignore[arg-type]
    assert seen == [ReadFileArgs(path="a", start_line=3), {"a": None, "c": 1}]


async def test_nested_arguments_are_checked_from_the_same_struct() -> None:
    """todo_write's items: the schema the model sees and the check come from one Struct."""
    from shiro_neko.agent.tools.todo_tools import todo_tool

    seen: list[Any] = []
    tool = todo_tool(seen.append)
    items = tool.parameters["properties"]["todos"]["items"]
    assert items["properties"]["status"] == {
        "type": "string",
        "enum": ["pending", "in_progress", "completed", "blocked"],
        "description": items["properties"]["status"]["description"],
    }
    bad_status = await run_tool(tool, None, {"todos": [{"content": "a", "status": "done"}]})  # type: ignore[arg-type]
    assert bad_status.is_error and bad_status.output == (
        "argument 'todos[0].status' must be one of pending, in_progress, completed, blocked, got \"done\""
    )
    missing = await run_tool(tool, None, {"todos": [{"content": "a", "status": "pending"}, {"status": "pending"}]})  # type: ignore[arg-type]
    assert missing.is_error and "missing required argument 'todos[1].content' for todo_write" in missing.output
    extra = await run_tool(tool, None, '{"todos": [{"content": "a", "status": "pending", "priority": 1}]}')  # type: ignore[arg-type]
    assert extra.is_error and "unknown argument 'todos[0].priority'" in extra.output
    empty = await run_tool(tool, None, {"todos": [{"content": "", "status": "pending"}]})  # type: ignore[arg-type]
    assert empty.is_error and "'todos[0].content' must have at least 1 characters" in empty.output
    assert seen == []
    ok = await run_tool(tool, None, {"todos": [{"content": "a", "status": "in_progress", "note": None}]})  # type: ignore[arg-type]
    assert not ok.is_error and len(seen) == 1


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-10, 700) | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(["path", "todos", "content", "status", "note", "x"]), inner, max_size=3),
    max_leaves=12,
)
_FIELDS = st.sampled_from(["path", "start_line", "end_line", "pattern", "glob", "case_insensitive", "command", "timeout_seconds", "todos", "kind", "text"])


@settings(max_examples=150, deadline=None)
@given(args=st.dictionaries(_FIELDS, _JSON, max_size=4), name=st.sampled_from([*TOOLS, "todo_write"]))
def test_any_json_object_is_either_accepted_or_refused_in_a_sentence(args: dict[str, Any], name: str) -> None:
    """Whatever object the model sends, the check answers with arguments or a ToolError."""
    from shiro_neko.agent.tools.todo_tools import todo_tool

    tool = TOOLS.get(name) or todo_tool(lambda t: None)
    try:
        parsed = parse_arguments(tool, args)
    except ToolError as exc:
        assert str(exc) and "\n" not in str(exc)
    else:
        assert isinstance(parsed, tool.arguments)  # type: ignore[arg-type]
        assert set(msgspec.to_builtins(parsed)) <= set(tool.parameters["properties"])


def test_schemas_come_from_the_structs_as_providers_take_them() -> None:
    """What the model sees: no $ref or title (one self-contained object per tool), every core
    tool's unknown keys refused, and the schema checked by the JSON Schema library itself."""
    import json

    import jsonschema

    from shiro_neko.agent.tools.memory_tools import memory_tools
    from shiro_neko.agent.tools.stm_tool import short_term_memory_tool

    from shiro_neko.agent.tools.todo_tools import todo_tool

    tools = core_tools() + memory_tools(lambda: None) + [todo_tool(lambda t: None), short_term_memory_tool(lambda s, c: None)]  # type: ignore[arg-type, return-value]
    for tool in tools:
        text = json.dumps(tool.parameters)
        assert "$ref" not in text and "$defs" not in text and '"title"' not in text, tool.name
        assert tool.arguments is not None and tool.parameters["additionalProperties"] is False
        jsonschema.Draft202012Validator.check_schema(tool.parameters)
    read = TOOLS["read_file"].parameters
    assert read["required"] == ["path"] and read["properties"]["start_line"]["minimum"] == 1
    assert TOOLS["run_command"].parameters["properties"]["timeout_seconds"]["maximum"] == 600


# --- read_file --------------------------------------------------------------------------------


async def test_read_file_numbers_lines_and_ranges(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("".join(f"line {i}\n" for i in range(1, 21)))
    whole = await call(host, "read_file", {"path": "a.py"})
    assert not whole.is_error
    assert whole.output.splitlines()[0] == "    1\tline 1"
    assert whole.output.splitlines()[-1] == "   20\tline 20"
    part = await call(host, "read_file", {"path": "a.py", "start_line": 12, "end_line": 14})
    # A range short of the end says where the file goes on (issue 37).
    assert part.output == (
        "   12\tline 12\n   13\tline 13\n   14\tline 14\n[showing lines 12-14 of 20; pass start_line=15 to read on]"
    )
    tail = await call(host, "read_file", {"path": "a.py", "start_line": 19, "end_line": 99})
    assert tail.output == "   19\tline 19\n   20\tline 20"
    past = await call(host, "read_file", {"path": "a.py", "start_line": 21})
    assert past.is_error and "past the end" in past.output and "20 lines" in past.output
    backwards = await call(host, "read_file", {"path": "a.py", "start_line": 5, "end_line": 4})
    assert backwards.is_error


async def test_read_file_long_file_says_how_to_read_on(ws: Path, host: DiskToolHost) -> None:
    (ws / "big.txt").write_text("x\n" * 2500)
    result = await call(host, "read_file", {"path": "big.txt"})
    assert "showing lines 1-2000 of 2500" in result.output and "start_line=2001" in result.output


async def test_read_file_prefers_the_editor_buffer(ws: Path) -> None:
    (ws / "a.py").write_text("on disk\n")
    host = EditorHost(ws, {ws / "a.py": "in the buffer\nunsaved\n"})
    result = await call(host, "read_file", {"path": "a.py"})
    assert result.output == "    1\tin the buffer\n    2\tunsaved"


async def test_read_file_missing_binary_and_directory(ws: Path, host: DiskToolHost) -> None:
    (ws / "blob.bin").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    (ws / "d").mkdir()
    missing = await call(host, "read_file", {"path": "nope.txt"})
    assert missing.is_error and "not found" in missing.output
    binary = await call(host, "read_file", {"path": "blob.bin"})
    assert binary.is_error and "binary" in binary.output
    # Named as an image, it is one (issue 40: sent to the model, tests/lsp/test_images.py).
    (ws / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    image = await call(host, "read_file", {"path": "img.png"})
    assert not image.is_error and image.image is not None and image.image.media_type == "image/png"
    directory = await call(host, "read_file", {"path": "d"})
    assert directory.is_error and "directory" in directory.output


# --- edit_file / write_file -------------------------------------------------------------------


async def test_edit_file_requires_exactly_one_occurrence(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.py").write_text("x = 1\ny = 1\nx = 1\n")
    absent = await call(host, "edit_file", {"path": "a.py", "old_text": "z = 1", "new_text": "z = 2"})
    assert absent.is_error and "not found" in absent.output
    twice = await call(host, "edit_file", {"path": "a.py", "old_text": "x = 1", "new_text": "x = 2"})
    assert twice.is_error and "found 2 times" in twice.output and "more surrounding lines" in twice.output
    assert (ws / "a.py").read_text() == "x = 1\ny = 1\nx = 1\n"
    once = await call(host, "edit_file", {"path": "a.py", "old_text": "y = 1\nx = 1", "new_text": "y = 2\nx = 3"})
    assert not once.is_error and "lines 2-3" in once.output
    assert (ws / "a.py").read_text() == "x = 1\ny = 2\nx = 3\n"


async def test_edit_file_overlapping_matches_are_ambiguous(ws: Path, host: DiskToolHost) -> None:
    (ws / "a.txt").write_text("aaa")
    result = await call(host, "edit_file", {"path": "a.txt", "old_text": "aa", "new_text": "b"})
    assert result.is_error and "found 2 times" in result.output


async def test_edit_file_uses_the_buffer(ws: Path) -> None:
    path = ws / "a.py"
    path.write_text("old disk text\n")
    host = EditorHost(ws, {path: "buffer text\n"})
    result = await call(host, "edit_file", {"path": "a.py", "old_text": "buffer", "new_text": "edited"})
    assert not result.is_error
    assert host.applied == [(path, "edited text\n", False)]
    assert host.buffers[path] == "edited text\n" and path.read_text() == "old disk text\n"


async def test_edit_file_keeps_crlf(ws: Path, host: DiskToolHost) -> None:
    (ws / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await call(host, "edit_file", {"path": "w.txt", "old_text": "one\ntwo", "new_text": "1\n2"})
    assert not result.is_error
    assert (ws / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_write_file_creates_dirs_and_reports(ws: Path, host: DiskToolHost) -> None:
    created = await call(host, "write_file", {"path": "src/pkg/new.py", "content": "a\nb\n"})
    assert not created.is_error and created.output == "created 'src/pkg/new.py' (2 lines)"
    assert (ws / "src/pkg/new.py").read_text() == "a\nb\n"
    again = await call(host, "write_file", {"path": "src/pkg/new.py", "content": "c\n"})
    assert again.output == "overwrote 'src/pkg/new.py' (1 line)"
    assert [p.name for p in (ws / "src/pkg").iterdir()] == ["new.py"]  # no temp files left


async def test_write_keeps_file_mode(ws: Path, host: DiskToolHost) -> None:
    script = ws / "run.sh"
    script.write_text("echo 1\n")
    script.chmod(0o750)
    await call(host, "write_file", {"path": "run.sh", "content": "echo 2\n"})
    assert script.stat().st_mode & 0o777 == 0o750 and script.read_text() == "echo 2\n"


async def test_rejected_edits_are_errors_and_change_nothing(ws: Path) -> None:
    (ws / "a.txt").write_text("keep\n")
    host = EditorHost(ws, accept=False)
    edit = await call(host, "edit_file", {"path": "a.txt", "old_text": "keep", "new_text": "lose"})
    assert edit.is_error and "rejected" in edit.output
    write = await call(host, "write_file", {"path": "new/dir/b.txt", "content": "x"})
    assert write.is_error and "rejected" in write.output
    assert write_created_nothing(ws) and (ws / "a.txt").read_text() == "keep\n"
    assert host.applied[1][2] is True  # a new file is asked for with create=True


def write_created_nothing(ws: Path) -> bool:
    return sorted(p.name for p in ws.iterdir()) == ["a.txt"]


# --- workspace boundary -----------------------------------------------------------------------


async def test_dotdot_escape_refused(ws: Path, host: DiskToolHost) -> None:
    (ws.parent / "secret.txt").write_text("secret")
    result = await call(host, "read_file", {"path": "../secret.txt"})
    assert result.is_error
    assert result.output == (
        f"path '../secret.txt' is outside the workspace {ws}; file tools only work inside it"
    )
    sneaky = await call(host, "write_file", {"path": "sub/../../x.txt", "content": "x"})
    assert sneaky.is_error and "outside the workspace" in sneaky.output
    assert not (ws.parent / "x.txt").exists()


async def test_absolute_paths(ws: Path, host: DiskToolHost) -> None:
    (ws / "in.txt").write_text("inside\n")
    inside = await call(host, "read_file", {"path": str(ws / "in.txt")})
    assert inside.output == "    1\tinside"
    outside = await call(host, "read_file", {"path": "/etc/hostname"})
    assert outside.is_error and "outside the workspace" in outside.output
    home = await call(host, "list_files", {"path": "~/"})
    assert home.is_error and "outside the workspace" in home.output


async def test_symlinked_file_escape_refused(ws: Path, host: DiskToolHost) -> None:
    secret = ws.parent / "secret.txt"
    secret.write_text("secret")
    (ws / "link.txt").symlink_to(secret)
    read = await call(host, "read_file", {"path": "link.txt"})
    assert read.is_error and "symbolic link" in read.output and "outside the workspace" in read.output
    write = await call(host, "write_file", {"path": "link.txt", "content": "pwned"})
    assert write.is_error and secret.read_text() == "secret"
    # a dangling link to a file that does not exist yet is refused too
    (ws / "dangling").symlink_to(ws.parent / "new.txt")
    dangling = await call(host, "write_file", {"path": "dangling", "content": "x"})
    assert dangling.is_error and not (ws.parent / "new.txt").exists()
    # grep does not read through links out of the workspace either
    grep = await call(host, "grep", {"pattern": "secret"})
    assert "secret.txt" not in grep.output and "link.txt" not in grep.output


async def test_symlinked_dir_escape_refused(ws: Path, host: DiskToolHost) -> None:
    outside = ws.parent / "outside"
    outside.mkdir()
    (outside / "f.txt").write_text("x")
    (ws / "linked").symlink_to(outside, target_is_directory=True)
    for name, args in [
        ("read_file", {"path": "linked/f.txt"}),
        ("write_file", {"path": "linked/new.txt", "content": "x"}),
        ("list_files", {"path": "linked"}),
    ]:
        result = await call(host, name, args)
        assert result.is_error and "outside the workspace" in result.output, (name, result)
    assert not (outside / "new.txt").exists()


def test_links_inside_the_workspace_are_fine(ws: Path) -> None:
    (ws / "real").mkdir()
    (ws / "real" / "f.txt").write_text("x")
    (ws / "alias").symlink_to(ws / "real")
    assert resolve_workspace_path(ws, "alias/f.txt") == ws / "real" / "f.txt"
    assert resolve_workspace_path(ws, "") == ws
    with pytest.raises(ToolError):
        resolve_workspace_path(ws, "a\x00b")


# --- list_files / grep ------------------------------------------------------------------------


def make_tree(ws: Path) -> None:
    for rel in ["src/app.py", "src/util/helpers.py", "README.md", "node_modules/lib/index.js",
                ".git/config", ".venv/lib/site.py", "src/__pycache__/app.cpython-311.pyc"]:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("def hello():\n    return 'Hello'\n")


async def test_list_files_skips_tool_dirs_and_globs(ws: Path, host: DiskToolHost) -> None:
    make_tree(ws)
    everything = await call(host, "list_files", {})
    assert everything.output.splitlines() == ["README.md", "src/app.py", "src/util/helpers.py"]
    py = await call(host, "list_files", {"pattern": "*.py"})
    assert py.output.splitlines() == ["src/app.py", "src/util/helpers.py"]
    nested = await call(host, "list_files", {"pattern": "util/**/*.py", "path": "src"})
    assert nested.output == "src/util/helpers.py"
    top = await call(host, "list_files", {"pattern": "**/*.{md,txt}"})
    assert top.output == "README.md"
    # asking for a skipped directory by name still works
    explicit = await call(host, "list_files", {"path": "node_modules"})
    assert explicit.output == "node_modules/lib/index.js"
    none = await call(host, "list_files", {"pattern": "*.rs"})
    assert not none.is_error and "no files match" in none.output


@pytest.mark.parametrize(
    ("pattern", "path", "hit"),
    [
        ("*.py", "a/b/c.py", True),
        ("*.py", "a/b/c.pyc", False),
        ("**/test_*.py", "test_x.py", True),
        ("src/**/*.ts", "src/a/b/c.ts", True),
        ("src/*.ts", "src/a/c.ts", False),
        ("*.{ts,tsx}", "x/y.tsx", True),
        ("[!_]*.py", "_private.py", False),
        ("file?.txt", "file1.txt", True),
    ],
)
def test_glob_matching(pattern: str, path: str, hit: bool) -> None:
    regex, name_only = search.compile_glob(pattern)
    subject = path.rsplit("/", 1)[-1] if name_only else path
    assert (regex.fullmatch(subject) is not None) == hit


async def test_list_files_caps_entries(ws: Path, host: DiskToolHost) -> None:
    for i in range(search.MAX_LIST_ENTRIES + 5):
        (ws / f"f{i:04}.txt").touch()
    result = await call(host, "list_files", {})
    lines = result.output.splitlines()
    assert len(lines) == search.MAX_LIST_ENTRIES + 1
    assert "showing 1,000 of 1,005 files" in lines[-1]


async def test_grep(ws: Path, host: DiskToolHost) -> None:
    make_tree(ws)
    (ws / "blob.bin").write_bytes(b"hello\x00world")
    result = await call(host, "grep", {"pattern": r"def \w+"})
    assert result.output.splitlines() == [
        "README.md:1: def hello():", "src/app.py:1: def hello():", "src/util/helpers.py:1: def hello():",
    ]
    insensitive = await call(host, "grep", {"pattern": "HELLO", "case_insensitive": True, "glob": "*.py", "path": "src/util"})
    assert insensitive.output.splitlines() == ["src/util/helpers.py:1: def hello():", "src/util/helpers.py:2:     return 'Hello'"]
    sensitive = await call(host, "grep", {"pattern": "HELLO"})
    assert "no matches" in sensitive.output
    bad = await call(host, "grep", {"pattern": "(unclosed"})
    assert bad.is_error and "regex parse error" in bad.output and "unclosed group" in bad.output


async def test_grep_searches_open_buffers(ws: Path) -> None:
    (ws / "a.py").write_text("nothing here\n")
    host = EditorHost(ws, {ws / "a.py": "x\nneedle in buffer\n"})
    result = await call(host, "grep", {"pattern": "needle"})
    assert result.output == "a.py:2: needle in buffer"


async def test_grep_caps_matches(ws: Path, host: DiskToolHost) -> None:
    (ws / "many.txt").write_text("match\n" * 600)
    result = await call(host, "grep", {"pattern": "match"})
    lines = result.output.splitlines()
    assert len(lines) == search.MAX_GREP_MATCHES + 1 and "showing matches 1-500 of 600; pass offset=500" in lines[-1]


# --- output cap -------------------------------------------------------------------------------


def test_cap_output_notes_truncation() -> None:
    assert cap_output("short") == "short"
    text = "".join(f"{i:07}\n" for i in range(10_000))  # 80,000 characters
    head_only = cap_output(text)
    assert head_only.startswith("0000000\n") and "[... truncated: " in head_only
    assert "characters omitted; showing the first 30,000 ...]" in head_only
    both = cap_output(text, keep_tail=True)
    assert both.startswith("0000000\n") and both.endswith("0009999\n")
    assert "[... truncated: 50,000 characters omitted; showing the first 20,000 and last 10,000 ...]" in both


@settings(max_examples=200, deadline=None)
@given(text=st.text(alphabet="ab\n\u00e9", max_size=400), limit=st.integers(10, 200), keep_tail=st.booleans())
def test_cap_output_accounts_for_every_character(text: str, limit: int, keep_tail: bool) -> None:
    capped = cap_output(text, limit, keep_tail=keep_tail)
    if len(text) <= limit:
        assert capped == text
        return
    note = re.search(r"\[\.\.\. truncated: ([\d,]+) characters omitted; showing the first ([\d,]+)"
                     r"(?: and last ([\d,]+))? \.\.\.\]", capped)
    assert note is not None
    omitted, head, tail = (int((g or "0").replace(",", "")) for g in note.groups())
    assert head + tail <= limit and omitted + head + tail == len(text)
    assert capped.startswith(text[:head]) and (tail == 0 or capped.endswith(text[len(text) - tail :]))
    assert (tail > 0) == keep_tail


async def test_command_output_is_capped(host: DiskToolHost) -> None:
    result = await call(host, "run_command", {"command": "seq 1 100000"})
    assert result.output.startswith("exit code 0; ") and "100000 lines of output\n1\n2\n" in result.output
    assert "[... truncated: " in result.output and result.output.rstrip().endswith("100000")
    assert len(result.output) < 31_000


# --- run_command ------------------------------------------------------------------------------


async def test_run_command_reports_exit_code_and_output(ws: Path, host: DiskToolHost) -> None:
    ok = await call(host, "run_command", {"command": "pwd; echo err >&2"})
    assert re.fullmatch(rf"exit code 0; \d+\.\d s; 2 lines of output\n{re.escape(str(ws))}\nerr\n", ok.output)
    assert not ok.is_error
    failed = await call(host, "run_command", {"command": "exit 3"})
    assert re.fullmatch(r"exit code 3; \d+\.\d s; 0 lines of output\n\(no output\)", failed.output)
    stdin = await call(host, "run_command", {"command": "cat"})  # stdin is /dev/null: no hang
    assert re.fullmatch(r"exit code 0; \d+\.\d s; 0 lines of output\n\(no output\)", stdin.output)


async def test_run_command_timeout_kills(host: DiskToolHost) -> None:
    started = time.monotonic()
    result = await call(host, "run_command", {"command": "echo before; sleep 30", "timeout_seconds": 1})
    assert time.monotonic() - started < 3
    assert result.is_error and "timed out after 1 s" in result.output and "before" in result.output


def gone(pid: int) -> bool:
    """True once the process no longer runs (an unreaped zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")
    except FileNotFoundError:
        return True


async def wait_gone(pids: list[int], within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if all(gone(p) for p in pids):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_cancellation_kills_the_process_group(ws: Path, host: DiskToolHost) -> None:
    pidfile = ws / "pids"
    command = f"sleep 60 & echo $! > {pidfile}; echo $$ >> {pidfile}; sleep 60"
    task = asyncio.create_task(call(host, "run_command", {"command": command}))
    # Generous deadlines (a loaded machine may take seconds to start a shell or reap a group);
    # a pass never waits them out, and the commands sleep longer than both.
    deadline = time.monotonic() + 25
    while len(pidfile.read_text().split() if pidfile.exists() else []) < 2:
        assert time.monotonic() < deadline
        await asyncio.sleep(0.02)
    pids = [int(p) for p in pidfile.read_text().split()]
    assert not any(gone(p) for p in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(pids, 20.0)


async def test_cancellation_while_the_command_starts_leaves_nothing_running(ws: Path, host: DiskToolHost) -> None:
    """A cancel (the user's abort) can land after the shell started but before its spawn was
    awaited to the end: asyncio then kills the shell alone, and a child it had already started
    lived on (the old flake of the test above, under load). Each round cancels after a few more
    turns of the event loop, to land in that window on any machine (here: 3 or 4 turns); each
    count twice."""
    left = []
    for round_ in range(16):
        turns = 1 + round_ % 8
        pidfile = ws / f"pid{round_}"
        task = asyncio.create_task(call(host, "run_command", {"command": f"sleep 60 & echo $! > {pidfile}; sleep 60"}))
        for _ in range(turns):
            await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.1)  # a child that was started has its pid written by now
        if pidfile.exists() and pidfile.read_text().strip():
            pid = int(pidfile.read_text())
            if not await wait_gone([pid], 10.0):
                left.append((turns, pid))
                os.kill(pid, 9)
    assert not left, f"background children outlived a cancel (turns, pid): {left}"


async def test_background_child_holding_the_pipe_does_not_hang(ws: Path, host: DiskToolHost) -> None:
    started = time.monotonic()
    result = await call(host, "run_command", {"command": "sleep 30 & echo started"})
    assert time.monotonic() - started < 3
    assert re.match(r"exit code 0; \d+\.\d s; 1 line of output\nstarted\n", result.output) and "background" in result.output
    # redirected ones are stopped too: nothing a call started outlives it (issue 21)
    result = await call(host, "run_command", {"command": "sleep 30 > /dev/null 2>&1 & echo $!"})
    pid = int(result.output.splitlines()[1])
    assert gone(pid)


def test_output_collector_drops_the_middle_of_huge_output() -> None:
    out = shell._Output()
    for _ in range(100):
        out.add(b"x" * 10_000)
    assert out.total == 1_000_000 and len(out.head) + len(out.tail) == 2 * shell._KEEP_BYTES
    assert "[... truncated: 970,000 characters omitted; showing the first 20,000 and last 10,000 ...]" in out.text()


@pytest.mark.parametrize("raw", ["/dev/zero", "/dev/stdin", "/proc/self/environ", "/proc/self/root/etc/passwd", "/proc/1/cmdline", "../../../../proc/self/environ"])
async def test_device_and_proc_paths_refused(host: DiskToolHost, raw: str) -> None:
    for name, args in [("read_file", {"path": raw}), ("write_file", {"path": raw, "content": "x"}), ("list_files", {"path": raw}), ("grep", {"pattern": "x", "path": raw})]:
        result = await call(host, name, args)
        assert result.is_error and "outside the workspace" in result.output, (name, result)


async def test_links_to_devices_and_proc_refused(ws: Path, host: DiskToolHost) -> None:
    for name, target in [("zero", "/dev/zero"), ("environ", "/proc/self/environ"), ("root", "/proc/self/root")]:
        (ws / name).symlink_to(target)
    for raw in ["zero", "environ", "root/etc/passwd"]:
        result = await call(host, "read_file", {"path": raw})
        assert result.is_error and "symbolic link" in result.output, (raw, result)
    grep = await call(host, "grep", {"pattern": "PATH"})
    assert "environ" not in grep.output


async def test_fifo_and_socket_in_the_workspace_never_block(ws: Path, host: DiskToolHost) -> None:
    import socket

    os.mkfifo(ws / "pipe")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(ws / "sock"))
    (ws / "real.txt").write_text("needle\n")
    try:
        read = await asyncio.wait_for(call(host, "read_file", {"path": "pipe"}), 5)
        assert read.is_error and read.output == "'pipe' is a FIFO, not a regular file; only text files can be read"
        write = await call(host, "write_file", {"path": "pipe", "content": "x"})
        assert write.is_error and "a FIFO" in write.output and stat_is_fifo(ws / "pipe")
        edit = await call(host, "edit_file", {"path": "sock", "old_text": "a", "new_text": "b"})
        assert edit.is_error and "a socket" in edit.output
        grep = await asyncio.wait_for(call(host, "grep", {"pattern": "needle"}), 5)
        assert "real.txt" in grep.output and "pipe" not in grep.output
    finally:
        sock.close()


def stat_is_fifo(path: Path) -> bool:
    import stat

    return stat.S_ISFIFO(os.lstat(path).st_mode)
