"""state/home_modes.py on real files: what the state home writes is owner-only, what a rewind writes
into the user's workspace is not (it keeps the user's umask); the end-to-end walk of a whole
session is tests/lsp/test_home_modes.py."""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiro_neko.state.atomic import file_lock, write_atomic
from shiro_neko.state.checkpoint_store import restore_file
from shiro_neko.state.home_modes import make_private_dirs, tighten_tree
from shiro_neko.state.sqlite_wait import private_database


@pytest.fixture(autouse=True)
def usual_umask() -> Iterator[None]:
    old = os.umask(0o022)
    yield
    os.umask(old)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_state_writes_are_owner_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_atomic(home / "a" / "b" / "f.json", b"{}")
    assert [mode(p) for p in (home, home / "a", home / "a" / "b", home / "a" / "b" / "f.json")] == [0o700, 0o700, 0o700, 0o600]
    with file_lock(home / "locks" / "x.lock"):
        pass
    assert mode(home / "locks" / "x.lock") == 0o600


def test_sqlite_and_its_journals_are_born_owner_only(tmp_path: Path) -> None:
    db = tmp_path / "d.sqlite3"
    private_database(db)
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("CREATE TABLE t (x)")
    conn.commit()
    assert {p.name: mode(p) for p in tmp_path.iterdir()} == {
        "d.sqlite3": 0o600, "d.sqlite3-wal": 0o600, "d.sqlite3-shm": 0o600}
    conn.close()


def test_a_rewind_writes_the_workspace_with_the_users_modes(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    restore_file(root, "new/dir/f.py", b"x\n")
    assert mode(root / "new") == 0o755 and mode(root / "new" / "dir") == 0o755
    assert mode(root / "new" / "dir" / "f.py") == 0o644


def test_the_walk_tightens_ours_and_follows_no_link(tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / "d").mkdir(parents=True, mode=0o755)
    os.chmod(home, 0o755)
    (home / "d" / "f").write_text("x")
    os.chmod(home / "d" / "f", 0o664)
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o755)
    (outside / "g").write_text("y")
    (home / "dir-link").symlink_to(outside)
    (home / "file-link").symlink_to(outside / "g")
    assert tighten_tree(home) == 3
    assert (mode(home), mode(home / "d"), mode(home / "d" / "f")) == (0o700, 0o700, 0o600)
    assert (mode(outside), mode(outside / "g")) == (0o755, 0o644)
    assert tighten_tree(home) == 0  # the second start finds nothing to do


def test_make_private_dirs_leaves_existing_ones(tmp_path: Path) -> None:
    make_private_dirs(tmp_path / "x" / "y")
    make_private_dirs(tmp_path / "x" / "y")
    assert mode(tmp_path / "x" / "y") == 0o700
