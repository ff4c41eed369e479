"""The code attrs and cattrs generate at run time, compiled once and kept, as Python keeps .pyc files.

Why: lsprotocol.types defines ~570 attrs classes, and attrs writes every class's `__init__`,
`__repr__`, `__eq__`... as source text and compiles it, at every start: `compile()` is ~40 % of
`import pygls.server, lsprotocol.types` (390 → 230 ms here with this cache; docs/performance.md,
"The generated-code cache"). cattrs does the same for every type it first converts, which the
first messages of a session pay for (`initialize`'s params alone are a few dozen types). The
same source, file name, flags and optimisation level on the same interpreter compile to the same
code object, so a hit is exactly what `compile()` would return: the code objects are kept in one
marshal file, keyed by all of those (the source by its digest), and `compile()` runs only on a miss.

Only the `compile` that attrs's and cattrs's code generators call goes through here (a module
global shadowing the builtin in `attr._make`, `cattrs.gen` and `cattrs.gen.typeddicts`): nothing
else of the process, and nothing of theirs but the generated-method compiles.

A code object from a file is code that runs, so the file is trusted as a .pyc is, no further:
- it lives in the state home (`<home>/cache/`), which the sandbox hides from every command
  (agent/tools/sandbox.py) and no workspace or setting names;
- it is read only if it is a regular file (opened without following a link, without blocking on
  a FIFO) owned by this user and writable by no one else, in a directory that is likewise;
- anything else, a foreign interpreter's file, or a corrupt or truncated one is a miss: the
  process compiles as if there were no cache, and writes a good file in its place;
- it is written atomically (state/atomic.py), only when a process missed MIN_NEW entries or more, never with more than
  MAX_ENTRIES entries or MAX_BYTES bytes; `SHIRO_CODEGEN_CACHE=0` turns the cache off (the
  benches' A/B). It is state of ours like the session index, not Python's bytecode: it is written
  under `PYTHONDONTWRITEBYTECODE` too.
"""

from __future__ import annotations

import __future__
import logging
import marshal
import os
import stat
import sys
import threading
import types
from hashlib import blake2b
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

# The file starts with these, then the interpreter's own .pyc magic number: a file another
# Python wrote is a miss, never a misread.
HEADER = b"shiro-neko generated code 1\n"
MAX_BYTES = 64 * 1024 * 1024
MAX_ENTRIES = 8000  # lsprotocol's classes and a session's cattrs converters are ~1,000

# The modules whose code generators compile through the cache.
PATCHED = ("attr._make", "cattrs.gen", "cattrs.gen.typeddicts")

_FUTURE_FLAGS = 0
for _name in __future__.all_feature_names:
    _FUTURE_FLAGS |= getattr(__future__, _name).compiler_flag

# (a 128-bit BLAKE2 digest of the source, filename, mode, flags, optimize): the digest, not the
# source, so the file and the process keep the code only (a third of the size).
Key = tuple[bytes, str, str, int, int]
# A save writes only when the process compiled at least this many entries it did not have: the few
# a start always misses (attrs's `__hash__` of a frozen class holds `hash()` of a string, which
# differs per process) never make every start rewrite the file.
MIN_NEW = 16

_lock = threading.Lock()
_path: Path | None = None
_entries: dict[Key, types.CodeType] = {}  # read from the file
_used: set[Key] = set()  # the entries this process hit
_new: dict[Key, types.CodeType] = {}  # compiled here, not yet written
_real_compile = compile


def cache_file(home: Path) -> Path:
    return home / "cache" / f"codegen-{sys.implementation.cache_tag}.marshal"


def install(home: Path | None = None) -> None:
    """Read the cache and route the code generators' `compile` through it. Call before the modules
    that define attrs classes are imported (server/lsp/__init__.py)."""
    global _path
    if os.environ.get("SHIRO_CODEGEN_CACHE") == "0" or _path is not None:
        return
    if home is None:
        from ..state.paths import shiro_home

        home = shiro_home()
    _path = cache_file(home)
    _entries.update(read(_path))
    import importlib

    for name in PATCHED:
        try:
            module = importlib.import_module(name)
        except ImportError:  # a version of cattrs without that module: it compiles as before
            continue
        module.compile = _compiler(_module_future_flags(module))  # type: ignore[attr-defined]


