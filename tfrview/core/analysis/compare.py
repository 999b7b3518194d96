"""Two splits, or two datasets, compared from their fact tables (issue 21, item 5): per feature
key its presence on each side, keys only one side holds, type changes, and the shift of its
values by TFDV's two measures — the L-infinity distance of a categorical feature's value shares,
the Jensen-Shannon divergence of a numeric feature's histograms on common bins — plus class
balance, image sizes and box sizes (boxes read by `plots.boxes`, the one box reader of the facts,
by the spec stored with the table) and record counts.

Why from the fact tables: they are stored with each file's deep pass, so a comparison of two
stored splits reads no record again; every measure is an array operation over a column (one
`dictionary_encode` or `bincount` a feature), never a Python object a record. Thresholds come
from `rules.DriftRules` (`--rule infinity_norm=0.05`).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from tfrview.core.analysis.plot_names import BOX_MEASURES
from tfrview.core.analysis.rules import DriftRules
from tfrview.core.records.feature import BYTES_LIST, INT64_LIST

log = logging.getLogger(__name__)

HISTOGRAM_BINS = 10  # TFDV's standard histograms have 10 equal-width buckets
CATEGORY_INTS = 100  # an integer feature with at most this many distinct values is categorical (ids)
BARS_SHOWN = 20  # the categories a chart shows: those whose shares differ most
CLASS_BALANCE = "class balance"
IMAGE_SIZE = "image size"
IMAGE_WIDTH = "image width"
IMAGE_HEIGHT = "image height"


class Shift(StrEnum):
    """Why a feature is flagged."""

    ONLY_IN_A = "only_in_a"
    ONLY_IN_B = "only_in_b"
    TYPE_CHANGED = "type_changed"
    PRESENCE = "presence"
    DISTRIBUTION = "distribution"


class Measure(StrEnum):
    """The distance a distribution is judged by (TFDV's names)."""

    L_INFINITY = "infinity_norm"
    JENSEN_SHANNON = "js_divergence"


@dataclass(frozen=True)
class Bars:
    """The two sides' counts on common bars: named categories (`names`, `values` to select them
    by; None where a value cannot be asked for) or numeric bins (`edges`)."""

    counts_a: tuple[int, ...]
    counts_b: tuple[int, ...]
    names: tuple[str, ...] = ()
    values: tuple | None = None
    edges: tuple[float, ...] = ()
    categories: int = 0  # distinct categories in all (the bars show BARS_SHOWN at most)

    def to_json(self) -> dict:
        return {
            "counts_a": list(self.counts_a),
            "counts_b": list(self.counts_b),
            "names": list(self.names),
            "values": None if self.values is None else list(self.values),
            "edges": list(self.edges),
            "categories": self.categories,
        }

    @classmethod
    def from_json(cls, d: dict) -> Bars:
        v = d.get("values")
        return cls(
            tuple(d["counts_a"]),
            tuple(d["counts_b"]),
            tuple(d["names"]),
            None if v is None else tuple(v),
            tuple(d["edges"]),
            int(d["categories"]),
        )


@dataclass(frozen=True)
class FeatureShift:
    """One feature (or a derived measure: `derived`, e.g. box width) compared."""

    key: str
    derived: bool = False
    presence_a: float | None = None  # fraction of side A's decoded records holding it; None: none do
    presence_b: float | None = None
    types_a: tuple[str, ...] = ()  # feature.py's type words
    types_b: tuple[str, ...] = ()
    measure: Measure | None = None
    value: float | None = None
    threshold: float | None = None
    shifts: tuple[Shift, ...] = ()
    bars: Bars | None = None

    @property
    def drifted(self) -> bool:
        return bool(self.shifts)

    def rank(self) -> tuple:
        """Drifted first: a key one side lacks or a type change, then by how far past its threshold."""
        hard = any(s in (Shift.ONLY_IN_A, Shift.ONLY_IN_B, Shift.TYPE_CHANGED) for s in self.shifts)
        over = (self.value or 0.0) / self.threshold if self.threshold else 0.0
        if self.presence_a is not None and self.presence_b is not None:
            over = max(over, abs(self.presence_a - self.presence_b) * 10)
        return (not self.drifted, not hard, -over, self.key)

    def to_json(self) -> dict:
        return {
            "key": self.key,
            "derived": self.derived,
            "presence_a": self.presence_a,
            "presence_b": self.presence_b,
            "types_a": list(self.types_a),
            "types_b": list(self.types_b),
            "measure": None if self.measure is None else str(self.measure),
            "value": self.value,
            "threshold": self.threshold,
            "shifts": [str(s) for s in self.shifts],
            "drifted": self.drifted,
            "bars": None if self.bars is None else self.bars.to_json(),
        }

    @classmethod
    def from_json(cls, d: dict) -> FeatureShift:
        return cls(
            d["key"],
            bool(d["derived"]),
            d["presence_a"],
            d["presence_b"],
            tuple(d["types_a"]),
            tuple(d["types_b"]),
            None if d["measure"] is None else Measure(d["measure"]),
            d["value"],
            d["threshold"],
            tuple(Shift(s) for s in d["shifts"]),
            None if d["bars"] is None else Bars.from_json(d["bars"]),
        )


@dataclass(frozen=True)
class Comparison:
    """Side A against side B: their names, files and records, and every feature compared (drifted
    first)."""

    a: str
    b: str
    files_a: int
    files_b: int
    records_a: int  # decoded records (the presence fractions' denominator)
    records_b: int
    rules: DriftRules
    features: tuple[FeatureShift, ...]
    notes: tuple[str, ...] = ()

    @property
    def drifted(self) -> list[FeatureShift]:
        return [f for f in self.features if f.drifted]

    def to_json(self) -> dict:
        return {
            "a": self.a,
            "b": self.b,
            "files_a": self.files_a,
            "files_b": self.files_b,
            "records_a": self.records_a,
            "records_b": self.records_b,
            "thresholds": {
                "infinity_norm": self.rules.infinity_norm,
                "js_divergence": self.rules.js_divergence,
                "presence_change": self.rules.presence_change,
            },
            "drifted": len(self.drifted),
            "features": [f.to_json() for f in self.features],
            "notes": list(self.notes),
        }

    @classmethod
    def from_json(cls, d: dict) -> Comparison:
        t = d["thresholds"]
        return cls(
            d["a"],
            d["b"],
            int(d["files_a"]),
            int(d["files_b"]),
            int(d["records_a"]),
            int(d["records_b"]),
            DriftRules(float(t["infinity_norm"]), float(t["js_divergence"]), float(t["presence_change"])),
            tuple(FeatureShift.from_json(f) for f in d["features"]),
            tuple(d["notes"]),
        )


@dataclass
class Side:
    """One side: its fact table (files' tables joined, with `n`, each record's number as the
    window numbers it), each key's types and the records holding it (the files' schemas summed:
    a key's types across files are kept, not unified away, and a value the fact table left out
    for its size still counts as present), its name, files and the class keys the readings found."""

    name: str
    table: object  # pyarrow.Table
    types: dict[str, set[str]] = field(default_factory=dict)
    files: int = 0
    class_keys: tuple[str, ...] = ()  # the summary's class text key, else id key
    presence: dict[str, int] = field(default_factory=dict)  # key -> records holding a value of it
    records: int = 0  # records decoded


def side_of(name: str, results: list, first_numbers: list[int] | None = None) -> Side:
    """A side from files' deep results (`ShardResult`s with `deep`); `first_numbers`: each file's
    first record number in the window (default: counted from 0 over these files)."""
    import pyarrow as pa  # heavy: pyarrow on first use only

    from tfrview.core.analysis.checks import Schema
    from tfrview.core.analysis.datasummary import DatasetSummary
    from tfrview.core.analysis.facts import concat

    tables, base = [], 0
    summary, schema = DatasetSummary(), Schema()
    for i, r in enumerate(results):
        first = first_numbers[i] if first_numbers is not None else base
        base += len(r.offsets)
        if r.deep is None:
            continue
        summary.merge(r.deep.summary)
        schema.merge(r.deep.schema)
        t = r.deep.facts
        tables.append(t.add_column(0, "n", pa.array(np.arange(first, first + t.num_rows, dtype=np.int64))))
    if not tables or not schema.records:
        raise_empty(name)
    keys = tuple(k for k in (summary.class_text_key, summary.class_id_key) if k)
    types = {k: set(c) for k, c in schema.types.items()}
    return Side(name, concat(tables), types, len(tables), keys, dict(schema.presence), schema.records)


def raise_empty(name: str) -> None:
    from tfrview.core.errors import TfrviewError

    raise TfrviewError(f"{name}: no record was decoded, nothing to compare")


def compare(a: Side, b: Side, rules: DriftRules | None = None) -> Comparison:
    """Side A against side B: every feature key either holds, then class balance, image sizes and
    box sizes; drifted features first."""
    from tfrview.core.analysis.facts import class_names, column_of

    rules = rules or DriftRules()
    ta, tb = a.table, b.table
    named = _both_names(class_names(ta.schema), class_names(tb.schema))
    da, db = a.records, b.records
    out: list[FeatureShift] = []
    for key in sorted(set(a.types) | set(b.types)):
        col = column_of(key)
        pa_ = a.presence.get(key, 0) / da if key in a.types else None
        pb_ = b.presence.get(key, 0) / db if key in b.types else None
        sa, sb = tuple(sorted(a.types.get(key, ()))), tuple(sorted(b.types.get(key, ())))
        shifts: list[Shift] = []
        if not pa_:
            shifts.append(Shift.ONLY_IN_B)
        elif not pb_:
            shifts.append(Shift.ONLY_IN_A)
        else:
            if sa != sb:
                shifts.append(Shift.TYPE_CHANGED)
            if abs(pa_ - pb_) > rules.presence_change:
                shifts.append(Shift.PRESENCE)
        measure = value = threshold = bars = None
        if pa_ and pb_ and sa == sb and col in ta.column_names and col in tb.column_names:
            got = _distribution(
                _flat(ta, col),
                _flat(tb, col),
                sa[0],
                rules,
                categorical=key in a.class_keys + b.class_keys or col in named,
                names=named.get(col),
            )
            if got is not None:
                measure, value, threshold, bars = got
                if value > threshold:
                    shifts.append(Shift.DISTRIBUTION)
        out.append(FeatureShift(key, False, pa_, pb_, sa, sb, measure, value, threshold, tuple(shifts), bars))
    out += _derived(a, b, rules)
    out.sort(key=FeatureShift.rank)
    return Comparison(a.name, b.name, a.files, b.files, da, db, rules, tuple(out))


def _flat(t, col: str):
    """A column's values, lists flattened, nulls dropped (a pyarrow array)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    c = t[col].combine_chunks() if isinstance(t[col], pa.ChunkedArray) else t[col]
    if pa.types.is_list(c.type) or pa.types.is_large_list(c.type):
        c = pc.list_flatten(c)
    if pa.types.is_dictionary(c.type):
        c = c.cast(c.type.value_type)
    return c.drop_null()


def _both_names(a: dict, b: dict) -> dict[str, dict[int, str]]:
    """Each column's class names (`facts.class_names`) from either side."""
    out: dict[str, dict[int, str]] = {}
    for side in (a, b):
        for col, names in side.items():
            out.setdefault(col, {}).update(names)
    return out


def _distribution(
    fa, fb, type_word: str, rules: DriftRules, categorical: bool = False, names: dict | None = None
):
    """(measure, value, threshold, bars) of two value arrays, or None when there is none to judge.
    `names`: a TFDS ClassLabel's ({id: name}): its bars are named as a record label is ('3 (cat)')."""
    import pyarrow as pa

    if not len(fa) or not len(fb):
        return None
    if type_word == BYTES_LIST:
        both = pa.concat_arrays([fa, fb]).dictionary_encode()
        idx = both.indices.to_numpy(zero_copy_only=False)
        k = len(both.dictionary)
        ca = np.bincount(idx[: len(fa)], minlength=k)
        cb = np.bincount(idx[len(fa) :], minlength=k)
        askable = pa.types.is_string(both.dictionary.type)
        names = both.dictionary.to_pylist()
        return _categorical(ca, cb, names, askable, rules)
    va = fa.to_numpy(zero_copy_only=False)  # float32 stays float32: bins need no more
    vb = fb.to_numpy(zero_copy_only=False)
    if type_word == INT64_LIST:
        lo = min(va.min(), vb.min())
        hi = max(va.max(), vb.max())
        if hi - lo <= 1_000_000:
            ca = np.bincount((va - lo).astype(np.int64), minlength=int(hi - lo) + 1)
            cb = np.bincount((vb - lo).astype(np.int64), minlength=int(hi - lo) + 1)
            used = np.flatnonzero((ca + cb) > 0)
            if categorical or len(used) <= CATEGORY_INTS:
                values = (used + int(lo)).tolist()
                return _categorical(ca[used], cb[used], values, True, rules, names)
        va, vb = va.astype(np.float64), vb.astype(np.float64)
    return _numeric(va, vb, rules)


def _categorical(
    ca: np.ndarray, cb: np.ndarray, values: list, askable: bool, rules: DriftRules, named: dict | None = None
):
    pa_, pb_ = ca / ca.sum(), cb / cb.sum()
    diff = np.abs(pa_ - pb_)
    linf = float(diff.max()) if len(diff) else 0.0
    shown = np.argsort(-diff, kind="stable")[:BARS_SHOWN]
    shown = shown[np.argsort(-(ca[shown] + cb[shown]), kind="stable")]  # the bars by size
    if named:  # class ids a TFDS ClassLabel names: as a record label is shown
        from tfrview.core.records.reading import label_text

        names = tuple(label_text(INT64_LIST, [values[i]], named) for i in shown)
    else:
        names = tuple(
            v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)
            for v in (values[i] for i in shown)
        )
    bars = Bars(
        tuple(int(x) for x in ca[shown]),
        tuple(int(x) for x in cb[shown]),
        names,
        tuple(values[i] for i in shown) if askable else None,
        categories=len(values),
    )
    return Measure.L_INFINITY, linf, rules.infinity_norm, bars


