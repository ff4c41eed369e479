"""Layering and packaging rules, checked on the source and in fresh interpreters.

- agent/ and state/ know nothing of LSP: no pygls or lsprotocol import (parsed with `ast`);
- the LSP layer and the CLI do not import `openai` until a chat needs it (start-up cost);
- `python -m shiro_neko --version/--help` work;
- the package imports from any working directory, both as installed here and laid out the way a
  wheel built from pyproject.toml would lay it out (every package directory listed).
"""

from __future__ import annotations

import ast
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from typing import Any
from pathlib import Path

import pytest

import shiro_neko
from tests.support.imports import imported_modules

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "server"
# The terminal client sits beside the other clients but installs as shiro_neko.client
# (pyproject.toml's package-dir); its modules are named and packaged from there.
CLIENT = ROOT / "clients" / "terminal"
SOURCES = {"shiro_neko": SERVER, "shiro_neko.client": CLIENT}  # package -> its folder, longest first below
LSP_ONLY = ("pygls", "lsprotocol")


def _package_parts(path: Path) -> list[str]:
    """The dotted name of a source file's package, from the folder it sits in."""
    for package, folder in sorted(SOURCES.items(), key=lambda item: -len(item[0])):
        if folder in path.parents:
            return [*package.split("."), *path.parent.relative_to(folder).parts]
    raise AssertionError(f"{path} is in no package folder")


def _sources() -> list[Path]:
    """Every module of the installed package: server/ and the terminal client."""
    return sorted(p for folder in SOURCES.values() for p in folder.rglob("*.py") if "__pycache__" not in p.parts)


def python(*args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP")}
    env.update(extra)
    return env


@pytest.mark.parametrize("layer", ["agent", "state"])
def test_core_layers_do_not_import_lsp_libraries(layer: str) -> None:
    files = sorted((SERVER / layer).rglob("*.py"))
    assert files, f"no Python files under server/{layer}"
    offenders = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in files
        for line, module in imported_modules(path)
        if module.split(".")[0] in LSP_ONLY
    ]
    assert not offenders, "LSP imports in the core:\n" + "\n".join(offenders)


def test_import_scanner_sees_every_import_form(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(
        "import os, pygls.server as s\nfrom lsprotocol import types\nfrom . import sibling\n"
        "def f():\n    import importlib\n    importlib.import_module('pygls.uris')\n",
        encoding="utf-8",
    )
    names = [m for _, m in imported_modules(sample)]
    assert names == ["os", "pygls.server", "lsprotocol", "importlib", "pygls.uris"]


def test_lsp_and_cli_do_not_import_openai(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import shiro_neko.lsp, shiro_neko.cli\n"
        "shiro_neko.lsp.create_server()\n"
        "print(json.dumps(sorted(m for m in sys.modules if m == 'openai' or m.startswith('openai.'))))\n"
    )
    result = python("-c", code, cwd=tmp_path, env=clean_env(SHIRO_NEKO_HOME=str(tmp_path / "home")))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []


def test_version_and_help(tmp_path: Path) -> None:
    version = python("-m", "shiro_neko", "--version", cwd=tmp_path, env=clean_env())
    assert version.returncode == 0, version.stderr
    assert shiro_neko.__version__ in version.stdout
    help_ = python("-m", "shiro_neko", "--help", cwd=tmp_path, env=clean_env())
    assert help_.returncode == 0, help_.stderr
    assert help_.stdout.startswith("usage:")
    for flag in ("--stdio", "--tcp", "--port", "--version"):
        assert flag in help_.stdout


def test_installed_package_imports_from_another_directory(tmp_path: Path) -> None:
    result = python("-c", "import shiro_neko, os; print(shiro_neko.__file__)", cwd=tmp_path, env=clean_env())
    assert result.returncode == 0, result.stderr
    location = Path(result.stdout.strip())
    assert location.is_file() and location.name == "__init__.py"
    assert tmp_path not in location.parents


def _wheel_layout(dest: Path) -> Path:
    """The files a wheel built from pyproject.toml would hold, in their installed layout.

    setuptools' own `build_py` on a copy of the project when setuptools is importable (what a
    wheel build runs), else the same mapping done by hand from [tool.setuptools].
    """
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]
    try:
        import setuptools  # noqa: F401
    except ImportError:
        pass
    else:
        project = dest.parent / "project"
        shutil.copytree(SERVER, project / "server", ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copytree(CLIENT, project / CLIENT.relative_to(ROOT), ignore=shutil.ignore_patterns("__pycache__"))
        shutil.copy2(ROOT / "pyproject.toml", project / "pyproject.toml")
        readme = config.get("readme") or "README.md"
        if (ROOT / readme).is_file():
            shutil.copy2(ROOT / readme, project / readme)
        build = python("-c", "import setuptools; setuptools.setup()", "-q", "build_py", "-d", str(dest),
                       cwd=project, env=clean_env(PYTHONWARNINGS="ignore"), timeout=120)
        assert build.returncode == 0, build.stderr
        return dest
    package_dir: dict[str, str] = config.get("package-dir", {})
    for package in config["packages"]:
        parts = package.split(".")
        for i in range(len(parts), 0, -1):  # the longest mapped prefix decides the source folder
            prefix = ".".join(parts[:i])
            if prefix in package_dir:
                source = ROOT / package_dir[prefix] / Path(*parts[i:])
                break
        else:
            source = ROOT / Path(*parts)
        target = dest / Path(*parts)
        target.mkdir(parents=True, exist_ok=True)
        for module in source.glob("*.py"):
            shutil.copy2(module, target / module.name)
    return dest


def test_every_package_directory_is_listed_for_the_wheel() -> None:
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["packages"])
    on_disk = {".".join(_package_parts(init)) for init in _sources() if init.name == "__init__.py"}
    assert "shiro_neko.client" in on_disk
    assert on_disk - listed == set(), "package directories missing from [tool.setuptools].packages"
    package_dir = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["setuptools"]["package-dir"]
    assert {k: ROOT / v for k, v in package_dir.items()} == SOURCES


