"""The image formats shiro sends to a model, told by their first bytes (the server's images.py and
the terminal client's `--image` both check a file with it; it imports nothing)."""

from __future__ import annotations


def sniff(data: bytes) -> str | None:
    """The media type the first bytes announce, or None when they are no image format we send."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None
