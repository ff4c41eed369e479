"""Images in the conversation: checked, downscaled, stored, and sent only to a model that takes them.

An image comes from a prompt (`shiro.chat {images}`, a terminal `@shot.png`, an ACP image block)
or from `read_file` on an image file. It is checked twice: at once by its first bytes (a file named
.png that is not an image is refused before the turn starts, with what to do instead), then
decoded by Pillow in a worker thread, where a large one is downscaled and re-encoded. The bytes go
to the image store (state/image_store.py); the transcript keeps an `ImageRef`, and each request
reads the files back (in a thread) for a model that accepts images. Any other model gets a text
line in the image's place and the turn a notice saying why (docs/protocol.md "Images").
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import io
import logging
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Sequence

from ..model.image_format import sniff
from ..model.transcript import ImageRef, Message, ToolMessage, UserMessage

if TYPE_CHECKING:
    from ..protocol import ChatImage
    from .provider.base import ProviderRequest
    from .session import AgentSession
    from ..state.image_store import ImageStore

log = logging.getLogger(__name__)

#: Images with one prompt (a tool result holds one).
MAX_IMAGES = 8
#: One image as received (decoded bytes); a larger one is refused before it is decoded.
MAX_INPUT_BYTES = 20 * 1024 * 1024
#: More pixels than this is refused undecoded (a "decompression bomb": a small file, a huge bitmap).
MAX_PIXELS = 40_000_000
#: The longest side sent: OpenAI's high detail scales to 2048 px first, so more is paid for and lost.
MAX_SIDE = 2048
#: One image as stored and sent; a larger PNG is re-encoded as JPEG.
MAX_STORED_BYTES = 4 * 1024 * 1024

MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_PIL_FORMATS = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
#: The text before the images a tool call returned (they follow the step's results as a user message).
RETURNED_IMAGES = "The images the tool calls above returned:"


class ImageError(ValueError):
    """An image refused; the text says which and what to send instead."""


@dataclass
class RawImage:
    """An image as received, its first bytes checked (`sniff`), not yet decoded."""

    data: bytes
    media_type: str
    label: str


def raw_image(data: bytes, label: str) -> RawImage:
    """`data` as an image to send, or ImageError saying why not (too large, not an image)."""
    if len(data) > MAX_INPUT_BYTES:
        raise ImageError(f"{label} is over the {MAX_INPUT_BYTES // 1048576} MB an image may be: send a smaller one "
                         "or a screenshot of the part that matters")
    media_type = sniff(data)
    if media_type is None:
        raise ImageError(f"{label} is not a PNG, JPEG, GIF or WebP image (its bytes say otherwise): "
                         "rename it if it is text, or save it as PNG")
    return RawImage(data, media_type, label)


def from_chat(images: Sequence["ChatImage"]) -> list[RawImage]:
    """`shiro.chat`'s `images`, decoded from base64 and checked by their first bytes."""
    if len(images) > MAX_IMAGES:
        raise ImageError(f"{len(images)} images with one prompt; at most {MAX_IMAGES} are taken")
    raws: list[RawImage] = []
    for index, image in enumerate(images, 1):
        label = image.name or f"image {index}"
        if len(image.data) > MAX_INPUT_BYTES * 4 // 3 + 4:
            raise ImageError(f"{label} is over {MAX_INPUT_BYTES // 1048576} MB; send a smaller image")
        try:
            data = base64.b64decode(image.data, validate=True)
        except (binascii.Error, ValueError):
            raise ImageError(f"{label}: `data` is not base64; send the image's bytes base64-encoded") from None
        raw = raw_image(data, label)
        if image.mediaType not in MEDIA_TYPES:
            raise ImageError(f"{label}: mediaType {image.mediaType!r} is not one of {', '.join(MEDIA_TYPES)}")
        raws.append(raw)
    return raws


def prepare(raw: RawImage) -> tuple[bytes, str, int, int]:
    """(bytes, media type, width, height) as stored and sent: decoded by Pillow, downscaled to
    `MAX_SIDE`, re-encoded when changed or too large. Blocking (CPU): call in a thread."""
    from PIL import Image, UnidentifiedImageError  # noqa: PLC0415 - ~50 ms; only a turn with an image pays it

    try:
        with Image.open(io.BytesIO(raw.data)) as probe:
            width, height = probe.size
            media_type = _PIL_FORMATS.get(probe.format or "")
            if media_type is None:
                raise ImageError(f"{raw.label} is a {probe.format} image; send PNG, JPEG, GIF or WebP")
            if width * height > MAX_PIXELS:
                raise ImageError(f"{raw.label} is {width}x{height} pixels, over the {MAX_PIXELS:,} taken; "
                                 "send a smaller image")
            probe.load()  # a truncated or corrupt file fails here, not at the provider
            resized = max(width, height) > MAX_SIDE
            if not resized and len(raw.data) <= MAX_STORED_BYTES and not getattr(probe, "is_animated", False):
                return raw.data, media_type, width, height
            image = probe.convert("RGBA" if probe.mode in ("RGBA", "LA", "P") else "RGB")
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError, Image.DecompressionBombError) as exc:
        if isinstance(exc, ImageError):
            raise
        raise ImageError(f"{raw.label} could not be read as an image ({exc}); send a PNG or JPEG") from None
    if resized:
        image.thumbnail((MAX_SIDE, MAX_SIDE), Image.Resampling.LANCZOS)
    out = io.BytesIO()
    if media_type == "image/jpeg":
        image.convert("RGB").save(out, "JPEG", quality=85)
    else:
        image.save(out, "PNG")  # optimize=True: 3-4x the time for a few per cent (bench/images.py)
        media_type = "image/png"
        if out.tell() > MAX_STORED_BYTES:  # a photo as PNG: JPEG is a tenth of it
            out = io.BytesIO()
            image.convert("RGB").save(out, "JPEG", quality=85)
            media_type = "image/jpeg"
    return out.getvalue(), media_type, image.width, image.height