def test_wheel_layout_imports_every_module_from_another_directory(tmp_path: Path) -> None:
    site = _wheel_layout(tmp_path / "site")
    modules = sorted(".".join([*_package_parts(p), p.stem]).removesuffix(".__init__") for p in _sources() if p.name != "__main__.py")
    assert "shiro_neko.client.main" in modules
    code = (
        "import importlib, json\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "import shiro_neko\n"
        "print(json.dumps({'file': shiro_neko.__file__}))\n"
    )
    cwd = tmp_path / "elsewhere"
    cwd.mkdir()
    # -S keeps site-packages' editable finder out; the dependencies come in through PYTHONPATH.
    deps = [p for p in sys.path if p.endswith("site-packages")]
    env = clean_env(PYTHONPATH=os.pathsep.join([str(site), *deps]), SHIRO_NEKO_HOME=str(tmp_path / "home"))
    result = python("-S", "-c", code, cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    out = json.loads(result.stdout.strip().splitlines()[-1])
    assert Path(out["file"]) == site / "shiro_neko" / "__init__.py"
    version = python("-S", "-m", "shiro_neko", "--version", cwd=cwd, env=env)
    assert version.returncode == 0 and shiro_neko.__version__ in version.stdout, version.stderr


# --- the layering rules of docs/architecture.md, on every import (relative ones resolved) -------


def _absolute_imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, relative imports resolved to `shiro_neko.…` names."""
    return imported_modules(path, ".".join(_package_parts(path)))


def _offenders(files: list[Path], bad: Any) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in files
        for line, module in _absolute_imports(path)
        if bad(module)
    ]


def _py(*parts: str) -> list[Path]:
    """Files of a folder or module of the package, by its path below shiro_neko ("" = all of it)."""
    if not any(parts):
        return _sources()
    base = CLIENT.joinpath(*parts[1:]) if parts[0] == "client" else SERVER.joinpath(*parts)
    files = [base] if base.suffix == ".py" else sorted(p for p in base.rglob("*.py") if "__pycache__" not in p.parts)
    assert files and all(f.is_file() for f in files), base
    return files


def _under(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def test_relative_imports_are_resolved(tmp_path: Path) -> None:
    assert ("shiro_neko.agent.session" in [m for _, m in _absolute_imports(SERVER / "features" / "todos.py")])


def test_state_never_imports_agent() -> None:
    offenders = _offenders(_py("state"), lambda m: _under(m, "shiro_neko.agent"))
    assert not offenders, "state/ imports agent/:\n" + "\n".join(offenders)


def test_model_imports_nothing_of_ours() -> None:
    offenders = _offenders(_py("model"), lambda m: _under(m, "shiro_neko") and not _under(m, "shiro_neko.model"))
    assert not offenders, "\n".join(offenders)


def test_protocol_imports_only_model() -> None:
    files = _py("protocol.py")
    offenders = _offenders(files, lambda m: _under(m, "shiro_neko") and not _under(m, "shiro_neko.model"))
    assert not offenders, "\n".join(offenders)


def test_only_the_provider_adapter_imports_openai() -> None:
    # The adapter, and the SDK stream class it sends with (the response caps, bounded_stream.py).
    adapter = {SERVER / "agent" / "provider" / "openai_provider.py", SERVER / "agent" / "provider" / "bounded_stream.py",
               SERVER / "agent" / "provider" / "early_request.py"}
    files = [p for p in _py("") if p not in adapter]
    offenders = _offenders(files, lambda m: _under(m, "openai"))
    assert not offenders, "openai imported outside the provider adapter:\n" + "\n".join(offenders)


def test_service_and_features_never_import_pygls() -> None:
    files = _py("service.py") + _py("features") + _py("workspaces.py") + _py("config.py")
    offenders = _offenders(files, lambda m: m.split(".")[0] in LSP_ONLY or _under(m, "shiro_neko.lsp", "shiro_neko.commands"))
    assert not offenders, "LSP imports in the core:\n" + "\n".join(offenders)


def test_settings_know_no_agent() -> None:
    # The settings sit below the loop: their types (SandboxMode) come from protocol.py or model/,
    # never from agent/ (issue 36: config.py imported agent/tools/sandbox.py).
    files = _py("config.py") + _py("user_settings.py") + _py("project_settings.py")
    offenders = _offenders(files, lambda m: _under(m, "shiro_neko.agent"))
    assert not offenders, "settings import the agent:\n" + "\n".join(offenders)


def _function_level_imports(path: Path) -> list[tuple[int, str]]:
    """Imports inside functions (relative ones resolved), which hide a cycle from the module graph."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    inner = {
        node.lineno
        for fn in ast.walk(tree)
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(fn)
        if isinstance(node, (ast.Import, ast.ImportFrom))
    }
    return [(line, module) for line, module in _absolute_imports(path) if line in inner]


