"""Issue 35, 3: a workspace's git metadata is read-only to a sandboxed command, and an edit tool
writing it is always asked about. Real bwrap, real git, real files.

The sandbox tests failed on the code before `.git` was bound read-only: `git config
core.fsmonitor` and a hook were written, and the user's next `git status` ran the planted program.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from shiro_neko.agent.tools.disk_host import DiskToolHost
from shiro_neko.agent.tools.git_metadata import git_metadata_reason, read_only_git_paths
from tests.unit.test_sandbox import _require, run

# git as the user runs it after the turn, outside any sandbox; nothing of the machine's config.
_GIT_ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"}


def git(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", *args], cwd=root, env=_GIT_ENV, capture_output=True, text=True, timeout=60)


def make_repo(root: Path) -> None:
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q")
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "first")


def _planting(marker: Path) -> str:
    """What a hostile command does: fsmonitor in the config, an executable post-checkout hook, and
    a try at moving `.git` aside to put its own in its place."""
    hook = f"#!/bin/sh\\ntouch {marker}\\n"
    return (
        f"git config core.fsmonitor 'touch {marker}; false'; echo config=$?; "
        f"printf '{hook}' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout; echo hook=$?; "
        "mv .git old-git; echo moved=$?; rm -rf .git; echo removed=$?; echo written > ws-file.txt"
    )


async def test_a_sandboxed_command_cannot_plant_a_program_in_git_metadata(tmp_path: Path) -> None:
    sandbox = _require()
    root = tmp_path / "ws"
    make_repo(root)
    marker = tmp_path / "planted-program-ran"
    config_before = (root / ".git" / "config").read_text()
    _, out = await run(sandbox, DiskToolHost(root), _planting(marker))
    assert "Read-only file system" in out or "could not lock config file" in out
    assert (root / "ws-file.txt").read_text() == "written\n"  # the rest of the workspace is writable
    assert (root / ".git" / "config").read_text() == config_before
    assert not (root / ".git" / "hooks" / "post-checkout").exists()
    assert (root / ".git" / "HEAD").exists() and not (root / "old-git").exists()
    # The user's next git commands, outside the sandbox, run nothing planted.
    assert git(root, "status").returncode == 0
    git(root, "checkout", "-q", "-b", "other")
    assert not marker.exists()


async def test_a_gitfile_and_where_it_points_are_read_only(tmp_path: Path) -> None:
    """A `.bare` layout: `.git` is a file `gitdir: .bare`, the repository lies beside it."""
    sandbox = _require()
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(root / ".bare")], env=_GIT_ENV, check=True)
    (root / ".git").write_text("gitdir: .bare\n")
    config_before = (root / ".bare" / "config").read_text()
    assert set(read_only_git_paths(str(root))) == {str((root / ".git").resolve()), str((root / ".bare").resolve())}
    _, out = await run(sandbox, DiskToolHost(root), "git config core.fsmonitor evil; echo 'gitdir: /elsewhere' > .git; echo x > .bare/hooks/pre-commit")
    assert (root / ".bare" / "config").read_text() == config_before
    assert (root / ".git").read_text() == "gitdir: .bare\n"
    assert not (root / ".bare" / "hooks" / "pre-commit").exists(), out


async def test_a_nested_repository_one_level_down_is_read_only(tmp_path: Path) -> None:
    sandbox = _require()
    root = tmp_path / "ws"
    root.mkdir()
    make_repo(root / "vendored")
    before = (root / "vendored" / ".git" / "config").read_text()
    await run(sandbox, DiskToolHost(root), "cd vendored && git config core.fsmonitor evil; echo x > src.txt")
    assert (root / "vendored" / ".git" / "config").read_text() == before
    assert (root / "vendored" / "src.txt").exists()


def test_every_spelling_of_a_git_metadata_path_is_caught(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    make_repo(root)
    (root / "sub").mkdir()
    (root / "hooks-link").symlink_to(root / ".git" / "hooks")
    (root / "config-link").symlink_to(root / ".git" / "config")
    caught = [
        ".git/config", "./.git/config", "sub/../.git/hooks/post-checkout", ".git", ".GIT/config",
        "hooks-link/post-checkout", "config-link", str(root / ".git" / "config"), "sub/.git/config",
        "new-repo/.git/hooks/pre-commit",
    ]
    for raw in caught:
        assert git_metadata_reason(root, raw), raw
    for raw in ("a.txt", ".gitignore", ".github/workflows/ci.yml", "sub/x.git", "git/config", ".gitattributes"):
        assert git_metadata_reason(root, raw) is None, raw


def test_where_a_root_gitfile_points_is_caught(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    subprocess.run(["git", "init", "-q", "--bare", str(root / ".bare")], env=_GIT_ENV, check=True)
    (root / ".git").write_text("gitdir: .bare\n")
    assert git_metadata_reason(root, ".bare/config")
    assert git_metadata_reason(root, "x.txt") is None


@pytest.mark.parametrize("mode", ["read-only"])
async def test_read_only_mode_needs_no_git_mounts(tmp_path: Path, mode: str) -> None:
    sandbox = _require(mode)
    root = tmp_path / "ws"
    make_repo(root)
    args = sandbox.mount_args(str(root))
    assert str(root / ".git") not in args  # the whole workspace is read-only already


def test_a_folder_swapped_while_it_is_checked_is_asked_never_an_error(tmp_path: Path) -> None:
    """realpath's readlink fails (EINVAL) on a folder that stops being a link while it looks: the
    check ended the whole turn as an internal error (seen in CI through
    tests/unit/test_workspace_fs.py). Now such a path is asked about."""
    import threading

    root = tmp_path / "ws"
    (root / "real").mkdir(parents=True)
    (root / "real" / "f.txt").write_text("x")
    stop = threading.Event()

    def swap() -> None:
        link = root / "d"
        while not stop.is_set():  # d: a link to real/, then a folder, and again
            try:
                os.symlink(root / "real", link)
                os.unlink(link)
                os.mkdir(link)
                os.rmdir(link)
            except OSError:
                pass

    thread = threading.Thread(target=swap, daemon=True)
    thread.start()
    try:
        reasons = {git_metadata_reason(root, "d/f.txt") for _ in range(5_000)}
    finally:
        stop.set()
        thread.join()
    assert reasons <= {None, "where it leads could not be checked for git metadata (.git), which git runs programs from"}


def _upstream_with_submodules(base: Path) -> Path:
    """A repository as a hostile upstream could ship it, cloned: a populated submodule two levels
    down (`third_party/lib`, a gitfile into `.git/modules`), and a gitlink with no `.gitmodules`
    entry whose folder a clone leaves empty (`vendor/lib`)."""
    sub = base / "sub"
    make_repo(sub)
    ws = base / "ws"
    make_repo(ws)
    git(ws, "-c", "protocol.file.allow=always", "submodule", "add", "-q", str(sub), "third_party/lib")
    git(ws, "update-index", "--add", "--cacheinfo", "160000,1111111111111111111111111111111111111111,vendor/lib")
    (ws / "vendor" / "lib").mkdir(parents=True)
    git(ws, "commit", "-q", "-m", "submodules")
    make_repo(ws / "lib")  # a nested repository one level down
    return ws


async def test_submodules_and_nested_repositories_cannot_be_replaced_by_a_planted_one(tmp_path: Path) -> None:
    """git at the root runs git inside each populated submodule with that repository's config.
    Before: a command rewrote `third_party/lib/.git` (two levels down, not protected) to point at a
    repository of its own, made one in the empty `vendor/lib`, and moved `lib/` (whose `.git` was
    read-only, but not the folder holding it) aside for a planted one; the user's `git status` at
    the root then ran each planted `core.fsmonitor`."""
    sandbox = _require()
    ws = _upstream_with_submodules(tmp_path)
    marker = tmp_path / "planted-program-ran"
    plant = f"git init -q && git config core.fsmonitor 'touch {marker}; false' && git commit -q --allow-empty -m x"
    command = (
        f"mkdir -p .cache-x && (cd .cache-x && {plant}); "
        "echo 'gitdir: ../../.cache-x/.git' > third_party/lib/.git; echo gitfile=$?; "
        f"(cd vendor/lib && {plant}); echo vendor=$?; "
        f"mv lib .lib-aside; echo moved=$?; mkdir -p lib && (cd lib && {plant}); echo lib=$?; echo done"
    )
    _, out = await run(sandbox, DiskToolHost(ws), command)
    assert "done" in out and "moved=0" not in out, out
    git(ws, "status")
    git(ws / "lib", "status")
    assert not marker.exists(), out
    assert (ws / "third_party" / "lib" / ".git").read_text().startswith("gitdir: ../../.git/modules/")
    assert not (ws / "vendor" / "lib" / ".git").exists() and (ws / "lib" / ".git" / "HEAD").exists()


def test_edits_that_make_a_bare_repository_without_a_git_name_are_asked(tmp_path: Path) -> None:
    """`docs/HEAD`, `docs/config`, `docs/objects/…`, `docs/refs/…` make `docs/` a repository git
    runs `core.fsmonitor` from (a git-aware prompt on `cd docs` is enough), with no `.git` in any
    name: the guard said None to all four. Now the write that completes the layout, in any order,
    is asked; ordinary files named like its parts are not."""
    import itertools

    writes = {"docs/HEAD": "ref: refs/heads/main\n", "docs/config": "[core]\n\tfsmonitor = touch X\n",
              "docs/objects/info/keep": "", "docs/refs/heads/keep": ""}
    for order in itertools.permutations(writes):
        root = tmp_path / "-".join(str(len(p)) for p in order)
        root.mkdir()
        for rel in order:
            reason = git_metadata_reason(root, rel)
            (root / rel).parent.mkdir(parents=True, exist_ok=True)
            (root / rel).write_text(writes[rel])
            complete = all((root / "docs" / part).exists() for part in ("HEAD", "objects", "refs"))
            if complete:
                assert reason and "docs" in reason, (order, rel)
                break
    plain = tmp_path / "plain"
    (plain / "src" / "objects").mkdir(parents=True)
    for rel in ("config/settings.yml", "src/objects/model.py", "refs/links.md", "docs/HEAD.md"):
        assert git_metadata_reason(plain, rel) is None, rel
