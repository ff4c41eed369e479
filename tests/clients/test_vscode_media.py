"""Issue 40 in real VS Code (code-server in headless Chromium, the real server): a PNG pasted into
the composer shows as a removable thumbnail chip, goes with the prompt, and the request the fake
provider got holds it (`input_image`, the same pixels); a `task` subagent's calls show nested under
the task call. Screenshots in artifacts/vscode-e2e/media/. The driver is
clients/vscode/test/e2e/media_scenario.mjs."""

from __future__ import annotations

import base64
import io
from pathlib import Path

import pytest
from PIL import Image

from tests.clients.test_vscode import ARTIFACTS, _need_tools
from tests.clients.vscode_harness import VsCode, server_env
from tests.fake_provider import Call, FakeProvider, Reply

pytestmark = pytest.mark.xdist_group("heavy")

PROMPT = "What does this screenshot show?"
ANSWER = "A red box on a white page."
TASK_PROMPT = "Find where the greeting is printed"
TASK_ANSWER = "The greeting is printed in hello.py."


def _png() -> bytes:
    image = Image.new("RGB", (120, 80), (255, 255, 255))
    for x in range(30, 90):
        for y in range(20, 60):
            image.putpixel((x, y), (220, 20, 20))
    out = io.BytesIO()
    image.save(out, "PNG")
    return out.getvalue()


def test_pasted_image_and_nested_subagent(tmp_path: Path, fake: FakeProvider) -> None:
    _need_tools()
    task = Call("task", {"description": "find the greeting", "prompt": "Where is the greeting printed?"}, "call_task")
    fake.script(
        Reply(text=ANSWER),
        Reply(calls=[task]),
        Reply(calls=[Call("grep", {"pattern": "hello"}, "call_sub_grep"), Call("read_file", {"path": "hello.py"}, "call_sub_read")]),
        Reply(text="hello.py line 1 prints the greeting."),
        Reply(text=TASK_ANSWER),
    )
    vs = VsCode(base=tmp_path, env=server_env(tmp_path / "home", fake.base_url))  # the default model, gpt-5, takes images
    try:
        vs.prepare()
        (vs.workspace / "hello.py").write_text("print('hello')\n")
        vs.start()
        shots = ARTIFACTS / "media"
        for old in shots.glob("*.png"):
            old.unlink()
        r = vs.drive("media", shots, prompt=PROMPT, answer=ANSWER, png=base64.b64encode(_png()).decode(),
                     imageName="screenshot.png", taskPrompt=TASK_PROMPT, taskAnswer=TASK_ANSWER)
    finally:
        vs.stop()
    assert r["ok"], "\n".join(r["errors"]) + "\n" + r["driverLog"] + "\n" + vs.log.read_text(errors="replace")[-2000:]
    assert "screenshot.png" in r["chip"]["text"] and r["chip"]["width"] == 120
    assert r["draftAfterPaste"] == PROMPT and r["chipsAfterSend"] == 0
    assert any("image: screenshot.png" in row for row in r["afterImage"]), r["afterImage"]

    first = fake.requests[0].body
    [user] = [i for i in first["input"] if i.get("role") == "user" and PROMPT in str(i)]
    images = [p["image_url"] for p in user["content"] if p["type"] == "input_image"]
    assert len(images) == 1  # the second paste was removed before sending
    sent = Image.open(io.BytesIO(base64.b64decode(images[0].split(",", 1)[1])))
    assert sent.size == (120, 80) and sent.getpixel((60, 40))[:3] == (220, 20, 20)

    assert len(r["nested"]) >= 2 and all(indent > 0 for indent in r["nestedIndent"]), r
    assert any("hello" in row for row in r["nested"]), r["nested"]
    for name in ("01-pasted-image", "02-image-sent", "03-subagent-nested"):
        assert Path(r["shots"][name]["path"]).stat().st_size > 10_000
