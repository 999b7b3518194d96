"""Predictions from a file joined to a dataset's records (issue 24): a COCO results JSON
(`[{image_id, category_id, bbox: [x, y, w, h] in pixels, score}]`) or a second TFRecord of
predictions (the OD API's detection keys, one record an image).

How a record's image id is found (the one rule, `ID_KEYS`, from the stored fact table: no record
is read again): `image/source_id` (the OD API's COCO converter writes COCO's image id there),
`image/filename` (whole, its name without folders and extension, or that name's number without
leading zeros: `000000397133.jpg` is image 397133), TFDS's `image/id`, then `image_id`, `id`. Each
key column is tried and the one that matches the most results wins (said in the report). A second
TFRecord is joined by `image/source_id` or `image/key/sha256`, whichever both hold and matches more.

What cannot join is counted with why, never a traceback: a result whose image id names no record,
whose category is not in the label map (nor among the dataset's class ids), whose box is not four
finite numbers with positive sizes, whose record states no image size (pixels cannot be placed),
or an entry that is not an object of those fields. A file that is not JSON, not a list, over
`limits.PREDICTIONS_FILE_BYTES` or past `limits.MAX_PREDICTIONS` is a `PredictionsError` in one line.

The joined predictions are arrays a prediction (file, record, normalised box, class id, score,
number in the results file), stored as one answer in the result store (`cache.store_answer`) keyed
by the predictions file's identity and every dataset file's: a second `evaluate` or the window's
job reads them back instead of joining again.
"""

from __future__ import annotations

import json
import logging
import os
from dataclasses import dataclass, field

import numpy as np

from tfrview.core import jsontext
from tfrview.core.analysis.factcolumns import RECORD, read
from tfrview.core.analysis.facts import column_of
from tfrview.core.errors import TfrviewError
from tfrview.core.limits import MAX_PREDICTIONS, PREDICTIONS_FILE_BYTES, too_large
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

ID_KEYS = ("image/source_id", "image/filename", "image/id", "image_id", "id")
TFRECORD_KEYS = ("image/source_id", "image/key/sha256")
SIZE_COLUMNS = ("image_width", "image_height")


class PredictionsError(TfrviewError):
    """A predictions file that cannot be read at all (one line: what and why)."""


@dataclass(frozen=True)
class Results:
    """A predictions file's entries as arrays (never an object an entry): image ids as text, class
    ids, boxes ([x, y, w, h] in pixels for COCO; x0, y0, x1, y1 in [0, 1] for a TFRecord's), scores,
    each entry's number in the file; `malformed`/`bad_boxes`: entries left out, with an example."""

    image_ids: list  # str a prediction (Arrow takes them at once); or None for a TFRecord's
    classes: np.ndarray
    boxes: np.ndarray
    scores: np.ndarray
    slot: np.ndarray
    normalized: bool = False
    malformed: int = 0
    malformed_example: str = ""
    bad_boxes: int = 0
    bad_box_example: str = ""


@dataclass
class JoinReport:
    """How a join went: counts and the words for each (`lines`)."""

    path: str
    results: int = 0  # entries in the file
    matched: int = 0  # joined to a record
    unknown_image: int = 0
    unknown_category: int = 0
    unknown_categories: list[int] = field(default_factory=list)  # the first few
    malformed: int = 0
    bad_boxes: int = 0
    no_size: int = 0
    joined_by: str = ""  # the record key the image ids matched
    images: int = 0  # records of the dataset
    images_matched: int = 0  # records with at least one prediction joined
    examples: list[str] = field(default_factory=list)
    duplicate_ids: int = 0  # records sharing an image id with an earlier one (the first takes its results)

    def lines(self) -> list[str]:
        name = os.path.basename(self.path)
        out = [
            f"{name}: {self.matched:,} of {self.results:,} predictions joined to {self.images_matched:,} of "
            f"{self.images:,} records" + (f" by {self.joined_by}" if self.joined_by else "")
        ]
        if self.unknown_image:
            out.append(f"  {self.unknown_image:,} name an image id no record has")
        if self.unknown_category:
            cats = ", ".join(str(c) for c in self.unknown_categories)
            out.append(f"  {self.unknown_category:,} have a category not in the label map (ids {cats})")
        if self.malformed:
            out.append(f"  {self.malformed:,} entries are not predictions")
        if self.bad_boxes:
            out.append(f"  {self.bad_boxes:,} boxes are not four finite numbers with positive sizes")
        if self.no_size:
            out.append(
                f"  {self.no_size:,} are on records stating no image size (pixel boxes cannot be placed)"
            )
        if self.duplicate_ids:
            out.append(
                f"  {self.duplicate_ids:,} records share an image id with an earlier one (it takes the predictions)"
            )
        out += [f"  e.g. {e}" for e in self.examples[:3]]
        return out

    def to_json(self) -> dict:
        return {k: v for k, v in self.__dict__.items()}


