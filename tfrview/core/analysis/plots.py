"""What the QA plots draw, from the analysis' fact table (no record is read again): box measures
and centres, image sizes, and the records behind a clicked bar, cell or point.

Every function takes the merged fact table (`DatasetAnalysis.facts()`), whose `n` column numbers
the records as the window does, and returns numpy arrays or plain dicts that a job sends as JSON.
"""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfrview.core.analysis.factboxes import box_spec, is_list, table_boxes
from tfrview.core.analysis.facts import class_names, column_of
from tfrview.core.analysis.plot_names import (
    BOX_CENTRES,
    BOX_MEASURES,
    IMAGE_SCORES,
    IMAGE_SIZES,
    PLOTS,
    first_scalar,
)
from tfrview.core.limits import SERIES_POINTS
from tfrview.core.records.events import event_features
from tfrview.core.records.feature import FLOAT_LIST, INT64_LIST
from tfrview.core.records.reading import label_text
from tfrview.core.tfrecord.index import RecordIndex, scan
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.source import open_source

log = logging.getLogger(__name__)

HEAT_BINS = (8, 64)  # a heat map's cells a side: about 4 boxes a cell on average, within these


def boxes(table: pa.Table) -> tuple[list[np.ndarray], np.ndarray] | None:
    """Every box, flattened: [xmin, xmax, ymin, ymax] in the boxes' own units and each box's record
    number (`factboxes.table_boxes`, the one reading of boxes from a fact table). None: no boxes."""
    got = table_boxes(table)
    if got is None:
        return None
    n = np.asarray(table["n"].to_numpy(zero_copy_only=False))
    return [got.x0, got.x1, got.y0, got.y1], n[got.row]


