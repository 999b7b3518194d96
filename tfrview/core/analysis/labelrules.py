"""Label rules across the dataset (issue 21, item 4): a step of the dataset QA (`datasetqa.STEPS`),
run once after the merge over every box the fact tables keep, with the thresholds of
`rules.LabelRules`.

- `class_imbalance`: a class with fewer boxes than the largest class's / `imbalance_ratio`, within
  each dataset group and split (records, by their record label, in a dataset without boxes); one
  finding a rare class, at its first record, with both counts.
- `box_size_outlier`: a box whose log area (in the image's units) or log aspect (width / height, in
  pixels when the image's size is known) is more than `outlier_sigma` robust standard deviations
  (1.4826 x the median absolute deviation, at least `MIN_SPREAD`) from its class's median, in
  classes of at least `outlier_min_boxes` boxes of one dataset group; boxes outside their image
  are the record checks' (`box_out_of_bounds`) and left out.
- `duplicate_box`: two boxes of one class in one record with IoU >= `duplicate_iou` (two boxes
  whose record names no class for either count as one class).
- `overlapping_classes`: two boxes of different classes in one record with IoU >= `overlap_iou`.
- `tiny_box`: a box under `tiny_pixels` wide or high at its image's size (a box of no size is the
  record checks' `box_zero_area`, not this).
- `class_missing_in_split`: a class with boxes in `train` and none in `validation` or `test` (only
  when the files hold two splits or more, and the held-out split has labels at all).

Where boxes come from: the fact table, by the spec the records' readings found
(`factboxes.table_boxes`, `reading.corners`), as arrays over all of them: pairs are compared only
within a record, records of one box count at a time, a bounded piece of pairs at once. Findings about
boxes are one a record and rule ("3 boxes ..., e.g. box 7: ..."), so a million boxes never make a
million problems of one record. The per-class counts go to `qa.tables["classes"]`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from tfrview.core.analysis.checks import Finding
from tfrview.core.analysis.factboxes import box_classes, schema_box_spec, table_boxes, value_codes
from tfrview.core.analysis.factcolumns import (
    RECORD,
    Growing,
    Step,
    expected_rows,
    joined,
    read,
    same_schema_runs,
)
from tfrview.core.analysis.facts import LEN_SUFFIX, class_names, column_of
from tfrview.core.analysis.rules import MAD_SIGMA, DatasetRules, LabelRules
from tfrview.core.limits import FACT_VALUES
from tfrview.core.problems import ProblemKind
from tfrview.core.records.reading import LABEL_KEYS, BoxSpec
from tfrview.core.tfrecord.splits import ALIASES

log = logging.getLogger(__name__)

TRAIN = ALIASES["train"]
HELD_OUT = (ALIASES["validation"], ALIASES["test"])
# The least robust spread (log units) a class's boxes are judged against: a class whose boxes are
# all one size (MAD 0, as in synthetic or cropped data) flags only boxes e^(5 x 0.25), about 3.5
# times, larger, smaller, longer or flatter than its median at the default outlier_sigma, never
# every box that differs a little.
MIN_SPREAD = 0.25
PAIRS_A_PIECE = 1 << 19  # box pairs compared at once (memory: ~60 bytes a pair)


class Unit(StrEnum):
    """What the class rules count: boxes, or records by their record label (a dataset without boxes)."""

    BOXES = "boxes"
    RECORDS = "records"


@dataclass
class Labelled:
    """Every box of the dataset (or, without boxes, every record label value), in dataset order
    (file, then record, then box), as arrays: its file and record, its number in its record, its
    class (a code into `names`, -1: none), corners in their own units and the image's size (NaN
    unknown); `specs`: each file's box spec (the keys a finding names)."""

    unit: Unit
    file: np.ndarray
    record: np.ndarray
    slot: np.ndarray
    cls: np.ndarray
    names: list[str]
    corners: tuple[np.ndarray, ...] = ()
    size: tuple[np.ndarray, np.ndarray] = ()
    normalized: np.ndarray | None = None  # each box's convention is normalized (else pixels)
    specs: dict[int, BoxSpec] = field(default_factory=dict)
    class_keys: dict[int, str] = field(default_factory=dict)
    cut: int = 0
    cut_rows: int = 0

    def __len__(self) -> int:
        return len(self.file)


