"""`shiro -p --image PATH` end to end: the real console script, the real server it starts, the real
HTTP fake provider. The image goes with the one-shot prompt as `shiro.chat`'s `images` (as an
`@/tmp/shot.png` typed in the chat does: clients/terminal/image_attach.py) and reaches the
provider on both wire APIs; a missing file, a file that is no image and one too big stop the run
with exit status 2 and a clear line on stderr, before any request.
"""

from __future__ import annotations

import base64
import io
import os
from pathlib import Path
from typing import Any

import pytest
from PIL import Image

from tests.clients.test_terminal import run
from tests.fake_provider import FakeProvider, Reply
from tests.support import warm_pool
from tests.support.lsp import server_env


def _png(path: Path) -> Path:
    image = Image.new("RGB", (64, 40), (255, 255, 255))
    image.putpixel((10, 10), (220, 20, 20))
    image.save(path, "PNG")
    return path


def _sent_images(api: str, body: dict[str, Any]) -> list[str]:
    """The data URLs of the images in the request's user messages, as each wire API carries them."""
    urls: list[str] = []
    for item in body.get("input" if api == "responses" else "messages", []):
        content = item.get("content") if item.get("role") == "user" else None
        for part in content if isinstance(content, list) else []:
            if api == "responses" and part.get("type") == "input_image":
                urls.append(part["image_url"])
            elif api == "chat" and part.get("type") == "image_url":
                urls.append(part["image_url"]["url"])
    return urls


# Cold: the client sends the chat once connected; warm: the chat with its image goes ahead while
# the client still imports (clients/terminal/chat_ahead.py), and must be the only one.
@pytest.mark.parametrize(("wire_api", "warm"), [("responses", False), ("chat", False), ("responses", True)])
def test_print_sends_the_image_flag_with_the_prompt(tmp_path: Path, workspace: Path, fake: FakeProvider, wire_api: str,
                                                    warm: bool) -> None:
    shot = _png(tmp_path / "x.png")  # outside the workspace: read by the client, as a user's screenshot
    fake.script(Reply(text="a white picture with a red dot"))
    env = server_env(tmp_path / "home", fake.base_url)
    env = warm_pool.shiro_env(env) if warm else env
    done = run(["-p", "what is this?", "--image", str(shot), "--wire-api", wire_api], workspace, env)
    assert done.returncode == 0 and "a white picture with a red dot" in done.stdout, done
    (request,) = fake.main_requests
    assert request.api == wire_api
    (url,) = _sent_images(wire_api, request.body)
    assert url.startswith("data:image/")
    sent = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))).convert("RGB")
    assert sent.size == (64, 40) and sent.getpixel((10, 10)) == (220, 20, 20)
    assert "what is this?" in str(request.body)


def test_a_bad_image_flag_exits_2_before_anything_is_sent(tmp_path: Path, workspace: Path, fake: FakeProvider) -> None:
    env = server_env(tmp_path / "home", fake.base_url)
    missing = run(["-p", "what is this?", "--image", "nowhere.png"], workspace, env, timeout=60)
    assert missing.returncode == 2 and "--image nowhere.png: no such file" in missing.stderr, missing
    text = workspace / "notes.png"
    text.write_text("not a picture\n")
    not_image = run(["-p", "what is this?", "--image", str(text)], workspace, env, timeout=60)
    assert not_image.returncode == 2 and "not a PNG, JPEG, GIF or WebP image" in not_image.stderr, not_image
    big = tmp_path / "huge.png"
    with big.open("wb") as f:  # sparse: 21 MB on paper, nothing on disk
        f.truncate(21 * 1024 * 1024)
    too_big = run(["-p", "what is this?", "--image", str(_png(tmp_path / "ok.png")), "--image", str(big)], workspace, env, timeout=60)
    assert too_big.returncode == 2 and "huge.png is 21.0 MB: images go up to 20 MB" in too_big.stderr, too_big
    assert fake.requests == [] and not (tmp_path / "home" / "sessions").exists()