def store(store_: "ImageStore", raws: Sequence[RawImage]) -> tuple[list[ImageRef], list[str]]:
    """Each image prepared and stored: (refs, one line per image refused). Blocking: in a thread."""
    refs: list[ImageRef] = []
    refused: list[str] = []
    for raw in raws[:MAX_IMAGES]:
        try:
            data, media_type, width, height = prepare(raw)
            name = store_.put(data, media_type)
        except ImageError as exc:
            refused.append(str(exc))
            continue
        except OSError as exc:
            refused.append(f"{raw.label} could not be stored: {exc}")
            continue
        refs.append(ImageRef(name=name, media_type=media_type, width=width, height=height, label=raw.label))
    return refs, refused


# Model ids that take image input (matched after any "provider/" prefix, case-insensitive); the
# `imageInput` setting overrides the table for any other model or a local one it misreads.
_ACCEPTS = re.compile(
    r"(gpt-4o|chatgpt-4o|gpt-4\.1|gpt-4\.5|gpt-5|gpt-4-turbo|gpt-4-vision|o1(?!-mini|-preview)|o3(?!-mini)|o4-mini"
    r"|claude|gemini|gemma-?3|llava|bakllava|pixtral|qwen[0-9.]*-?vl|minicpm-v|moondream|llama-?3\.2-?(\d+b-)?vision"
    r"|llama-?4|mistral-(small|medium)-?3|grok-(2-vision|4)|internvl|phi-?3\.5-vision|phi-?4-multimodal|glm-?4\.?\d*v|kimi-vl)"
)


def accepts_images(model: str, setting: bool | None) -> bool:
    """Whether requests to `model` may carry images: the `imageInput` setting, else the table."""
    if setting is not None:
        return setting
    return _ACCEPTS.match(model.rsplit("/", 1)[-1].lower()) is not None


def refs_in(messages: Sequence[Message]) -> list[ImageRef]:
    out: list[ImageRef] = []
    for message in messages:
        if isinstance(message, UserMessage):
            out.extend(message.images)
        elif isinstance(message, ToolMessage):
            for part in message.content:
                out.extend(part.images)
    return out


def load(store_: "ImageStore", refs: Sequence[ImageRef]) -> dict[str, str]:
    """name -> data URL of each stored image of `refs` (a pruned one is left out). Blocking: in a thread."""
    urls: dict[str, str] = {}
    for ref in refs:
        if ref.name in urls:
            continue
        data = store_.get(ref.name)
        if data is not None:
            urls[ref.name] = f"data:{ref.media_type};base64,{base64.b64encode(data).decode('ascii')}"
    return urls


def placeholder(ref: ImageRef, why: str) -> str:
    """What the model reads in place of an image it is not sent."""
    return f"[image {ref.label or ref.name} ({ref.width}x{ref.height}) not sent: {why}]"


def described(ref: ImageRef) -> str:
    """The text part sent with an image: which it is (the model can refer to it by its label)."""
    return f"[image {ref.label or 'attached'}, {ref.width}x{ref.height}]"


# Sessions told that their model does not take images: once each (bounded: the oldest forgotten).
_TOLD: dict[str, None] = {}
_TOLD_MAX = 256


async def prompt_images(session: "AgentSession", turn_id: str, notice: Callable[[str], None]) -> list[ImageRef]:
    """The images sent with the prompt of `turn_id`, prepared and stored; a refused one is a notice."""
    item = session.turns.current
    raws = item.images if item is not None and item.turn_id == turn_id else []
    if not raws:
        return []
    store_ = session.deps.images
    if store_ is None:
        notice(f"{len(raws)} image(s) left out: this server keeps no images")
        return []
    refs, refused = await asyncio.to_thread(store, store_, raws)
    for line in refused:
        notice(f"image left out: {line}")
    return refs


async def attach(session: "AgentSession", request: "ProviderRequest", notice: Callable[[str], None]) -> None:
    """Give `request` the data of its images, or (a model that takes none) the reason they stay out."""
    refs = refs_in(request.messages) + refs_in(request.tool_free_messages or [])
    if not refs:
        return
    if not accepts_images(request.model, session.deps.settings().imageInput):
        request.images_withheld = f"{request.model} does not take images"
        if session.id not in _TOLD:
            _TOLD[session.id] = None
            if len(_TOLD) > _TOLD_MAX:
                del _TOLD[next(iter(_TOLD))]
            notice(f"images not sent: {request.model} does not take images, so the model reads a line in "
                   "their place. Switch to a model that does, or set imageInput to true if this one does.")
        return
    store_ = session.deps.images
    if store_ is not None:
        request.images = await asyncio.to_thread(load, store_, refs)


async def result_images(session: "AgentSession", raw: RawImage | None) -> tuple[list[ImageRef], str]:
    """A tool result's image stored: (refs, a line for the result when it was refused)."""
    if raw is None:
        return [], ""
    if session.deps.images is None:
        return [], "\n[the image was not kept: this server keeps no images]"
    refs, refused = await asyncio.to_thread(store, session.deps.images, [raw])
    return refs, "".join(f"\n[the image was left out: {line}]" for line in refused)
