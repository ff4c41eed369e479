"""Images end to end through the real server (issue 40): `shiro.chat {images}`, `@shot.png`
attachments and `read_file` of an image reach the request in both wire formats, survive a restart
and resume, are downscaled when large, never go to a model that takes none, and a file named .png
that is no image is refused saying so (server/agent/images.py)."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

import pytest
from PIL import Image
from pygls.exceptions import JsonRpcException

from tests.fake_provider import Call, Reply
from tests.support.lsp import start_server, stop


def png(width: int, height: int, color: tuple[int, int, int] = (200, 30, 30)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), color).save(out, "PNG")
    return out.getvalue()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def sent_images(body: dict[str, Any]) -> list[Image.Image]:
    """Every image of a request body, decoded from its data URL: Responses `input_image`, Chat `image_url`."""
    urls: list[str] = []
    for item in body.get("input") or body.get("messages") or []:
        content = item.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            if part.get("type") == "input_image":
                urls.append(part["image_url"])
            elif part.get("type") == "image_url":
                urls.append(part["image_url"]["url"])
    images = []
    for url in urls:
        head, _, data = url.partition(",")
        assert head.startswith("data:image/") and head.endswith(";base64"), head
        images.append(Image.open(io.BytesIO(base64.b64decode(data))))
    return images


@pytest.mark.parametrize("wire", ["responses", "chat"])
async def test_pasted_image_reaches_the_request_and_survives_resume(tmp_path, fake, workspace, wire):
    h = await start_server(tmp_path, fake, workspace, settings={"wireApi": wire})
    try:
        fake.script(Reply(text="a red square"))
        first = await h.chat("what is this?", images=[{"mediaType": "image/png", "data": b64(png(64, 48)), "name": "shot.png"}])
        assert first["status"] == "completed"
        body = fake.requests[-1].body
        [image] = sent_images(body)
        assert image.size == (64, 48) and image.getpixel((1, 1))[:3] == (200, 30, 30)
        assert "[image shot.png, 64x48]" in json.dumps(body)
    finally:
        await stop(h)

    h2 = await start_server(tmp_path, fake, workspace, settings={"wireApi": wire})
    try:
        resumed = await h2.command("shiro.resume", {"id": first["sessionId"]})
        [prompt] = [m for m in resumed["messages"] if m["role"] == "user" and not m.get("context")]
        [ref] = prompt["images"]
        assert (ref["mediaType"], ref["width"], ref["height"], ref["label"]) == ("image/png", 64, 48, "shot.png")
        assert (tmp_path / "home" / "images" / ref["name"]).is_file()
        fake.script(Reply(text="still red"))
        await h2.chat("and now?")
        [again] = sent_images(fake.requests[-1].body)  # the history still carries it after resume
        assert again.size == (64, 48)
    finally:
        await stop(h2)


async def test_a_model_that_takes_no_images_gets_a_notice_and_no_image(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, settings={"model": "gpt-3.5-turbo"})
    try:
        fake.script(Reply(text="I cannot see it"))
        await h.chat("what is this?", images=[{"mediaType": "image/png", "data": b64(png(8, 8))}])
        body = fake.requests[-1].body
        assert sent_images(body) == [] and "data:image" not in json.dumps(body)
        assert "not sent: gpt-3.5-turbo does not take images" in json.dumps(body)
        notices = [e["message"] for e in h.events if e["type"] == "notice"]
        assert any("images not sent: gpt-3.5-turbo does not take images" in n for n in notices), notices
    finally:
        await stop(h)


async def test_the_setting_overrides_the_table(tmp_path, fake, workspace):
    h = await start_server(tmp_path, fake, workspace, settings={"model": "my-local-vlm", "imageInput": True})
    try:
        fake.script(Reply(text="ok"))
        await h.chat("look", images=[{"mediaType": "image/png", "data": b64(png(8, 8))}])
        assert len(sent_images(fake.requests[-1].body)) == 1
    finally:
        await stop(h)


async def test_a_large_image_is_downscaled(harness):
    harness.fake.script(Reply(text="wide"))
    await harness.chat("look", images=[{"mediaType": "image/png", "data": b64(png(4000, 1000))}])
    [image] = sent_images(harness.fake.requests[-1].body)
    assert image.size == (2048, 512)


async def test_an_attached_path_and_read_file_send_the_image(harness):
    (harness.root / "shot.png").write_bytes(png(30, 20, (0, 0, 255)))
    harness.fake.script(Reply(text="blue"))
    await harness.chat("@shot.png what colour?", attachments=["shot.png"])
    [attached] = sent_images(harness.fake.requests[-1].body)
    assert attached.getpixel((0, 0))[:3] == (0, 0, 255)

    harness.fake.script(Reply(calls=[Call("read_file", {"path": "shot.png"})]), Reply(text="it is blue"))
    await harness.chat("read it again")
    body = harness.fake.requests[-1].body
    outputs = [i for i in body["input"] if i.get("type") == "function_call_output"]
    assert "is an image (image/png" in outputs[-1]["output"]
    # After the call's output: a user message with the image (and the earlier prompt's copy).
    after = body["input"][body["input"].index(outputs[-1]) + 1]
    assert after["role"] == "user" and any(p["type"] == "input_image" for p in after["content"])
    assert len(sent_images(body)) == 2


async def test_a_file_named_png_that_is_no_image_is_refused(harness):
    (harness.root / "notes.png").write_text("just some text, not a picture\n")
    with pytest.raises(JsonRpcException) as refused:
        await harness.chat("look", attachments=["notes.png"])
    assert "notes.png" in str(refused.value) and "is not a PNG, JPEG, GIF or WebP image" in str(refused.value)
    with pytest.raises(JsonRpcException) as bad:
        await harness.chat("look", images=[{"mediaType": "image/png", "data": b64(b"GIF? no, text")}])
    assert "is not a PNG, JPEG, GIF or WebP image" in str(bad.value)
    assert harness.fake.requests == []  # nothing reached the model

    harness.fake.script(Reply(calls=[Call("read_file", {"path": "notes.png"})]), Reply(text="not an image"))
    await harness.chat("read notes.png")
    [result] = [e for e in harness.events if e["type"] == "tool_result"]
    assert result["isError"] and "is not a PNG, JPEG, GIF or WebP image" in result["output"]
    assert sent_images(harness.fake.requests[-1].body) == []