def _numeric(va: np.ndarray, vb: np.ndarray, rules: DriftRules):
    if not len(va) or not len(vb):
        return None
    lo, hi = float(min(va.min(), vb.min())), float(max(va.max(), vb.max()))
    if not (math.isfinite(lo) and math.isfinite(hi)):  # a NaN or an infinity: finite values only
        va, vb = va[np.isfinite(va)], vb[np.isfinite(vb)]
        if not len(va) or not len(vb):
            return None
        lo, hi = float(min(va.min(), vb.min())), float(max(va.max(), vb.max()))
    if hi <= lo:
        hi = lo + 1.0
    edges = np.linspace(lo, hi, HISTOGRAM_BINS + 1)
    ca, cb = _binned(va, lo, hi), _binned(vb, lo, hi)
    bars = Bars(tuple(int(x) for x in ca), tuple(int(x) for x in cb), edges=tuple(float(e) for e in edges))
    return Measure.JENSEN_SHANNON, js_divergence(ca, cb), rules.js_divergence, bars


def _binned(v: np.ndarray, lo: float, hi: float) -> np.ndarray:
    """Counts in HISTOGRAM_BINS equal bins over [lo, hi] (the last bin holds hi), by one bincount:
    np.histogram sorts blocks of the values."""
    x = v - v.dtype.type(lo)  # in the values' own precision (float32 halves the bytes walked)
    x *= v.dtype.type(HISTOGRAM_BINS / (hi - lo))
    k = x.astype(np.intp)
    np.minimum(k, HISTOGRAM_BINS - 1, out=k)
    np.maximum(k, 0, out=k)
    return np.bincount(k, minlength=HISTOGRAM_BINS)


