"""Bytecode for the package under test, as an installed user has it.

`pip install` of the wheel compiles every module at install time; an editable install writes
`__pycache__` on first import, unless PYTHONDONTWRITEBYTECODE is set, as it is in this machine's
agent shells: then every server start recompiled our ~100 modules (~0.1-0.2 s of CPU), a cost no
installed user pays and that the benches' warm-up run could not remove. So start-up benches
compile the package first (stale files are never used: Python checks each source's mtime).
"""

from __future__ import annotations

import subprocess


def compile_package(python: str) -> None:
    # Two folders in a source checkout: server/ and the terminal client's clients/terminal/
    # (pyproject.toml's package-dir); one in an installed wheel (then the second is inside the first).
    code = "import os, shiro_neko, shiro_neko.client as c; print(os.path.dirname(shiro_neko.__file__)); print(os.path.dirname(c.__file__))"
    where = subprocess.run([python, "-c", code], check=True, capture_output=True, text=True).stdout.splitlines()
    subprocess.run([python, "-m", "compileall", "-q", *where], check=True, stdout=subprocess.DEVNULL)
