"""The one way into the workspace's files: every read and write of workspace content goes through here.

Checking a path with `realpath` and then opening it again by name is a race: between the two, a
directory can be swapped for a symbolic link to anywhere (`renameat2(RENAME_EXCHANGE)` does it
atomically), and the open follows it. Here nothing is opened by a path string from `/`: every
lookup starts at a descriptor of the workspace root and stays beneath it.

- Reads use `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (Linux 5.6+, called through ctypes:
  Python has no binding), where the kernel itself refuses any step out of the root, links
  included. Where the kernel lacks it, or refuses a link that only looks like an escape (an
  absolute link whose target is inside the workspace), the walk below decides.
- The walk opens one component at a time with `O_NOFOLLOW` from the root's descriptor, keeping the
  descriptors of the directories it went through; a link is read with `readlinkat` and its target
  resolved on that stack (`..` pops a descriptor, an absolute target must name a place under the
  root), so a link that stays inside keeps working and one that leaves is refused, whatever is
  swapped while it runs.
- Writes create a temp file inside the already-opened parent directory and rename it there
  (`renameat` with both descriptors the same), so the new content can land nowhere else; the temp
  file, created `O_EXCL | O_NOFOLLOW`, cannot be a link either.

The API, all synchronous (call it from a worker thread, never the event loop's):
`read_bytes(root, rel)`, `write_bytes(root, rel, data)`, `stat(root, rel)`, `make_dirs(root, rel)`,
`remove_empty_dirs(root, rels)`, `relative_to_root(root, path)`. `rel` is a path relative to the
root (or absolute under it); errors are OSErrors: `OutsideWorkspace` for an escape,
`NotRegularFile` for a FIFO, socket or device, the usual FileNotFoundError / IsADirectoryError.
"""

from __future__ import annotations

import ctypes
import errno
import os
import secrets
import stat as stat_module
from collections.abc import Iterable
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..state.atomic import file_kind

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_PATH = getattr(os, "O_PATH", 0)
# Links followed in one lookup before giving up, as the kernel's own limit (MAXSYMLINKS).
MAX_LINKS = 40
# Retries when a component changes kind between our lstat and our open (someone is swapping it).
_RETRIES = 8


class OutsideWorkspace(OSError):
    """The path, or a link on the way, leads out of the workspace."""

    def __init__(self, rel: str, detail: str = "") -> None:
        super().__init__(errno.EXDEV, f"'{rel}' leads outside the workspace{': ' + detail if detail else ''}")
        self.rel = rel


