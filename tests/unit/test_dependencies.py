"""Every package the server imports is declared in pyproject.toml (docs/dependencies.md), not left
to arrive with another package that may drop it."""

from __future__ import annotations

import ast
import re
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "server").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"shiro_neko", "__future__"}


def _declared() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return {re.split(r"[<>=!~ ;\[]", spec, maxsplit=1)[0].lower().replace("_", "-") for spec in project["dependencies"]}


def test_every_imported_package_is_declared() -> None:
    owners = packages_distributions()
    declared = _declared()
    undeclared = {
        module: owners.get(module, ["?"])
        for module in _imported_top_levels()
        if not any(d.lower().replace("_", "-") in declared for d in owners.get(module, []))
    }
    assert undeclared == {}, f"imported by server/ but not declared in pyproject.toml: {undeclared}"
