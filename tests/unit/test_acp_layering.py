"""The ACP front end sits on the core, beside the LSP front end, never on it.

`server/acp/` imports the service, state and protocol types and the `agent-client-protocol`
package; never pygls, lsprotocol, the LSP package or the command glue (checked on the source,
relative imports included, and in a fresh interpreter). Of the agent it imports only
`agent/events.py`, the EventSink seam every front end implements: the rest (the session type, a
turn's outcome, tools, the disk host) it takes from the core, server/service.py (issue 36 item 13).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.imports import imported_modules

ROOT = Path(__file__).resolve().parents[2]
ACP = ROOT / "server" / "acp"
FORBIDDEN_TOP = ("pygls", "lsprotocol")
FORBIDDEN_OURS = ("lsp", "lsp_bridge", "commands", "client")  # shiro_neko.<these>


def _imports(path: Path) -> list[tuple[int, str]]:
    """Every module a file imports, relative ones resolved against shiro_neko.acp."""
    return imported_modules(path, "shiro_neko.acp")


def _forbidden(module: str) -> bool:
    parts = module.split(".")
    if parts[0] in FORBIDDEN_TOP:
        return True
    return parts[0] == "shiro_neko" and len(parts) > 1 and parts[1] in FORBIDDEN_OURS


def test_the_scanner_resolves_relative_imports(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("from ..lsp import server\nfrom . import sink\nfrom ..service import S\nimport pygls.uris\n")
    assert [m for _, m in _imports(sample)] == ["shiro_neko.lsp", "shiro_neko.acp.sink", "shiro_neko.service", "pygls.uris"]
    assert [_forbidden(m) for _, m in _imports(sample)] == [True, False, False, True]


def test_acp_package_never_imports_the_lsp_front_end() -> None:
    files = sorted(ACP.rglob("*.py"))
    assert files
    offenders = [f"{p.relative_to(ROOT)}:{line}: {m}" for p in files for line, m in _imports(p) if _forbidden(m)]
    assert not offenders, "\n".join(offenders)


AGENT_SEAM = ("shiro_neko.agent.events",)  # the EventSink and its approval types: wire-ish


def test_acp_package_talks_to_the_core_not_to_agent_internals() -> None:
    offenders = [f"{p.relative_to(ROOT)}:{line}: {m}" for p in sorted(ACP.rglob("*.py")) for line, m in _imports(p)
                 if (m == "shiro_neko.agent" or m.startswith("shiro_neko.agent.")) and m not in AGENT_SEAM]
    assert not offenders, "acp/ reaches into agent/ past the service:\n" + "\n".join(offenders)


def test_acp_package_uses_the_service_and_protocol() -> None:
    used = {m for p in ACP.rglob("*.py") for _, m in _imports(p)}
    assert {"shiro_neko.service", "shiro_neko.protocol"} <= used
    assert "acp" in {m.split(".")[0] for m in used}  # the official package does the protocol


def test_loading_the_acp_agent_loads_no_lsp_module(tmp_path: Path) -> None:
    code = (
        "import json, sys\n"
        "import shiro_neko.acp.agent, shiro_neko.acp.main\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith(('lsprotocol', 'pygls.lsp', 'pygls.server', "
        "'shiro_neko.lsp', 'shiro_neko.commands', 'shiro_neko.client')))))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout.strip().splitlines()[-1]) == []
