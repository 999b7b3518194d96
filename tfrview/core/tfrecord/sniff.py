"""What a file that is not a TFRecord actually is, in a few words, so the diagnosis helps."""

from __future__ import annotations

_MAGIC = (
    (b"PK\x03\x04", "a ZIP archive"),
    (b"\x89HDF\r\n\x1a\n", "an HDF5 file"),
    (b"\x93NUMPY", "a NumPy .npy array"),
    (b"BZh", "bzip2-compressed data (TFRecord readers only inflate GZIP or ZLIB; decompress it first)"),
    (b"\xfd7zXZ\x00", "xz-compressed data (TFRecord readers only inflate GZIP or ZLIB; decompress it first)"),
    (
        b"\x28\xb5\x2f\xfd",
        "zstd-compressed data (TFRecord readers only inflate GZIP or ZLIB; decompress it first)",
    ),
    (b"PAR1", "a Parquet file"),
    (b"\x80\x04", "a Python pickle"),
    (b"\x80\x05", "a Python pickle"),
    (b"%PDF", "a PDF document"),
    (b"\x7fELF", "an executable"),
    (b"\x1f\x8b", "GZIP-compressed data with no TFRecord records in it"),
)


_IMAGE_MAGIC = (
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
    for magic, name in _IMAGE_MAGIC:
        if b.startswith(magic):
            if name == "BMP" and (len(b) < 26 or int.from_bytes(b[2:6], "little") not in (0, len(b))):
                return None
            return name
    return None


def describe_content(head: bytes) -> str:
    if not head:
        return "an empty file"
    if head.startswith(b"version https://git-lfs"):
        return "a Git LFS pointer, not the data (run `git lfs pull`)"
    img = sniff_image_format(head)
    if img:
        return f"a {img} image"
    for magic, what in _MAGIC:
        if head.startswith(magic):
            return what
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        try:
            text = head[: max(len(head) - 3, 0)].decode("utf-8")
        except UnicodeDecodeError:
            text = None
    if text is not None and all(c.isprintable() or c in "\r\n\t" for c in text):
        low = text.lstrip().lower()
        if low.startswith(("<!doctype html", "<html")) or "<html" in low[:512]:
            return "an HTML page (a download that returned a web page?)"
        if low.startswith(("{", "[")):
            return "JSON text"
        if low.startswith("<?xml"):
            return "XML text"
        return "text"
    if head.count(0) == len(head):
        return "all zero bytes"
    return "bytes with no TFRecord structure"
