"""What one image's pixels say, model-free, from the small image the analysis pass decodes anyway
(a JPEG's draft at 1/8 scale): a content hash of its pixels and two perceptual hashes, for copies
and near copies across a dataset (analysis.duplicates). Pure numpy on a greyscale or RGB uint8
array; no Qt, no model weights.

Hash words (each a uint64, stored as int64 fact columns of those bits):
- `pixel_hash`: the first 8 bytes of BLAKE2b over the decoded pixels and their shape: two images
  with the same pixels at the draft's scale (the same image, whatever its file's bytes).
- `phash`: a DCT hash: the image as 32x32 grey, its 2-D DCT-II, the 8x8 lowest frequencies; a bit
  is set where the coefficient is above their median (the DC term's place compared too, as
  imagehash does), row-major, first bit the most significant. Stable under re-encoding, resizing,
  small crops and brightness shifts.
- `dhash`: a difference hash: 9x8 grey, a bit set where a pixel is brighter than its right
  neighbour.
"""

from __future__ import annotations

import hashlib

import numpy as np

HASH_SIDE = 32  # the grey image the DCT hash is taken of
_LOW = 8  # its lowest 8x8 frequencies make the 64 bits


def _dct_matrix(n: int) -> np.ndarray:
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


_DCT = _dct_matrix(HASH_SIDE)[:_LOW]  # only the rows of the low frequencies are ever used
_BITS = (np.uint64(1) << np.arange(63, -1, -1, dtype=np.uint64)).astype(np.uint64)


def grey(pixels: np.ndarray) -> np.ndarray:
    """Luma (ITU-R 601) of an HxW, HxWx3 or HxWx4 uint8 array, as float32 HxW."""
    a = np.asarray(pixels)
    if a.ndim == 2:
        return a.astype(np.float32)
    if a.shape[2] == 1:
        return a[:, :, 0].astype(np.float32)
    return (a[:, :, :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)).astype(np.float32)


def _resized(g: np.ndarray, w: int, h: int) -> np.ndarray:
    """A grey array as w x h by area averaging (Pillow's box filter), float32."""
    from PIL import Image  # start-up: kept off the CLI's path

    return np.asarray(Image.fromarray(g, mode="F").resize((w, h), Image.Resampling.BOX), dtype=np.float32)


def _word(bits: np.ndarray) -> int:
    """64 booleans as one signed 64-bit integer (the bits of a uint64, as Arrow's int64 keeps them)."""
    return int(np.bitwise_or.reduce(_BITS[bits.ravel()], initial=np.uint64(0)).astype(np.int64))


def phash(g: np.ndarray) -> int:
    small = _resized(g, HASH_SIDE, HASH_SIDE)
    low = _DCT @ small @ _DCT.T  # 8x8
    return _word(low > np.median(low))


def dhash(g: np.ndarray) -> int:
    small = _resized(g, 9, 8)
    return _word(small[:, 1:] < small[:, :-1])


def pixel_hash(pixels: np.ndarray) -> int:
    a = np.ascontiguousarray(pixels)
    h = hashlib.blake2b(a.tobytes(), digest_size=8)
    h.update(repr(a.shape).encode())
    return int.from_bytes(h.digest(), "big", signed=True)


def hashes(pixels: np.ndarray) -> tuple[int, int, int]:
    """(pixel_hash, phash, dhash) of one decoded image."""
    g = grey(pixels)
    return pixel_hash(pixels), phash(g), dhash(g)


def hamming(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Bits that differ between int64 hash words (elementwise)."""
    x = np.bitwise_xor(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)).view(np.uint64)
    return np.bitwise_count(x) if hasattr(np, "bitwise_count") else _popcount(x)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    b = x.reshape(-1, 1).view(np.uint8)
    return np.unpackbits(b, axis=1).sum(axis=1).reshape(x.shape).astype(np.uint8)
