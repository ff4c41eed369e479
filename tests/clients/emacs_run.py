"""What every batch Emacs test (tests/clients/test_emacs*.py) shares: finding Emacs with eglot, and
running one script (tests/clients/emacs_*_test.el, on tests/clients/emacs_harness.el) against the
real server and the fake provider, returning the JSON the script wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.lsp import server_env

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "clients" / "emacs"


def find_emacs() -> str:
    """Emacs with eglot; a skip without it (a failure in CI, where .ci/run installs it)."""
    emacs = shutil.which("emacs")
    if emacs is None:
        if os.environ.get("CI") == "true":
            pytest.fail("emacs is needed in CI (.ci/run installs emacs-nox and elpa-eglot)")
        pytest.skip("emacs is missing (Debian: apt-get install emacs-nox elpa-eglot)")
    probe = subprocess.run([emacs, "--batch", "--eval", "(require 'eglot)"], capture_output=True, text=True, timeout=60)
    if probe.returncode != 0:
        if os.environ.get("CI") == "true":
            pytest.fail(f"eglot does not load: {probe.stderr[-500:]}")
        pytest.skip("eglot is missing (Debian: apt-get install elpa-eglot)")
    return emacs


def run_emacs(emacs: str, script: str, tmp_path: Path, workspace: Path, base_url: str, *,
              stdin_text: str | None = None, timeout: float = 240, **env: str) -> dict[str, Any]:
    """Run tests/clients/<script> in batch Emacs with the server's home in tmp_path/home; the
    script's results, checked to have no "error". stdin_text: what the minibuffer reads (stdin is
    empty without it); env: more environment variables (SHIRO_MODEL, the script's own)."""
    out = tmp_path / "result.json"
    full_env = server_env(tmp_path / "home", base_url, **env)
    full_env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN), SHIRO_EMACS_WORKSPACE=str(workspace),
                    SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]),
                    HOME=str(tmp_path / "emacs-home"))
    command = [emacs, "--batch", "-l", str(Path(__file__).with_name(script))]
    # subprocess.run takes either input or stdin
    stdin = subprocess.DEVNULL if stdin_text is None else None
    done = subprocess.run(command, cwd=workspace, env=full_env, input=stdin_text, stdin=stdin, capture_output=True,
                          text=True, timeout=timeout)
    assert out.exists(), done.stderr[-3000:]
    result: dict[str, Any] = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    return result
