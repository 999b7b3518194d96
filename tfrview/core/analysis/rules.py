"""The settable thresholds of the dataset-level QA (copies, image quality, label rules): one frozen
dataclass a concern, gathered in `DatasetRules`, set by `--rule NAME=VALUE` on the CLI and by the
window's settings. A threshold is read at the dataset step, after the merge: the per-record scores
and hashes the pass stores never depend on one, so a new threshold needs no new pass.

Each field's comment is its documentation (`tfrview rules` prints them; the README lists them).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from tfrview.core.errors import TfrviewError


class RuleError(TfrviewError):
    """A `--rule` the person gave that names no rule or holds no number."""


@dataclass(frozen=True)
class DuplicateRules:
    # near duplicates: the largest Hamming distance between two images' 64-bit perceptual hashes
    near_distance: int = 10
    # find near duplicates too, not only exact copies
    check_near: bool = True


@dataclass(frozen=True)
class QualityRules:
    # thresholds are filled by analysis.imagequality (documented there)
    pass


@dataclass(frozen=True)
class LabelRules:
    # a class with fewer boxes (or records) than the largest class's, divided by this, is rare
    imbalance_ratio: float = 50.0
    # a box whose size or aspect is this many robust standard deviations from its class's
    outlier_sigma: float = 5.0
    # two boxes of one class in one image with at least this IoU are one box twice
    duplicate_iou: float = 0.95
    # two boxes of different classes with at least this IoU are two classes on one object
    overlap_iou: float = 0.9
    # a box under this many pixels wide or high at its image's size is tiny
    tiny_pixels: float = 4.0


@dataclass(frozen=True)
class DriftRules:
    # `compare`: the largest L-infinity distance of a categorical feature's value shares (TFDV's
    # measure; TFDV sets no default: its guide's 0.01 flags the sampling noise of any split under
    # ~10,000 records, Google's wrappers' 0.3 misses a class that halves)
    infinity_norm: float = 0.1
    # `compare`: the largest Jensen-Shannon divergence (log 2, 0..1) of a numeric feature's
    # histograms on common bins (TFDV's measure; no default there either)
    js_divergence: float = 0.1
    # `compare`: the largest change in the fraction of records that hold a feature (TFDV has none)
    presence_change: float = 0.1


@dataclass(frozen=True)
class DatasetRules:
    duplicates: DuplicateRules = field(default_factory=DuplicateRules)
    quality: QualityRules = field(default_factory=QualityRules)
    labels: LabelRules = field(default_factory=LabelRules)
    drift: DriftRules = field(default_factory=DriftRules)

    def names(self) -> dict[str, object]:
        """Every rule by its name (`near_distance`), with its value."""
        return {f.name: getattr(part, f.name) for part in self._parts() for f in fields(part)}

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
        kind = "yes or no" if isinstance(now, bool) else type(now).__name__
        raise RuleError(f"--rule {word!r}: {name} takes a {kind}, as in {name}={now}") from None
