"""Files the user attached to a prompt (`@path` in the terminal client, `attachments` on the wire).

They go to the model with the prompt, as one text part each; the title and the prompt history
keep only what the user typed.
"""

from __future__ import annotations

from . import workspace_fs
from .images import IMAGE_SUFFIXES, MAX_IMAGES, MAX_INPUT_BYTES, ImageError, RawImage, raw_image
from .tools.base import ToolError, ToolHost
from .tools.files import current_text
from .tools.workspace_paths import resolve_workspace_path, workspace_relative

MAX_CHARS = 200_000


class AttachmentError(ValueError):
    pass


def read_attachments(host: ToolHost, paths: list[str]) -> list[str]:
    """One `<attached-file>` block per path: open buffers first, inside the workspace only."""
    blocks: list[str] = []
    for raw in dict.fromkeys(paths):  # each file once, in the order given
        if raw.lower().endswith(IMAGE_SUFFIXES):
            continue  # an image (attached_images)
        try:
            path = resolve_workspace_path(host.root, raw)
            text = current_text(host, path, raw)
        except ToolError as exc:
            raise AttachmentError(f"cannot attach {raw!r}: {exc}") from None
        blocks.append(file_block(workspace_relative(host.root, path), text))
    return blocks


def attached_images(host: ToolHost, paths: list[str]) -> list[RawImage]:
    """The attached paths named like images, read and checked by their first bytes: a file named
    .png that is no image is refused here, before the turn, saying so."""
    images: list[RawImage] = []
    for raw in dict.fromkeys(p for p in paths if p.lower().endswith(IMAGE_SUFFIXES)):
        try:
            path = resolve_workspace_path(host.root, raw)
            shown = workspace_relative(host.root, path)
            images.append(raw_image(workspace_fs.read_bytes(host.root, path, max_bytes=MAX_INPUT_BYTES), shown))
        except (ToolError, ImageError) as exc:
            raise AttachmentError(f"cannot attach {raw!r}: {exc}") from None
        except OSError as exc:
            raise AttachmentError(f"cannot attach {raw!r}: {exc.strerror or exc}") from None
    if len(images) > MAX_IMAGES:
        raise AttachmentError(f"{len(images)} images attached; at most {MAX_IMAGES} go with one prompt")
    return images


def file_block(shown: str, text: str) -> str:
    """One attached file as the model sees it (also what ACP's embedded resources become)."""
    note = ""
    if len(text) > MAX_CHARS:
        note = f"\n[... truncated: showing the first {MAX_CHARS:,} of {len(text):,} characters]"
        text = text[:MAX_CHARS]
    return f'<attached-file path="{shown}">\n{text}{note}\n</attached-file>'

