"""Issue 39 in real VS Code (code-server in headless Chromium, the default sidebar width, the real
server): a new user with no key and no endpoint, against a key-checking endpoint (the fake provider
answering 401 like the real API for any other key). The panel offers "Set up model" on first run and
on the missing-key error row; a wrong key is refused by the endpoint and said so in the model step;
the right key from the panel makes a turn succeed; plan mode on and off from the panel; `/model`
picks another model, which the next request carries; the key is in no file VS Code or the server
wrote. Screenshots in artifacts/vscode-e2e/model-*.png (dark and light). The driver is
clients/vscode/test/e2e/model_scenario.mjs.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.clients.test_vscode import ARTIFACTS, _need_tools
from tests.clients.vscode_harness import VsCode, server_env
from tests.fake_provider import FakeProvider, Reply

pytestmark = pytest.mark.xdist_group("heavy")

KEY = "sk-proxy-key-5f1c0e9a7b3d"
WRONG = "sk-wrong-key-000000000"
PROMPT = "Say hello"
ANSWER = "Hello from the proxy."
PLAN_PROMPT = "Plan the greeting"
PLAN_ANSWER = "The plan: read hello.py, then change the greeting."
SECOND_PROMPT = "And once more"
SECOND_ANSWER = "Hello again, from the other model."


def test_set_up_model_from_the_panel(tmp_path: Path, fake: FakeProvider) -> None:
    _need_tools()
    fake.api_key = KEY
    fake.models = ["fake-model", "fake-model-large"]
    fake.script(Reply(text=ANSWER), Reply(text=PLAN_ANSWER), Reply(text=SECOND_ANSWER))
    env = {k: v for k, v in server_env(tmp_path / "home", fake.base_url).items() if not k.startswith("OPENAI_")}
    vs = VsCode(base=tmp_path, env=env)
    try:
        vs.prepare()
        vs.start()
        shots = ARTIFACTS / "model"
        for old in shots.glob("*.png"):
            old.unlink()
        r = vs.drive("model", shots, prompt=PROMPT, answer=ANSWER, secondPrompt=SECOND_PROMPT, secondAnswer=SECOND_ANSWER,
                     baseUrl=fake.base_url, apiKey=KEY, wrongKey=WRONG, firstModel="fake-model-large",
                     secondModel="fake-model", planPrompt=PLAN_PROMPT, planAnswer=PLAN_ANSWER)
    finally:
        vs.stop()
    assert r["ok"], "\n".join(r["errors"]) + "\n" + r["driverLog"] + "\n" + vs.log.read_text(errors="replace")[-2000:]
    assert r["sidebarWidth"] < 400, r["sidebarWidth"]
    assert any("Set up model" in row for row in r["firstRun"]), r["firstRun"]
    assert "No API key" in r["missingKeyError"] and "Set up model" in r["missingKeyError"], r["missingKeyError"]
    assert r["keyInputType"] == "password" and r["keyMasked"] == "password"
    # The wrong key reached the endpoint and was refused; the picker said so.
    assert any("refused the key" in row for row in r["refusedRows"]), r["refusedRows"]
    assert any(u.headers.get("authorization") == f"Bearer {WRONG}" for u in fake.unauthorized), fake.unauthorized
    # The right key: the endpoint's models listed, the turn answered with it, on the model picked.
    assert any("fake-model-large" in row and "endpoint" in row for row in r["modelRows"]), r["modelRows"]
    assert any(ANSWER in row for row in r["afterSetUp"]), r["afterSetUp"]
    chats = fake.main_requests
    assert [c.headers["authorization"] for c in chats] == [f"Bearer {KEY}"] * 3
    assert [c.body["model"] for c in chats] == ["fake-model-large", "fake-model-large", "fake-model"]
    # Plan mode and back from the panel: the plan-mode turn was offered no writing tool.
    assert "Start" in r["planReady"] and r["backToAct"], r["planReady"]
    tools = [{t.get("name") for t in c.body.get("tools", [])} for c in chats]
    assert "edit_file" in tools[0] and "edit_file" not in tools[1] and "edit_file" in tools[2], tools
    assert any("Model:" in row and "fake-model" in row for row in r["gaugeRows"]), r["gaugeRows"]
    # The key is in no file: not settings.json (baseUrl and model are), not the server's home,
    # not code-server's logs.
    settings = vs.settings_file.read_text()
    assert fake.base_url in settings and '"shiro.model": "fake-model-large"' in settings, settings
    driver_config = tmp_path / "drive-model.config.json"  # the test's own message to the driver
    leaks = [p for p in tmp_path.rglob("*") if p.is_file() and not p.is_symlink() and p != driver_config and _holds(p, KEY)]
    assert leaks == [], leaks
    expected = {"01-first-run", "02-missing-key-error", "03-key-refused", "04-key-step", "05-model-picker",
                "06-turn-after-set-up", "07-plan-mode", "07b-act-mode", "08-model-picked", "09-gauge-model", "10-light-model-picker", "11-light-panel"}
    assert expected <= set(r["shots"]), r["shots"].keys()
    for name in expected:
        assert Path(r["shots"][name]["path"]).stat().st_size > 10_000


def _holds(path: Path, text: str) -> bool:
    try:
        if path.stat().st_size > 50 * 1024 * 1024:
            return False
        return text.encode() in path.read_bytes()
    except OSError:
        return False

