"""The settable thresholds of the dataset-level QA (copies, image quality, label rules): one frozen
dataclass a concern, gathered in `DatasetRules`, set by `--rule NAME=VALUE` on the CLI and by the
window's settings. A threshold is read at the dataset step, after the merge: the per-record scores
and hashes the pass stores never depend on one, so a new threshold needs no new pass.

Each field's documentation is in its metadata (`rule(default, doc)`; `tfrview rules` prints them,
`DatasetRules.docs()` lists them; a field still documented by a comment above it is read from the
source, so a concern's rules added that way are listed too).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace

from tfrview.core.errors import TfrviewError


class RuleError(TfrviewError):
    """A `--rule` the person gave that names no rule or holds no number."""


def rule(default, doc: str):
    """A rule's field: its default and its one line of documentation (`tfrview rules` prints it;
    kept in the field's metadata so the dataclass stays frozen and the text has one home)."""
    return field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class DuplicateRules:
    near_distance: int = rule(
        10, "near duplicates: the largest Hamming distance between two images' 64-bit perceptual hashes"
    )
    check_near: bool = rule(True, "find near duplicates too, not only exact copies")


@dataclass(frozen=True)
class QualityRules:
    # thresholds are filled by analysis.imagequality (documented there)
    pass


@dataclass(frozen=True)
class LabelRules:
    imbalance_ratio: float = rule(
        50.0, "a class with fewer boxes (or records) than the largest class's, divided by this, is rare"
    )
    outlier_sigma: float = rule(
        5.0,
        "a box whose size or aspect is this many robust standard deviations from its class's is an outlier",
    )
    duplicate_iou: float = rule(
        0.95, "two boxes of one class in one image with at least this IoU are one box twice"
    )
    overlap_iou: float = rule(
        0.9, "two boxes of different classes with at least this IoU are two classes on one object"
    )
    tiny_pixels: float = rule(4.0, "a box under this many pixels wide or high at its image's size is tiny")


@dataclass(frozen=True)
class DatasetRules:
    duplicates: DuplicateRules = field(default_factory=DuplicateRules)
    quality: QualityRules = field(default_factory=QualityRules)
    labels: LabelRules = field(default_factory=LabelRules)

    def names(self) -> dict[str, object]:
        """Every rule by its name (`near_distance`), with its value."""
        return {f.name: getattr(part, f.name) for part in self._parts() for f in fields(part)}

    def docs(self) -> list[RuleDoc]:
        """Every rule with its concern, type, default and one line of documentation, in order."""
        out = []
        for attr, part in zip(("duplicates", "quality", "labels"), self._parts(), strict=True):
            comments = _comments(type(part))
            for f in fields(part):
                doc = f.metadata.get("doc") or comments.get(f.name, "")
                default = getattr(type(part)(), f.name)
                out.append(RuleDoc(f.name, attr, type(default).__name__, default, doc))
        return out

    def _parts(self):
        return (self.duplicates, self.quality, self.labels)

    def with_words(self, words: list[str]) -> DatasetRules:
        """These rules with `NAME=VALUE` words applied (`--rule near_distance=6`); a word that names
        no rule or holds no value of its type is a RuleError, in one line."""
        out = self
        for word in words:
            name, eq, value = word.partition("=")
            name = name.strip()
            for attr in ("duplicates", "quality", "labels"):
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
    concern: str  # duplicates, quality, labels
    type: str  # int, float, bool
    default: object
    doc: str


def _comments(cls) -> dict[str, str]:
    """The comment lines just above each field of a rules class, by field name (the older way of
    documenting a rule; `rule(default, doc)` is the one to use)."""
    import inspect
    import re

    try:
        lines = inspect.getsource(cls).splitlines()
    except (OSError, TypeError):
        return {}
    out, said = {}, []
    for line in lines[1:]:
        text = line.strip()
        if text.startswith("#"):
            said.append(text.lstrip("#").strip())
            continue
        m = re.match(r"(\w+)\s*:", text)
        if m and said:
            out[m.group(1)] = " ".join(said)
        said = []
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
