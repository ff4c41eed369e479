"""A hostile repository for the safe-path tests (issue 35 item 1): every module a real run of
the server and the clients imports, planted at the workspace root as `<name>.py` (or a
`<name>/__init__.py` package where the real one is a package) that records its import.

A plain `python -m shiro_neko` started in the workspace has the workspace first on sys.path, so
each of these would be imported in place of the real module. The names are computed, not
listed: the top-level names of sys.modules after a real load of everything the server (the warm
server's preload: pygls, lsprotocol, the SDK, our modules), the terminal client and the ACP front
import, plus every top-level module importable from this interpreter's path (the modules a turn
imports lazily included). Frozen and built-in modules are left out: the path never reaches them.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

_LIST_NAMES = r"""
import _imp, json, pkgutil, sys
from shiro_neko.startup import warm
warm._preload()
import shiro_neko.client.main, shiro_neko.client.interactive, shiro_neko.client.oneshot, shiro_neko.client.turns
try:
    import acp, shiro_neko.acp.main, shiro_neko.acp.agent
except ImportError:  # the ACP SDK is an optional install
    pass
names = {}
for name, module in list(sys.modules.items()):
    top = name.partition(".")[0]
    names[top] = names.get(top, False) or hasattr(sys.modules.get(top), "__path__")
for info in pkgutil.iter_modules():
    names.setdefault(info.name, info.ispkg)
keep = {n: pkg for n, pkg in names.items()
        if n.isidentifier() and n not in sys.builtin_module_names and not _imp.is_frozen(n)
        and n not in ("__main__", "__mp_main__")}
print(json.dumps(keep))
"""


@functools.cache
def module_names() -> dict[str, bool]:
    """name -> whether the real module is a package."""
    with tempfile.TemporaryDirectory(prefix="shiro-names-") as scratch:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_"))}
        env["SHIRO_NEKO_HOME"] = str(Path(scratch) / "home")
        done = subprocess.run([sys.executable, "-P", "-c", _LIST_NAMES], cwd=scratch, env=env,
                              capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    names: dict[str, bool] = json.loads(done.stdout.strip().splitlines()[-1])
    # The names this issue is about, and our own package, whatever the run imported.
    for must in ("msgspec", "typing_extensions", "pygls", "openai", "json", "asyncio", "shiro_neko"):
        assert must in names, must
    return names


def plant(root: Path, marks: Path) -> int:
    """Plant every module at `root`; each writes `marks/<name>` when imported. The count planted."""
    names = module_names()
    for name, package in names.items():
        code = (f"import os as _os\n_os.makedirs({str(marks)!r}, exist_ok=True)\n"
                f"open(_os.path.join({str(marks)!r}, {name!r}), 'w').close()\n")
        if package:
            (root / name).mkdir(exist_ok=True)
            (root / name / "__init__.py").write_text(code)
        else:
            (root / f"{name}.py").write_text(code)
    return len(names)


def imported(marks: Path) -> list[str]:
    """The planted modules that ran."""
    return sorted(p.name for p in marks.iterdir()) if marks.exists() else []
