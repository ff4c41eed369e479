"""The generated-code cache (server/startup/codegen_cache.py): a hit is the code `compile()` would make,
and a cache file anyone else could have written is never run.

Each case imports the LSP layer in a fresh interpreter (the cache is installed once per process,
before lsprotocol defines its classes) with its own state home.
"""

from __future__ import annotations

import json
import marshal
import os
import subprocess
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from typing import Any

import pytest

from shiro_neko.startup import codegen_cache

# Prints what the import compiled and what it took from the cache, and the code attrs made for
# every lsprotocol class (`__hash__` aside: it holds `hash()` of a string, which differs per process).
PROBE = r"""
import json, marshal, sys
import shiro_neko.lsp
from shiro_neko.startup import codegen_cache
import lsprotocol.types as t
codes = {}
for name in dir(t):
    cls = getattr(t, name)
    if isinstance(cls, type) and hasattr(cls, "__attrs_attrs__"):
        for method in ("__init__", "__repr__", "__eq__"):
            fn = cls.__dict__.get(method)
            if fn is not None and hasattr(fn, "__code__"):
                codes[f"{name}.{method}"] = marshal.dumps(fn.__code__).hex()
counts = {"compiled": len(codegen_cache._new), "hits": len(codegen_cache._used)}
if "--save" in sys.argv:
    codegen_cache.save()
print(json.dumps({**counts, "codes": codes}))
"""


def probe(home: Path, *args: str, **env: str) -> dict[str, Any]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("SHIRO_")}
    full.update(SHIRO_NEKO_HOME=str(home), **env)
    done = subprocess.run([sys.executable, "-c", PROBE, *args], env=full, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def cache_path(home: Path) -> Path:
    return codegen_cache.cache_file(home)


def test_a_hit_is_exactly_the_code_compile_makes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    without = probe(home, SHIRO_CODEGEN_CACHE="0")
    assert not cache_path(home).exists()
    first = probe(home, "--save")
    assert first["compiled"] > 500 and first["hits"] == 0
    info = os.stat(cache_path(home))
    assert info.st_mode & 0o777 == 0o600
    second = probe(home)
    assert second["hits"] > 500 and second["compiled"] < codegen_cache.MIN_NEW
    assert len(without["codes"]) > 1000
    assert second["codes"] == without["codes"] == first["codes"]


def poison(home: Path, marker: Path) -> Path:
    """The cache a first run writes, every code object in it swapped for one that leaves `marker`."""
    probe(home, "--save")
    path = cache_path(home)
    data = path.read_bytes()
    prefix = codegen_cache.HEADER + MAGIC_NUMBER
    entries = marshal.loads(data[len(prefix):])
    evil = compile(f"open({str(marker)!r}, 'w').write('ran')", "<planted>", "exec")
    path.write_bytes(prefix + marshal.dumps({key: evil for key in entries}))
    return path


def import_lsp(home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIRO_")}
    env["SHIRO_NEKO_HOME"] = str(home)
    return subprocess.run([sys.executable, "-c", "import shiro_neko.lsp"], env=env, capture_output=True, text=True,
                          timeout=120)


def test_a_cache_file_others_can_write_is_never_run(tmp_path: Path) -> None:
    home, marker = tmp_path / "home", tmp_path / "ran"
    path = poison(home, marker)
    path.chmod(0o666)  # what another user could have written
    done = import_lsp(home)
    assert done.returncode == 0, done.stderr[-2000:]
    assert not marker.exists()
    path.chmod(0o600)
    path.parent.chmod(0o777)  # a directory others can write: they could have swapped the file in
    assert import_lsp(home).returncode == 0
    assert not marker.exists()
    # The same file, private in a private directory, is what the cache trusts: the test can fail.
    path.parent.chmod(0o700)
    import_lsp(home)
    assert marker.read_text() == "ran"


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to give the file to another user")
def test_a_cache_file_of_another_user_is_never_run(tmp_path: Path) -> None:
    home, marker = tmp_path / "home", tmp_path / "ran"
    path = poison(home, marker)
    os.chown(path, 65534, 65534)
    assert import_lsp(home).returncode == 0
    assert not marker.exists()


def test_a_link_or_a_fifo_in_its_place_is_a_miss(tmp_path: Path) -> None:
    home, marker = tmp_path / "home", tmp_path / "ran"
    path = poison(home, marker)
    elsewhere = tmp_path / "elsewhere.marshal"
    path.rename(elsewhere)
    path.symlink_to(elsewhere)  # private, but reached through a link
    assert import_lsp(home).returncode == 0
    assert not marker.exists()
    path.unlink()
    os.mkfifo(path, 0o600)  # would block a reader that opened it plainly
    result = probe(home)
    assert not marker.exists() and result["hits"] == 0


@pytest.mark.parametrize("damage", ["truncated", "garbage", "foreign-python", "not-a-dict"])
def test_a_damaged_cache_is_a_miss_and_is_written_again(tmp_path: Path, damage: str) -> None:
    home = tmp_path / "home"
    probe(home, "--save")
    path = cache_path(home)
    data = path.read_bytes()
    prefix = codegen_cache.HEADER + MAGIC_NUMBER
    path.write_bytes({
        "truncated": data[: len(data) // 2],
        "garbage": prefix + os.urandom(4096),
        "foreign-python": codegen_cache.HEADER + b"\x00\x00\r\n" + data[len(prefix):],
        "not-a-dict": prefix + marshal.dumps([1, 2, 3]),
    }[damage])
    again = probe(home, "--save")
    assert again["hits"] == 0 and again["compiled"] > 500
    assert probe(home)["hits"] > 500


def test_it_stays_bounded_and_a_failed_write_loses_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code = compile("x = 1", "<t>", "exec")
    old = {(bytes([i % 256, i // 256]) * 8, f"<old {i}>", "exec", 0, 0): code for i in range(50)}
    used = list(old)[:5]
    new = {(b"n" * 16, f"<new {i}>", "exec", 0, 0): code for i in range(20)}
    monkeypatch.setattr(codegen_cache, "_path", tmp_path / "cache" / "codegen.marshal")
    monkeypatch.setattr(codegen_cache, "_entries", dict(old))
    monkeypatch.setattr(codegen_cache, "_used", set(used))
    monkeypatch.setattr(codegen_cache, "_new", dict(new))
    monkeypatch.setattr(codegen_cache, "MAX_ENTRIES", 30)
    codegen_cache.save()
    written = codegen_cache.read(tmp_path / "cache" / "codegen.marshal")
    # Over the bound: what this process used, then what it compiled, up to the bound.
    assert len(written) == 25 and set(used) <= set(written) and set(new) <= set(written)
    assert not codegen_cache._new
    # A state home that cannot take the file: logged, the entries kept for a later save.
    (tmp_path / "file").write_text("")
    monkeypatch.setattr(codegen_cache, "_path", tmp_path / "file" / "cache" / "codegen.marshal")
    monkeypatch.setattr(codegen_cache, "_new", dict(new))
    codegen_cache.save()
    assert codegen_cache._new == new


def test_a_spawned_server_writes_the_cache_the_next_one_reads(tmp_path: Path) -> None:
    """`shiro-lsp` as an editor spawns it (server/cli.py): its first start writes the cache once
    the LSP layer is imported, even when the editor goes away at once, and the next start hits."""
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SHIRO_")}
    env["SHIRO_NEKO_HOME"] = str(home)
    done = subprocess.run([sys.executable, "-m", "shiro_neko"], env=env, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(codegen_cache.read(cache_path(home))) > 500
    assert probe(home)["hits"] > 500
