"""Validation of data against a TFDV schema, in TFDV's words, with the records behind each anomaly.

`AnomalyKind` is the vocabulary: the kinds tfrview reports, named as TensorFlow Metadata's
`AnomalyInfo.Type` names them (the `.value` is that name, so `--anomalies-out` writes the type TFDV
would). `validate` judges every decoded record of the data (`columns.Split`) against the schema and
gives `Anomaly`s: a feature, a kind, TFDV-like words, and the records behind it (how many, and the
first of them as file and record numbers). `to_proto` writes them as an `Anomalies` message, with
the schema as its baseline, as TFDV's `validate_statistics` does.

What the fact table did not keep (values past `limits.FACT_VALUES` a list, texts past
`limits.FACT_BYTES`) is not judged against a domain; presence, types and value counts are exact.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.tfdv.columns import TYPES, Feature, Split, ValueType


class AnomalyKind(enum.StrEnum):
    """An anomaly's kind: TensorFlow Metadata's `AnomalyInfo.Type` name (TFDV's words)."""

    SCHEMA_MISSING_COLUMN = "SCHEMA_MISSING_COLUMN"
    SCHEMA_NEW_COLUMN = "SCHEMA_NEW_COLUMN"
    UNEXPECTED_DATA_TYPE = "UNEXPECTED_DATA_TYPE"
    FEATURE_TYPE_LOW_FRACTION_PRESENT = "FEATURE_TYPE_LOW_FRACTION_PRESENT"
    FEATURE_TYPE_LOW_NUMBER_PRESENT = "FEATURE_TYPE_LOW_NUMBER_PRESENT"
    FEATURE_TYPE_LOW_NUMBER_VALUES = "FEATURE_TYPE_LOW_NUMBER_VALUES"
    FEATURE_TYPE_HIGH_NUMBER_VALUES = "FEATURE_TYPE_HIGH_NUMBER_VALUES"
    INVALID_FEATURE_SHAPE = "INVALID_FEATURE_SHAPE"
    ENUM_TYPE_UNEXPECTED_STRING_VALUES = "ENUM_TYPE_UNEXPECTED_STRING_VALUES"
    INT_TYPE_SMALL_INT = "INT_TYPE_SMALL_INT"
    INT_TYPE_BIG_INT = "INT_TYPE_BIG_INT"
    FLOAT_TYPE_SMALL_FLOAT = "FLOAT_TYPE_SMALL_FLOAT"
    FLOAT_TYPE_BIG_FLOAT = "FLOAT_TYPE_BIG_FLOAT"
    FLOAT_TYPE_HAS_NAN = "FLOAT_TYPE_HAS_NAN"
    FLOAT_TYPE_HAS_INF = "FLOAT_TYPE_HAS_INF"

    @property
    def words(self) -> str:
        """The short description a person reads (TFDV's `short_description`)."""
        return _WORDS[self]


_WORDS = {
    AnomalyKind.SCHEMA_MISSING_COLUMN: "Column dropped",
    AnomalyKind.SCHEMA_NEW_COLUMN: "New column",
    AnomalyKind.UNEXPECTED_DATA_TYPE: "Unexpected data type",
    AnomalyKind.FEATURE_TYPE_LOW_FRACTION_PRESENT: "Column dropped",
    AnomalyKind.FEATURE_TYPE_LOW_NUMBER_PRESENT: "Column dropped",
    AnomalyKind.FEATURE_TYPE_LOW_NUMBER_VALUES: "Missing values",
    AnomalyKind.FEATURE_TYPE_HIGH_NUMBER_VALUES: "Superfluous values",
    AnomalyKind.INVALID_FEATURE_SHAPE: "Invalid shape",
    AnomalyKind.ENUM_TYPE_UNEXPECTED_STRING_VALUES: "Unexpected string values",
    AnomalyKind.INT_TYPE_SMALL_INT: "Out-of-range values",
    AnomalyKind.INT_TYPE_BIG_INT: "Out-of-range values",
    AnomalyKind.FLOAT_TYPE_SMALL_FLOAT: "Out-of-range values",
    AnomalyKind.FLOAT_TYPE_BIG_FLOAT: "Out-of-range values",
    AnomalyKind.FLOAT_TYPE_HAS_NAN: "Invalid values",
    AnomalyKind.FLOAT_TYPE_HAS_INF: "Invalid values",
}


@dataclass(frozen=True)
class Anomaly:
    """One kind of anomaly of one feature: TFDV's words and the records behind it (`records`: how
    many; `file`, `record`: the first of them, in dataset order)."""

    feature: str
    kind: AnomalyKind
    description: str
    records: int
    file: np.ndarray = field(repr=False)
    record: np.ndarray = field(repr=False)

    def to_json(self, paths: list[str]) -> dict:
        return {
            "feature": self.feature,
            "kind": str(self.kind),
            "short_description": self.kind.words,
            "description": self.description,
            "records": self.records,
            "first": [
                {"path": paths[f], "record": int(r)}
                for f, r in zip(self.file.tolist(), self.record.tolist(), strict=True)
            ],
        }


def _schema_type(t: int) -> ValueType | None:
    from tfrview.core.tfdv.proto import schema_pb2 as sc

    return {sc.INT: ValueType.INT, sc.FLOAT: ValueType.FLOAT, sc.BYTES: ValueType.BYTES}.get(t)


class _Found:
    """Anomalies as they are found, each with its records' first `first` (file, record) pairs."""

    def __init__(self, first: int) -> None:
        self.first = first
        self.out: list[Anomaly] = []

    def add(
        self, feature: str, kind: AnomalyKind, description: str, file: np.ndarray, record: np.ndarray
    ) -> None:
        if not len(record):
            return
        order = np.lexsort((record, file))  # dataset order: file, then record
        self.out.append(
            Anomaly(
                feature,
                kind,
                description,
                len(record),
                file[order[: self.first]],
                record[order[: self.first]],
            )
        )


def in_environment(schema, feature, environment: str | None) -> bool:
    """Whether a schema feature is expected in an environment (TFDV's rule: its `in_environment`
    names it, else it is not in `not_in_environment` and, when the schema names default
    environments, is one of them). No environment: every feature."""
    if environment is None:
        return True
    if feature.in_environment:
        return environment in feature.in_environment
    if environment in feature.not_in_environment:
        return False
    return not schema.default_environment or environment in schema.default_environment


def validate(schema, data: Split, first: int = 10, environment: str | None = None) -> list[Anomaly]:
    """Every anomaly of `data` against `schema`, features in the schema's order, then new ones;
    `environment` (TFDV's: TRAINING, SERVING...) leaves out the features not expected there."""
    from tfrview.core.tfdv.proto import schema_pb2 as sc
    from tfrview.core.tfdv.schema import float_domain, int_domain, string_domain

    found = _Found(first)
    n = data.examples
    named = set()
    for sf in schema.feature:
        named.add(sf.name)
        if (
            sf.deprecated
            or sf.lifecycle_stage in (sc.DEPRECATED, sc.DISABLED)
            or not in_environment(schema, sf, environment)
        ):
            continue
        f = data.features.get(sf.name)
        required = sf.HasField("presence") and (sf.presence.min_count > 0 or sf.presence.min_fraction > 0)
        if f is None or not f.present:
            if required or sf.HasField("shape"):
                found.add(
                    sf.name,
                    AnomalyKind.SCHEMA_MISSING_COLUMN,
                    f"The feature was completely missing from all {n:,} examples.",
                    data.file,
                    data.record,
                )
            continue
        _check_type(found, sf, f)
        _check_presence(found, sf, f, data)
        _check_counts(found, sf, f)
        sd = string_domain(schema, sf)
        if sd is not None:
            _check_strings(found, sf.name, f, sd)
        idom = int_domain(schema, sf)
        if idom is not None:
            _check_range(found, sf.name, f, ValueType.INT, idom)
        fdom = float_domain(schema, sf)
        if fdom is not None:
            _check_range(found, sf.name, f, ValueType.FLOAT, fdom)
    for key, f in sorted(data.features.items()):
        if key not in named and f.present:
            found.add(
                key,
                AnomalyKind.SCHEMA_NEW_COLUMN,
                f"New column (column in data but not in schema): {f.present:,} examples hold it.",
                f.file,
                f.record,
            )
    return found.out


def _check_type(found: _Found, sf, f: Feature) -> None:
    want = _schema_type(sf.type)
    if want is None:
        return
    bad = f.type_of != TYPES.index(want)
    if bad.any():
        got = sorted({str(TYPES[t]) for t in np.unique(f.type_of[bad]).tolist()})
        found.add(
            sf.name,
            AnomalyKind.UNEXPECTED_DATA_TYPE,
            f"Expected data of type: {want} but got {' and '.join(got)}",
            f.file[bad],
            f.record[bad],
        )


def _missing_rows(f: Feature, data: Split) -> tuple[np.ndarray, np.ndarray]:
    """The records of the data that do not hold the feature."""
    width = int(max(data.record.max(initial=0), f.record.max(initial=0))) + 1
    held = np.isin(
        data.file.astype(np.int64) * width + data.record, f.file.astype(np.int64) * width + f.record
    )
    return data.file[~held], data.record[~held]


def _check_presence(found: _Found, sf, f: Feature, data: Split) -> None:
    if not sf.HasField("presence"):
        return
    n = data.examples
    p = sf.presence
    frac = f.present / n if n else 1.0
    if p.HasField("min_fraction") and frac < p.min_fraction:
        found.add(
            sf.name,
            AnomalyKind.FEATURE_TYPE_LOW_FRACTION_PRESENT,
            f"The feature was present in fewer examples than expected: minimum fraction = "
            f"{p.min_fraction:g}, actual = {frac:.6g} ({n - f.present:,} of {n:,} examples lack it).",
            *_missing_rows(f, data),
        )
    if p.HasField("min_count") and f.present < p.min_count:
        found.add(
            sf.name,
            AnomalyKind.FEATURE_TYPE_LOW_NUMBER_PRESENT,
            f"The feature was present in fewer examples than expected: minimum count = {p.min_count}, "
            f"actual = {f.present}.",
            *_missing_rows(f, data),
        )


def _check_counts(found: _Found, sf, f: Feature) -> None:
    which = sf.WhichOneof("shape_type")
    if which == "value_count":
        vc = sf.value_count
        if vc.HasField("min"):
            low = f.count < vc.min
            found.add(
                sf.name,
                AnomalyKind.FEATURE_TYPE_LOW_NUMBER_VALUES,
                f"Some examples have fewer values than expected: minimum {vc.min}, "
                f"fewest {int(f.count.min())}.",
                f.file[low],
                f.record[low],
            )
        if vc.HasField("max"):
            high = f.count > vc.max
            found.add(
                sf.name,
                AnomalyKind.FEATURE_TYPE_HIGH_NUMBER_VALUES,
                f"Some examples have more values than expected: maximum {vc.max}, most {int(f.count.max())}.",
                f.file[high],
                f.record[high],
            )
    elif which == "shape":
        size = int(np.prod([d.size for d in sf.shape.dim])) if len(sf.shape.dim) else 1
        bad = f.count != size
        dims = " x ".join(str(d.size) for d in sf.shape.dim) or "a scalar"
        found.add(
            sf.name,
            AnomalyKind.INVALID_FEATURE_SHAPE,
            f"Some examples do not have the shape {dims} ({size} values): they hold "
            f"{', '.join(str(c) for c in np.unique(f.count[bad])[:5].tolist())}.",
            f.file[bad],
            f.record[bad],
        )


def _check_strings(found: _Found, name: str, f: Feature, domain) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    if not len(f.texts):
        return
    texts = f.texts.cast(pa.string(), safe=False) if pa.types.is_binary(f.texts.type) else f.texts
    allowed = pa.array(list(domain.value), pa.string())
    bad = np.asarray(
        pc.invert(pc.is_in(texts, value_set=allowed)).fill_null(False).to_numpy(zero_copy_only=False),
        dtype=bool,
    )
    if not bad.any():
        return
    rows = np.unique(f.text_row[bad])
    values = pc.value_counts(texts.filter(pa.array(bad)))
    shown = ", ".join(repr(v) for v in values.field("values").slice(0, 5).to_pylist())
    more = len(values) - 5
    found.add(
        name,
        AnomalyKind.ENUM_TYPE_UNEXPECTED_STRING_VALUES,
        f"Examples contain values missing from the schema: {shown}"
        + (f" and {more:,} more" if more > 0 else "")
        + ".",
        f.file[rows],
        f.record[rows],
    )


def _check_range(found: _Found, name: str, f: Feature, vt: ValueType, dom) -> None:
    """An int or float domain's bounds (and a float domain's NaN and infinity rules), judged on the
    values of records holding the feature as that type."""
    of_type = f.type_of[f.number_row] == TYPES.index(vt) if len(f.number_row) else np.zeros(0, bool)
    v = f.numbers
    small, big = (
        (AnomalyKind.INT_TYPE_SMALL_INT, AnomalyKind.INT_TYPE_BIG_INT)
        if vt is ValueType.INT
        else (AnomalyKind.FLOAT_TYPE_SMALL_FLOAT, AnomalyKind.FLOAT_TYPE_BIG_FLOAT)
    )
    checks = []
    with np.errstate(invalid="ignore"):
        if dom.HasField("min"):
            checks.append((small, of_type & (v < dom.min), f"Some values are smaller than {dom.min:g}"))
        if dom.HasField("max"):
            checks.append((big, of_type & (v > dom.max), f"Some values are larger than {dom.max:g}"))
        if vt is ValueType.FLOAT and dom.disallow_nan:
            checks.append((AnomalyKind.FLOAT_TYPE_HAS_NAN, of_type & np.isnan(v), "Some values are NaN"))
        if vt is ValueType.FLOAT and dom.disallow_inf:
            checks.append((AnomalyKind.FLOAT_TYPE_HAS_INF, of_type & np.isinf(v), "Some values are infinite"))
    for kind, bad, words in checks:
        if bad.any():
            rows = np.unique(f.number_row[bad])
            vals = v[bad]
            found.add(
                name,
                kind,
                f"{words}: from {np.nanmin(vals) if not np.isnan(vals).all() else vals[0]:g} "
                f"to {np.nanmax(vals) if not np.isnan(vals).all() else vals[0]:g}.",
                f.file[rows],
                f.record[rows],
            )


def to_proto(schema, anomalies: list[Anomaly]):
    """An `Anomalies` message as TFDV writes it: the schema as the baseline, one `AnomalyInfo` a
    feature (its path, ERROR, each kind a reason; several: "Multiple errors")."""
    from tfrview.core.tfdv.proto import anomalies_pb2 as an

    out = an.Anomalies()
    out.baseline.CopyFrom(schema)
    by_feature: dict[str, list[Anomaly]] = {}
    for a in anomalies:
        by_feature.setdefault(a.feature, []).append(a)
    for name, found in by_feature.items():
        info = out.anomaly_info[name]
        info.path.step.append(name)
        info.severity = an.AnomalyInfo.ERROR
        for a in found:
            info.reason.add(
                type=an.AnomalyInfo.Type.Value(str(a.kind)),
                short_description=a.kind.words,
                description=a.description,
            )
        info.short_description = found[0].kind.words if len(found) == 1 else "Multiple errors"
        info.description = " ".join(a.description for a in found)
    return out
