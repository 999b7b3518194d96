"""The settable thresholds of the dataset-level QA (copies, image quality, label rules): one frozen
dataclass a concern, gathered in `DatasetRules`, set by `--rule NAME=VALUE` on the CLI and by the
window's settings. A threshold is read at the dataset step, after the merge: the per-record scores
and hashes the pass stores never depend on one, so a new threshold needs no new pass.

Each field's documentation is in its metadata (`rule(default, doc)`: `tfrview rules` prints them,
`DatasetRules.docs()` lists them, the README's tables say the same).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from tfrview.core.errors import TfrviewError

# A normal distribution's standard deviation per median absolute deviation: the robust sigma the
# `*_sigma` rules count in (image quality, box size outliers).
MAD_SIGMA = 1.4826


class RuleError(TfrviewError):
    """A `--rule` the person gave that names no rule or holds no number."""


def rule(default, doc: str):
    """A rule's field: its default and its one line of documentation (`tfrview rules` prints it;
    kept in the field's metadata so the dataclass stays frozen and the text has one home)."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class DuplicateRules:
    near_distance: int = rule(
        12,
        "near duplicates: the largest Hamming distance between two images' 64-bit DCT hashes (phash). 12 of 64 bits: re-encoding and brightness shifts of 10 % move 0-2 bits, resizing to 50-90 % up to 10, crops of 5 % up to 14 (measured on planted copies of draft-decoded images); two distinct images of one scene and palette were 16 or more apart",
    )
    confirm_distance: int = rule(
        22,
        "a near pair is kept only when the difference hashes (dhash) agree within this many bits too: copies were within 20, so it drops chance agreements of the DCT hash without losing copies",
    )
    colour_distance: int = rule(
        24,
        "a near pair is kept only when the colour signatures (each image's mean Cb and Cr chroma in 4 x 4 cells, 4 levels a step: records.imagesignals) differ by at most this many steps in all (summed over the 32 values): the grey hashes cannot tell two scenes of one layout in other colours apart. Planted copies were within 20 (crops of 5 %, resizes to 50 %; re-encoding 5, brightness shifts 0), distinct scenes of one palette 29 or more (1 % of pairs below 43), the demo's two gradient scenes 177",
    )
    check_near: bool = rule(True, "find near duplicates too, not only exact copies")


@dataclass(frozen=True)
class QualityRules:
    quality_sigma: float = rule(
        2.0,
        "(analysis.imagequality) an image is named only when it passes its fixed bound AND is this many robust standard deviations (1.4826 x MAD) from its split's median, on the bad side",
    )
    dark_brightness: float = rule(40.0, "dark: mean brightness (0-255) below this")
    bright_brightness: float = rule(215.0, "bright: mean brightness (0-255) above this")
    blurry_blur: float = rule(
        100.0, "blurry: variance of the Laplacian at the 64 px working scale below this"
    )
    low_entropy: float = rule(
        4.0,
        "low information: grey-histogram entropy below this many bits (a blank image is named blank only)",
    )
    blank_fraction: float = rule(
        0.95, "blank: at least this fraction of pixels within 8 grey levels of the dominant one"
    )
    odd_aspect: float = rule(3.0, "odd aspect: width/height above this, or below its inverse")
    odd_size_ratio: float = rule(
        8.0, "odd size: a pixel count this many times below or above the split's median"
    )


@dataclass(frozen=True)
class LabelRules:
    imbalance_ratio: float = rule(
        50.0,
        "a class with fewer boxes (or records, for a record label) than the largest class's, divided by this, is rare (within a dataset group and split)",
    )
    outlier_sigma: float = rule(
        5.0,
        "a box whose size (log of its area in the image) or aspect (log of width / height) is this many robust standard deviations (1.4826 x the median absolute deviation) from its class's median",
    )
    outlier_min_boxes: int = rule(
        20, "only classes with at least this many boxes (in a dataset group) are judged for outliers"
    )
    duplicate_iou: float = rule(
        0.95, "two boxes of one class in one image with at least this IoU are one box twice"
    )
    overlap_iou: float = rule(
        0.9, "two boxes of different classes with at least this IoU are two classes on one object"
    )
    tiny_pixels: float = rule(4.0, "a box under this many pixels wide or high at its image's size is tiny")