def box_measure(table: pa.Table, measure: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Every box's width, height, area or aspect (in the boxes' own units: normalised or pixels,
    as the data holds them), with its record number; None without boxes."""
    got = boxes(table)
    if got is None:
        return None
    (x0, x1, y0, y1), n = got
    w, h = x1 - x0, y1 - y0
    if measure == "box width":
        return w, n
    if measure == "box height":
        return h, n
    if measure == "box area":
        return w * h, n
    with np.errstate(divide="ignore", invalid="ignore"):
        return w / h, n


def box_centres(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    got = boxes(table)
    if got is None:
        return None
    (x0, x1, y0, y1), n = got
    return (x0 + x1) / 2, (y0 + y1) / 2, n


def heatmap(cx: np.ndarray, cy: np.ndarray, bins: int | None = None) -> dict:
    """Box centres counted on a grid over [0, 1] (normalised boxes) or over their own range
    (pixels); y grows downwards, as in the image."""
    ok = np.isfinite(cx) & np.isfinite(cy)
    cx, cy = cx[ok], cy[ok]
    bins = bins or int(np.clip(np.sqrt(len(cx) / 4), *HEAT_BINS))
    inside = len(cx) and cx.min() >= 0 and cy.min() >= 0 and cx.max() <= 1 and cy.max() <= 1
    xr = (0.0, 1.0) if inside else (float(cx.min()), float(cx.max()) or 1.0)
    yr = (0.0, 1.0) if inside else (float(cy.min()), float(cy.max()) or 1.0)
    counts, xe, ye = np.histogram2d(cx, cy, bins=bins, range=[xr, yr])
    return {
        "x_edges": xe.tolist(),
        "y_edges": ye.tolist(),
        "counts": counts.astype(int).tolist(),
        "boxes": len(cx),
        "normalised": bool(inside),
    }


def image_sizes(table: pa.Table) -> dict | None:
    """Each distinct decoded image size with how many records have it."""
    if "image_width" not in table.column_names:
        return None
    w = np.asarray(table["image_width"].fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    h = np.asarray(table["image_height"].fill_null(-1).to_numpy(zero_copy_only=False), dtype=np.int64)
    ok = (w > 0) & (h > 0)
    if not ok.any():
        return None
    pairs, counts = np.unique(np.stack([w[ok], h[ok]], axis=1), axis=0, return_counts=True)
    return {
        "width": pairs[:, 0].tolist(),
        "height": pairs[:, 1].tolist(),
        "count": counts.tolist(),
        "images": int(ok.sum()),
    }


def select(table: pa.Table, plot: str, lo: list[float], hi: list[float], closed: bool = False) -> np.ndarray:
    """The records (window numbers, ascending) behind a clicked part of a plot: a bar [lo, hi) of a
    box measure (hi included for the last bar: `closed`), a heat-map cell, or an image size."""
    if plot in BOX_MEASURES:
        got = box_measure(table, plot)
        if got is None:
            return np.empty(0, dtype=np.int64)
        v, n = got
        hit = (v >= lo[0]) & ((v <= hi[0]) if closed else (v < hi[0]))
    elif plot == BOX_CENTRES:
        got3 = box_centres(table)
        if got3 is None:
            return np.empty(0, dtype=np.int64)
        cx, cy, n = got3
        hit = (cx >= lo[0]) & (cx <= hi[0]) & (cy >= lo[1]) & (cy <= hi[1])
    elif plot == IMAGE_SIZES:
        n = np.asarray(table["n"].to_numpy(zero_copy_only=False))
        w = np.asarray(table["image_width"].fill_null(-1).to_numpy(zero_copy_only=False))
        h = np.asarray(table["image_height"].fill_null(-1).to_numpy(zero_copy_only=False))
        hit = (w == lo[0]) & (h == lo[1])
    else:
        raise ValueError(f"no plot {plot!r}")
    return np.unique(n[hit]).astype(np.int64)


def of_split(table: pa.Table, split: str) -> pa.Table:
    """The rows of one split (the fact table's `split` column; "" the files in none)."""
    if "split" not in table.column_names:
        return table if not split else table.slice(0, 0)
    return table.filter(pc.equal(pc.cast(table["split"], pa.string()), split))


def overlay(table: pa.Table, key: str, histogram: bool = False) -> dict:
    """Each split's plot of a key, for comparison: {"overlay": [{"split": name, **plot}, ...]} in
    the splits' order, a histogram's counts also as `share` (a split's fraction of its values, so a
    validation set ten times smaller compares with train); {"error"} when no split has one."""
    names = (
        [str(x) for x in pc.unique(pc.cast(table["split"], pa.string())).to_pylist()]
        if "split" in table.column_names
        else [""]
    )
    parts = []
    for name in names:
        one = plot(of_split(table, name), key, histogram)
        if "error" in one:
            continue
        if "histogram" in one:
            counts = np.asarray(one["histogram"]["counts"], dtype=np.float64)
            one["histogram"]["share"] = (counts / max(counts.sum(), 1.0)).tolist()
        parts.append({"split": name, **one})
    if not parts:
        return plot(table, key, histogram)  # its error says why
    return {"overlay": parts}


def plot(table: pa.Table, key: str, histogram: bool = False) -> dict:
    """The plot of a key, as the job sends it: {"series"}, {"histogram"}, {"heatmap"}, {"scatter"}
    or {"error"}. A feature is drawn over `step` when the records have one (TensorBoard events,
    training logs), else over the record number; or as a histogram of every value."""
    if key in PLOTS:
        return _plot_of_facts(table, key)
    name = column_of(key)
    if name not in table.column_names and key in IMAGE_SCORES:
        name = key  # an image's score (records.imagesignals): a fact column of its own name
    if name not in table.column_names:
        return {"error": f"no feature {key!r} in the stored facts"}
    y = table[name]
    if histogram:  # every value, lists flattened
        vals = pc.list_flatten(y) if is_list(y.type) else y
        vals = np.asarray(pc.drop_null(vals).to_numpy(zero_copy_only=False), dtype=np.float64)
        if not np.isfinite(vals).any():
            return {"error": f"{key!r} holds no finite number"}
        return {"histogram": bars(key, vals, class_names(table.schema).get(name))}
    if is_list(y.type):
        y = pc.list_element(y, 0)
    x_name = "step" if "step" in table.column_names and key != "step" else "record"
    x = table[column_of("step")] if x_name == "step" else table["n"]
    keep = pc.and_(pc.is_valid(y), pc.is_valid(x))
    xs = np.asarray(pc.filter(x, keep).to_numpy(zero_copy_only=False), dtype=np.float64)
    ys = np.asarray(pc.filter(y, keep).to_numpy(zero_copy_only=False), dtype=np.float64)
    ns = np.asarray(pc.filter(table["n"], keep).to_numpy(zero_copy_only=False), dtype=np.int64)
    stride = max(1, len(xs) // SERIES_POINTS)
    return {
        "series": {
            "key": key,
            "x_name": x_name,
            "x": xs[::stride].tolist(),
            "y": ys[::stride].tolist(),
            "records": ns[::stride].tolist(),
            "points": len(xs),
            "stride": stride,
        }
    }


def bars(key: str, vals: np.ndarray, names: dict[int, str] | None = None) -> dict:
    """50 bars, or one per value for small integers (class ids, counts); finite values only. With
    `names` (a TFDS ClassLabel's, `facts.class_names`), each one-value bar is named as a record
    label is (`reading.label_text`: '3 (cat)'), in `names` beside `edges`."""
    vals = vals[np.isfinite(vals)]
    lo, hi = float(vals.min()), float(vals.max())
    whole = hi - lo <= 50 and bool(np.all(vals[:100_000] == np.round(vals[:100_000])))
    if whole:
        edges = np.arange(lo - 0.5, hi + 1.0)
    else:
        edges = np.histogram_bin_edges(vals, bins=50)
    counts, edges = np.histogram(vals, bins=edges)
    out = {"key": key, "edges": edges.tolist(), "counts": counts.tolist(), "values": len(vals)}
    if names and whole:
        out["names"] = [label_text(INT64_LIST, [int(lo) + i], names) for i in range(len(counts))]
    return out


def _plot_of_facts(table: pa.Table, key: str) -> dict:
    if key == IMAGE_SIZES:
        sizes = image_sizes(table)
        return (
            {"scatter": {"key": key, **sizes}}
            if sizes
            else {"error": "no decoded image sizes in the analysis"}
        )
    no_boxes = {"error": f"no boxes in {', '.join(box_spec(table).keys)}"}
    if key == BOX_CENTRES:
        got = box_centres(table)
        return {"heatmap": {"key": key, **heatmap(got[0], got[1])}} if got else no_boxes
    got2 = box_measure(table, key)
    if got2 is None:
        return no_boxes
    finite = got2[0][np.isfinite(got2[0])]
    return {"histogram": bars(key, finite)} if len(finite) else {"error": f"no finite {key}"}


def event_scalars(paths: list[str], counts: list[int] | None = None) -> tuple[str, pa.Table] | None:
    """The scalar an event file opens on and a table of it over steps (n, step, the tag), read
    straight from local event files before the analysis: framing and the Event parse only, a
    fraction of the analysis' time. None when the files frame other records than the window's
    `counts`, or hold no scalar."""

    steps: list[int | None] = []
    values: dict[str, dict[int, float]] = {}
    n = 0
    for fi, path in enumerate(paths):
        with open_source(path) as src:
            idx = RecordIndex()
            for chunk in scan(src):
                idx.apply(chunk)
            if counts is not None and idx.count != counts[fi]:
                return None
            for k in range(idx.count):
                feats = event_features(
                    bounded_payload(src.read, int(idx.offsets[k]), int(idx.lengths[k])), []
                )
                step = feats.get("step")
                steps.append(int(step.values[0]) if step is not None and len(step.values) else None)
                for key, f in feats.items():
                    if f.type in (FLOAT_LIST, INT64_LIST) and key != "step" and len(f.values):
                        values.setdefault(key, {})[n] = float(f.values[0])
                n += 1
    key = first_scalar(values)
    if key is None:
        return None
    col = values[key]
    table = pa.table(
        {
            "n": pa.array(np.arange(n, dtype=np.int64)),
            column_of("step"): pa.array(steps, pa.int64()),
            column_of(key): pa.array([col.get(i) for i in range(n)], pa.float64()),
        }
    )
    return key, table
