"""server/agent/images.py and server/state/image_store.py on hostile and odd input (issue 40):
a decompression bomb is refused undecoded, a record naming a path outside the store reads nothing,
the store stays under its bound, and the model table and its setting decide who gets images."""

from __future__ import annotations

import io
import struct
import zlib
from pathlib import Path

import pytest
from PIL import Image

from shiro_neko.agent import images
from shiro_neko.state import image_store
from shiro_neko.state.image_store import ImageStore


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (1, 2, 3)).save(out, "PNG")
    return out.getvalue()


def claimed_size(data: bytes, width: int, height: int) -> bytes:
    """`data` (a PNG) with its header claiming another size: a small file, a huge bitmap."""
    ihdr = struct.pack(">II", width, height) + data[24:29]
    return data[:16] + ihdr + struct.pack(">I", zlib.crc32(b"IHDR" + ihdr)) + data[33:]


def test_a_decompression_bomb_is_refused_before_it_is_decoded() -> None:
    bomb = claimed_size(png(1, 1), 8_000, 8_000)
    with pytest.raises(images.ImageError, match="8000x8000 pixels, over the 40,000,000 taken"):
        images.prepare(images.raw_image(bomb, "bomb.png"))
    with pytest.raises(images.ImageError, match="could not be read as an image"):  # Pillow's own guard, further up
        images.prepare(images.raw_image(claimed_size(png(1, 1), 50_000, 50_000), "bomb.png"))


def test_truncated_and_disguised_files_are_refused() -> None:
    with pytest.raises(images.ImageError, match="could not be read as an image"):
        images.prepare(images.raw_image(png(40, 40)[:60], "cut.png"))
    with pytest.raises(images.ImageError, match="is not a PNG, JPEG, GIF or WebP image"):
        images.raw_image(b"<svg onload=alert(1)>", "logo.png")
    with pytest.raises(images.ImageError, match="over the 20 MB an image may be"):
        images.raw_image(b"\x89PNG\r\n\x1a\n" + b"\0" * images.MAX_INPUT_BYTES, "huge.png")


def test_an_animated_gif_is_sent_as_its_first_frame() -> None:
    out = io.BytesIO()
    frames = [Image.new("RGB", (10, 10), c) for c in ((255, 0, 0), (0, 255, 0))]
    frames[0].save(out, "GIF", save_all=True, append_images=frames[1:])
    data, media_type, width, height = images.prepare(images.raw_image(out.getvalue(), "a.gif"))
    assert (media_type, width, height) == ("image/png", 10, 10)
    assert Image.open(io.BytesIO(data)).getpixel((0, 0))[:3] == (255, 0, 0)


def test_the_store_reads_only_its_own_names_and_stays_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ImageStore(lambda: tmp_path)
    (tmp_path / "secret.txt").write_text("key")
    assert store.get("../secret.txt") is None and store.get("secret.txt") is None
    names = [store.put(png(20 + i, 20), "image/png") for i in range(3)]
    assert store.get(names[0]) == png(20, 20)
    assert oct((tmp_path / "images" / names[0]).stat().st_mode & 0o777) == "0o600"
    monkeypatch.setattr(image_store, "MAX_TOTAL_BYTES", len(png(23, 20)) + len(png(24, 20)))
    newer = [store.put(png(23 + i, 20), "image/png") for i in range(2)]
    left = sorted(p.name for p in (tmp_path / "images").iterdir())
    assert left == sorted(newer)  # the oldest went first


def test_which_models_get_images() -> None:
    for model in ("gpt-5", "gpt-4o-mini", "openai/gpt-4.1", "claude-sonnet-4-5", "gemini-2.5-pro", "o3", "qwen2.5-vl-7b",
                  "llava:13b", "gemma3:27b"):
        assert images.accepts_images(model, None), model
    for model in ("gpt-3.5-turbo", "o3-mini", "o1-mini", "gpt-oss-120b", "qwen2.5-coder:32b", "deepseek-r1", "fake-model"):
        assert not images.accepts_images(model, None), model
    assert images.accepts_images("fake-model", True) and not images.accepts_images("gpt-5", False)
