"""The workspace boundary under attack (agent/workspace_fs.py): links that leave, directories
swapped for links while the tools run, instruction files that point outside. Every rule is checked
with openat2 and with the O_NOFOLLOW walk that stands in where the kernel lacks it."""

from __future__ import annotations

import ctypes
import errno
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from shiro_neko.agent import workspace_fs
from shiro_neko.agent.instructions import instruction_sections
from tests.fake_provider import Call, FakeProvider, Reply
from tests.support.service import chat, running_service

SECRET = "TOP-SECRET-OUTSIDE-7f3a"


@pytest.fixture(params=["openat2", "walk"])
def mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "walk":
        monkeypatch.setattr(workspace_fs, "openat2_available", False)
    return str(request.param)


@pytest.fixture
def tree(tmp_path: Path) -> tuple[Path, Path]:
    """(workspace, outside): the outside holds a secret next to the workspace."""
    root, outside = tmp_path / "ws", tmp_path / "outside"
    (root / "d").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret.txt").write_text(SECRET)
    (root / "d" / "secret.txt").write_text("inside\n")
    return root, outside


def test_links_that_stay_inside_keep_working(tree: tuple[Path, Path], mode: str) -> None:
    root, _ = tree
    (root / "rel").symlink_to("d")
    (root / "abs").symlink_to(root / "d")  # absolute, but inside: openat2 refuses it, the walk allows it
    (root / "d" / "up").symlink_to("../d/secret.txt")
    (root / "chain").symlink_to("rel/up")
    for rel in ["rel/secret.txt", "abs/secret.txt", "d/up", "chain", "d/../d/secret.txt"]:
        assert workspace_fs.read_bytes(root, rel) == b"inside\n", rel
    workspace_fs.write_bytes(root, "chain", b"changed\n")
    assert (root / "d" / "secret.txt").read_text() == "changed\n" and (root / "chain").is_symlink()
    workspace_fs.write_bytes(root, "abs/new/deep.txt", b"x", make_parents=True)
    assert (root / "d" / "new" / "deep.txt").read_bytes() == b"x"


def test_links_that_leave_are_refused(tree: tuple[Path, Path], mode: str) -> None:
    root, outside = tree
    (root / "out").symlink_to(outside)
    (root / "out_abs").symlink_to(outside / "secret.txt")
    (root / "out_rel").symlink_to("../outside/secret.txt")
    (root / "d" / "hop").symlink_to("../../outside")
    (root / "proc").symlink_to("/proc/self/root")
    for rel in ["out/secret.txt", "out_abs", "out_rel", "d/hop/secret.txt", "../outside/secret.txt", "proc/etc/passwd"]:
        with pytest.raises(workspace_fs.OutsideWorkspace):
            workspace_fs.read_bytes(root, rel)
        with pytest.raises(workspace_fs.OutsideWorkspace):
            workspace_fs.write_bytes(root, rel, b"pwned", make_parents=True)
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == SECRET


def test_an_instruction_file_linked_outside_is_not_read(tree: tuple[Path, Path]) -> None:
    root, outside = tree
    (root / "AGENTS.md").symlink_to("../outside/secret.txt")
    (root / "d" / "CLAUDE.md").symlink_to(outside / "secret.txt")
    (root / "d" / "AGENTS.md").symlink_to(outside)  # a directory: not a file, CLAUDE.md is next
    assert SECRET not in str(instruction_sections(root, [root / "d" / "secret.txt"]))
    (root / "CLAUDE.md").write_text("be kind")
    assert "be kind" in str(instruction_sections(root)) and SECRET not in str(instruction_sections(root))


# ------------------------------------------------------------------------------------------------
# swapping a directory for a link while the tools run

RENAME_EXCHANGE = 2
AT_FDCWD = -100


def _exchange_fn() -> ctypes._CFuncPtr | None:  # type: ignore[name-defined]
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return libc.renameat2
    except (OSError, AttributeError):
        return None


@pytest.fixture
def swapper(tree: tuple[Path, Path]) -> Iterator[threading.Event]:
    """A thread that atomically exchanges `d` (a directory) and `evil` (a link to the outside)
    with renameat2(RENAME_EXCHANGE), as fast as it can, until the test ends."""
    root, outside = tree
    renameat2 = _exchange_fn()
    if renameat2 is None:
        pytest.skip("renameat2 is not available")
    (root / "evil").symlink_to(outside)
    stop, swaps = threading.Event(), [0]
    a, b = os.fsencode(root / "d"), os.fsencode(root / "evil")

    def run() -> None:
        while not stop.is_set():
            if renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) != 0:
                err = ctypes.get_errno()
                if err in (errno.ENOSYS, errno.EINVAL):
                    return
            swaps[0] += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    yield stop
    stop.set()
    thread.join()
    assert swaps[0] > 10, "the swapper never ran"


def _outside_untouched(outside: Path) -> None:
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"], "something was written outside"
    assert (outside / "secret.txt").read_text() == SECRET


def test_swapping_a_directory_for_a_link_never_leads_outside(tree: tuple[Path, Path], swapper: threading.Event,
                                                             mode: str) -> None:
    root, outside = tree
    for i in range(300):
        try:
            assert workspace_fs.read_bytes(root, "d/secret.txt") == b"inside\n"
        except OSError:
            pass  # `d` was the link at that instant (refused, never followed), or kept changing
        try:
            workspace_fs.write_bytes(root, f"d/x{i % 7}", b"written")
        except OSError:
            pass
    swapper.set()
    _outside_untouched(outside)


async def test_a_turn_whose_folder_is_swapped_reads_and_writes_nothing_outside(
    shiro_home: Path, fake: FakeProvider, tree: tuple[Path, Path], swapper: threading.Event
) -> None:
    """The property end to end: tool calls of a running turn against a folder being swapped."""
    root, outside = tree
    rounds = [
        Reply(calls=[Call("read_file", {"path": "d/secret.txt"}) for _ in range(10)]
              + [Call("write_file", {"path": f"d/x{i}.txt", "content": "from the model"}) for i in range(5)]
              + [Call("edit_file", {"path": "d/secret.txt", "old_text": "inside", "new_text": "inside"})]
              + [Call("grep", {"pattern": "SECRET|inside", "path": "d"}), Call("grep", {"pattern": "SECRET"})])
        for _ in range(6)
    ]
    fake.script(*rounds, Reply(text="done"))
    async with running_service(fake, root, approvals="auto", maxSteps=20) as service:
        await chat(service, "read and write d")
    swapper.set()
    _outside_untouched(outside)
    seen = "\n".join(str(r.body) for r in fake.main_requests)
    assert seen.count("function_call_output") >= 6 * 18 and "inside" in seen
    assert SECRET not in seen
