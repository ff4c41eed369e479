"""A read-only state home: chats still run, a notice says nothing will be saved and why,
`remember` and `/save` refuse with that reason. The home is made read-only with a bubblewrap
mount (root ignores permission bits, so chmod could not show it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_a_read_only_home_still_chats_and_refuses_saves_with_the_reason(tmp_path: Path) -> None:
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        pytest.skip("bubblewrap is not installed")
    home, root = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    root.mkdir()
    (root / "a.py").write_text("print(1)\n")
    env = {**os.environ, "SHIRO_NEKO_HOME": str(home), "OPENAI_API_KEY": "sk-test-not-a-real-key",
           "PYTHONPATH": str(REPO)}
    probe = subprocess.run(
        [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(home), str(home), "--",
         sys.executable, "-m", "tests.support.readonly_home_probe", str(root)],
        cwd=REPO, env=env, capture_output=True, text=True, timeout=120,
    )
    if probe.returncode != 0 and "bwrap:" in probe.stderr:
        pytest.skip(f"bubblewrap cannot mount here: {probe.stderr.strip()[:200]}")
    assert probe.returncode == 0, probe.stderr[-3000:]
    out = json.loads(probe.stdout.strip().splitlines()[-1])
    assert out["chat1"] == ["completed", None] and out["chat2"] == ["completed", None], out
    assert out["remember"].startswith("refused: nothing can be saved:") and "read-only" in out["remember"], out
    assert out["save"].startswith("refused: nothing can be saved:"), out
    assert any("nothing can be saved" in n and "read-only" in n for n in out["notices"]), out
    assert not any(p.name for p in home.iterdir())  # nothing got written
