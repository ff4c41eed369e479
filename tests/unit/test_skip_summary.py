"""`pytest -q` without `.ci/setup`'s installs skips the tests whose tools are missing; its last
line names them, why, and the command that installs them (tests/conftest.py)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

from tests.conftest import skipped_line

ROOT = Path(__file__).resolve().parents[2]


def _skipped(reason: str) -> SimpleNamespace:
    return SimpleNamespace(longrepr=("tests/x.py", 3, f"Skipped: {reason}"))


def test_one_line_groups_the_reasons_most_first() -> None:
    reports = [_skipped("bubblewrap is not available")] * 3 + [_skipped("emacs is missing")]
    assert skipped_line(reports) == (
        "4 skipped: bubblewrap is not available (3); emacs is missing (1). `bash .ci/setup` installs what they need."
    )
    assert skipped_line([]) is None


def test_a_run_with_skips_ends_with_the_line(tmp_path: Path) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\n")  # not the project's addopts (workers)
    (tmp_path / "test_x.py").write_text(
        "import pytest\n"
        "def test_a():\n    pytest.skip('node is missing')\n"
        "def test_b():\n    pytest.skip('node is missing')\n"
        "def test_c():\n    pass\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:cacheprovider", "-p", "tests.conftest",
         "-c", str(tmp_path / "pytest.ini"), "--rootdir", str(tmp_path), str(tmp_path)],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )
    lines = run.stdout.strip().splitlines()
    assert "2 skipped: node is missing (2). `bash .ci/setup` installs what they need." == lines[-1], run.stdout