def step(analysis, rules: DatasetRules, qa) -> list[tuple[int, int, Finding]]:
    """The label rules over a merged, deep analysis, its fact tables read for them alone (the
    dataset step reads them once for every step: `STEP`)."""
    return judge(analysis, rules, qa, gather(analysis))


def judge(analysis, rules: DatasetRules, qa, got: Labelled | None) -> list[tuple[int, int, Finding]]:
    """The label rules over what `LabelGatherer` kept of a merged, deep analysis's fact tables."""
    lr = rules.labels
    if got is None:
        qa.notes.append("no boxes and no record labels: the label rules were not run")
        return []
    out: list[tuple[int, int, Finding]] = []
    splits = _file_splits(analysis)
    if got.unit == Unit.BOXES:
        if got.cut:
            qa.notes.append(
                f"{got.cut:,} boxes of {got.cut_rows:,} records past the fact table's {FACT_VALUES:,} "
                "values a list were not judged by the label rules (limits.FACT_VALUES)"
            )
        out += tiny_boxes(got, lr)
        out += size_outliers(got, lr, _file_groups(analysis))
        out += box_pairs(got, lr)
    else:
        qa.notes.append(
            "no boxes: the box rules (tiny_box, box_size_outlier, duplicate_box, overlapping_classes) were "
            "not run; class balance is judged by the record labels"
        )
    out += imbalance(got, lr, _file_groups(analysis), splits, analysis)
    out += missing_in_split(got, splits, qa)
    qa.tables["classes"] = class_table(got, splits)
    out.sort(key=lambda t: (t[0], t[1]))
    return out


# --- gathering ---------------------------------------------------------------------------------------


def gather(analysis) -> Labelled | None:
    """Every box of every deep file's fact table; without any, every record label value. None:
    neither."""
    return read(analysis, [LabelGatherer(expected_rows(analysis))])[0]


