"""AGENTS.md / CLAUDE.md collection: nesting order, fallback, the 32 KiB cap."""

from __future__ import annotations

from pathlib import Path

from shiro_neko.agent.instructions import CAP_BYTES, instruction_sections


def collect_instructions(root: Path, touched: list[Path] | None = None) -> str:
    """The sections as one text, `--- label ---` before each file (what the model reads)."""
    return "\n\n".join(f"--- {label} ---\n{text}" for label, text in instruction_sections(root, touched or []))


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_no_files_gives_an_empty_block(tmp_path: Path) -> None:
    assert collect_instructions(tmp_path, [tmp_path / "src" / "x.py"]) == ""


def test_root_only_without_touched_files(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "Use tabs.")
    write(tmp_path / "src" / "AGENTS.md", "not read: nothing touched there")
    assert instruction_sections(tmp_path, []) == [("AGENTS.md", "Use tabs.")]


def test_nesting_order_is_root_first_nearest_last(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "root rules")
    write(tmp_path / "src" / "AGENTS.md", "src rules")
    write(tmp_path / "src" / "api" / "v2" / "AGENTS.md", "v2 rules")
    write(tmp_path / "docs" / "AGENTS.md", "docs rules")
    touched = [tmp_path / "src" / "api" / "v2" / "handler.py", Path("docs/guide.md"), tmp_path / "src" / "a.py"]
    text = collect_instructions(tmp_path, touched)
    labels = [line for line in text.splitlines() if line.startswith("--- ")]
    assert labels == [
        "--- AGENTS.md ---",
        "--- src/AGENTS.md ---",
        "--- src/api/v2/AGENTS.md ---",
        "--- docs/AGENTS.md ---",
    ]
    assert text.index("root rules") < text.index("src rules") < text.index("v2 rules")


def test_claude_md_is_read_only_where_there_is_no_agents_md(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "root agents")
    write(tmp_path / "CLAUDE.md", "root claude: shadowed")
    write(tmp_path / "pkg" / "CLAUDE.md", "pkg claude")
    text = collect_instructions(tmp_path, [tmp_path / "pkg" / "mod.py"])
    assert "root agents" in text and "pkg claude" in text
    assert "shadowed" not in text
    assert "--- pkg/CLAUDE.md ---" in text


def test_files_outside_the_root_are_ignored(tmp_path: Path) -> None:
    root = tmp_path / "project"
    write(root / "AGENTS.md", "inside")
    write(tmp_path / "elsewhere" / "AGENTS.md", "outside")
    text = collect_instructions(root, [tmp_path / "elsewhere" / "x.py"])
    assert "inside" in text and "outside" not in text


def test_the_total_is_capped_at_32_kib_with_a_visible_note(tmp_path: Path) -> None:
    line = "Always run the linter before committing anything at all.\n"
    write(tmp_path / "AGENTS.md", line * 400)  # ~23 KiB
    write(tmp_path / "a" / "AGENTS.md", "é" + line * 400)  # pushes past the cap mid-file
    write(tmp_path / "a" / "b" / "AGENTS.md", "never shown")
    text = collect_instructions(tmp_path, [tmp_path / "a" / "b" / "c.py"])
    assert len(text.encode("utf-8")) <= CAP_BYTES
    assert "--- a/AGENTS.md ---" in text and "never shown" not in text
    note = text.splitlines()[-1]
    assert note.startswith("[instructions truncated: project instructions are capped at 32 KiB;")
    assert "the rest of a/AGENTS.md and 1 later file was left out" in note
    body = text.rsplit("\n\n", 1)[0]
    assert body.endswith("anything at all.")  # cut on a whole line


def test_under_the_cap_nothing_is_cut(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "x" * 20_000)
    text = collect_instructions(tmp_path, [])
    assert "truncated" not in text and text.endswith("x" * 20_000)
