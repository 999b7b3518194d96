"""Model-free image quality at the dataset step: images that are dark, bright, blurry, low in
information, blank, of an odd aspect or an odd size, judged from the scores the pass stored per
record (`records.imagesignals`: brightness, blur, entropy, blank, aspect, pixels), never by
decoding again.

How the thresholds adapt: each finding needs two things at once,
1. a fixed bound in absolute terms (`rules.QualityRules`: brightness below 40 is dark, above 215
   bright, a Laplacian variance below 100 at the 64 px working scale blurry, entropy under 4 bits
   low in information, 95 % of the pixels on one grey level blank, width/height over 3 or under 1/3
   an odd aspect), and
2. being far from the image's own context, the records of its dataset group and split: more than
   `quality_sigma` (2) robust standard deviations (1.4826 x the median absolute deviation, with a
   floor per score so a uniform dataset does not make every difference infinite) from the context's
   median, on the bad side (blur, aspect and pixel counts on a log scale).
So a dataset of night images or greyscale scans, whose median is itself dark or flat, names only
the images unusual for it, and an ordinary photo that happens to be dim is not named in a bright
dataset unless it is also dark in absolute terms. `image_odd_size` has no fixed bound of its own:
its bound is `odd_size_ratio` (8) times below or above the context's median pixel count.

A record is judged by its first decodable image (the one `image_width`/`image_height` describe);
a record whose images do not decode has null scores and is counted apart (`image_undecodable`), never
judged blank. A dataset with no decodable image gets none of these checks and one note saying so.
The thresholds used and the counts per finding go to `qa.tables["image_quality"]`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from tfrview.core.analysis.checks import Finding
from tfrview.core.analysis.factcolumns import Columns, Step, columns
from tfrview.core.analysis.rules import MAD_SIGMA, DatasetRules
from tfrview.core.problems import ProblemKind

log = logging.getLogger(__name__)

SCORES = ("brightness", "blur", "entropy", "blank", "aspect", "pixels")


@dataclass(frozen=True)
class _Test:
    kind: ProblemKind
    column: str
    log: bool  # judged on a log scale (ratios: blur, aspect, pixels)
    side: int  # -1: low values are bad, 1: high, 0: either
    floor: float  # the least robust scale, in the judged units
    words: str  # what the message calls the value
    rule: str  # the `rules.QualityRules` field that is its fixed bound
    bound_words: str  # the bound in a message, `{b}` the rule's value


_TESTS = (
    _Test(
        ProblemKind.IMAGE_DARK,
        "brightness",
        False,
        -1,
        10.0,
        "mean brightness",
        "dark_brightness",
        "below {b:g}",
    ),
    _Test(
        ProblemKind.IMAGE_BRIGHT,
        "brightness",
        False,
        1,
        10.0,
        "mean brightness",
        "bright_brightness",
        "above {b:g}",
    ),
    _Test(
        ProblemKind.IMAGE_BLURRY, "blur", True, -1, 0.25, "Laplacian variance", "blurry_blur", "below {b:g}"
    ),
    _Test(
        ProblemKind.IMAGE_BLANK,
        "blank",
        False,
        1,
        0.05,
        "share of pixels on one grey level",
        "blank_fraction",
        "at least {b:g}",
    ),
    _Test(
        ProblemKind.IMAGE_LOW_INFORMATION,
        "entropy",
        False,
        -1,
        0.25,
        "grey entropy (bits)",
        "low_entropy",
        "below {b:g}",
    ),
    _Test(
        ProblemKind.IMAGE_ODD_ASPECT,
        "aspect",
        True,
        0,
        0.1,
        "width/height",
        "odd_aspect",
        "over {b:g} or under 1/{b:g}",
    ),
    _Test(
        ProblemKind.IMAGE_ODD_SIZE,
        "pixels",
        True,
        0,
        0.25,
        "pixels",
        "odd_size_ratio",
        "{b:g}x from the median",
    ),
)


def _bound(t: _Test, rules) -> tuple[float, str]:
    """The fixed bound of a test (odd size: a ratio to the context's median) and its words."""
    b = getattr(rules.quality, t.rule)
    return b, t.bound_words.format(b=b)


def _passes_bound(t: _Test, v: np.ndarray, bound: float, median: float) -> np.ndarray:
    if t.kind == ProblemKind.IMAGE_ODD_ASPECT:
        return (v > bound) | (v < 1.0 / bound)
    if t.kind == ProblemKind.IMAGE_ODD_SIZE:
        return (v * bound <= median) | (v >= median * bound)
    if t.kind == ProblemKind.IMAGE_BLANK:
        return v >= bound
    return v < bound if t.side < 0 else v > bound


def _judged(t: _Test, v: np.ndarray) -> np.ndarray:
    return np.log(np.maximum(v, 1e-6)) if t.log else v


def image_key(analysis) -> str:
    """The key the dataset's images are in, for messages: the conventional one if the data has it."""
    keys = list(analysis.schema.types)
    for k in ("image/encoded", "image"):
        if k in keys:
            return k
    return next((k for k in keys if k.endswith("encoded")), "image")


def step(analysis, rules: DatasetRules, qa) -> list:
    """`judge` over the score columns read for it alone (the dataset step reads them once for
    every step: `STEP`)."""
    return judge(analysis, rules, qa, columns(analysis, list(SCORES)))


def judge(analysis, rules: DatasetRules, qa, cols: Columns) -> list:
    """Every image quality finding of a merged deep analysis (see the module's docstring), from
    the `SCORES` columns of every file."""
    have = cols.valid["brightness"] if len(cols) else np.zeros(0, dtype=bool)
    undecodable = sum(
        1 for s in analysis.shards for p in s.problems if p.kind == ProblemKind.IMAGE_UNDECODABLE
    )
    if not have.any():
        qa.notes.append(
            "no image in the data decoded: the image quality checks (dark, bright, blurry, blank, "
            "low information, odd aspect, odd size) did not run"
        )
        return []
    group_of = np.zeros(len(analysis.shards), dtype=np.int32)
    for gi, g in enumerate(analysis.groups):
        group_of[list(g.files)] = gi
    context = group_of[cols.file].astype(np.int64) * 65536 + cols.split.astype(np.int64)
    found: list = []
    counts = {str(t.kind): 0 for t in _TESTS}
    contexts = []
    blank_rows = np.zeros(len(cols), dtype=bool)
    key = image_key(analysis)
    for c in np.unique(context[have]):
        rows = np.flatnonzero(have & (context == c))
        split = cols.split_names[int(c % 65536)]
        where = f"{split} median" if split else "dataset median"
        medians, scales = {}, {}
        for t in _TESTS:
            v = cols.values[t.column][rows].astype(np.float64)
            j = _judged(t, v)
            mid = float(np.median(j))
            scale = max(MAD_SIGMA * float(np.median(np.abs(j - mid))), t.floor)
            median = float(np.median(v))
            medians[t.column], scales[t.column] = median, scale
            bound, bound_words = _bound(t, rules)
            z = (j - mid) / scale
            far = z < -rules.quality.quality_sigma if t.side < 0 else z > rules.quality.quality_sigma
            if t.side == 0:
                far = np.abs(z) > rules.quality.quality_sigma
            hit = far & _passes_bound(t, v, bound, median)
            if t.kind == ProblemKind.IMAGE_BLANK:
                blank_rows[rows[hit]] = True
            if t.kind == ProblemKind.IMAGE_LOW_INFORMATION:
                hit &= ~blank_rows[rows]  # a blank image is named once, as blank
            for i in np.flatnonzero(hit).tolist():
                r = int(rows[i])
                msg = (
                    f"{key} is {_ADJ[t.kind]}: {t.words} {_fmt(v[i])} ({where} {_fmt(median)}; {bound_words})"
                )
                found.append((int(cols.file[r]), int(cols.record[r]), Finding(t.kind, msg, key)))
            counts[str(t.kind)] += int(hit.sum())
        contexts.append(
            {
                "group": int(c // 65536),
                "split": split,
                "images": len(rows),
                "median": medians,
                "robust_scale": scales,
            }
        )
    qa.tables["image_quality"] = {
        "images": int(have.sum()),
        "undecodable": undecodable,
        "rules": {k: v for k, v in rules.names().items() if hasattr(rules.quality, k)},
        "contexts": contexts,
        "counts": counts,
    }
    log.debug("image quality: %s", counts)
    return found


_ADJ = {
    ProblemKind.IMAGE_DARK: "dark",
    ProblemKind.IMAGE_BRIGHT: "bright",
    ProblemKind.IMAGE_BLURRY: "blurry",
    ProblemKind.IMAGE_BLANK: "blank",
    ProblemKind.IMAGE_LOW_INFORMATION: "low in information",
    ProblemKind.IMAGE_ODD_ASPECT: "of an odd aspect",
    ProblemKind.IMAGE_ODD_SIZE: "of an odd size",
}


def _fmt(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:.3g}"


STEP = Step("imagequality", judge, columns=SCORES)
