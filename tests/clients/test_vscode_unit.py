"""The VS Code extension's own checks, driven from pytest so the one test command runs them:
the TypeScript type check and the unit tests (`node --test` on esbuild-bundled tests: store,
coalescer, markdown streaming and sanitising, CSP, composer, gauge, task items, server lookup).
Skips locally without the npm packages; fails under CI=true."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.clients.vscode_harness import EXTENSION


def _npm_ready() -> None:
    why = None
    if shutil.which("node") is None or shutil.which("npm") is None:
        why = "node/npm are not installed"
    elif not (EXTENSION / "node_modules" / "esbuild").exists():
        why = "the extension's npm packages are missing (npm ci in clients/vscode)"
    if why:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI must run the extension's tests: {why}")
        pytest.skip(why)


def _run(*cmd: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=EXTENSION, capture_output=True, text=True, timeout=600)


def test_extension_typechecks() -> None:
    _npm_ready()
    r = _run("npx", "--no-install", "tsc", "-p", ".", "--noEmit")
    assert r.returncode == 0, r.stdout + r.stderr


def test_extension_unit_tests() -> None:
    _npm_ready()
    r = _run("npm", "test", "--silent")
    assert r.returncode == 0, r.stdout[-6000:] + r.stderr[-3000:]
    assert "# fail 0" in r.stdout and "# pass " in r.stdout, r.stdout[-2000:]


def test_protocol_types_are_generated_from_the_schema() -> None:
    """`src/protocol.ts` is json-schema-to-typescript's output for docs/protocol.schema.json."""
    _npm_ready()
    schema = EXTENSION.parents[1] / "docs" / "protocol.schema.json"
    if not schema.exists():
        pytest.skip("docs/protocol.schema.json is not generated yet")
    r = _run("node", "scripts/gen-protocol.mjs", "--check")
    assert r.returncode == 0, r.stdout + r.stderr


def test_command_and_notification_types_come_from_the_generated_protocol() -> None:
    """Every `shiro.*` command's arguments and result and every `shiro/*` name are taken from
    src/protocol.ts (through src/wire.ts, checked by the type check above): no call spells its
    result type (`execute<…>`) and no `shiro/…` wire name is written elsewhere (issue 36 item 14)."""
    import re

    src = EXTENSION / "src"
    offenders = []
    for path in sorted(src.rglob("*.ts")):
        if path.name in ("protocol.ts", "wire.ts"):
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//", 1)[0] if not line.lstrip().startswith(("*", "/*")) else ""  # comments may name them
            if re.search(r"\.execute<", code) or re.search(r"['\"]shiro/[A-Za-z]", code):
                offenders.append(f"{path.relative_to(EXTENSION)}:{number}: {line.strip()}")
    assert offenders == [], "\n".join(offenders)
