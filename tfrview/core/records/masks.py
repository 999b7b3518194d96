"""Segmentation and instance masks: where a record keeps them (one rule for the QA checks and the
drawing) and their pixels coloured with the class palette, for drawing over the image."""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, Feature
from tfrview.core.records.images import check_decoded_size, open_image
from tfrview.core.records.palette import palette_rgb
from tfrview.core.tfds.features import Features
from tfrview.core.tfds.features import Image as TfdsImage

IGNORE = 255  # DeepLab's "ignore" label; 0 is background: neither is coloured


def mask_keys(features: dict[str, Feature], tfds: Features | None = None) -> list[str]:
    """Segmentation masks by convention: DeepLab's image/segmentation/class/encoded, TFDS'
    segmentation_mask, any */segmentation*/encoded; and in a TFDS dataset, every Image its
    features.json declares with `use_colormap` (a segmentation image: each value a class)."""
    return [
        k
        for k, f in features.items()
        if f.type == BYTES_LIST
        and len(f.values)
        and (
            ("segmentation" in k and (k.endswith("encoded") or k.endswith("segmentation_mask")))
            or (tfds is not None and _colormap(tfds, k))
        )
    ]


def _colormap(tfds: Features, key: str) -> bool:
    d = tfds.lookup(key)
    return d is not None and isinstance(d.spec, TfdsImage) and d.spec.use_colormap and not d.sequences


INSTANCE_MASK_KEY = "image/object/mask"  # the OD API's per-object masks


def is_mask_key(key: str, features: dict[str, Feature], tfds: Features | None = None) -> bool:
    """Does `key` hold a mask (a segmentation mask or the instance masks), which is shown as it is
    and never has masks drawn over it? The image panel and exports ask this one rule."""
    return key == INSTANCE_MASK_KEY or key in mask_keys(features, tfds)


def mask_pixels(b: bytes) -> np.ndarray | None:
    """A mask image's class ids (2-D), or None if the bytes are no image."""

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with open_image(b) as im:
                check_decoded_size(im)
                return np.asarray(im.convert("L") if im.mode not in ("L", "P", "I", "I;16") else im)
    except Exception:  # not an image: the QA checks say so
        return None


@dataclass(frozen=True)
class MaskOverlay:
    key: str
    rgba: np.ndarray  # H x W x 4, uint8: class colours, transparent where background or ignored
    classes: tuple[tuple[int, int], ...]  # (class id, pixels), most pixels first
    names: dict = field(default_factory=dict)  # class id -> name (a label map's, or an instance's box)


def mask_overlay(
    features: dict[str, Feature],
    width: int,
    height: int,
    instance_colours: list[str] | None = None,
    tfds: Features | None = None,
) -> MaskOverlay | None:
    """The record's segmentation mask (or its instance masks, each in its box's class colour:
    `instance_colours`, the palette keys of the boxes in order) coloured for drawing over an image
    of width x height; None when it has none of that size."""
    for key in mask_keys(features, tfds):
        px = mask_pixels(features[key].values[0])
        if px is not None and px.shape[:2] == (height, width):
            return _coloured(key, px.astype(np.int64))
    inst = features.get("image/object/mask")
    if inst is not None and len(inst.values):
        ids = np.zeros((height, width), dtype=np.int64)
        for i, m in enumerate(_instance_masks(inst, width, height)):
            if m is not None and m.shape[:2] == (height, width):
                ids[m > 0] = i + 1  # instance i, coloured as its box (or as class i + 1)
        if ids.any():
            return _coloured("image/object/mask", ids, instance_colours)
    return None


def mask_size_notes(features: dict[str, Feature], width: int, height: int) -> list[str]:
    """Why a mask the record holds is not drawn over its width x height image: its size differs
    (read from the mask's header, not decoded). The QA checks flag it as mask_size_mismatch; the
    image panel says it beside the image, where the missing overlay is noticed."""

    def size_of(b: bytes) -> tuple[int, int] | None:
        try:
            with open_image(b) as im:
                return im.size
        except Exception:  # not an image, or over the limits: the QA checks say so
            return None

    out = []
    for key in mask_keys(features):
        got = size_of(features[key].values[0])
        if got is not None and got != (width, height):
            out.append(f"mask {got[0]}×{got[1]} differs from the image {width}×{height}: not drawn ({key})")
    inst = features.get("image/object/mask")
    if inst is not None and inst.type == BYTES_LIST:
        sizes = [size_of(b) for b in inst.values[:255]]
        off = [(i, s) for i, s in enumerate(sizes) if s is not None and s != (width, height)]
        if off:
            i, got = off[0]
            more = f" and {len(off) - 1:,} more" if len(off) > 1 else ""
            out.append(
                f"instance mask {i}{more}: {got[0]}×{got[1]} differs from the image {width}×{height}: not drawn"
            )
    return out


def _instance_masks(inst: Feature, width: int, height: int):
    """The OD API's instance masks: a PNG per object, or dense floats (objects x height x width,
    as its NUMERICAL_MASKS format writes them); at most 255."""
    if inst.type == BYTES_LIST:
        return (mask_pixels(b) for b in inst.values[:255])
    per = width * height
    if inst.type == FLOAT_LIST and per and len(inst.values) % per == 0:
        vals = np.asarray(inst.values[: per * 255], dtype=np.float32)
        return (vals[i * per : (i + 1) * per].reshape(height, width) > 0.5 for i in range(len(vals) // per))
    return ()


def instance_colours(overlay) -> list[str]:
    """Each instance mask's colour key: its box's class (instance i is box i), as boxes are drawn."""
    keys = {b.index: b.color_key for b in overlay.boxes} if overlay is not None else {}
    return [keys.get(i, str(i + 1)) for i in range(max(keys, default=-1) + 1)]


def _coloured(key: str, ids: np.ndarray, colours: list[str] | None = None) -> MaskOverlay:
    found, counts = np.unique(ids, return_counts=True)
    rgba = np.zeros((*ids.shape, 4), dtype=np.uint8)
    classes = []
    for c, n in zip(found.tolist(), counts.tolist(), strict=True):
        if c in (0, IGNORE):
            continue
        colour = colours[c - 1] if colours is not None and 0 < c <= len(colours) else str(c)
        rgba[ids == c] = (*palette_rgb(colour), 255)
        classes.append((c, n))
    return MaskOverlay(key, rgba, tuple(sorted(classes, key=lambda x: -x[1])))
