"""`shiro-model` (issue 39) in a real batch Emacs on eglot against the real server and the fake
provider: the model picked with completing-read is the next request's `model`, `/model default`
in the chat goes back to the setting."""

from __future__ import annotations

from pathlib import Path

from tests.clients.emacs_run import find_emacs, run_emacs
from tests.fake_provider import FakeProvider, Reply


def test_shiro_model_picks_the_next_requests_model(tmp_path: Path, fake: FakeProvider) -> None:
    emacs = find_emacs()
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    fake.models = ["fake-model", "fake-model-large"]
    fake.script(Reply(text="hi from the large model"))
    result = run_emacs(emacs, "emacs_model_test.el", tmp_path, workspace, fake.base_url, stdin_text="fake-model-large\n")
    assert result["picked"] == "fake-model-large"
    assert [r.body["model"] for r in fake.main_requests] == ["fake-model-large"]
    assert result["back"] == "gpt-5" and "[model: gpt-5, from the next request]" in result["chat"], result