def _in_file_order(idx: np.ndarray, words: list[str], value_file: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """`value_codes` of many files' values reordered as file-by-file reading names them: by the
    first file holding each, then in their order (sorted ids, texts as they first appear)."""
    held = idx >= 0
    first = np.full(len(words), np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(first, idx[held], value_file[held].astype(np.int64))
    order = np.lexsort((np.arange(len(words)), first))
    rank = np.empty(len(words), dtype=np.int64)
    rank[order] = np.arange(len(words))
    return np.where(held, rank[np.maximum(idx, 0)], -1), [words[i] for i in order.tolist()]


class LabelGatherer:
    """What the label rules keep of each fact table (a `factcolumns.Gatherer`): its boxes by the
    table's box spec, with their classes and image sizes, and, until some table has boxes, its
    record label values (`reading.LABEL_KEYS`: the first such column a file has, with 1 to 8 values
    a record, as a reading takes a record label), all as arrays, each written in place
    (`factcolumns.Growing`, sized for `expected` boxes or labels: a dataset's records)."""

    def __init__(self, expected: int = 0) -> None:
        self.expected = expected
        self.box_names: dict[str, int] = {}
        self.files, self.records, self.slots, self.classes, self.norm = (Growing(expected) for _ in range(5))
        self.xs = [Growing(expected) for _ in range(4)]
        self.widths, self.heights = Growing(expected), Growing(expected)
        self.specs: dict[int, BoxSpec] = {}
        self.keys: dict[int, str] = {}
        self.cut = self.cut_rows = 0
        self._no_labels()

    def _no_labels(self) -> None:
        """Record labels are kept only while no table has boxes (then let go)."""
        self.label_names: dict[str, int] = {}
        self.label_files, self.label_records, self.label_classes = (Growing(self.expected) for _ in range(3))
        self.label_keys: dict[int, str] = {}

    def needs(self, schema) -> list[str]:
        spec = schema_box_spec(schema)
        cols = [column_of(k) for k in spec.keys]
        out = [RECORD, *cols, cols[0] + LEN_SUFFIX, "image_width", "image_height"]
        out += [column_of(k) for k in (spec.class_id, spec.class_text) if k]
        if not self.files.n:
            out += [column_of(k) for k in LABEL_KEYS]
        return out

    def add(self, fi: int, t) -> None:
        self._add_boxes(fi, t)
        if not self.files.n:
            self._add_labels(fi, t)
        elif self.label_files.n:
            self._no_labels()

    def _add_boxes(self, fi: int, t) -> None:
        boxes = table_boxes(t)
        if boxes is None:
            return
        self.specs[fi] = boxes.spec
        self.keys[fi] = boxes.spec.class_text or boxes.spec.class_id or boxes.spec.keys[0]
        self.cut, self.cut_rows = self.cut + boxes.cut, self.cut_rows + boxes.cut_rows
        cls, local = box_classes(t, boxes)
        remap = np.array([self.box_names.setdefault(w, len(self.box_names)) for w in local] + [-1], np.int64)
        rec = np.asarray(t[RECORD].to_numpy(zero_copy_only=False), dtype=np.int64)
        self.files.extend(np.full(len(boxes), fi, dtype=np.int32))
        self.records.extend(rec[boxes.row])
        self.slots.extend(boxes.slot.astype(np.int32))
        self.classes.extend(remap[cls].astype(np.int32))
        for i, c in enumerate((boxes.x0, boxes.y0, boxes.x1, boxes.y1)):
            self.xs[i].extend(np.asarray(c, dtype=np.float32))
        for name, acc in (("image_width", self.widths), ("image_height", self.heights)):
            col = (
                t[name].combine_chunks().cast("float32").fill_null(np.nan) if name in t.column_names else None
            )
            full = (
                np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float32)
                if col is not None
                else np.full(t.num_rows, np.nan, np.float32)
            )
            acc.extend(full[boxes.row])
        self.norm.extend(np.full(len(boxes), boxes.spec.convention.normalized))

    def add_many(self, tables: list) -> None:
        """Many files' tables (`factcolumns.read`): a run of one schema without box columns (a
        split of classification shards) has its record labels read as one table, named in the
        order file-by-file reading would name them; anything else file by file, as `add`."""
        for run in same_schema_runs(tables):
            schema = run[0][1].schema
            if len(run) == 1 or not all(
                c not in schema.names for c in (column_of(k) for k in schema_box_spec(schema).keys)
            ):
                for fi, t in run:
                    self.add(fi, t)
                continue
            if self.files.n:  # boxes seen before: record labels are no longer kept
                if self.label_files.n:
                    self._no_labels()
                continue
            files, rows, one = joined(run)
            self._add_labels(np.repeat(files, rows), one)

    def _add_labels(self, fi, t) -> None:
        """`fi`: the table's file number, or each row's (a run of files read as one table)."""
        for key in LABEL_KEYS:
            col = column_of(key)
            if col not in t.column_names:
                continue
            got = value_codes(t[col].combine_chunks(), class_names(t.schema).get(col))
            if got is None:
                continue
            lengths, idx, words = got
            row_file = np.full(t.num_rows, fi, dtype=np.int32) if np.isscalar(fi) else fi
            if not np.isscalar(fi):  # named by the first file holding each, as file by file
                idx, words = _in_file_order(idx, words, np.repeat(row_file, lengths))
            ok = (lengths >= 1) & (lengths <= 8)
            keep = np.repeat(ok, lengths)
            names = self.label_names
            remap = np.array([names.setdefault(w, len(names)) for w in words] + [-1], dtype=np.int64)
            rec = np.asarray(t[RECORD].to_numpy(zero_copy_only=False), dtype=np.int64)
            self.label_files.extend(np.repeat(row_file, lengths)[keep])
            self.label_records.extend(np.repeat(rec, lengths)[keep])
            self.label_classes.extend(remap[idx[keep]].astype(np.int32))
            for f in np.unique(row_file).tolist():
                self.label_keys[f] = key
            return

    def done(self) -> Labelled | None:
        """What was kept."""
        if self.files.n:
            return Labelled(
                Unit.BOXES,
                self.files.array(),
                self.records.array(),
                self.slots.array(),
                self.classes.array(),
                list(self.box_names),
                tuple(c.array() for c in self.xs),
                (self.widths.array(), self.heights.array()),
                self.norm.array(),
                self.specs,
                self.keys,
                self.cut,
                self.cut_rows,
            )
        if not self.label_files.n:
            return None
        file = self.label_files.array()
        return Labelled(
            Unit.RECORDS,
            file,
            self.label_records.array(),
            np.full(len(file), -1, dtype=np.int32),
            self.label_classes.array(),
            list(self.label_names),
            class_keys=self.label_keys,
        )


STEP = Step("labelrules", judge, gather=lambda analysis: LabelGatherer(expected_rows(analysis)))


def _file_splits(analysis) -> list[str]:
    return [analysis.splits[fi] if fi < len(analysis.splits) else "" for fi in range(len(analysis.shards))]


def _file_groups(analysis) -> np.ndarray:
    """Each file's dataset group (its own number when no group names it)."""
    out = np.arange(len(analysis.shards), dtype=np.int64) + len(analysis.groups)
    for gi, g in enumerate(analysis.groups):
        for fi in g.files:
            if fi < len(out):
                out[fi] = gi
    return out


# --- box rules ---------------------------------------------------------------------------------------


def _sizes(got: Labelled) -> tuple[np.ndarray, ...]:
    """Each box's width and height in pixels and in the image's units (NaN where the image's size
    is needed and unknown), float32 as the corners are."""
    x0, y0, x1, y1 = got.corners
    w, h = x1 - x0, y1 - y0
    iw, ih = got.size
    norm = got.normalized
    with np.errstate(divide="ignore", invalid="ignore"):
        wp, hp = np.where(norm, w * iw, w), np.where(norm, h * ih, h)
        wn, hn = np.where(norm, w, w / iw), np.where(norm, h, h / ih)
    return wp, hp, wn, hn


def _runs(file: np.ndarray, record: np.ndarray, hits: np.ndarray) -> list[tuple[int, int]]:
    """Hits (indices in dataset order, ascending) grouped by record: (first hit's position, count)."""
    if not len(hits):
        return []
    f, r = file[hits], record[hits]
    starts = np.flatnonzero(np.r_[True, (f[1:] != f[:-1]) | (r[1:] != r[:-1])])
    counts = np.diff(np.r_[starts, len(hits)])
    return list(zip(starts.tolist(), counts.tolist(), strict=True))


def _name(got: Labelled, i: int) -> str:
    c = int(got.cls[i])
    return got.names[c] if c >= 0 else "no class"


def tiny_boxes(got: Labelled, lr: LabelRules) -> list[tuple[int, int, Finding]]:
    wp, hp, _, _ = _sizes(got)
    with np.errstate(invalid="ignore"):
        tiny = (wp > 0) & (hp > 0) & ((wp < lr.tiny_pixels) | (hp < lr.tiny_pixels))
    hits = np.flatnonzero(tiny)
    out = []
    for at, k in _runs(got.file, got.record, hits):
        i = int(hits[at])
        fi = int(got.file[i])
        msg = (
            f"{k} box(es) under {lr.tiny_pixels:g} px wide or high (tiny_pixels), e.g. box {int(got.slot[i])} "
            f"({_name(got, i)}): {wp[i]:.1f}×{hp[i]:.1f} px in a {got.size[0][i]:.0f}×{got.size[1][i]:.0f} image"
        )
        out.append((fi, int(got.record[i]), Finding(ProblemKind.TINY_BOX, msg, got.specs[fi].keys[0])))
    return out


def _group_medians(dense: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Each element's group median (groups: `dense`, codes 0..k-1), by one float sort (numpy's
    lexsort of two keys costs ~5 times as much): the group, then the value scaled into [0, 0.5)
    (finite values only; two values closer than ~1e-9 of their range may swap, which moves a median
    by no more than that)."""
    if not len(values):
        return np.empty(0, np.float32)
    lo, hi = float(values.min()), float(values.max())
    order = np.argsort(dense + (values.astype(np.float64) - lo) / (2 * (hi - lo) + 1e-300))
    v = values[order]
    counts = np.bincount(dense)
    starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
    med = (v[starts + (counts - 1) // 2] + v[starts + counts // 2]) / 2
    return med[dense].astype(np.float32)


def _inside(got: Labelled) -> np.ndarray:
    """Boxes within their image, as the record checks judge it (`box_out_of_bounds` says the
    others; their size says nothing of their class's): normalised corners in [0, 1], pixel ones in
    the image when its size is known."""
    x0, y0, x1, y1 = got.corners
    iw, ih = got.size
    with np.errstate(invalid="ignore"):
        in_units = (np.minimum(x0, y0) >= -1e-6) & (x1 <= 1 + 1e-6) & (y1 <= 1 + 1e-6)
        in_pixels = (np.minimum(x0, y0) >= -0.5) & ~(x1 > iw + 0.5) & ~(y1 > ih + 0.5)  # NaN: unknown
    return np.where(got.normalized, in_units, in_pixels)


def size_outliers(got: Labelled, lr: LabelRules, groups: np.ndarray) -> list[tuple[int, int, Finding]]:
    wp, hp, wn, hn = _sizes(got)
    with np.errstate(divide="ignore", invalid="ignore"):
        area = np.log(wn * hn)
        aspect = wp / hp  # in pixels where the image's size is known, else in its units
        unknown = ~np.isfinite(aspect)
        aspect[unknown] = wn[unknown] / hn[unknown]
        aspect = np.log(aspect, out=aspect)
    del wp, hp, wn, hn, unknown
    ok = np.flatnonzero(np.isfinite(area) & np.isfinite(aspect) & (got.cls >= 0) & _inside(got))
    _, dense, sizes = np.unique(
        groups[got.file[ok]] * (len(got.names) + 1) + got.cls[ok], return_inverse=True, return_counts=True
    )
    judged = sizes[dense] >= lr.outlier_min_boxes  # whole classes: a class's median is of all its boxes
    ok, dense = ok[judged], np.unique(dense[judged], return_inverse=True)[1].reshape(-1)
    z, med = {}, {}
    for what, v in (("area", area[ok]), ("aspect", aspect[ok])):
        med[what] = _group_medians(dense, v)
        dev = np.abs(v - med[what])
        z[what] = dev / np.maximum(MAD_SIGMA * _group_medians(dense, dev), MIN_SPREAD)
    far = (z["area"] > lr.outlier_sigma) | (z["aspect"] > lr.outlier_sigma)
    hits, far_at = ok[far], np.flatnonzero(far)
    out = []
    for at, k in _runs(got.file, got.record, hits):
        i, j = int(hits[at]), int(far_at[at])
        fi = int(got.file[i])
        by = "area" if z["area"][j] >= z["aspect"][j] else "aspect"
        zz, m = z[by][j], med[by][j]
        if by == "area":
            what = f"area {np.exp(area[i]):.2%} of the image, the class's median {np.exp(m):.2%}"
        else:
            what = f"aspect {np.exp(aspect[i]):.3g}, the class's median {np.exp(m):.3g}"
        msg = (
            f"{k} box(es) far from their class's sizes (over {lr.outlier_sigma:g} robust σ, outlier_sigma), "
            f"e.g. box {int(got.slot[i])} ({_name(got, i)}): {what}, {zz:.1f} σ from it"
        )
        out.append(
            (fi, int(got.record[i]), Finding(ProblemKind.BOX_SIZE_OUTLIER, msg, got.specs[fi].keys[0]))
        )
    return out


def _iou(c: tuple[np.ndarray, ...], a: np.ndarray, b: np.ndarray) -> np.ndarray:
    x0, y0, x1, y1 = c
    iw = np.minimum(x1[a], x1[b]) - np.maximum(x0[a], x0[b])
    ih = np.minimum(y1[a], y1[b]) - np.maximum(y0[a], y0[b])
    inter = np.clip(iw, 0, None) * np.clip(ih, 0, None)
    union = (x1[a] - x0[a]) * (y1[a] - y0[a]) + (x1[b] - x0[b]) * (y1[b] - y0[b]) - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union > 0, inter / union, 0.0)


def box_pairs(got: Labelled, lr: LabelRules) -> list[tuple[int, int, Finding]]:
    """`duplicate_box` and `overlapping_classes`: every pair of boxes within a record, records of
    one box count at a time (an (m, c) block of box numbers and c's pairs), PAIRS_A_PIECE at once."""
    c = got.corners  # float32: an IoU to 1e-6 is plenty, at half the memory
    n = len(got)
    starts = np.flatnonzero(
        np.r_[True, (got.file[1:] != got.file[:-1]) | (got.record[1:] != got.record[:-1])]
    )
    counts = np.diff(np.r_[starts, n])
    found: dict[ProblemKind, list[np.ndarray]] = {
        ProblemKind.DUPLICATE_BOX: [],
        ProblemKind.OVERLAPPING_CLASSES: [],
    }
    cls = got.cls
    for k in np.unique(counts[counts >= 2]).tolist():
        first = starts[counts == k]
        iu, ju = np.triu_indices(k, 1)
        step_ = max(1, PAIRS_A_PIECE // len(iu))
        for lo in range(0, len(first), step_):
            s = first[lo : lo + step_, None]
            a, b = (s + iu).ravel(), (s + ju).ravel()
            iou = _iou(c, a, b)
            same = cls[a] == cls[b]
            dup = same & (iou >= lr.duplicate_iou)
            over = ~same & (cls[a] >= 0) & (cls[b] >= 0) & (iou >= lr.overlap_iou)
            for kind, m in ((ProblemKind.DUPLICATE_BOX, dup), (ProblemKind.OVERLAPPING_CLASSES, over)):
                if m.any():
                    found[kind].append(np.stack([a[m], b[m], iou[m]], axis=1))
    out = []
    for kind, pieces in found.items():
        if not pieces:
            continue
        pairs = np.concatenate(pieces)
        pairs = pairs[np.lexsort((pairs[:, 1], pairs[:, 0]))]
        a = pairs[:, 0].astype(np.int64)
        for at, k in _runs(got.file, got.record, a):
            i, j, iou = int(a[at]), int(pairs[at, 1]), float(pairs[at, 2])
            fi = int(got.file[i])
            si, sj = int(got.slot[i]), int(got.slot[j])
            if kind == ProblemKind.DUPLICATE_BOX:
                msg = (
                    f"{k} pair(s) of boxes of one class with IoU ≥ {lr.duplicate_iou:g} (duplicate_iou): "
                    f"one box twice, e.g. boxes {si} and {sj} ({_name(got, i)}), IoU {iou:.3f}"
                )
            else:
                msg = (
                    f"{k} pair(s) of boxes of different classes with IoU ≥ {lr.overlap_iou:g} (overlap_iou): "
                    f"two classes on one object, e.g. box {si} ({_name(got, i)}) and box {sj} "
                    f"({_name(got, j)}), IoU {iou:.3f}"
                )
            out.append((fi, int(got.record[i]), Finding(kind, msg, got.specs[fi].keys[0])))
    return out


# --- class rules -------------------------------------------------------------------------------------


def _count(n: int, unit: Unit) -> str:
    """'1 box', '3 boxes', '1 record'."""
    return f"{n:,} {unit}" if n != 1 else f"1 {_ONE[unit]}"


_ONE = {Unit.BOXES: "box", Unit.RECORDS: "record"}


def _where(split: str, group: str | None) -> str:
    parts = ([f"split {split}"] if split else []) + ([f"dataset {group}"] if group else [])
    return " in " + ", ".join(parts) if parts else ""


def imbalance(
    got: Labelled, lr: LabelRules, groups: np.ndarray, splits: list[str], analysis
) -> list[tuple[int, int, Finding]]:
    """`class_imbalance` within each (dataset group, split): one finding a rare class, at its first
    record there. Counted by a bincount of (cell, class) slots, each row's slot one array; the first
    rows are looked for only of the rare classes (a sort of every row's slot for them cost 2 M label
    values ~1 s and ~90 MB)."""
    has = got.cls >= 0
    if not has.any():
        return []
    split_names = sorted(set(splits))
    split_code = np.array([split_names.index(s) for s in splits], dtype=np.int64)
    cell_ids, file_cell = np.unique(groups * len(split_names) + split_code, return_inverse=True)
    ncls = len(got.names)
    nkeys = len(cell_ids) * ncls
    slot = file_cell.reshape(-1)[got.file] * ncls + got.cls
    slot[~has] = nkeys  # no class: counted apart, never judged
    if nkeys <= 4 * len(slot) + 65536:  # a count a (cell, class) pair
        counts = np.bincount(slot, minlength=nkeys + 1)
        pair = np.arange(nkeys + 1)
    else:  # too many pairs for a count each: the present ones, by a sort
        pair, slot, counts = np.unique(slot, return_inverse=True, return_counts=True)
    present = np.flatnonzero((counts > 0) & (pair < nkeys))  # in (cell, class) order
    cells, classes, counts_p = pair[present] // ncls, pair[present] % ncls, counts[present]
    rare: list[tuple[int, int, int]] = []  # (position in present, its cell's largest, its count)
    for c in np.unique(cells).tolist():
        mine = np.flatnonzero(cells == c)
        if len(mine) < 2:
            continue
        top = mine[np.argmax(counts_p[mine])]
        big = int(counts_p[top])
        rare += [(m, int(top), big) for m in mine[counts_p[mine] * lr.imbalance_ratio < big].tolist()]
    if not rare:
        return []
    wanted = np.zeros(len(counts), dtype=bool)
    wanted[present[[m for m, _, _ in rare]]] = True
    rows = np.flatnonzero(wanted[slot])
    found, at = np.unique(slot[rows], return_index=True)
    first_row = dict(zip(found.tolist(), rows[at].tolist(), strict=True))
    many_groups = len({int(g) for g in groups}) > 1
    out = []
    for m, top, big in rare:
        i = first_row[int(present[m])]
        fi = int(got.file[i])
        gi = int(groups[fi])
        gname = analysis.groups[gi].name if many_groups and gi < len(analysis.groups) else None
        msg = (
            f"class {got.names[classes[m]]!r} has {_count(int(counts_p[m]), got.unit)}{_where(splits[fi], gname)}, "
            f"under 1/{lr.imbalance_ratio:g} (imbalance_ratio) of the {big:,} of the largest class, "
            f"{got.names[classes[top]]!r}"
        )
        out.append((fi, int(got.record[i]), Finding(ProblemKind.CLASS_IMBALANCE, msg, got.class_keys[fi])))
    return out


def missing_in_split(got: Labelled, splits: list[str], qa) -> list[tuple[int, int, Finding]]:
    """`class_missing_in_split`: classes with boxes (or records) in train and none in a held-out
    split that has labels; only when the files hold two splits or more."""
    present = sorted({s for s in splits if s})
    if len(present) < 2 or TRAIN not in present:
        return []
    code = np.array([present.index(s) if s else -1 for s in splits], dtype=np.int64)[got.file]
    ok = got.cls >= 0
    idx = np.flatnonzero(ok & (code == present.index(TRAIN)))
    classes, first, counts = np.unique(got.cls[idx], return_index=True, return_counts=True)
    out = []
    for held in HELD_OUT:
        if held not in present:
            continue
        there = ok & (code == present.index(held))
        if not there.any():
            qa.notes.append(
                f"split {held} has no labelled {got.unit}: class_missing_in_split was not judged for it"
            )
            continue
        have = np.zeros(len(got.names), dtype=bool)
        have[got.cls[there]] = True
        for cl, f, k in zip(classes.tolist(), first.tolist(), counts.tolist(), strict=True):
            if have[cl]:
                continue
            i = int(idx[f])
            fi = int(got.file[i])
            msg = (
                f"class {got.names[cl]!r} has {_count(k, got.unit)} in split {TRAIN} and none in split {held}"
            )
            out.append(
                (fi, int(got.record[i]), Finding(ProblemKind.CLASS_MISSING_IN_SPLIT, msg, got.class_keys[fi]))
            )
    return out


def class_table(got: Labelled, splits: list[str]) -> dict:
    """Per-class counts for the report (JSON-ready): `unit` (boxes or records), `splits` (each
    split; `all` when the files name none, `none` for files of no split beside named ones) and a
    row a class, largest first: its name (null: boxes of no class), its count in each split and its
    total."""
    present = sorted(set(splits))
    names = [s or ("all" if len(present) == 1 else "none") for s in present]
    ncls = len(got.names) + 1
    cell = (np.array([present.index(s) for s in splits], dtype=np.int64) * ncls)[got.file]
    cell += got.cls  # in place: one array a label value, not four
    cell += 1
    counts = np.bincount(cell, minlength=len(names) * ncls).reshape(len(names), ncls)
    del cell
    totals = counts.sum(axis=0)
    rows = [
        {
            "class": got.names[c - 1] if c else None,
            "counts": {s: int(counts[i, c]) for i, s in enumerate(names)},
            "total": int(totals[c]),
        }
        for c in np.argsort(-totals, kind="stable").tolist()
        if totals[c]
    ]
    return {"unit": str(got.unit), "splits": names, "rows": rows}