@dataclass(frozen=True)
class Joined:
    """Predictions joined to records, as arrays a prediction, and the report of the join."""

    file: np.ndarray  # (p,) int32
    record: np.ndarray  # (p,) int64
    boxes: np.ndarray  # (p, 4) x0, y0, x1, y1 in [0, 1]
    classes: np.ndarray  # (p,) int64 class ids
    scores: np.ndarray  # (p,) float64
    slot: np.ndarray  # (p,) the entry's number in the file
    report: JoinReport
    source: str = ""  # the predictions file's name

    def per_record(self, file_no: int, record: int):
        """One record's joined predictions as `records.predictions.Predictions` (the window's drawing)."""
        from tfrview.core.records.predictions import Predictions

        m = (self.file == file_no) & (self.record == record)
        return Predictions(self.boxes[m], self.classes[m], self.scores[m], self.source)


# --- reading a COCO results file ---------------------------------------------------------------------


def _check_size(path: str) -> None:
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise PredictionsError(f"{printable(path)}: cannot be read ({exc.strerror})") from None
    if size > PREDICTIONS_FILE_BYTES:
        raise PredictionsError(
            f"{printable(path)}: "
            + too_large("the predictions file", size, PREDICTIONS_FILE_BYTES, name="PREDICTIONS_FILE_BYTES")
        )


def is_json(path: str) -> bool:
    """The file starts (after blanks) with '[' or '{': a results JSON, not a TFRecord."""
    try:
        with open(path, "rb") as f:
            head = f.read(64).lstrip()
    except OSError:
        return False
    return head[:1] in (b"[", b"{")


def load_coco_results(path: str) -> Results:
    """A COCO results JSON as arrays (module docstring); a PredictionsError when it is none."""
    _check_size(path)
    try:
        with open(path, "rb") as f:
            raw = json.loads(f.read())
    except json.JSONDecodeError as exc:
        raise PredictionsError(
            f"{printable(path)}: not JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})"
        ) from None
    except (UnicodeDecodeError, RecursionError) as exc:
        raise PredictionsError(f"{printable(path)}: not JSON ({type(exc).__name__})") from None
    except OSError as exc:
        raise PredictionsError(f"{printable(path)}: cannot be read ({exc.strerror})") from None
    if isinstance(raw, dict) and isinstance(raw.get("annotations"), list):
        raw = raw["annotations"]  # a whole COCO file with scores: its annotations
    if not isinstance(raw, list):
        raise PredictionsError(
            f"{printable(path)}: a COCO results file is a JSON list of "
            "{image_id, category_id, bbox, score}; this is a " + type(raw).__name__
        )
    if len(raw) > MAX_PREDICTIONS:
        raise PredictionsError(
            f"{printable(path)}: "
            + too_large("the predictions file", len(raw), MAX_PREDICTIONS, "predictions", "MAX_PREDICTIONS")
        )
    ids: list = []
    cls, boxes, scores, slot = [], [], [], []
    malformed = 0
    example = ""
    for i, e in enumerate(raw):
        try:
            iid = e["image_id"]
            c = e["category_id"]
            b = e["bbox"]
            s = e.get("score", 1.0)
            if not isinstance(iid, (int, str)) or isinstance(iid, bool) or not isinstance(c, int):
                raise TypeError("image_id or category_id of the wrong type")
            if not (isinstance(b, list) and len(b) == 4 and all(isinstance(v, (int, float)) for v in b)):
                raise TypeError("bbox is not 4 numbers")
            if not isinstance(s, (int, float)):
                raise TypeError("score is not a number")
        except (KeyError, TypeError, AttributeError) as exc:
            malformed += 1
            if not example:
                why = f"no {exc}" if isinstance(exc, KeyError) else str(exc)
                example = f"entry {i}: {why}"
            continue
        ids.append(str(iid))
        cls.append(c)
        boxes.append(b)
        scores.append(float(s))
        slot.append(i)
    del raw
    box = np.asarray(boxes, dtype=np.float64).reshape(-1, 4)
    ok = np.isfinite(box).all(axis=1) & (box[:, 2] > 0) & (box[:, 3] > 0) & np.isfinite(scores)
    bad = int(np.count_nonzero(~ok))
    bad_example = ""
    if bad:
        j = int(np.flatnonzero(~ok)[0])
        bad_example = f"entry {slot[j]}: bbox {box[j].tolist()}"
        keep = np.flatnonzero(ok)
        ids = [ids[k] for k in keep.tolist()]
        box = box[keep]
        cls = np.asarray(cls, dtype=np.int64)[keep]
        scores = np.asarray(scores, dtype=np.float64)[keep]
        slot = np.asarray(slot, dtype=np.int64)[keep]
    return Results(
        ids,
        np.asarray(cls, dtype=np.int64),
        box,
        np.asarray(scores, dtype=np.float64),
        np.asarray(slot, dtype=np.int64),
        False,
        malformed,
        example,
        bad,
        bad_example,
    )


