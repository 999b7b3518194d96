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
- `colour_top`, `colour_bottom`: a colour signature (`colour`): the image's mean chroma (Cb, Cr)
  in 4x4 cells, each quantised to a nibble of 4 levels a step (8 neutral), a cell a byte, the top
  two rows of cells one word. The grey hashes see a scene's layout only: two different scenes of
  one layout (a vertical gradient with a few flat shapes) can be within their distances while
  their colours are far apart (`colour_distance`; analysis.duplicates confirms a near pair by it).
  Brightness shifts leave chroma alone; re-encoding, resizing and small crops move it little.

Cost: the grey hashes come from one pair of matrix products (`_plan`: the resizes and the DCT
stacked), the blur's working-scale image from another, the colour cells from a third
(`_colour_plan`: resize, colour transform and quantisation step folded), each pair under OpenBLAS's
threading threshold for a 640x480 JPEG's draft; the histogram scores from one `bincount`.

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
  stored as colour (a YCbCr image: chroma within GRAY_TOLERANCE / 2 of neutral everywhere); only
  looked at when every colour cell is neutral.

`COLUMNS` names them in the fact table (analysis.facts), in `ImageSignals`' order.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from functools import lru_cache
from math import log2

import numpy as np

HASH_SIDE = 32  # the grey image the DCT hash is taken of
BLUR_SIDE = 64  # the working scale of `blur`: the grey image's longer side, in pixels
BLANK_TOLERANCE = 8  # grey levels either side of the dominant one that count as "the same"
GRAY_TOLERANCE = 2  # bands within this many levels of each other are one grey (JPEG chroma rounding)
_LOW = 8  # its lowest 8x8 frequencies make the 64 bits
CHROMA_SIDE = 4  # the colour signature's grid: CHROMA_SIDE x CHROMA_SIDE cells
CHROMA_STEP = 4  # chroma levels a step of its nibbles: 16 steps span 128 +/- 32


def _dct_matrix(n: int) -> np.ndarray:
    k = np.arange(n)[:, None]
    i = np.arange(n)[None, :]
    m = np.cos(np.pi * (2 * i + 1) * k / (2 * n)) * np.sqrt(2.0 / n)
    m[0] /= np.sqrt(2.0)
    return m


_DCT = _dct_matrix(HASH_SIDE)[:_LOW]  # only the rows of the low frequencies are ever used
# Cb and Cr (ITU-R 601, less their 128 offset) of R, G, B; a fourth (alpha) band weighs nothing
_CHROMA_OF_RGB = np.array([[-0.168736, 0.5], [-0.331264, -0.418688], [0.5, -0.081312], [0.0, 0.0]])
_CHROMA_OF_YCC = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])


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


def _blur_size(rows: int, cols: int) -> tuple[int, int]:
    """(height, width) of the blur's working scale for a grey image of rows x cols."""
    if max(rows, cols) <= BLUR_SIDE:
        return rows, cols
    k = BLUR_SIDE / max(rows, cols)
    return max(3, round(rows * k)), max(3, round(cols * k))


@dataclass(frozen=True)
class _Plan:
    """One grey image size's matrices: `hash_left @ g @ hash_right` holds the DCT hash's 8x8 low
    frequencies (top left) and the difference hash's 8x9 grey (bottom right) in one pair of
    products; `blur_left @ g @ blur_right` is the blur's working-scale image (None: `g` itself).
    Two pairs, not one stacked: OpenBLAS threads a product past 2^18 multiply-adds (m x n x k), and
    threads of tiny products cost many times their work on a loaded machine (a 60x80 draft's one
    stacked pair was 307,200 and 414,720)."""

    hash_left: np.ndarray
    hash_right: np.ndarray
    blur_left: np.ndarray | None
    blur_right: np.ndarray | None


@lru_cache(maxsize=64)  # a draft size's matrices: ~100 KB at 1,000 px (80 x rows, cols x 81 floats)
def _plan(rows: int, cols: int) -> _Plan:
    bh, bw = _blur_size(rows, cols)
    hash_left = np.vstack([_DCT @ _box(rows, HASH_SIDE), _box(rows, 8)])
    hash_right = np.hstack([_box(cols, HASH_SIDE).T @ _DCT.T, _box(cols, 9).T])
    same = (bh, bw) == (rows, cols)
    return _Plan(
        np.ascontiguousarray(hash_left, dtype=np.float32),
        np.ascontiguousarray(hash_right, dtype=np.float32),
        None if same else _box(rows, bh),
        None if same else np.ascontiguousarray(_box(cols, bw).T),
    )


@lru_cache(maxsize=64)  # likewise: 4 x rows and (cols x bands) x 8 floats
def _colour_plan(rows: int, cols: int, bands: int, ycc: bool) -> tuple[np.ndarray, np.ndarray]:
    """Left and right matrices whose product with the pixels as rows x (cols * bands) is the
    CHROMA_SIDE x CHROMA_SIDE cells' mean Cb and Cr, in quantisation steps (a YCbCr image's still
    offset by 128): the resize, the colour transform and the step folded into one pair of products."""
    weights = _CHROMA_OF_YCC if ycc else _CHROMA_OF_RGB[:bands]
    right = np.kron(_box(cols, CHROMA_SIDE).T, weights / CHROMA_STEP)  # (cols * bands) x (cells * 2)
    return _box(rows, CHROMA_SIDE), np.ascontiguousarray(right, dtype=np.float32)


