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

Quality scores (`scores`; what analysis.imagequality judges, relative to the dataset), of the grey
(ITU-R 601 luma) draft image:
- `brightness`: mean luma, 0-255.
- `contrast`: standard deviation of luma.
- `blur`: variance of the 4-neighbour Laplacian of the grey image box-resized so its longer side is
  `BLUR_SIDE` (64) pixels: a fixed working scale, so the figure does not depend on the draft's
  factor (a 640x480 JPEG's 1/8 draft and a 5,000 px one's both measured at 64 px; an image whose
  draft is smaller than that is measured at its own size). Low: little fine detail (blurred, or flat).
- `entropy`: Shannon entropy of the 256-bin luma histogram, in bits (0-8).
- `blank`: the fraction of pixels within `BLANK_TOLERANCE` grey levels of the dominant grey level
  (1.0: one flat colour).
- `aspect`: width / height of the full image (not the draft); `pixels`: width x height, full.
- `gray_as_color`: a three-band image whose bands agree (within `GRAY_TOLERANCE`) everywhere: grey
  stored as colour.

`COLUMNS` names them in the fact table (analysis.facts), in `ImageSignals`' order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from functools import lru_cache

import numpy as np

HASH_SIDE = 32  # the grey image the DCT hash is taken of
BLUR_SIDE = 64  # the working scale of `blur`: the grey image's longer side, in pixels
BLANK_TOLERANCE = 8  # grey levels either side of the dominant one that count as "the same"
GRAY_TOLERANCE = 2  # bands within this many levels of each other are one grey (JPEG chroma rounding)
_LOW = 8  # its lowest 8x8 frequencies make the 64 bits


def _dct_matrix(n: int) -> np.ndarray:
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


_DCT = _dct_matrix(HASH_SIDE)[:_LOW]  # only the rows of the low frequencies are ever used


def grey(pixels: np.ndarray) -> np.ndarray:
    """Luma (ITU-R 601) of an HxW, HxWx3 or HxWx4 uint8 array, as float32 HxW."""
    a = np.asarray(pixels)
    if a.ndim == 2:
        return a.astype(np.float32)
    if a.shape[2] == 1:
        return a[:, :, 0].astype(np.float32)
    return (a[:, :, :3].astype(np.float32) @ np.array([0.299, 0.587, 0.114], np.float32)).astype(np.float32)


@lru_cache(maxsize=256)
def _box(n_in: int, n_out: int) -> np.ndarray:
    """The n_out x n_in matrix of area averaging (Pillow's BOX filter): output pixel j is the mean
    of input [j * n_in / n_out, (j + 1) * n_in / n_out), partial pixels weighted by their cover."""
    edges = np.arange(n_out + 1) * (n_in / n_out)
    lo, hi = edges[:-1, None], edges[1:, None]
    i = np.arange(n_in)[None, :]
    cover = np.clip(np.minimum(hi, i + 1) - np.maximum(lo, i), 0, None)
    return (cover / cover.sum(axis=1, keepdims=True)).astype(np.float32)


def _resized(g: np.ndarray, w: int, h: int) -> np.ndarray:
    """A grey array as w x h by area averaging, float32: two small matrix products (a Pillow resize
    from numpy cost more in its conversions than the sums)."""
    rows, cols = g.shape
    return _box(rows, h) @ np.asarray(g, dtype=np.float32) @ _box(cols, w).T


def _word(bits: np.ndarray) -> int:
    """64 booleans as one signed 64-bit integer (the bits of a uint64, as Arrow's int64 keeps them;
    row-major, first bit the most significant)."""
    return int.from_bytes(np.packbits(bits.ravel()).tobytes(), "big", signed=True)


@lru_cache(maxsize=256)
def _dct_of(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray]:
    """The resize to HASH_SIDE and the low-frequency DCT rows as one left and one right matrix."""
    return _DCT @ _box(rows, HASH_SIDE), _box(cols, HASH_SIDE).T @ _DCT.T


def phash(g: np.ndarray) -> int:
    left, right = _dct_of(*g.shape)
    low = (left @ np.asarray(g, dtype=np.float32) @ right).ravel()  # 8x8
    mid = np.sort(low)
    return _word(low > (mid[31] + mid[32]) / 2)


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


@dataclass(frozen=True, slots=True)
class ImageSignals:
    """One image's hashes and quality scores (the module's docstring says what each means)."""

    pixel_hash: int
    phash: int
    dhash: int
    brightness: float
    contrast: float
    blur: float
    entropy: float
    blank: float
    aspect: float
    pixels: int
    gray_as_color: bool

    def row(self) -> tuple:
        """Its values in `COLUMNS` order (dataclasses.astuple deep-copies: ten times the cost)."""
        return (
            self.pixel_hash,
            self.phash,
            self.dhash,
            self.brightness,
            self.contrast,
            self.blur,
            self.entropy,
            self.blank,
            self.aspect,
            self.pixels,
            self.gray_as_color,
        )