# --- the dataset's side: each record's ids and size, from the fact tables -----------------------------


class IdGatherer:
    """Each record's candidate image ids (`ID_KEYS`, or `keys`) and its image size, from the fact
    tables (a `factcolumns.Gatherer`): Arrow string arrays, never a Python string a record."""

    def __init__(self, keys: tuple[str, ...] = ID_KEYS) -> None:
        self.keys = keys
        self.file: list[np.ndarray] = []
        self.record: list[np.ndarray] = []
        self.width: list[np.ndarray] = []
        self.height: list[np.ndarray] = []
        self.ids: dict[str, list] = {k: [] for k in keys}

    def needs(self, schema) -> list[str]:
        return [RECORD, *SIZE_COLUMNS, *(column_of(k) for k in self.keys)]

    def add(self, file_no: int, t) -> None:
        import pyarrow as pa

        n = t.num_rows
        self.file.append(np.full(n, file_no, dtype=np.int32))
        self.record.append(np.asarray(t[RECORD].to_numpy(zero_copy_only=False), dtype=np.int64))
        for name, acc in zip(SIZE_COLUMNS, (self.width, self.height), strict=True):
            if name in t.column_names:
                col = t[name].combine_chunks().cast("float64").fill_null(np.nan)
                acc.append(np.asarray(col.to_numpy(zero_copy_only=False), dtype=np.float64))
            else:
                acc.append(np.full(n, np.nan))
        for k in self.keys:
            c = column_of(k)
            self.ids[k].append(
                _as_text(t[c].combine_chunks()) if c in t.column_names else pa.nulls(n, pa.string())
            )

    def done(self):
        import pyarrow as pa

        if not self.file:
            return None
        return (
            np.concatenate(self.file),
            np.concatenate(self.record),
            np.concatenate(self.width),
            np.concatenate(self.height),
            {k: pa.concat_arrays(v) for k, v in self.ids.items()},
        )


def _as_text(col):
    """A fact column as one text a row (its first value for a list; numbers as their digits)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
        lengths = np.asarray(pc.list_value_length(col).fill_null(0).to_numpy(zero_copy_only=False))
        has = lengths > 0
        if not has.any():
            return pa.nulls(len(col), pa.string())
        starts = np.asarray(col.offsets.to_numpy(zero_copy_only=False))[:-1]
        first = col.values.take(pa.array(np.where(has, starts, 0)))
        col = pc.if_else(pa.array(has), first, pa.nulls(len(col), first.type))
    if pa.types.is_dictionary(col.type):
        col = col.cast(col.type.value_type)
    if pa.types.is_binary(col.type) or pa.types.is_large_binary(col.type):
        col = col.cast(pa.string(), safe=False)
    if pa.types.is_floating(col.type):
        col = col.cast(pa.int64(), safe=False)
    return col.cast(pa.string())


def _variants(key: str, col):
    """The forms of a record key a results file may name: whole; for a file name also its name
    without folders and extension, and that name's number without leading zeros."""
    import pyarrow.compute as pc

    out = [(key, col)]
    if key.endswith("filename"):
        stem = pc.replace_substring_regex(col, r"^.*[/\\]|\.[^.]*$", "")
        out.append((f"{key} (name without extension)", stem))
        digits = pc.match_substring_regex(stem, r"^[0-9]+$")
        trimmed = pc.utf8_ltrim(stem, characters="0")
        number = pc.if_else(pc.equal(trimmed, ""), "0", trimmed)
        out.append((f"{key} (its number)", pc.if_else(digits, number, None)))
    return out


