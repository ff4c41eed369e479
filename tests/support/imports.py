"""The one AST import scanner of the layering tests (tests/unit/test_architecture.py,
tests/unit/test_acp_layering.py): which modules a source file imports, parsed, not run."""

from __future__ import annotations

import ast
from pathlib import Path


def imported_modules(path: Path, package: str | None = None) -> list[tuple[int, str]]:
    """(line, absolute module name) for every import in the file, anywhere in it (inside
    functions too), and every `importlib.import_module("literal")` call. A relative import is
    resolved against `package` (the file's own package, e.g. "shiro_neko.acp"); without one it is
    left out. `from . import a, b` names the modules `package.a` and `package.b`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    parts = package.split(".") if package else []
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0:
                if node.module:
                    found.append((node.lineno, node.module))
            elif parts:
                base = parts[: len(parts) - node.level + 1]
                names = [node.module] if node.module else [alias.name for alias in node.names]
                found += [(node.lineno, ".".join([*base, name])) for name in names]
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "import_module":
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                found.append((node.lineno, node.args[0].value))
    return found