def phash(g: np.ndarray) -> int:
    p = _plan(*g.shape)
    low = (p.hash_left[:_LOW] @ np.asarray(g, dtype=np.float32) @ p.hash_right[:, :_LOW]).ravel()
    mid = np.sort(low)
    return _word(low > (mid[31] + mid[32]) / 2)


def dhash(g: np.ndarray) -> int:
    small = _resized(g, 9, 8)
    return _word(small[:, 1:] < small[:, :-1])


def pixel_hash(pixels: np.ndarray) -> int:
    a = np.ascontiguousarray(pixels)
    h = hashlib.blake2b(a.data, digest_size=8)
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
    colour_top: int
    colour_bottom: int
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
            self.colour_top,
            self.colour_bottom,
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
HASH_COLUMNS = COLUMNS[:5]
SCORE_COLUMNS = COLUMNS[5:]
COLOUR_COLUMNS = ("colour_top", "colour_bottom")


def blur(g: np.ndarray) -> float:
    """Variance of the 4-neighbour Laplacian of `g` at the working scale (`BLUR_SIDE`)."""
    h, w = g.shape
    if h < 3 or w < 3:
        return 0.0
    bh, bw = _blur_size(h, w)
    if (bh, bw) != (h, w):
        g = _resized(g, bw, bh)
    return _laplacian_variance(np.asarray(g, dtype=np.float32))


def _laplacian_variance(g: np.ndarray) -> float:
    h, w = g.shape
    if h < 3 or w < 3:
        return 0.0
    lap = g[1:-1, :-2] + g[1:-1, 2:]
    lap += g[:-2, 1:-1]
    lap += g[2:, 1:-1]
    lap -= 4.0 * g[1:-1, 1:-1]
    flat = lap.ravel()
    n = flat.size
    mean = float(flat.sum(dtype=np.float64)) / n
    return max(float(np.dot(flat, flat)) / n - mean * mean, 0.0)  # np.var's own overhead was most


_MOMENTS = np.stack([np.arange(256.0), np.arange(256.0) ** 2], axis=1)  # level, level squared
_WINDOW = np.ones(2 * BLANK_TOLERANCE + 1, np.int64)
_TABLE_COUNTS = 1 << 16  # counts up to this look c * log2(c) up (a draft of <= 65,536 pixels)


@lru_cache(maxsize=1)
def _xlog2x() -> np.ndarray:
    """c * log2(c) for c = 0 .. _TABLE_COUNTS (0 for 0): 512 KB, made on first use."""
    c = np.arange(_TABLE_COUNTS + 1, dtype=np.float64)
    c[0] = 1.0
    out = c * np.log2(c)
    return out


def histogram_scores(g: np.ndarray) -> tuple[float, float, float, float]:
    """(brightness, contrast, entropy in bits, blank fraction) of a grey image, from its one
    256-bin histogram (grey levels rounded: the mean and deviation are within 0.5 of the exact)."""
    u8 = g if g.dtype == np.uint8 else np.clip(np.rint(g), 0, 255).astype(np.uint8)
    counts = np.bincount(u8.ravel(), minlength=256)
    total = u8.size
    if not total:
        return 0.0, 0.0, 0.0, 0.0
    s1, s2 = (counts @ _MOMENTS).tolist()  # (no BLAS product of a 256 x 256 band: threads, loaded)
    mean = s1 / total
    var = max(s2 / total - mean * mean, 0.0)
    # pixels within BLANK_TOLERANCE of each level: a sliding window's sum (the edges' windows cut)
    near = int(np.correlate(counts, _WINDOW, "full").max())
    # -sum(p log2 p), p = count / total, as log2(total) - sum(c log2 c) / total
    if total <= _TABLE_COUNTS:
        cl = float(_xlog2x()[counts].sum())
    else:
        seen = counts[counts > 0].astype(np.float64)
        cl = float(seen @ np.log2(seen))
    entropy = log2(total) - cl / total
    return mean, var**0.5, (entropy if entropy > 1e-9 else 0.0), near / total


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


def _neutral_chroma(ycc: np.ndarray) -> bool:
    """A YCbCr image whose chroma is within GRAY_TOLERANCE / 2 of neutral (128) everywhere (bands
    within GRAY_TOLERANCE of each other have chroma within about 0.67 x that)."""
    c = ycc[:, :, 1:]
    t = GRAY_TOLERANCE // 2
    return bool(int(c.max(initial=128)) - 128 <= t and 128 - int(c.min(initial=128)) <= t)


_NEUTRAL = int.from_bytes(bytes([0x88] * 8), "big", signed=True)  # every cell's Cb and Cr neutral


