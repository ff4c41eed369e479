"""Real VS Code for tests and benches: code-server (VS Code in the browser) with the packaged
extension, the real server and the fake provider, driven in headless Chromium by playwright-core
(`clients/vscode/test/e2e/drive.mjs`).

What it needs, and where it looks (`.ci/run` installs all three):
- code-server: `$SHIRO_CODE_SERVER`, else `.cache/code-server/node_modules/.bin/code-server`
  in the repository (`.ci/install-code-server.sh .cache/code-server`);
- Chromium: `$SHIRO_CHROMIUM`, else `/usr/bin/chromium` (Debian's package);
- the extension's npm packages: `clients/vscode/node_modules` (`npm ci` there).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
EXTENSION = REPO / "clients" / "vscode"
DRIVER = EXTENSION / "test" / "e2e" / "drive.mjs"


def code_server_path() -> Path | None:
    candidates = [os.environ.get("SHIRO_CODE_SERVER"), REPO / ".cache/code-server/node_modules/.bin/code-server"]
    for c in candidates:
        if c and Path(c).exists():
            return Path(c)
    return None


def chromium_path() -> Path | None:
    for c in (os.environ.get("SHIRO_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium")):
        if c and Path(c).exists():
            return Path(c)
    return None


def missing() -> str | None:
    """Why real VS Code cannot run here (None: it can)."""
    if code_server_path() is None:
        return "code-server is not installed (.ci/install-code-server.sh .cache/code-server, or set SHIRO_CODE_SERVER)"
    if chromium_path() is None:
        return "Chromium is not installed (apt-get install chromium, or set SHIRO_CHROMIUM)"
    if not (EXTENSION / "node_modules" / "playwright-core").exists():
        return "the extension's npm packages are missing (npm ci in clients/vscode)"
    if shutil.which("node") is None:
        return "node is not installed"
    return None


_vsix: Path | None = None


def build_vsix() -> Path:
    """Packages the extension once per process (scripts/package-vsix.sh)."""
    global _vsix
    if _vsix is None:
        out = Path(tempfile.mkdtemp(prefix="shiro-vsix-")) / "shiro-neko.vsix"
        # PYTHON builds the server's wheel the .vsix carries (the one-click set-up installs it).
        subprocess.run(["bash", str(EXTENSION / "scripts" / "package-vsix.sh"), str(out)], check=True,
                       capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHON": sys.executable})
        _vsix = out
    return _vsix


@dataclass
class VsCode:
    """One code-server with its own user data, extensions, workspace and SHIRO_NEKO_HOME."""

    base: Path
    env: dict[str, str]
    settings: dict[str, Any] = field(default_factory=dict)
    proc: subprocess.Popen[str] | None = None
    url: str = ""

    @property
    def data(self) -> Path:
        return self.base / "data"

    @property
    def extensions(self) -> Path:
        return self.base / "ext"

    @property
    def workspace(self) -> Path:
        return self.base / "workspace"

    @property
    def home(self) -> Path:
        return self.base / "home"

    @property
    def settings_file(self) -> Path:
        return self.data / "User" / "settings.json"

    @property
    def log(self) -> Path:
        return self.base / "code-server.log"

    def output_log(self) -> str:
        """The extension's "Shiro Neko" output channel as code-server logged it (for a failure's message)."""
        return "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(self.data.glob("logs/*/exthost*/output_logging_*/*Shiro Neko.log")))

    def prepare(self) -> None:
        cs = str(code_server_path())
        (self.data / "User").mkdir(parents=True, exist_ok=True)
        self.workspace.mkdir(parents=True, exist_ok=True)
        self.home.mkdir(parents=True, exist_ok=True)
        settings = {
            "workbench.startupEditor": "none",
            "telemetry.telemetryLevel": "off",
            "workbench.colorTheme": "Default Dark Modern",
            "security.workspace.trust.enabled": False,
            "extensions.autoCheckUpdates": False,
            "extensions.autoUpdate": False,
            "workbench.tips.enabled": False,
            "chat.commandCenter.enabled": False,
            "shiro.server.path": str(Path(sys.executable).with_name("shiro-lsp")),
            **self.settings,
        }
        self.settings_file.write_text(json.dumps(settings, indent=2))
        (self.base / "config.yaml").write_text("auth: none\n")
        subprocess.run([cs, "--config", str(self.base / "config.yaml"), "--user-data-dir", str(self.data),
                        "--extensions-dir", str(self.extensions), "--install-extension", str(build_vsix())],
                       check=True, capture_output=True, text=True, timeout=300, env=self.env)

    def start(self) -> None:
        cs = str(code_server_path())
        log = self.log.open("a")
        # A process group of its own: code-server leaves helpers behind a plain kill.
        self.proc = subprocess.Popen(
            [cs, "--config", str(self.base / "config.yaml"), "--auth", "none", "--bind-addr", "127.0.0.1:0",
             "--user-data-dir", str(self.data), "--extensions-dir", str(self.extensions),
             "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust", str(self.workspace)],
            stdout=log, stderr=subprocess.STDOUT, text=True, env=self.env, start_new_session=True,
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            m = re.search(r"HTTP server listening on (http://127\.0\.0\.1:\d+)", self.log.read_text(errors="replace"))
            if m:
                self.url = f"{m.group(1)}/?folder={self.workspace}"
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise RuntimeError(f"code-server did not start:\n{self.log.read_text(errors='replace')[-3000:]}")

    def stop(self) -> None:
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGTERM)
            self.proc.wait(timeout=15)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.proc = None

    def drive(self, scenario: str, shots: Path, timeout: float = 600, **extra: Any) -> dict[str, Any]:
        cfg = {
            "scenario": scenario,
            "url": self.url,
            "shots": str(shots),
            "settingsFile": str(self.settings_file),
            "chromium": str(chromium_path()),
            "out": str(self.base / f"drive-{scenario}.json"),
            **extra,
        }
        cfg_path = self.base / f"drive-{scenario}.config.json"
        cfg_path.write_text(json.dumps(cfg))
        proc = subprocess.run(["node", str(DRIVER), str(cfg_path)], cwd=EXTENSION, capture_output=True, text=True,
                              timeout=timeout)
        try:
            result = json.loads(Path(cfg["out"]).read_text())
        except (OSError, ValueError):
            result = {"ok": False, "errors": [f"the driver wrote no result (rc {proc.returncode})"]}
        result["driverLog"] = proc.stderr[-4000:]
        return result


def server_env(home: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "SHIRO_", "VSCODE_"))}
    env.update({"SHIRO_NEKO_HOME": str(home), "OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": "sk-test-not-a-real-key"})
    return env