def js_divergence(ca: np.ndarray, cb: np.ndarray) -> float:
    """The Jensen-Shannon divergence (log 2: 0 alike, 1 disjoint) of two histograms' shares."""
    p, q = ca / ca.sum(), cb / cb.sum()
    m = (p + q) / 2

    def kl(x: np.ndarray) -> float:
        nz = x > 0
        return float(np.sum(x[nz] * np.log2(x[nz] / m[nz])))

    return max(0.0, 0.5 * kl(p) + 0.5 * kl(q))


def _derived(a: Side, b: Side, rules: DriftRules) -> list[FeatureShift]:
    """Class balance (the classes' key as the readings found it), image sizes, box sizes."""
    import pyarrow as pa

    from tfrview.core.analysis.facts import class_names, column_of
    from tfrview.core.analysis.plots import boxes

    out = []

    def add(key: str, got) -> None:
        if got is None:
            return
        measure, value, threshold, bars = got
        shifts = (Shift.DISTRIBUTION,) if value > threshold else ()
        out.append(
            FeatureShift(
                key, True, measure=measure, value=value, threshold=threshold, shifts=shifts, bars=bars
            )
        )

    ck = next((k for k in a.class_keys + b.class_keys if k in a.types and k in b.types), None)
    if ck is not None and a.types[ck] == b.types[ck]:
        col = column_of(ck)
        named = _both_names(class_names(a.table.schema), class_names(b.table.schema)).get(col)
        add(
            CLASS_BALANCE,
            _distribution(
                _flat(a.table, col), _flat(b.table, col), next(iter(a.types[ck])), rules, True, named
            ),
        )
    if "image_width" in a.table.column_names and "image_width" in b.table.column_names:
        wa, ha = _size(a.table)
        wb, hb = _size(b.table)
        if len(wa) and len(wb):
            sa, sb = wa * (1 << 32) + ha, wb * (1 << 32) + hb
            both = pa.array(np.concatenate([sa, sb])).dictionary_encode()  # a hash: no sort
            inv = both.indices.to_numpy()
            u = both.dictionary.to_numpy()
            ca = np.bincount(inv[: len(sa)], minlength=len(u))
            cb = np.bincount(inv[len(sa) :], minlength=len(u))
            names = [f"{int(x >> 32)}×{int(x & 0xFFFFFFFF)}" for x in u.tolist()]
            add(IMAGE_SIZE, _categorical(ca, cb, names, True, rules))
            add(IMAGE_WIDTH, _numeric(wa.astype(np.float64), wb.astype(np.float64), rules))
            add(IMAGE_HEIGHT, _numeric(ha.astype(np.float64), hb.astype(np.float64), rules))
    ga, gb = boxes(a.table), boxes(b.table)  # once a side: width, height and area from them
    if ga is not None and gb is not None:
        (ax0, ax1, ay0, ay1), _ = ga
        (bx0, bx1, by0, by1), _ = gb
        aw, ah, bw, bh = ax1 - ax0, ay1 - ay0, bx1 - bx0, by1 - by0
        for m, va, vb in zip(BOX_MEASURES[:3], (aw, ah, aw * ah), (bw, bh, bw * bh), strict=True):
            add(m, _numeric(va, vb, rules))
    return out