@dataclass(frozen=True)
class DriftRules:
    infinity_norm: float = rule(
        0.1,
        "`compare`: the largest L-infinity distance of a categorical feature's value shares (TFDV's measure; TFDV sets no default: its guide's 0.01 flags the sampling noise of any split under ~10,000 records, Google's wrappers' 0.3 misses a class that halves)",
    )
    js_divergence: float = rule(
        0.1,
        "`compare`: the largest Jensen-Shannon divergence (log 2, 0..1) of a numeric feature's histograms on common bins (TFDV's measure; no default there either)",
    )
    presence_change: float = rule(
        0.1, "`compare`: the largest change in the fraction of records that hold a feature (TFDV has none)"
    )


@dataclass(frozen=True)
class PredictionRules:
    eval_iou: float = rule(
        0.5,
        "predictions: a prediction matches a ground-truth box of its class at this IoU or more (the fact columns tp, fp, fn and the problem kinds; `evaluate --iou` sets it for the report)",
    )
    eval_score: float = rule(
        0.5,
        "predictions: only predictions scoring at least this count (the fact columns tp, fp, fn, max_fp_score; `evaluate --score`)",
    )
    missing_label_score: float = rule(
        0.8,
        "possible_missing_label: a prediction scoring at least this with no ground-truth box near it",
    )
    near_iou: float = rule(
        0.1,
        "possible_missing_label and possible_spurious_label: a box is near another at this IoU or more (any class)",
    )
    wrong_class_score: float = rule(
        0.8,
        "possible_wrong_class: a prediction of another class scoring at least this on a ground-truth box",
    )
    wrong_class_iou: float = rule(0.5, "possible_wrong_class: the IoU at which that prediction is on the box")
    spurious_score: float = rule(
        0.1,
        "possible_spurious_label: a ground-truth box that no prediction scoring at least this comes near",
    )


@dataclass(frozen=True)
class DatasetRules:
    duplicates: DuplicateRules = field(default_factory=DuplicateRules)
    quality: QualityRules = field(default_factory=QualityRules)
    labels: LabelRules = field(default_factory=LabelRules)
    drift: DriftRules = field(default_factory=DriftRules)
    predictions: PredictionRules = field(default_factory=PredictionRules)

    def names(self) -> dict[str, object]:
        """Every rule by its name (`near_distance`), with its value."""
        return {f.name: getattr(part, f.name) for part in self._parts() for f in fields(part)}

    def docs(self) -> list[RuleDoc]:
        """Every rule with its concern, type, default and one line of documentation, in order."""
        out = []
        for attr, part in zip((f.name for f in fields(self)), self._parts(), strict=True):
            for f in fields(part):
                doc = f.metadata.get("doc", "")
                default = getattr(type(part)(), f.name)
                out.append(RuleDoc(f.name, attr, type(default).__name__, default, doc))
        return out

    def _parts(self):
        return tuple(getattr(self, f.name) for f in fields(self))

    def with_words(self, words: list[str]) -> DatasetRules:
        """These rules with `NAME=VALUE` words applied (`--rule near_distance=6`); a word that names
        no rule or holds no value of its type is a RuleError, in one line."""
        out = self
        for word in words:
            name, eq, value = word.partition("=")
            name = name.strip()
            for attr in (f.name for f in fields(out)):
                part = getattr(out, attr)
                f = next((f for f in fields(part) if f.name == name), None)
                if f is not None:
                    break
            else:
                raise RuleError(
                    f"--rule {word!r}: no rule is called {name!r} (rules: {', '.join(sorted(self.names()))})"
                )
            if not eq:
                raise RuleError(f"--rule {word!r}: say a value, as in {name}={getattr(part, name)}")
            out = replace(
                out, **{attr: replace(part, **{name: _parsed(word, name, value, getattr(part, name))})}
            )
        return out


@dataclass(frozen=True)
class RuleDoc:
    """One rule as `tfrview rules` shows it."""

    name: str
    concern: str  # duplicates, quality, labels, drift, predictions
    type: str  # int, float, bool
    default: object
    doc: str


def _parsed(word: str, name: str, value: str, now):
    value = value.strip()
    try:
        if isinstance(now, bool):
            if value.lower() in ("1", "true", "yes", "on"):
                return True
            if value.lower() in ("0", "false", "no", "off"):
                return False
            raise ValueError(value)
        return type(now)(value)
    except ValueError:
        kind = (
            "yes or no" if isinstance(now, bool) else "a whole number" if isinstance(now, int) else "a number"
        )
        raise RuleError(f"--rule {word!r}: {name} takes {kind}, as in {name}={now}") from None