def _module_future_flags(module: types.ModuleType) -> int:
    """The `from __future__` flags a bare `compile()` in `module` inherits from its caller's code."""
    flags = 0
    for value in vars(module).values():
        if isinstance(value, type(__future__.annotations)):
            flags |= value.compiler_flag
    return flags


def _compiler(inherited: int) -> Any:
    def compile(source: Any, filename: Any, mode: str, flags: int = 0, dont_inherit: bool = False,
                optimize: int = -1, **kwargs: Any) -> Any:
        # Only what the generators pass (source text, no AST flags): anything else goes straight through.
        if kwargs or not isinstance(source, str) or not isinstance(filename, str) or flags & ~_FUTURE_FLAGS:
            return _real_compile(source, filename, mode, flags, dont_inherit, optimize, **kwargs)
        if not dont_inherit:
            flags |= inherited
        digest = blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).digest()
        key: Key = (digest, filename, mode, flags, sys.flags.optimize if optimize == -1 else optimize)
        code = _entries.get(key)
        if type(code) is types.CodeType:
            _used.add(key)
            return code
        code = _new.get(key)
        if code is None:
            code = _real_compile(source, filename, mode, flags, True, optimize)
            _new[key] = code
        return code

    return compile


def read(path: Path) -> dict[Key, types.CodeType]:
    try:
        directory = os.lstat(path.parent)
        if not stat.S_ISDIR(directory.st_mode) or not _private(directory):
            return {}
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:  # no cache yet (or a link, or unreadable): a miss
        return {}
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or not _private(info) or info.st_size > MAX_BYTES:
            log.info("generated-code cache %s ignored: not a private regular file of ours", path)
            return {}
        chunks = []
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
        data = b"".join(chunks)
    except OSError:
        return {}
    finally:
        os.close(fd)
    from importlib.util import MAGIC_NUMBER

    prefix = HEADER + MAGIC_NUMBER
    if not data.startswith(prefix):
        return {}
    try:
        entries = marshal.loads(memoryview(data)[len(prefix):])
    except (ValueError, EOFError, TypeError):
        log.info("generated-code cache %s ignored: corrupt", path)
        return {}
    return entries if isinstance(entries, dict) else {}


def _private(info: os.stat_result) -> bool:
    return info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def save() -> None:
    """Write the cache if this process compiled anything it did not have (atomic; bounded)."""
    with _lock:
        if _path is None or len(_new) < MIN_NEW:
            return
        new = dict(_new)
        merged = {**_entries, **new}
        if len(merged) > MAX_ENTRIES:  # the libraries changed: keep what this process used
            merged = {key: _entries[key] for key in _used if key in _entries}
            merged.update(list(new.items())[: max(0, MAX_ENTRIES - len(merged))])
        from importlib.util import MAGIC_NUMBER

        data = HEADER + MAGIC_NUMBER + marshal.dumps(merged)
        if len(data) > MAX_BYTES:
            return
        from ..state.atomic import StateError, write_atomic
        from ..state.home_modes import make_private_dirs

        try:
            make_private_dirs(_path.parent)  # the home too, when this makes it: 0700 (not mkdir -p's 0755)
            write_atomic(_path, data, mode=0o600)
        except (OSError, StateError) as exc:  # a read-only or full disk: the next start compiles again
            log.info("generated-code cache not written: %s", exc)
            return
        _entries.update(new)
        for key in new:
            _new.pop(key, None)


def save_soon() -> None:
    """save() in a thread of its own: the caller goes on serving."""
    if len(_new) >= MIN_NEW:
        threading.Thread(target=save, name="shiro-codegen-save").start()


def _after_fork_in_child() -> None:
    # A warm server's child (server/startup/warm.py) may be forked while the parent saves: its lock is
    # new, and what the parent compiled is the parent's to write.
    global _lock
    _lock = threading.Lock()
    _new.clear()


os.register_at_fork(after_in_child=_after_fork_in_child)
