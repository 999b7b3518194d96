"""Images inside records, found without being told where: encoded bytes under any key, raw pixel
arrays sized by sibling height/width/channels features, `tf.io.serialize_tensor` payloads, and
float lists that form a square image. Decoded with Pillow/numpy into display-ready uint8 arrays.
"""

from __future__ import annotations

import functools
import io
import math
import re
import warnings
from dataclasses import dataclass

import numpy as np

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_IMAGE_DECODED_BYTES, MAX_IMAGE_PIXELS, NAME_MEMO, too_large
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST, Feature
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.tfrecord.sniff import sniff_image_format


@dataclass(frozen=True, slots=True)
class ImageRef:
    """Where an image lives in a record: feature key, value index, and how it is stored."""

    key: str
    index: int
    storage: str  # "encoded" | "raw" | "tensor" | "floats"
    detail: str  # e.g. "JPEG", "uint8 64x64x3", "float32 28x28"

    @property
    def label(self) -> str:
        suffix = f"[{self.index}]" if self.index else ""
        return f"{self.key}{suffix} ({self.detail})"


@dataclass(frozen=True)
class DecodedImage:
    """Pixels ready to show: uint8, HxW (gray), HxWx3 (RGB) or HxWx4 (RGBA)."""

    ref: ImageRef
    pixels: np.ndarray
    source_size: tuple[int, int]  # (width, height) as stored, before EXIF orientation
    notes: tuple[str, ...] = ()  # e.g. "EXIF orientation 6 applied", "16-bit scaled to 8-bit"
    # (width, height) shown at full size: after EXIF, before any thumbnail
    full_size: tuple[int, int] | None = None

    @property
    def scale(self) -> float:
        """Pixels per full-size pixel: below 1 for a thumbnail. Boxes computed at full size scale by it."""
        full = self.full_size or (self.width, self.height)
        return self.width / full[0] if full[0] else 1.0

    @property
    def width(self) -> int:
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self.pixels.shape[0])


class ImageError(TfrviewError, ValueError):
    """Bytes that look like an image but do not decode (or are refused, like decompression bombs)."""


# --- finding ---------------------------------------------------------------------------------------

RECORD_KEY = "(record)"  # the name a record that is itself an encoded image goes by


def image_features(p) -> dict[str, Feature]:
    """The features to look for images in: an Example's, a SequenceExample's context and frames
    (`frames.with_frames`: frame t is image t of its key), or, for a record that is itself an
    encoded image (a TFRecord of JPEG bytes, no Example), the record."""
    if p.kind == PayloadKind.SEQUENCE_EXAMPLE:
        from tfrview.core.records.frames import with_frames  # start-up: kept off the CLI's path

        return with_frames(p)
    if p.kind in (PayloadKind.EXAMPLE, PayloadKind.EVENT):
        return p.features
    if p.full_size is None and sniff_image_format(p.raw):
        return {RECORD_KEY: Feature(BYTES_LIST, [p.raw])}
    return {}


_H = re.compile(r"(^|[/_.])(height|rows|h)$")
_W = re.compile(r"(^|[/_.])(width|cols|w)$")
_C = re.compile(r"(^|[/_.])(depth|channels|channel|c)$")


@functools.lru_cache(maxsize=NAME_MEMO)
def _named(pattern: re.Pattern, key: str) -> bool:
    """Whether a key names a height, width or channels: asked for the same few keys of every record
    (a regular expression each time was a tenth of the checks of a small Example)."""
    return pattern.search(key) is not None


def _scalar(features: dict[str, Feature], pattern: re.Pattern, prefix: str) -> int | None:
    """An int64 scalar feature matching pattern, preferring one with the same key prefix."""
    best = None
    for k, f in features.items():
        if f.type == INT64_LIST and len(f.values) == 1 and _named(pattern, k):
            v = int(f.values[0])
            if k.startswith(prefix):
                return v
            best = v if best is None else best
    return best


def _prefix(key: str) -> str:
    return key.rsplit("/", 1)[0] + "/" if "/" in key else ""


