"""`shiro-model` (issue 39) in a real batch Emacs on eglot against the real server and the fake
provider: the model picked with completing-read is the next request's `model`, `/model default`
in the chat goes back to the setting."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.clients.test_emacs import PLUGIN, _emacs
from tests.fake_provider import FakeProvider, Reply
from tests.support.lsp import server_env

SCRIPT = Path(__file__).with_name("emacs_model_test.el")


def test_shiro_model_picks_the_next_requests_model(tmp_path: Path, fake: FakeProvider) -> None:
    emacs = _emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    out = tmp_path / "result.json"
    fake.models = ["fake-model", "fake-model-large"]
    fake.script(Reply(text="hi from the large model"))
    env = server_env(tmp_path / "home", fake.base_url)
    env.update(SHIRO_EMACS_OUT=str(out), SHIRO_EMACS_PLUGIN=str(PLUGIN), SHIRO_EMACS_SERVER=json.dumps([sys.executable, "-m", "shiro_neko"]),
               SHIRO_EMACS_WORKSPACE=str(workspace), HOME=str(tmp_path / "emacs-home"))
    done = subprocess.run([emacs, "--batch", "-l", str(SCRIPT)], cwd=workspace, env=env, input="fake-model-large\n",
                          capture_output=True, text=True, timeout=240)
    assert out.exists(), done.stderr[-3000:]
    result = json.loads(out.read_text())
    assert "error" not in result, (result, done.stderr[-3000:])
    assert result["picked"] == "fake-model-large"
    assert [r.body["model"] for r in fake.main_requests] == ["fake-model-large"]
    assert result["back"] == "gpt-5" and "[model: gpt-5, from the next request]" in result["chat"], result
