"""`:ShiroModel` (issue 39) in a real headless Neovim against the real server and the fake
provider: the picker (vim.ui.select) offers the endpoint's models then the settings', the one
picked is the next request's `model`, `:ShiroModel default` goes back to the setting."""

from __future__ import annotations

from pathlib import Path

from tests.clients.test_nvim import _run, nvim  # noqa: F401 - the fixture
from tests.fake_provider import FakeProvider, Reply

SCRIPT = Path(__file__).with_name("nvim_model_test.lua")


def test_shiro_model_picks_from_the_endpoint_and_the_next_request_uses_it(nvim: Path, fake: FakeProvider, tmp_path: Path) -> None:  # noqa: F811
    fake.models = ["fake-model", "fake-model-large"]
    fake.script(Reply(text="hi from the large model"))
    result, _, _ = _run(nvim, fake, tmp_path, SCRIPT)
    assert result["picked_from"][:2] == ["* fake-model", "  fake-model-large"], result["picked_from"]
    assert result["picked_from"][-1] == "Set up model: endpoint and key…", result["picked_from"]
    assert [r.body["model"] for r in fake.main_requests] == ["fake-model-large"]
    assert any("model fake-model (from the next request)" in n["msg"] for n in result["notifications"]), result