def test_loop_and_session_do_not_import_each_other() -> None:
    # The loop imports the session; the session (and the turn queue it holds) never import the
    # loop back, not even inside a function: the loop's `run_turn` is handed in (SessionDeps).
    loop, session, turns = "shiro_neko.agent.loop", "shiro_neko.agent.session", "shiro_neko.agent.turns"
    back = _offenders(_py("agent", "session.py") + _py("agent", "turns.py") + _py("agent", "status.py"), lambda m: m == loop)
    assert not back, "the session imports the loop:\n" + "\n".join(back)
    hidden = [
        f"{path.relative_to(ROOT)}:{line}: {module}"
        for path in _py("agent", "loop.py") + _py("agent", "session.py") + _py("agent", "turns.py")
        for line, module in _function_level_imports(path)
        if module in (loop, session, turns)
    ]
    assert not hidden, "function-level imports between loop and session:\n" + "\n".join(hidden)
    assert session in [m for _, m in _absolute_imports(SERVER / "agent" / "loop.py")]  # the scan sees the real edge


WIRE_NAME = re.compile(r"\bshiro(?:/[A-Za-z]|\.(\w+))")


def _is_wire_name(text: str) -> bool:
    # `shiro.<setting>` names a setting of the `shiro` section, not a command.
    from shiro_neko.config import Settings

    return any(m.group(1) not in Settings.__struct_fields__ for m in WIRE_NAME.finditer(text))