def _size(t) -> tuple[np.ndarray, np.ndarray]:
    w = np.asarray(t["image_width"].fill_null(-1).to_numpy(), dtype=np.int64)
    h = np.asarray(t["image_height"].fill_null(-1).to_numpy(), dtype=np.int64)
    ok = (w > 0) & (h > 0)
    return w[ok], h[ok]


def records_in_bar(
    side: Side,
    key: str,
    derived: bool,
    lo: float = math.nan,
    hi: float = math.nan,
    closed: bool = False,
    category=None,
) -> np.ndarray:
    """The records (`n`, ascending) of one side behind a bar of a feature's chart: a category
    (`category`: its value) or a bin [lo, hi) (hi included for the last bin: `closed`)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from tfrview.core.analysis.facts import column_of
    from tfrview.core.analysis.plots import select

    t = side.table
    if derived and key in BOX_MEASURES:
        return select(t, key, [lo], [hi], closed)
    if derived and key == IMAGE_SIZE:
        w, _, h = str(category).partition("×")
        return select(t, "image sizes (scatter)", [float(w), float(h)], [float(w), float(h)])
    if derived and key in (IMAGE_WIDTH, IMAGE_HEIGHT):
        col = t["image_width" if key == IMAGE_WIDTH else "image_height"].combine_chunks()
        rows_of = None
    else:
        if derived and key == CLASS_BALANCE:
            key = next((k for k in side.class_keys if k in side.types), key)
        name = column_of(key)
        if name not in t.column_names:
            return np.empty(0, np.int64)
        col = t[name].combine_chunks()
        rows_of = None
        if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
            rows_of = np.asarray(pc.list_parent_indices(col).to_numpy())
            col = pc.list_flatten(col)
    valid = np.asarray(col.is_valid().to_numpy(zero_copy_only=False), dtype=bool)
    if category is not None:
        if pa.types.is_string(col.type) or pa.types.is_binary(col.type):
            hit = np.asarray(
                pc.equal(col, pa.scalar(str(category), col.type))
                .fill_null(False)
                .to_numpy(zero_copy_only=False)
            )
        else:
            v = np.asarray(col.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.float64)
            hit = valid & (v == float(category))
    else:
        v = np.asarray(
            col.cast(pa.float64()).fill_null(np.nan).to_numpy(zero_copy_only=False), dtype=np.float64
        )
        hit = valid & (v >= lo) & ((v <= hi) if closed else (v < hi))
    rows = np.flatnonzero(hit)
    if rows_of is not None:
        rows = np.unique(rows_of[rows])
    n = np.asarray(t["n"].to_numpy(zero_copy_only=False), dtype=np.int64)
    return np.unique(n[rows])


def shift_words(f: FeatureShift, a: str, b: str, presence_change: float | None = None) -> list[str]:
    """What flagged a feature, a few words each: only in a side, a type change, presence, a
    distribution (the CLI's line and the Compare view's column). `presence_change`: the threshold,
    to say the presence's shares and change (else the word alone)."""
    words = []
    for s in f.shifts:
        match s:
            case Shift.ONLY_IN_A:
                words.append(f"only in {a}")
            case Shift.ONLY_IN_B:
                words.append(f"only in {b}")
            case Shift.TYPE_CHANGED:
                words.append(f"type {'/'.join(f.types_a)} → {'/'.join(f.types_b)}")
            case Shift.PRESENCE if presence_change is not None:
                words.append(
                    f"presence {_share(f.presence_a)} → {_share(f.presence_b)} "
                    f"(change {abs(f.presence_a - f.presence_b):.3f} > {presence_change:g})"
                )
            case Shift.PRESENCE:
                words.append("presence")
            case Shift.DISTRIBUTION if presence_change is None:
                words.append("distribution")
    return words


def _share(x: float | None) -> str:
    return "absent" if x is None else f"{100 * x:.1f} %"