# --- joining -----------------------------------------------------------------------------------------


def join(analysis, path: str, label_map=None) -> Joined:
    """The predictions of `path` (a COCO results JSON, or a TFRecord of predictions) joined to a
    merged, deep analysis's records (module docstring); stored, and read back when stored."""
    key = _store_key(analysis, path, label_map)
    if key is not None:
        got = _load(key)
        if got is not None:
            return got
    ids = read(analysis, [IdGatherer()])[0]
    if ids is None:
        raise PredictionsError("no record of the dataset was decoded: nothing to join predictions to")
    if is_json(path):
        joined = _join_coco(analysis, path, ids, label_map)
    else:
        joined = _join_tfrecord(path, ids)
    if key is not None:
        _store(key, joined)
    return joined


def _match_ids(result_ids, ids: dict) -> tuple[str, np.ndarray, int]:
    """The record key whose values name the most results, each result's row (-1: none), and how
    many records share that key's value with an earlier record (the first takes its results)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    wanted = result_ids if isinstance(result_ids, pa.Array) else pa.array(result_ids, type=pa.string())
    best_name, best, shared = "", np.full(len(wanted), -1, dtype=np.int64), 0
    for key, col in ids.items():
        for name, values in _variants(key, col):
            if values.null_count == len(values):
                continue
            rows = pc.index_in(wanted, value_set=values)
            got = np.asarray(rows.fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
            if np.count_nonzero(got >= 0) > np.count_nonzero(best >= 0):
                valid = len(values) - values.null_count
                shared = valid - pc.count_distinct(values, mode="only_valid").as_py()
                best_name, best = name, got
    return best_name, best, shared


def _join_coco(analysis, path: str, ids, label_map) -> Joined:
    file, record, width, height, columns = ids
    res = load_coco_results(path)
    rep = JoinReport(path, results=len(res.slot) + res.malformed + res.bad_boxes, images=len(file))
    rep.malformed, rep.bad_boxes = res.malformed, res.bad_boxes
    rep.examples += [e for e in (res.malformed_example, res.bad_box_example) if e]
    name, rows, rep.duplicate_ids = _match_ids(res.image_ids, columns)
    rep.joined_by = name
    known = _known_classes(analysis, label_map)
    ok_img = rows >= 0
    ok_cat = np.isin(res.classes, known) if known is not None else np.ones(len(rows), bool)
    rep.unknown_image = int(np.count_nonzero(~ok_img))
    if rep.unknown_image:
        j = int(np.flatnonzero(~ok_img)[0])
        rep.examples.append(f"entry {res.slot[j]}: image_id {printable(res.image_ids[j])!s} names no record")
    bad_cat = ok_img & ~ok_cat
    rep.unknown_category = int(np.count_nonzero(bad_cat))
    rep.unknown_categories = np.unique(res.classes[bad_cat])[:8].tolist()
    keep = ok_img & ok_cat
    r = np.maximum(rows, 0)
    w, h = width[r], height[r]
    sized = np.isfinite(w) & np.isfinite(h) & (w > 0) & (h > 0)
    rep.no_size = int(np.count_nonzero(keep & ~sized))
    keep &= sized
    b = res.boxes[keep]
    ww, hh = w[keep], h[keep]
    boxes = np.stack([b[:, 0] / ww, b[:, 1] / hh, (b[:, 0] + b[:, 2]) / ww, (b[:, 1] + b[:, 3]) / hh], axis=1)
    rr = rows[keep]
    rep.matched = len(rr)
    rep.images_matched = len(np.unique(rr))
    return Joined(
        file[rr],
        record[rr],
        boxes.reshape(-1, 4),
        res.classes[keep],
        res.scores[keep],
        res.slot[keep],
        rep,
        os.path.basename(path),
    )


def _known_classes(analysis, label_map) -> np.ndarray | None:
    """The class ids a result may name: the label map's and the dataset's (None: no way to tell)."""
    known: set[int] = set(int(k) for k in (label_map or {}))
    known |= set(analysis.class_ids)
    return np.array(sorted(known), dtype=np.int64) if known else None


def _join_tfrecord(path: str, ids) -> Joined:
    """A TFRecord of predictions (the detection keys, one record an image) joined by
    `image/source_id` or `image/key/sha256`; its own analysis gives its fact table."""
    import pyarrow as pa

    from tfrview.core.analysis import analyze
    from tfrview.core.analysis.factboxes import table_predictions

    file, record, _, _, columns = ids
    _check_size(path)
    try:
        theirs = analyze([path], deep=True, jobs=1)
    except TfrviewError as exc:
        raise PredictionsError(f"{printable(path)}: {exc}") from None
    s = theirs.shards[0]
    if s.error is not None or s.deep is None:
        raise PredictionsError(
            f"{printable(path)}: not a TFRecord of predictions ({s.error or 'not decoded'})"
        )
    table = s.deep.read_facts(None)
    preds = table_predictions(table)
    rep = JoinReport(path, images=len(file))
    if preds is None:
        raise PredictionsError(
            f"{printable(path)}: no record holds the OD API's detection keys (image/detection/bbox/...)"
        )
    if len(preds) > MAX_PREDICTIONS:
        raise PredictionsError(
            f"{printable(path)}: "
            + too_large("the predictions file", len(preds), MAX_PREDICTIONS, "predictions", "MAX_PREDICTIONS")
        )
    rep.results = len(preds)
    mine = IdGatherer(TFRECORD_KEYS)
    mine.add(0, table)
    their_ids = mine.done()[4]
    best_name, rows = "", np.full(len(preds), -1, dtype=np.int64)
    for k in TFRECORD_KEYS:
        if columns.get(k) is None or their_ids[k].null_count == len(their_ids[k]):
            continue
        got = _match_ids(their_ids[k].take(pa.array(preds.row)), {k: columns[k]})[1]
        if np.count_nonzero(got >= 0) > np.count_nonzero(rows >= 0):
            best_name, rows = k, got
    rep.joined_by = best_name
    ok = rows >= 0
    box = np.stack([preds.x0, preds.y0, preds.x1, preds.y1], axis=1)
    good = np.isfinite(box).all(axis=1) & (box[:, 2] > box[:, 0]) & (box[:, 3] > box[:, 1])
    rep.bad_boxes = int(np.count_nonzero(ok & ~good))
    rep.unknown_image = int(np.count_nonzero(~ok))
    keep = ok & good
    rr = rows[keep]
    rep.matched, rep.images_matched = len(rr), len(np.unique(rr))
    return Joined(
        file[rr],
        record[rr],
        box[keep],
        preds.classes[keep],
        preds.scores[keep],
        np.flatnonzero(keep).astype(np.int64),
        rep,
        os.path.basename(path),
    )


# --- stored ------------------------------------------------------------------------------------------


def _store_key(analysis, path: str, label_map) -> str | None:
    from tfrview.core.analysis.cache import answer_key
    from tfrview.core.analysis.results import ShardTask

    tasks = [ShardTask(s.path, i, True) for i, s in enumerate(analysis.shards)]
    tasks.append(ShardTask(os.path.abspath(path), -1))
    got = answer_key(tasks, ["predictions", 1, sorted((label_map or {}).items())])
    return got[0] if got is not None else None


_ARRAYS = (
    ("file", "<i4", 1),
    ("record", "<i8", 1),
    ("boxes", "<f8", 4),
    ("classes", "<i8", 1),
    ("scores", "<f8", 1),
    ("slot", "<i8", 1),
)


def _store(key: str, j: Joined) -> None:
    from tfrview.core.analysis.cache import store_answer

    text = jsontext.dumps({"n": len(j.file), "report": j.report.to_json(), "source": j.source}).encode()
    arrays = b"".join(np.ascontiguousarray(getattr(j, name), dtype=dt).tobytes() for name, dt, _ in _ARRAYS)
    store_answer(key, text, arrays)


def _load(key: str) -> Joined | None:
    from tfrview.core.analysis.cache import load_answer

    got = load_answer(key)
    if got is None:
        return None
    try:
        meta = jsontext.loads(got[0])
        n, at, out = int(meta["n"]), 0, {}
        for name, dt, width in _ARRAYS:
            d = np.dtype(dt)
            a = np.frombuffer(got[1], d, n * width, at)
            at += n * width * d.itemsize
            out[name] = a.reshape(-1, 4) if width == 4 else a
        if at != len(got[1]):
            raise ValueError("stored predictions are longer than their description")
        return Joined(**out, report=JoinReport(**meta["report"]), source=meta["source"])
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("stored predictions unreadable (%s): joined again", exc)
        return None