def _wire_name_literals(path: Path, root: Path = ROOT) -> list[str]:
    """String literals (f-string parts too, docstrings not) that spell a `shiro.`/`shiro/` name."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
        and node.body and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        f"{path.relative_to(root)}:{node.lineno}: {node.value!r}"
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings
        and _is_wire_name(node.value)
    ]


def test_wire_names_are_spelled_only_in_protocol_py() -> None:
    # The terminal client, the LSP glue and the core take every method and command name from the
    # constants in protocol.py (COMMANDS, NOTIFICATIONS, SERVER_REQUESTS), so a rename is one line.
    files = [p for p in _py("") if p != SERVER / "protocol.py"]
    assert CLIENT / "connection.py" in files
    offenders = [hit for path in files for hit in _wire_name_literals(path)]
    assert not offenders, "wire names written outside protocol.py:\n" + "\n".join(offenders)


def test_the_wire_name_scan_sees_literals_and_skips_docstrings(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text('"""shiro.chat: docs may name it."""\nX = f"{1} shiro/event"\nY = "shiro.resume"\nZ = "shiro_neko.x"\nS = "set shiro.baseUrl"\n')
    hits = [hit.split(": ", 1)[1] for hit in _wire_name_literals(sample, root=tmp_path)]
    assert sorted(hits) == ["' shiro/event'", "'shiro.resume'"]


# Modules both front ends share that import nothing else of ours (checked below).
SHARED_LEAVES = ("shiro_neko.user_settings", "shiro_neko.user_credentials", "shiro_neko.startup.trace", "shiro_neko.startup.warm_socket",
                 "shiro_neko.project_settings", "shiro_neko.project_instructions", "shiro_neko.agent.model_list")


def test_terminal_client_imports_only_the_protocol_and_its_own_package() -> None:
    # model/ is the protocol's own vocabulary (protocol.py is built on it); the shared leaves are
    # the settings file, timing marks and the warm server's socket framing.
    allowed = ("shiro_neko.client", "shiro_neko.protocol", "shiro_neko.model", *SHARED_LEAVES)
    offenders = _offenders(
        _py("client"),
        lambda m: _under(m, "shiro_neko") and m not in ("shiro_neko", "shiro_neko.__version__") and not _under(m, *allowed, "shiro_neko.state"),
    )
    assert not offenders, "the terminal client reaches into the server:\n" + "\n".join(offenders)
    # Two exceptions: `shiro sessions` reads the session store itself (docs/performance.md), and
    # the trust question reads and writes the trust record before the server starts;
    # state/ imports neither pygls nor the agent (checked above), and only those modules may.
    store_readers = [p for p in _py("client") if _offenders([p], lambda m: _under(m, "shiro_neko.state"))]
    assert store_readers == [CLIENT / "local_sessions.py", CLIENT / "trust.py"], store_readers
    for leaf in SHARED_LEAVES:
        path = SERVER.joinpath(*leaf.removeprefix("shiro_neko.").split(".")).with_suffix(".py")
        # A leaf may build on another leaf (the settings file on project_settings) and on the one
        # safe reader of state files (state/atomic.py: a FIFO or /dev/zero link never blocks or
        # fills memory), nothing else.
        leaves = _offenders([path], lambda m: _under(m, "shiro_neko") and m not in ("shiro_neko.__version__", "shiro_neko.state.atomic") and m not in SHARED_LEAVES)
        assert not leaves, "\n".join(leaves)


def test_lsp_framing_is_written_once_and_both_ends_import_it() -> None:
    # The layering rule adjusted once, for issue 36: the base protocol's framing lives in
    # model/lsp_framing.py (it imports nothing of ours), which the terminal client may import like
    # the rest of model/; the server's front and readers and the client's three readers all import
    # it, and nothing else parses a Content-Length header.
    framing = "shiro_neko.model.lsp_framing"
    users = [SERVER / "startup" / "lsp_front.py", SERVER / "lsp" / "pygls_overrides.py", SERVER / "lsp" / "tcp_guard.py",
             CLIENT / "jsonrpc.py", CLIENT / "initialize.py", CLIENT / "chat_ahead.py"]
    missing = [str(p.relative_to(ROOT)) for p in users if not _offenders([p], lambda m: _under(m, framing))]
    assert missing == [], f"these readers and writers of frames do not use {framing}: {missing}"
    parsers = [str(p.relative_to(ROOT)) for p in _py("") if p != SERVER / "model" / "lsp_framing.py"
               and b'b"content-length"' in p.read_bytes().lower()]
    assert parsers == [], f"LSP framing written outside server/model/lsp_framing.py: {parsers}"


def test_the_architecture_doc_names_every_part_of_the_tree() -> None:
    """docs/architecture.md's tree is where a newcomer looks for a behaviour: every module and
    package of server/ and every client folder is in it, and every name in it exists."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    tree = text.split("```", 2)[1]
    words = set(re.findall(r"[\w.]+(?:/[\w.]+)*/?", tree))
    server = ROOT / "server"
    parts = [p.name + "/" if p.is_dir() else p.name for p in server.iterdir()
             if p.name not in ("__init__.py", "__pycache__") and (p.is_dir() or p.suffix == ".py")]
    missing = [p for p in parts if p not in words and p.removesuffix(".py") not in words]
    missing += [f"clients/{c.name}/" for c in (ROOT / "clients").iterdir() if c.is_dir() and f"clients/{c.name}/" not in words]
    assert missing == [], f"docs/architecture.md's tree does not name: {missing}"
    named = [w for w in words if w.endswith("/") and not w.startswith(".") and w.count("/") == 1 and w[0].islower()]
    absent = [w for w in named if not (server / w).is_dir() and not (ROOT / w).is_dir() and not (ROOT / "tests" / w).is_dir()
              and not any((server / d / w).is_dir() for d in ("agent",))]
    assert absent == [], f"docs/architecture.md's tree names folders that do not exist: {absent}"


# pygls modules the rest of the server may import: its public API (the server class, URIs, the
# workspace, its exceptions). Everything else of pygls (pygls.protocol, pygls.io_, pygls.server,
# pygls.capabilities, ...) and every private name of its classes is reached only through
# lsp/pygls_overrides.py, so a pygls upgrade is checked in one module (issue 36 item 10).
PYGLS_PUBLIC = ("pygls.lsp.server", "pygls.uris", "pygls.workspace", "pygls.exceptions")
PYGLS_OVERRIDES = SERVER / "lsp" / "pygls_overrides.py"


def _private_names_defined(files: list[Path]) -> set[str]:
    """`_name`s a module defines: methods, class attributes and `self._name = …` assignments."""
    names: set[str] = set()
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store) \
                    and isinstance(node.value, ast.Name) and node.value.id == "self":
                names.add(node.attr)
            elif isinstance(node, (ast.AnnAssign, ast.Assign)):
                targets = [node.target] if isinstance(node, ast.AnnAssign) else node.targets
                names.update(t.id for t in targets if isinstance(t, ast.Name))
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _pygls_private_names() -> set[str]:
    import pygls

    pygls_files = sorted(Path(pygls.__file__).parent.rglob("*.py"))
    return _private_names_defined(pygls_files) - _private_names_defined([p for p in _sources() if p != PYGLS_OVERRIDES])


def _pygls_internals_used(files: list[Path], private: set[str]) -> list[str]:
    found = []
    for path in files:
        shown = path.relative_to(ROOT) if ROOT in path.parents else path.name
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in private:
                found.append(f"{shown}:{node.lineno}: .{node.attr}")
        found += [f"{shown}:{line}: import {module}" for line, module in imported_modules(path)
                  if _under(module, "pygls") and module != "pygls" and not _under(module, *PYGLS_PUBLIC)]
    return found


def test_pygls_internals_are_reached_only_through_pygls_overrides() -> None:
    private = _pygls_private_names()
    assert {"_request_futures", "_text_documents", "_stop_event", "_send_data"} <= private  # the scan sees them
    offenders = _pygls_internals_used([p for p in _sources() if p != PYGLS_OVERRIDES], private)
    assert not offenders, "pygls internals outside lsp/pygls_overrides.py:\n" + "\n".join(offenders)


def test_the_pygls_internals_scan_sees_attributes_and_imports(tmp_path: Path) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text("from pygls.protocol import X\nfrom pygls.uris import to_fs_path\n"
                      "def f(p):\n    return p._request_futures, p.protocol.workspace\n", encoding="utf-8")
    found = _pygls_internals_used([sample], {"_request_futures"})
    assert [f.split(": ", 1)[1] for f in found] == ["._request_futures", "import pygls.protocol"]