class NotRegularFile(OSError):
    """A FIFO, socket or device: reading one could block the server or never end."""

    def __init__(self, kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file")
        self.kind = kind


kind_of = file_kind  # one wording for files that are not regular (state/atomic.py)


# ---------------------------------------------------------------------------------------------
# openat2 through ctypes

_SYS_OPENAT2 = 437  # the same number on every Linux architecture (new syscalls share one table)
_RESOLVE_NO_MAGICLINKS = 0x02
_RESOLVE_BENEATH = 0x08


class _OpenHow(ctypes.Structure):
    _fields_ = [("flags", ctypes.c_uint64), ("mode", ctypes.c_uint64), ("resolve", ctypes.c_uint64)]


_libc: ctypes.CDLL | None = None
# None: not tried yet. Tests set it to False to exercise the walk alone.
openat2_available: bool | None = None


def _openat2(dir_fd: int, rel: str, flags: int) -> int:
    """openat2 beneath `dir_fd`; OSError as os.open would raise; ENOSYS when the kernel lacks it."""
    global _libc, openat2_available
    if openat2_available is False:
        raise OSError(errno.ENOSYS, "openat2 unavailable")
    if _libc is None:
        try:
            _libc = ctypes.CDLL(None, use_errno=True)
        except OSError:
            openat2_available = False
            raise OSError(errno.ENOSYS, "openat2 unavailable") from None
    how = _OpenHow(flags=flags, mode=0, resolve=_RESOLVE_BENEATH | _RESOLVE_NO_MAGICLINKS)
    fd = _libc.syscall(ctypes.c_long(_SYS_OPENAT2), ctypes.c_int(dir_fd), ctypes.c_char_p(os.fsencode(rel)),
                       ctypes.byref(how), ctypes.c_size_t(ctypes.sizeof(how)))
    if fd < 0:
        err = ctypes.get_errno()
        if err in (errno.ENOSYS, errno.EPERM) and openat2_available is None:  # EPERM: a seccomp filter
            openat2_available = False
            err = errno.ENOSYS
        raise OSError(err, os.strerror(err), rel)
    openat2_available = True
    return int(fd)


# ---------------------------------------------------------------------------------------------
# the walk


def _root_fd(root: Path | str) -> int:
    return os.open(os.path.abspath(root), os.O_RDONLY | _DIRECTORY | _CLOEXEC)


def _split(rel: str) -> list[str]:
    return [part for part in rel.split("/") if part not in ("", ".")]


def relative_to_root(root: Path | str, path: Path | str) -> str:
    """`path` (absolute, or relative to the root) as a path relative to the root, lexically.

    OutsideWorkspace when it names a place outside (by `..` or by an absolute path elsewhere)."""
    text = os.fspath(path)
    if "\x00" in text:
        raise OutsideWorkspace(text, "it contains a NUL character")
    if not os.path.isabs(text):
        text = os.path.join(os.path.abspath(root), text)
    text = os.path.normpath(text)
    for base in dict.fromkeys((os.path.abspath(root), os.path.realpath(root))):
        if text == base:
            return "."
        if text.startswith(base.rstrip("/") + "/"):
            return text[len(base.rstrip("/")) + 1 :]
    raise OutsideWorkspace(os.fspath(path))


class _Stack:
    """Descriptors of the directories from the root down to where the walk is; closes what it drops."""

    def __init__(self, root_fd: int) -> None:
        self.fds = [root_fd]

    @property
    def top(self) -> int:
        return self.fds[-1]

    def push(self, fd: int) -> None:
        self.fds.append(fd)

    def pop(self) -> None:
        os.close(self.fds.pop())

    def to_root(self) -> None:
        while len(self.fds) > 1:
            self.pop()

    def close_all_but(self, keep: int) -> None:
        for fd in self.fds:
            if fd != keep:
                os.close(fd)
        self.fds = []


def _link_target(root: Path | str, rel: str, target: str) -> tuple[bool, list[str]]:
    """(from the root?, the components to walk next) for a link's target."""
    if not target.startswith("/"):
        return False, target.split("/")
    try:
        inside = relative_to_root(root, target)
    except OutsideWorkspace:
        raise OutsideWorkspace(rel, f"a link points to {target}") from None
    return True, _split(inside)


def _walk_parent(root: Path | str, root_fd: int, rel: str, *, make_parents: bool = False,
                 made: list[str] | None = None) -> tuple[int, str]:
    """(descriptor of the directory holding the last component, its name), every link on the way
    (the last component's included) resolved beneath the root. The name may not exist yet; it is
    never a link when this returns (a link swapped in later is replaced by a rename, not followed).
    The caller closes the descriptor; "." for the root itself."""
    stack = _Stack(os.dup(root_fd))
    todo = _split(rel)
    todo.reverse()  # a stack of names: the next one is at the end
    links = retries = 0
    walked: list[str] = []  # the names below the root, for `made`
    try:
        if not todo:
            fd = stack.top
            stack.fds = []
            return fd, "."
        while todo:
            name = todo.pop()
            if name in ("", "."):
                continue
            if name == "..":
                if len(stack.fds) == 1:
                    raise OutsideWorkspace(rel, "'..' climbs above the root")
                stack.pop()
                walked.pop()
                continue
            last = not todo
            try:
                st = os.stat(name, dir_fd=stack.top, follow_symlinks=False)
            except FileNotFoundError:
                if last:
                    fd = stack.top
                    stack.close_all_but(fd)
                    return fd, name
                if not make_parents:
                    raise
                try:
                    os.mkdir(name, 0o777, dir_fd=stack.top)
                    if made is not None:
                        made.append("/".join([*walked, name]))
                except FileExistsError:
                    pass
                todo.append(name)
                continue
            if stat_module.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS:
                    raise OSError(errno.ELOOP, "too many levels of symbolic links", rel)
                try:
                    target = os.readlink(name, dir_fd=stack.top)
                except OSError as exc:
                    # No longer a link (EINVAL) or gone: swapped since the lstat, look again.
                    if exc.errno in (errno.EINVAL, errno.ENOENT) and retries < _RETRIES:
                        retries += 1
                        todo.append(name)
                        continue
                    raise
                from_root, parts = _link_target(root, rel, target)
                if from_root:
                    stack.to_root()
                    walked.clear()
                todo.extend(reversed(parts))
                continue
            if last:
                fd = stack.top
                stack.close_all_but(fd)
                return fd, name
            if not stat_module.S_ISDIR(st.st_mode):
                raise NotADirectoryError(errno.ENOTDIR, "not a directory", "/".join([*walked, name]))
            try:
                fd = os.open(name, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=stack.top)
            except OSError as exc:
                # Swapped between the lstat and the open: look at it again.
                if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.ENOENT) and retries < _RETRIES:
                    retries += 1
                    todo.append(name)
                    continue
                raise
            stack.push(fd)
            walked.append(name)
        fd = stack.top  # the path ended in "..": its parent's entry named "."
        stack.close_all_but(fd)
        return fd, "."
    except BaseException:
        for fd in stack.fds:
            os.close(fd)
        raise


