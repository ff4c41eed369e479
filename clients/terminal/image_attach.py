"""Images typed into the terminal's prompt (issue 40): `@shot.png` inside the workspace goes as an
attachment the server reads and checks; `@/tmp/shot.png`, `@~/Desktop/shot.png`, or a path to an
image pasted or dropped as it is (`'/home/me/Screenshot 1.png'`, what a terminal types for a drop)
is read here and sent as `shiro.chat`'s `images` (the server checks, downscales and stores them:
server/agent/images.py). `shiro -p --image PATH` sends its files the same way, each checked here
first (`flag_images`): a missing file, one that is no image, or one too big stops the run before
anything is sent."""

from __future__ import annotations

import base64
import re
import shlex
from pathlib import Path
from typing import Any

from ..model.image_format import sniff

SUFFIXES = {".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp"}
MAX_BYTES = 20 * 1024 * 1024  # the server's MAX_INPUT_BYTES
MAX_IMAGES = 8

# An absolute or home path to an image file: quoted (a drop, with spaces) or bare, `@` or not.
_PATH = re.compile(r"""(?:^|(?<=\s))@?('(?:[^']+)'|"(?:[^"]+)"|(?:~|/)[^\s'"]+)""")


def is_image(name: str) -> bool:
    return Path(name).suffix.lower() in SUFFIXES


def outside_images(text: str) -> tuple[list[dict[str, Any]], list[str]]:
    """The images named by absolute or home paths in `text`: (shiro.chat images, notes to show)."""
    images: list[dict[str, Any]] = []
    notes: list[str] = []
    for match in _PATH.finditer(text):
        raw = match.group(1)
        name = shlex.split(raw)[0] if raw[0] in "'\"" else raw.rstrip(".,;:!?)")
        if not is_image(name):
            continue
        path = Path(name).expanduser()
        if not path.is_file():
            continue
        if len(images) >= MAX_IMAGES:
            notes.append(f"not attached: {name} (at most {MAX_IMAGES} images with one prompt)")
            continue
        size = path.stat().st_size
        if size > MAX_BYTES:
            notes.append(f"not attached: {name} is {size / 1048576:.1f} MB (images up to {MAX_BYTES // 1048576} MB)")
            continue
        data = path.read_bytes()
        images.append({"mediaType": SUFFIXES[path.suffix.lower()], "data": base64.b64encode(data).decode("ascii"),
                       "name": path.name})
        notes.append(f"attached image {path.name} ({max(1, size // 1024)} KB)")
    return images, notes


class ImageFlagError(ValueError):
    """An `--image` that cannot go: the text names the file, why, and what to do."""


def flag_images(paths: list[str]) -> list[dict[str, Any]]:
    """`--image` files as `shiro.chat` images; ImageFlagError on the first that cannot go."""
    if len(paths) > MAX_IMAGES:
        raise ImageFlagError(f"{len(paths)} images given: at most {MAX_IMAGES} go with one prompt")
    images: list[dict[str, Any]] = []
    for name in paths:
        path = Path(name).expanduser()
        try:
            if not path.is_file():
                why = "no such file" if not path.exists() else "not a file"
                raise ImageFlagError(f"{name}: {why}; give the path of a PNG, JPEG, GIF or WebP file")
            size = path.stat().st_size
            if size > MAX_BYTES:
                raise ImageFlagError(f"{name} is {size / 1048576:.1f} MB: images go up to {MAX_BYTES // 1048576} MB; "
                                     "send a smaller one (a screenshot of the part that matters)")
            with path.open("rb") as f:
                data = f.read(MAX_BYTES + 1)  # the size may have changed since stat
        except OSError as exc:
            raise ImageFlagError(f"{name}: cannot be read ({exc.strerror or exc})") from None
        if len(data) > MAX_BYTES:
            raise ImageFlagError(f"{name}: over {MAX_BYTES // 1048576} MB; send a smaller one")
        media_type = sniff(data[:16])
        if media_type is None:
            raise ImageFlagError(f"{name}: not a PNG, JPEG, GIF or WebP image; convert it to one of those")
        images.append({"mediaType": media_type, "data": base64.b64encode(data).decode("ascii"), "name": path.name})
    return images