def colour(pixels: np.ndarray, ycc: bool = False) -> tuple[int, int]:
    """(colour_top, colour_bottom) of an image: its mean Cb and Cr in CHROMA_SIDE x CHROMA_SIDE
    cells (row-major), each a nibble of CHROMA_STEP levels (8: within half a step of neutral;
    clipped to 0-15), a cell a byte (Cb high), the top two rows of cells one word."""
    a = np.asarray(pixels)
    if a.ndim != 3 or a.shape[2] < 3 or not a.size:
        return _NEUTRAL, _NEUTRAL
    if a.shape[2] > (3 if ycc else 4):
        a = np.ascontiguousarray(a[:, :, :3])
    rows, cols, bands = a.shape
    left, right = _colour_plan(rows, cols, bands, ycc)
    cells = left @ a.reshape(rows, cols * bands) @ right  # CHROMA_SIDE x (CHROMA_SIDE * 2), in steps
    # 8 neutral, rounded (a JPEG's chroma is offset by 128); uint8 truncates what is >= 0
    q = np.clip(cells + (8.5 - 128 / CHROMA_STEP if ycc else 8.5), 0, 15.5).astype(np.uint8)
    top, bottom = (q[:, 0::2] * 16 + q[:, 1::2]).reshape(2, 8).view(">i8").ravel().tolist()
    return top, bottom


def signals(
    pixels: np.ndarray,
    full_size: tuple[int, int] | None = None,
    grey_u8: np.ndarray | None = None,
    ycc: bool = False,
) -> ImageSignals:
    """Every hash and score of one decoded (draft) image: `pixels` HxW grey, HxWx3 RGB or HxWx4 RGBA
    (alpha ignored) uint8, or (`ycc`) HxWx3 YCbCr as a JPEG holds it (band 0 the luma: a JPEG
    decoded without its colour conversion); `full_size`: the image's (width, height) before the
    draft, for `aspect` and `pixels` (default: the array's own); `grey_u8`: its luma when the decoder
    made it already (Pillow's "L", the same ITU-R 601 weights, rounded)."""
    a = np.asarray(pixels)
    if grey_u8 is not None:
        g8 = grey_u8
    elif a.ndim == 2:
        g8 = a
    elif ycc or a.shape[2] == 1:
        g8 = a[:, :, 0]
    else:
        g8 = np.clip(np.rint(grey(a)), 0, 255).astype(np.uint8)
    h, w = g8.shape
    fw, fh = full_size or (w, h)
    brightness, contrast, entropy, blank = histogram_scores(g8)
    p = _plan(h, w)
    g = g8.astype(np.float32)  # one grey for every hash (8-bit, as counted)
    hashed = p.hash_left @ g @ p.hash_right
    low = hashed[:_LOW, :_LOW].ravel()
    small = hashed[_LOW:, _LOW:]
    working = g if p.blur_left is None else p.blur_left @ g @ p.blur_right
    mid = np.sort(low)
    bits = np.empty((2, 64), bool)
    np.greater(low, (mid[31] + mid[32]) / 2, out=bits[0])
    np.less(small[:, 1:], small[:, :-1], out=bits[1].reshape(8, 8))
    ph, dh = np.packbits(bits).view(">i8").tolist()
    top, bottom = colour(a, ycc)
    grey_colour = False
    if top == bottom == _NEUTRAL and a.ndim == 3 and a.shape[2] >= 3:  # else some cell is coloured
        grey_colour = _neutral_chroma(a) if ycc else gray_as_color(a)
    return ImageSignals(
        pixel_hash(a),
        ph,
        dh,
        top,
        bottom,
        brightness,
        contrast,
        _laplacian_variance(working),
        entropy,
        blank,
        fw / fh if fh else 0.0,
        int(fw) * int(fh),
        grey_colour,
    )


def hamming(a: np.ndarray | int, b: np.ndarray | int) -> np.ndarray:
    """Bits that differ between int64 hash words (elementwise)."""
    x = np.bitwise_xor(np.asarray(a, dtype=np.int64), np.asarray(b, dtype=np.int64)).view(np.uint64)
    return np.bitwise_count(x) if hasattr(np, "bitwise_count") else _popcount(x)


def colour_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Steps that two colour signatures differ by in all (elementwise over rows): `a` and `b` are
    k x 2 int64 arrays of (colour_top, colour_bottom); the sum over the 32 cell values (16 cells'
    Cb and Cr nibbles) of their absolute difference, 0-480."""
    x = np.ascontiguousarray(a, dtype=">i8").view(np.uint8).astype(np.int16)
    y = np.ascontiguousarray(b, dtype=">i8").view(np.uint8).astype(np.int16)
    return (np.abs((x >> 4) - (y >> 4)) + np.abs((x & 15) - (y & 15))).sum(axis=-1)


def _popcount(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.uint64)
    b = x.reshape(-1, 1).view(np.uint8)
    return np.unpackbits(b, axis=1).sum(axis=1).reshape(x.shape).astype(np.uint8)
