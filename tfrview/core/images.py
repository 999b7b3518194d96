"""Image bytes: recognising them by their magic bytes, under any feature key."""

from __future__ import annotations

_MAGIC = (
    (b"\xff\xd8\xff", "JPEG"),
    (b"\x89PNG\r\n\x1a\n", "PNG"),
    (b"GIF87a", "GIF"),
    (b"GIF89a", "GIF"),
    (b"BM", "BMP"),
    (b"II*\x00", "TIFF"),
    (b"MM\x00*", "TIFF"),
)


def sniff_image_format(b: bytes) -> str | None:
    """The encoded image format of b, or None. WebP needs its RIFF container checked."""
    if len(b) < 8:
        return None
    if b[:4] == b"RIFF" and b[8:12] == b"WEBP":
        return "WEBP"
    for magic, name in _MAGIC:
        if b.startswith(magic):
            if name == "BMP" and len(b) < 26:
                return None
            return name
    return None