def _tensor(b: bytes):
    """A TensorProto's (dtype name, shape, array) when b is a serialized numeric tensor, else None."""
    if len(b) < 4 or b[0] != 0x08:  # field 1 (dtype), varint
        return None
    from tfrview.core.records.proto import tensor_pb2  # heavy: protobuf on first use only

    try:
        t = tensor_pb2.TensorProto.FromString(b)
    except (
        Exception
    ):  # not a TensorProto (protobuf raises several types): no tensor image, said by the caller
        return None
    dt = {
        tensor_pb2.DT_UINT8: np.uint8,
        tensor_pb2.DT_UINT16: np.uint16,
        tensor_pb2.DT_FLOAT: np.float32,
        tensor_pb2.DT_DOUBLE: np.float64,
        tensor_pb2.DT_INT32: np.int32,
        tensor_pb2.DT_INT64: np.int64,
        tensor_pb2.DT_HALF: np.float16,
        tensor_pb2.DT_INT16: np.int16,
        tensor_pb2.DT_INT8: np.int8,
    }.get(t.dtype)
    shape = [d.size for d in t.tensor_shape.dim]
    if dt is None or not shape or any(s <= 0 for s in shape):
        return None
    n = math.prod(shape)
    if t.tensor_content:
        if len(t.tensor_content) != n * np.dtype(dt).itemsize:
            return None
        arr = np.frombuffer(t.tensor_content, dtype=dt)
    else:
        vals = t.float_val or t.int_val or t.int64_val or t.double_val
        if len(vals) != n:
            return None
        arr = np.asarray(vals, dtype=dt)
    return np.dtype(dt).name, shape, arr.reshape(shape)


def _image_shape(shape: list[int]) -> bool:
    if len(shape) == 2:
        return min(shape) >= 2
    if len(shape) == 3:
        return shape[2] in (1, 3, 4) and min(shape[:2]) >= 2
    return False


def find_images(features: dict[str, Feature]) -> list[ImageRef]:
    """Every image in a record's features, encoded ones first."""
    found: list[ImageRef] = []
    raws: list[ImageRef] = []
    sizes = None  # the keys a raw image's size could be read from, found once, not once a key
    for key, f in features.items():
        if f.type == BYTES_LIST or (f.type == FLOAT_LIST and len(f.values) >= 64):
            sizes = _size_features(features) if sizes is None else sizes
        if f.type == BYTES_LIST:
            for i, b in enumerate(f.values[:64]):
                fmt = sniff_image_format(b)
                if fmt:
                    found.append(ImageRef(key, i, "encoded", fmt))
                    continue
                t = _tensor(b)
                if t is not None and _image_shape(t[1]):
                    raws.append(ImageRef(key, i, "tensor", f"{t[0]} {'x'.join(map(str, t[1]))}"))
                    continue
                shape = _raw_shape(sizes, key, len(b))
                if shape:
                    raws.append(ImageRef(key, i, "raw", shape[0]))
        elif f.type == FLOAT_LIST and len(f.values) >= 64:
            side = math.isqrt(len(f.values))
            if side * side == len(f.values):
                raws.append(ImageRef(key, 0, "floats", f"float32 {side}x{side}"))
            else:
                shape = _raw_shape(sizes, key, len(f.values))
                if shape and shape[0].startswith("uint8"):
                    h, w, c = shape[1]
                    raws.append(
                        ImageRef(key, 0, "floats", f"float32 {h}x{w}x{c}" if c > 1 else f"float32 {h}x{w}")
                    )
    return found + raws


def _size_features(features: dict[str, Feature]) -> dict[str, Feature]:
    """The int64 scalars named like a height, width or channels: all `_raw_shape` looks at (a record
    of 10,000 keys would otherwise be searched 10,000 times over)."""
    return {
        k: f
        for k, f in features.items()
        if f.type == INT64_LIST and len(f.values) == 1 and (_H.search(k) or _W.search(k) or _C.search(k))
    }


def _raw_shape(features, key, nbytes):
    """('uint8 HxWxC', (h, w, c)) when nbytes matches sibling height/width/channels, else None.

    This is a raw tensor's shape, not the image size a record states (`reading.stated_size`, the
    one rule for that): a raw image has no header, so its shape must come from the scalars beside
    its own key (the same prefix first; `rows`/`cols`/`h`/`w` too, as array dumps name them), and
    is believed only when it accounts for every byte."""
    pre = _prefix(key)
    h = _scalar(features, _H, pre)
    w = _scalar(features, _W, pre)
    if not h or not w or h <= 0 or w <= 0:
        return None
    c = _scalar(features, _C, pre)
    for chans in ([c] if c else []) + [3, 1, 4]:
        if chans and chans in (1, 3, 4):
            for dtype, size in (("uint8", 1), ("uint16", 2), ("float32", 4)):
                if h * w * chans * size == nbytes:
                    return f"{dtype} {h}x{w}x{chans}" if chans > 1 else f"{dtype} {h}x{w}", (h, w, chans)
    return None