def _open_walk(root: Path | str, root_fd: int, rel: str, flags: int) -> int:
    for _ in range(_RETRIES):
        parent, name = _walk_parent(root, root_fd, rel)
        try:
            return os.open(name, flags | _NOFOLLOW | _CLOEXEC, dir_fd=parent)
        except OSError as exc:
            if exc.errno != errno.ELOOP:  # ELOOP: the name became a link since the walk looked
                raise
        finally:
            os.close(parent)
    raise OSError(errno.ELOOP, "the path keeps changing under the lookup", rel)


def open_beneath(root: Path | str, rel: str, flags: int, root_fd: int | None = None) -> int:
    """A descriptor for `rel` opened with `flags`, resolved without ever leaving the root."""
    rel = relative_to_root(root, rel)
    own = root_fd is None
    fd_root = _root_fd(root) if root_fd is None else root_fd
    try:
        try:
            return _openat2(fd_root, rel, flags | _CLOEXEC)
        except OSError as exc:
            # EXDEV: an escape, or an absolute link the walk may still find to be inside; ELOOP and
            # EAGAIN (a rename raced the lookup): the walk decides; ENOSYS: no openat2 here.
            if exc.errno not in (errno.EXDEV, errno.ELOOP, errno.EAGAIN, errno.ENOSYS):
                raise
        return _open_walk(root, fd_root, rel, flags)
    finally:
        if own:
            os.close(fd_root)


# ---------------------------------------------------------------------------------------------
# the API


def read_bytes(root: Path | str, rel: Path | str, *, max_bytes: int | None = None) -> bytes:
    """The bytes of the regular file `rel` (at most `max_bytes + 1` of them when given, so a
    caller can tell "more than the cap"). A FIFO is opened non-blocking and refused on its
    descriptor, so neither a check-then-open race nor a device can stall the caller."""
    try:
        fd = open_beneath(root, os.fspath(rel), os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        if exc.errno != errno.ENXIO:  # ENXIO: a socket, which cannot be opened for reading
            raise
        raise NotRegularFile(kind_of(stat(root, rel).st_mode)) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat_module.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(rel))
        if not stat_module.S_ISREG(mode):
            raise NotRegularFile(kind_of(mode))
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read() if max_bytes is None else f.read(max_bytes + 1)
    finally:
        os.close(fd)