COLUMNS = tuple(f.name for f in fields(ImageSignals))  # the fact table's columns, in this order
HASH_COLUMNS = COLUMNS[:3]
SCORE_COLUMNS = COLUMNS[3:]


def blur(g: np.ndarray) -> float:
    """Variance of the 4-neighbour Laplacian of `g` at the working scale (`BLUR_SIDE`)."""
    h, w = g.shape
    if h < 3 or w < 3:
        return 0.0
    if max(h, w) > BLUR_SIDE:
        k = BLUR_SIDE / max(h, w)
        g = _resized(g, max(3, round(w * k)), max(3, round(h * k)))
    lap = (g[1:-1, :-2] + g[1:-1, 2:] + g[:-2, 1:-1] + g[2:, 1:-1] - 4.0 * g[1:-1, 1:-1]).ravel()
    mean = float(lap.sum(dtype=np.float64)) / lap.size
    return max(float(np.dot(lap, lap)) / lap.size - mean * mean, 0.0)  # np.var's own overhead was most


_LEVELS = np.arange(256, dtype=np.float64)


def histogram_scores(g: np.ndarray) -> tuple[float, float, float, float]:
    """(brightness, contrast, entropy in bits, blank fraction) of a grey image, from its one
    256-bin histogram (grey levels rounded: the mean and deviation are within 0.5 of the exact)."""
    u8 = g if g.dtype == np.uint8 else np.clip(np.rint(g), 0, 255).astype(np.uint8)
    counts = np.bincount(u8.ravel(), minlength=256)
    total = int(counts.sum())
    if not total:
        return 0.0, 0.0, 0.0, 0.0
    mean = float(counts @ _LEVELS) / total
    var = float(counts @ (_LEVELS - mean) ** 2) / total
    p = counts[counts > 0] / total
    entropy = -float(np.dot(p, np.log2(p)))
    run = np.cumsum(counts)  # pixels within BLANK_TOLERANCE of each level: a window's sum
    t = BLANK_TOLERANCE
    near = np.concatenate(
        [run[t : 2 * t + 1], run[2 * t + 1 :] - run[: 255 - 2 * t], total - run[255 - 2 * t : 255 - t]]
    )
    return mean, var**0.5, (entropy if entropy > 0 else 0.0), float(near.max()) / total


def gray_as_color(pixels: np.ndarray) -> bool:
    """A three-band (or four: alpha ignored) image whose colour bands agree everywhere."""
    a = np.asarray(pixels)
    if a.ndim != 3 or a.shape[2] < 3:
        return False
    c = a[:, :, :3].astype(np.int16)
    return bool(
        np.abs(c[:, :, 0] - c[:, :, 1]).max(initial=0) <= GRAY_TOLERANCE
        and np.abs(c[:, :, 1] - c[:, :, 2]).max(initial=0) <= GRAY_TOLERANCE
    )


def signals(
    pixels: np.ndarray, full_size: tuple[int, int] | None = None, grey_u8: np.ndarray | None = None
) -> ImageSignals:
    """Every hash and score of one decoded (draft) image; `full_size`: the image's (width, height)
    before the draft, for `aspect` and `pixels` (default: the array's own); `grey_u8`: its luma
    when the decoder made it already (Pillow's "L", the same ITU-R 601 weights, rounded)."""
    g8 = grey_u8 if grey_u8 is not None else np.clip(np.rint(grey(pixels)), 0, 255).astype(np.uint8)
    g = g8.astype(np.float32)  # one grey for every score and hash (8-bit, as the histogram counts it)
    h, w = g.shape
    fw, fh = full_size or (w, h)
    brightness, contrast, entropy, blank = histogram_scores(g8)
    return ImageSignals(
        pixel_hash(pixels),
        phash(g),
        dhash(g),
        brightness,
        contrast,
        blur(g),
        entropy,
        blank,
        fw / fh if fh else 0.0,
        int(fw) * int(fh),
        gray_as_color(pixels),
    )


def hamming(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Bits that differ between int64 hash words (elementwise)."""
    x = np.bitwise_xor(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)).view(np.uint64)
    return np.bitwise_count(x) if hasattr(np, "bitwise_count") else _popcount(x)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    b = x.reshape(-1, 1).view(np.uint8)
    return np.unpackbits(b, axis=1).sum(axis=1).reshape(x.shape).astype(np.uint8)