# --- decoding ---------------------------------------------------------------------------------------


_BLOCK_PIXELS = 1 << 22  # pixels converted at a time: the temporaries stay a few MB


def to_display(arr: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """Any numeric image array as uint8 for display, saying what was done to it. Converted in
    blocks of rows, so a large image costs its output, not float64 copies of it."""
    notes: list[str] = []
    if arr.ndim == 3 and arr.shape[2] == 1:
        arr = arr[:, :, 0]
    if arr.dtype == np.uint8:
        return np.ascontiguousarray(arr), notes
    if arr.dtype == np.uint16:
        notes.append("16-bit scaled to 8-bit")
        return _blockwise(
            arr, lambda a: ((a.astype(np.uint32) * 255 + 32767) // 65535).astype(np.uint8)
        ), notes
    finite_all = True
    lo, hi = np.inf, -np.inf
    for block in _blocks(arr):
        b = block.astype(np.float64) if block.dtype.kind != "f" else block
        fin = np.isfinite(b)
        if not fin.all():
            finite_all = False
            b = b[fin]
        if b.size:
            lo, hi = min(lo, float(b.min())), max(hi, float(b.max()))
    if not finite_all:
        bad = sum(int((~np.isfinite(b)).sum()) for b in _blocks(arr) if b.dtype.kind == "f")
        notes.append(f"{bad} NaN/inf pixels shown black")
    if lo > hi:
        lo, hi = 0.0, 1.0
    if arr.dtype.kind == "f" and lo >= 0 and hi <= 1:
        scale, offset = 255.0, 0.0
        notes.append("floats in [0, 1] scaled to 0..255")
    elif hi > lo:
        scale, offset = 255.0 / (hi - lo), lo
        notes.append(f"{arr.dtype.name} values {lo:g}..{hi:g} stretched to 0..255")
    else:
        scale, offset = 0.0, 0.0

    def convert(a: np.ndarray) -> np.ndarray:
        x = a.astype(np.float64)
        x = np.where(np.isfinite(x), x, offset)
        return np.clip(np.rint((x - offset) * scale), 0, 255).astype(np.uint8)

    return _blockwise(arr, convert), notes


def _blocks(arr: np.ndarray):
    rows = max(1, _BLOCK_PIXELS // max(1, int(np.prod(arr.shape[1:]))))
    for r in range(0, arr.shape[0], rows):
        yield arr[r : r + rows]


def _blockwise(arr: np.ndarray, fn) -> np.ndarray:
    out = np.empty(arr.shape, dtype=np.uint8)
    rows = max(1, _BLOCK_PIXELS // max(1, int(np.prod(arr.shape[1:]))))
    for r in range(0, arr.shape[0], rows):
        out[r : r + rows] = fn(arr[r : r + rows])
    return out


_BYTES_PER_BAND = {"I;16": 2, "I;16B": 2, "I;16L": 2, "I;16N": 2, "I": 4, "F": 4, "1": 1}


def open_image(b: bytes):
    """A Pillow image of encoded bytes, opened lazily and checked against the limits before any
    pixel is decoded: over MAX_IMAGE_PIXELS pixels, or MAX_IMAGE_DECODED_BYTES decoded, is refused
    as a decompression bomb (ImageError). Pillow's warnings are kept off stderr."""
    from PIL import Image  # heavy: PIL on first use only

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        im = Image.open(io.BytesIO(b))
    w, h = im.size
    if w * h > MAX_IMAGE_PIXELS:
        raise ImageError(
            too_large(f"the {w}x{h} image", w * h, MAX_IMAGE_PIXELS, "pixels", "MAX_IMAGE_PIXELS")
            + ": a decompression bomb?"
        )
    check_decoded_size(im)
    return im


def check_decoded_size(im) -> None:
    """Raise ImageError when decoding `im` at its current size (after any draft) would take more
    than MAX_IMAGE_DECODED_BYTES."""
    w, h = im.size
    need = w * h * len(im.getbands()) * _BYTES_PER_BAND.get(im.mode, 1)
    if need > MAX_IMAGE_DECODED_BYTES:
        raise ImageError(
            too_large(
                f"the {w}x{h} {im.mode} image, decoded,",
                need,
                MAX_IMAGE_DECODED_BYTES,
                name="MAX_IMAGE_DECODED_BYTES",
            )
        )


def decode_encoded(b: bytes, ref: ImageRef, max_side: int | None = None) -> DecodedImage:
    """Decode with Pillow, EXIF orientation applied; `max_side` decodes a reduced thumbnail (JPEG draft)."""
    from PIL import Image, ImageOps  # heavy: PIL on first use only

    notes: list[str] = []
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            im = open_image(b)
            w, h = im.size
            if max_side and im.format == "JPEG":
                im.draft("RGB", (max_side, max_side))
                check_decoded_size(im)
            im.load()
            orientation = im.getexif().get(0x0112, 1)
            full = (w, h)
            if orientation not in (1, None):
                im = ImageOps.exif_transpose(im)
                notes.append(f"EXIF orientation {orientation} applied")
                if orientation in (5, 6, 7, 8):
                    full = (h, w)
            if max_side and im.mode in ("RGB", "RGBA", "L", "LA", "P", "1"):
                im.thumbnail((max_side, max_side))
            arr = _pil_to_array(im, notes)
            if max_side and max(arr.shape[:2]) > max_side:  # 16-bit and float images: reduced once 8-bit
                small = Image.fromarray(arr)
                small.thumbnail((max_side, max_side))
                arr = np.asarray(small)
        for c in caught[:3]:  # e.g. "Corrupt EXIF data": worth a note, never a line on stderr
            notes.append(f"Pillow: {str(c.message).splitlines()[0][:200]}")
    except ImageError:
        raise
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
        raise ImageError(f"refused as a decompression bomb: {exc}") from None
    except Exception as exc:  # Pillow raises many types for broken data
        raise ImageError(f"{ref.detail} bytes do not decode: {decode_error_text(exc)}") from None
    return DecodedImage(ref, arr, (w, h), tuple(notes), full)


def decode_error_text(exc: Exception) -> str:
    """Pillow's message without Python internals (it names `<_io.BytesIO object at 0x…>`)."""
    text = re.sub(r"<[^<>]* object at 0x[0-9a-f]+>", "the image bytes", str(exc))
    return text or type(exc).__name__


def _pil_to_array(im, notes: list[str]) -> np.ndarray:
    if im.mode in ("I;16", "I;16B", "I;16L", "I"):
        arr, more = to_display(np.asarray(im))
        notes.extend(more)
        return arr
    if im.mode == "F":
        arr, more = to_display(np.asarray(im))
        notes.extend(more)
        return arr
    if im.mode in ("RGBA", "LA", "PA") or (im.mode == "P" and "transparency" in im.info):
        return np.ascontiguousarray(np.asarray(im.convert("RGBA")))
    if im.mode == "L":
        return np.ascontiguousarray(np.asarray(im))
    if im.mode == "1":
        return np.ascontiguousarray(np.asarray(im.convert("L")))
    if im.mode == "RGB":  # no convert(): it would copy every pixel once more, holding the GIL
        return np.ascontiguousarray(np.asarray(im))
    return np.ascontiguousarray(np.asarray(im.convert("RGB")))


def decode_image(features: dict[str, Feature], ref: ImageRef, max_side: int | None = None) -> DecodedImage:
    """Decode the image `ref` points at. Raises ImageError with a one-line reason."""
    f = features.get(ref.key)
    if f is None:
        raise ImageError(f"no feature {ref.key!r}")
    if ref.storage == "encoded":
        return decode_encoded(f.values[ref.index], ref, max_side)
    notes: list[str] = []
    if ref.storage == "tensor":
        t = _tensor(f.values[ref.index])
        if t is None:
            raise ImageError(f"{ref.key}: not a decodable tensor")
        arr = t[2]
    elif ref.storage == "raw":
        dtype, dims = ref.detail.split(" ", 1)
        shape = [int(x) for x in dims.split("x")]
        arr = np.frombuffer(f.values[ref.index], dtype=np.dtype(dtype).newbyteorder("<")).reshape(shape)
        notes.append(f"raw {dtype} pixels shaped {dims} from the height/width features")
    else:  # floats
        dims = ref.detail.split(" ", 1)[1]
        shape = [int(x) for x in dims.split("x")]
        arr = np.asarray(f.values, dtype=np.float32).reshape(shape)
    h, w = arr.shape[:2]
    display, more = to_display(arr)
    if max_side and max(h, w) > max_side:
        from PIL import Image  # heavy: PIL on first use only

        im = Image.fromarray(display)
        im.thumbnail((max_side, max_side))
        display = np.asarray(im)
    return DecodedImage(ref, display, (w, h), tuple(notes + more), (w, h))