def stat(root: Path | str, rel: Path | str) -> os.stat_result:
    """What `rel` is (links inside followed); FileNotFoundError when missing."""
    fd = open_beneath(root, os.fspath(rel), _PATH or os.O_RDONLY | os.O_NONBLOCK)
    try:
        return os.fstat(fd)
    finally:
        os.close(fd)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


# Read once at import (os.umask can only be read by setting it): a new file gets the mode any
# ordinary file creation would give it.
NEW_FILE_MODE = 0o666 & ~_umask()


@contextmanager
def _parent(root: Path | str, rel: str, *, make_parents: bool, made: list[str] | None = None) -> Iterator[tuple[int, str]]:
    root_fd = _root_fd(root)
    try:
        parent, name = _walk_parent(root, root_fd, relative_to_root(root, rel), make_parents=make_parents, made=made)
    finally:
        os.close(root_fd)
    try:
        yield parent, name
    finally:
        os.close(parent)


def write_bytes(root: Path | str, rel: Path | str, data: bytes, *, mode: int | None = None,
                make_parents: bool = False) -> list[str]:
    """Replace `rel`'s content with `data` atomically (temp file, fsync, rename, fsync of the
    directory), all inside the directory the walk opened. Writing to a link inside changes its
    target; an existing file keeps its mode, a new one gets `mode` or the umask's. Returns the
    directories created on the way (root-relative, outermost first)."""
    made: list[str] = []
    with _parent(root, os.fspath(rel), make_parents=make_parents, made=made) as (parent, name):
        if name in (".", ".."):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(rel))
        try:
            existing = os.stat(name, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            existing = None
        if existing is not None and not stat_module.S_ISREG(existing.st_mode):
            if stat_module.S_ISDIR(existing.st_mode):
                raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(rel))
            raise NotRegularFile(kind_of(existing.st_mode))
        final_mode = stat_module.S_IMODE(existing.st_mode) if existing is not None else (
            NEW_FILE_MODE if mode is None else mode)
        # Dot-prefixed and random: never mistaken for the file, never guessed and pre-planted.
        tmp = f".{name[:64]}.{secrets.token_hex(6)}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC, 0o600, dir_fd=parent)
        try:
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
                os.fchmod(fd, final_mode)
            finally:
                os.close(fd)
            os.rename(tmp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            try:
                os.unlink(tmp, dir_fd=parent)
            except OSError:
                pass
            raise
        try:
            os.fsync(parent)
        except OSError:  # some filesystems refuse fsync on a directory; the rename is done
            pass
    return made


def make_dirs(root: Path | str, rel: Path | str) -> list[str]:
    """Create `rel` and its missing parents beneath the root; the ones created, outermost first."""
    made: list[str] = []
    with _parent(root, os.path.join(os.fspath(rel), "x"), make_parents=True, made=made):
        pass
    return made


def unlink(root: Path | str, rel: Path | str) -> None:
    """Remove the file `rel` beneath the root (a link is removed, never its target)."""
    with _parent(root, os.fspath(rel), make_parents=False) as (parent, name):
        os.unlink(name, dir_fd=parent)


def remove_empty_dirs(root: Path | str, rels: Iterable[str]) -> None:
    """rmdir each of `rels` (deepest first) while it is still empty; stops at the first that is not."""
    for rel in sorted(rels, key=lambda r: r.count("/"), reverse=True):
        try:
            with _parent(root, rel, make_parents=False) as (parent, name):
                os.rmdir(name, dir_fd=parent)
        except OSError:
            return
