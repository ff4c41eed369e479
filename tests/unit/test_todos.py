"""The task list: validation, warnings, the exact rendering, and the todo_write / memory tools."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec
import pytest
from hypothesis import given, strategies as st

from shiro_neko.agent.todos import (
    PROMPT_HEADING,
    Todo,
    TodoInvalid,
    render_todos,
    render_todos_for_prompt,
    todo_list,
    todo_warnings,
)
from shiro_neko.agent.tools.memory_tools import memory_tools
from shiro_neko.agent.tools.registry import run_tool
from shiro_neko.agent.tools.todo_tools import todo_tool
from shiro_neko.state.memory.store import MemoryDisabled, ProjectMemory

SEED_LIST = [
    {"content": "read the pagination code", "status": "completed"},
    {"content": "fix the boundary", "status": "in_progress"},
    {"content": "add a test", "status": "pending"},
    {"content": "update the docs", "status": "blocked", "note": "no write access to the wiki"},
]


def validate_todos(raw: list[dict[str, Any]]) -> list[Todo]:
    """The list todo_write keeps for these items (its Struct has checked their shape)."""
    return todo_list([Todo(**item) for item in raw])


# --- rendering ------------------------------------------------------------------------------------


def test_render_matches_the_issue_example_exactly() -> None:
    assert render_todos(validate_todos(SEED_LIST)) == (
        "tasks ######.................. 1/4  1 blocked\n"
        "[x] read the pagination code\n"
        "[~] fix the boundary\n"
        "[ ] add a test\n"
        "[!] update the docs  (no write access to the wiki)"
    )


@pytest.mark.parametrize(
    ("done", "total", "bar"),
    [
        (0, 3, "." * 24),
        (3, 3, "#" * 24),
        (1, 3, "#" * 8 + "." * 16),
        (2, 7, "#" * 7 + "." * 17),  # 6.86 rounds up
        (1, 5, "#" * 5 + "." * 19),  # 4.8 rounds up
    ],
)
def test_bar_is_the_rounded_completed_share(done: int, total: int, bar: str) -> None:
    todos = [Todo(content=f"t{n}", status="completed" if n < done else "in_progress") for n in range(total)]
    assert render_todos(todos).splitlines()[0] == f"tasks {bar} {done}/{total}"


def test_no_blocked_suffix_without_blocked_tasks_and_blocked_without_note() -> None:
    todos = [Todo(content="a", status="completed"), Todo(content="b", status="blocked")]
    assert render_todos(todos) == "tasks ############............ 1/2  1 blocked\n[x] a\n[!] b"
    assert render_todos([Todo(content="a", status="pending")]).splitlines()[0].endswith(" 0/1")


def test_notes_on_other_states_are_not_drawn() -> None:
    assert render_todos([Todo(content="a", status="pending", note="later")]).splitlines()[1] == "[ ] a"


def test_empty_list_renders_nothing() -> None:
    assert render_todos([]) == ""
    assert render_todos_for_prompt([]) == ""


def test_prompt_block_has_a_heading() -> None:
    todos = validate_todos(SEED_LIST)
    assert render_todos_for_prompt(todos) == f"{PROMPT_HEADING}\n{render_todos(todos)}"
    assert PROMPT_HEADING == "Current task list (update it with todo_write):"


# --- validation -----------------------------------------------------------------------------------


def test_todo_encodes_as_the_session_record_shape() -> None:
    todos = validate_todos(SEED_LIST)
    assert msgspec.to_builtins(todos) == SEED_LIST
    assert msgspec.json.decode(msgspec.json.encode(todos), type=list[Todo]) == todos


def test_text_is_normalised_to_one_line() -> None:
    [todo] = validate_todos([{"content": "  fix\n the   bug ", "status": "blocked", "note": " \n "}])
    assert todo == Todo(content="fix the bug", status="blocked", note=None)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ({"content": "x"}, "argument 'todos' must be an array"),
        (["x"], r"argument 'todos\[0\]' must be an object"),
        ([{"status": "pending"}], r"missing required argument 'todos\[0\]\.content'"),
        ([{"content": " ", "status": "pending"}], r"todos\[0\]\.content must be a non-empty string"),
        (
            [{"content": "a", "status": "pending"}, {"content": "b", "status": "done"}],
            r"argument 'todos\[1\]\.status' must be one of pending, in_progress, completed, blocked, got \"done\"",
        ),
        ([{"content": "a", "status": "pending", "note": 3}], r"argument 'todos\[0\]\.note' must be a string"),
        ([{"content": "a", "status": "pending", "priority": "high"}], r"unknown argument 'todos\[0\]\.priority'"),
    ],
)
async def test_bad_input_is_refused_with_a_clear_message(raw: Any, message: str) -> None:
    seen: list[list[Todo]] = []
    result = await run_tool(todo_tool(seen.append), None, {"todos": raw})  # type: ignore[arg-type]
    assert result.is_error and re.search(message, result.output), result.output
    assert seen == []
    with pytest.raises(TodoInvalid, match=r"todos\[0\]\.content must be a non-empty string"):
        todo_list([Todo(content="\n ", status="pending")])


# --- warnings -------------------------------------------------------------------------------------


def todos(*states: str, note: str | None = None) -> list[Todo]:
    return [Todo(content=f"task {n}", status=s, note=note) for n, s in enumerate(states)]  # type: ignore[arg-type]


def test_a_healthy_list_has_no_warnings() -> None:
    assert todo_warnings(validate_todos(SEED_LIST)) == []
    assert todo_warnings([]) == []
    assert todo_warnings(todos("completed", "completed")) == []
    assert todo_warnings(todos("completed", "blocked", note="waiting on review")) == []


def test_warns_when_more_than_one_task_is_in_progress() -> None:
    assert todo_warnings(todos("in_progress", "in_progress", "pending")) == [
        "2 tasks are in_progress; keep exactly one in_progress and the others pending"
    ]


def test_warns_when_nothing_is_in_progress_while_work_remains() -> None:
    assert todo_warnings(todos("completed", "pending", "pending")) == [
        "nothing is in_progress while 2 tasks are pending; mark the one you are working on in_progress"
    ]


def test_warns_about_a_blocked_task_without_a_note() -> None:
    assert todo_warnings(todos("completed", "blocked")) == [
        "blocked task 'task 1' has no note; add a note saying what blocks it"
    ]


# --- todo_write ----------------------------------------------------------------------------------


async def test_todo_write_schema_and_behaviour_agree_on_a_blocked_task_without_a_note() -> None:
    # The design: "blocked requires a note", kept by a warning ("the tool warns when ... a blocked
    # task has no note"). The tool accepts such a list and warns; its schema must say the same,
    # not "required" (issue 36 item 6).
    seen: list[list[Todo]] = []
    tool = todo_tool(seen.append)
    items = tool.parameters["properties"]["todos"]["items"]
    note_doc = items["properties"]["note"]["description"]
    assert "note" not in items["required"]
    assert "required" not in note_doc.lower()
    assert "warn" in note_doc and "blocked" in note_doc
    result = await run_tool(tool, None, {"todos": [{"content": "docs", "status": "blocked"}]})  # type: ignore[arg-type]
    assert not result.is_error
    assert seen == [[Todo(content="docs", status="blocked")]]
    assert "blocked task 'docs' has no note" in result.output


async def test_todo_write_reports_the_list_and_warnings() -> None:
    seen: list[list[Todo]] = []
    tool = todo_tool(seen.append)
    assert tool.name == "todo_write"
    items = tool.parameters["properties"]["todos"]["items"]
    assert items["additionalProperties"] is False and items["required"] == ["content", "status"]
    assert items["properties"]["status"]["enum"] == ["pending", "in_progress", "completed", "blocked"]
    assert "survive this turn" in tool.description

    raw = [{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]
    result = await run_tool(tool, None, {"todos": raw})  # type: ignore[arg-type]
    assert not result.is_error
    assert result.output.startswith("tasks " + "." * 24 + " 0/2\n[~] a\n[~] b")
    assert "warning: 2 tasks are in_progress" in result.output
    assert seen == [validate_todos(raw)]


async def test_todo_write_refuses_bad_input_without_changing_the_list() -> None:
    seen: list[list[Todo]] = []
    tool = todo_tool(seen.append)
    result = await run_tool(tool, None, {"todos": [{"content": "a", "status": "done"}]})  # type: ignore[arg-type]
    assert result.is_error and "argument 'todos[0].status' must be one of pending, in_progress" in result.output
    blank = await run_tool(tool, None, {"todos": [{"content": "a", "status": "pending"}, {"content": " \n", "status": "pending"}]})  # type: ignore[arg-type]
    assert blank.is_error and "task list not changed: todos[1].content must be a non-empty string" in blank.output
    # The array as a JSON string is refused in a sentence the model acts on: no model here sends
    # one, and the strict check (tools/arguments.py) never let such a string reach the tool.
    as_text = await run_tool(tool, None, {"todos": "[]"})  # type: ignore[arg-type]
    assert as_text.is_error and "argument 'todos' must be an array, got \"[]\"" in as_text.output
    assert seen == []
    cleared = await run_tool(tool, None, {"todos": []})  # type: ignore[arg-type]
    assert not cleared.is_error and seen == [[]]


# --- memory tools ---------------------------------------------------------------------------------


async def test_memory_tools_round_trip_and_refusals(tmp_path: Path) -> None:
    store = ProjectMemory(tmp_path / "m.json")
    remember, recall, forget = memory_tools(lambda: store)
    assert [t.name for t in (remember, recall, forget)] == ["remember", "recall", "forget"]
    for tool in (remember, recall, forget):
        assert tool.parameters["additionalProperties"] is False and tool.parameters["required"]
    assert remember.parameters["properties"]["kind"]["enum"] == ["fact", "decision", "gotcha", "command"]
    assert "survive this session" in remember.description

    ok = await run_tool(remember, None, {"kind": "command", "text": "tests run with pytest -q"})  # type: ignore[arg-type]
    assert ok.output == "remembered: (command) tests run with pytest -q" and not ok.is_error
    dup = await run_tool(remember, None, {"kind": "command", "text": "Tests run with pytest -q"})  # type: ignore[arg-type]
    assert dup.is_error and "already stored" in dup.output
    bad = await run_tool(remember, None, {"kind": "command", "text": "a\nb"})  # type: ignore[arg-type]
    assert bad.is_error and "must be one line" in bad.output

    found = await run_tool(recall, None, {"terms": "PYTEST tests"})  # type: ignore[arg-type]
    assert found.output == "1 note:\n- (command) tests run with pytest -q"
    none = await run_tool(recall, None, {"terms": "cargo"})  # type: ignore[arg-type]
    assert not none.is_error and "no note" in none.output

    empty = await run_tool(forget, None, {"text": ""})  # type: ignore[arg-type]
    assert empty.is_error
    gone = await run_tool(forget, None, {"text": "pytest"})  # type: ignore[arg-type]
    assert gone.output == "forgot 1 note containing 'pytest'"
    assert store.entries() == []


async def test_memory_tools_when_memory_is_disabled() -> None:
    def disabled() -> ProjectMemory:
        raise MemoryDisabled()

    remember, _, _ = memory_tools(disabled)
    result = await run_tool(remember, None, {"kind": "fact", "text": "x"})  # type: ignore[arg-type]
    assert result.is_error and "project memory is disabled (memory.enabled = false)" in result.output


# --- property: the bar always has 24 cells and the counts add up ---------------------------------

@given(st.lists(st.sampled_from(["pending", "in_progress", "completed", "blocked"]), min_size=1, max_size=60))
def test_bar_shape_for_any_list(states: list[str]) -> None:
    rendered = render_todos(todos(*states, note="why")).splitlines()
    head = rendered[0].split(" ")
    bar = head[1]
    done = states.count("completed")
    assert len(bar) == 24 and bar == "#" * bar.count("#") + "." * bar.count(".")
    assert bar.count("#") == round(24 * done / len(states))
    assert head[2] == f"{done}/{len(states)}"
    assert len(rendered) == len(states) + 1
