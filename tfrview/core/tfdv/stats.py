"""TFDV's `DatasetFeatureStatisticsList` from the stored analysis (no second pass over the data).

One `DatasetFeatureStatistics` a split (named as the split; one named by the dataset when the files
are in none), with `num_examples` and, per feature: `common_stats` (present, missing, values per
record and its quantiles histogram: exact, from the fact table's list lengths), and
`NumericStatistics` (mean, std_dev, num_zeros, min, median, max, a standard and a quantiles
histogram), `StringStatistics` (unique, top_values, avg_length, rank_histogram) or
`BytesStatistics` (unique, avg/min/max bytes) from the kept values. Where the fact table kept only
part of the values (a list past `limits.FACT_VALUES`, a text past `limits.FACT_BYTES`, such as an
encoded image), the numeric min, max and mean come from the pass's exact per-file summary and the
rest is over the kept values; bytes left out are counted in `common_stats` only. Defaults follow
TFDV's `StatsOptions` (20 top values, 10 histogram buckets, 1,000 rank histogram buckets).
"""

from __future__ import annotations

import logging
import math
from pathlib import Path

import numpy as np

from tfrview.core.tfdv.columns import Feature, Split, ValueType, splits_of

log = logging.getLogger(__name__)

TEXT_SUFFIXES = (".pbtxt", ".txt", ".textproto")  # a file of text format; any other name is binary


def statistics(analysis, num_top_values: int = 20, num_buckets: int = 10, num_rank_buckets: int = 1000):
    """The analysis (a deep one) as a `DatasetFeatureStatisticsList` message."""
    return from_splits(
        splits_of(analysis), num_top_values, num_buckets, num_rank_buckets, exact=_exact_numbers(analysis)
    )


def from_splits(
    splits: list[Split],
    num_top_values: int = 20,
    num_buckets: int = 10,
    num_rank_buckets: int = 1000,
    exact: dict | None = None,
):
    """The statistics of splits already gathered (`columns.splits_of`); `exact`: the pass's exact
    numeric figures by (split, key), for keys whose lists the fact table cut."""
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    out = st.DatasetFeatureStatisticsList()
    for s in splits:
        ds = out.datasets.add(name=s.name or "all", num_examples=s.examples)
        for key, f in sorted(s.features.items()):
            got = (exact or {}).get((s.name, key))
            _feature(ds.features.add(), s, f, got, num_top_values, num_buckets, num_rank_buckets)
    return out


def _exact_numbers(analysis) -> dict[tuple[str, str], tuple[float, float, float, int]]:
    """(split, key) -> (min, max, sum, count) of every numeric value, from each file's summary (the
    pass counted every value, not only those the fact table keeps)."""
    out: dict[tuple[str, str], list] = {}
    splits = list(analysis.splits) or [""] * len(analysis.shards)
    for fi, s in enumerate(analysis.shards):
        if s.deep is None or s.deep.summary is None:
            continue
        for d in s.deep.parts or (s.deep,):
            for key, ks in d.summary.keys.items():
                if not ks.num_count:
                    continue
                acc = out.setdefault((splits[fi], key), [math.inf, -math.inf, 0.0, 0])
                acc[0] = min(acc[0], ks.num_min)
                acc[1] = max(acc[1], ks.num_max)
                acc[2] += ks.num_sum
                acc[3] += ks.num_count
    return {k: tuple(v) for k, v in out.items()}


def _feature(fs, split: Split, f: Feature, exact, top_n: int, buckets: int, rank_buckets: int) -> None:
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    fs.name = f.key
    vt = f.type
    if vt is ValueType.BYTES:
        if f.binary or (f.left_out and f.left_out == len(f.texts)):
            fs.type = st.FeatureNameStatistics.BYTES
            _bytes(fs.bytes_stats, split, f)
        else:
            fs.type = st.FeatureNameStatistics.STRING
            _strings(fs.string_stats, split, f, top_n, rank_buckets)
        return
    fs.type = st.FeatureNameStatistics.INT if vt is ValueType.INT else st.FeatureNameStatistics.FLOAT
    _numbers(fs.num_stats, split, f, exact, buckets)


def _common(cs, split: Split, f: Feature, buckets: int = 10) -> None:
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    cs.num_non_missing = f.present
    cs.num_missing = max(split.examples - f.present, 0)
    if f.present:
        cs.min_num_values = int(f.count.min())
        cs.max_num_values = int(f.count.max())
        cs.avg_num_values = float(f.count.mean())
        cs.tot_num_values = int(f.count.sum())
        _quantiles(cs.num_values_histogram, f.count.astype(np.float64), buckets)
        cs.num_values_histogram.type = st.Histogram.QUANTILES


def _numbers(ns, split: Split, f: Feature, exact, buckets: int) -> None:
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    _common(ns.common_stats, split, f, buckets)
    v = f.numbers
    nan = np.isnan(v)
    finite = v[~nan]
    if len(finite):
        ns.mean = float(finite.mean())
        ns.std_dev = float(finite.std())
        ns.num_zeros = int(np.count_nonzero(finite == 0))
        ns.min = float(finite.min())
        ns.max = float(finite.max())
        ns.median = float(np.median(finite))
    if exact is not None and f.cut:  # some values not kept: the pass's exact figures where it has them
        lo, hi, total, n = exact
        ns.min, ns.max = float(lo), float(hi)
        if n:
            ns.mean = total / n
    std = ns.histograms.add(type=st.Histogram.STANDARD)
    std.num_nan = int(np.count_nonzero(nan))
    real = finite[np.isfinite(finite)]
    if len(real):
        lo, hi = float(real.min()), float(real.max())
        edges = np.linspace(lo, hi, buckets + 1) if hi > lo else np.array([lo, hi])
        counts, _ = np.histogram(real, bins=edges)
        for i, c in enumerate(counts):
            std.buckets.add(low_value=float(edges[i]), high_value=float(edges[i + 1]), sample_count=float(c))
    q = ns.histograms.add(type=st.Histogram.QUANTILES)
    q.num_nan = int(np.count_nonzero(nan))
    if len(real):
        _quantiles(q, real, buckets)


def _quantiles(h, values: np.ndarray, buckets: int) -> None:
    """Equal-count buckets between the values' quantiles (TFDV's QUANTILES histogram)."""
    edges = np.quantile(values, np.linspace(0, 1, buckets + 1))
    each = len(values) / buckets
    for i in range(buckets):
        h.buckets.add(low_value=float(edges[i]), high_value=float(edges[i + 1]), sample_count=each)


def _strings(ss, split: Split, f: Feature, top_n: int, rank_buckets: int) -> None:
    import pyarrow.compute as pc

    _common(ss.common_stats, split, f)
    kept = f.texts.drop_null()
    if not len(kept):
        return
    counts = pc.value_counts(kept)  # distinct values as Arrow arrays: a million ids are no Python list
    order = pc.sort_indices(counts, sort_keys=[("counts", "descending"), ("values", "ascending")])
    ranked = counts.take(order.slice(0, max(top_n, rank_buckets)))
    values = ranked.field("values").to_pylist()
    freq = ranked.field("counts").to_pylist()
    ss.unique = len(counts)
    ss.avg_length = float(pc.mean(pc.utf8_length(kept)).as_py())
    for v, c in zip(values[:top_n], freq[:top_n], strict=True):
        ss.top_values.add(value=v, frequency=float(c))
    for rank, (v, c) in enumerate(zip(values[:rank_buckets], freq[:rank_buckets], strict=True)):
        ss.rank_histogram.buckets.add(low_rank=rank, high_rank=rank, label=v, sample_count=float(c))


def _bytes(bs, split: Split, f: Feature) -> None:
    import pyarrow as pa
    import pyarrow.compute as pc

    _common(bs.common_stats, split, f)
    kept = f.texts.drop_null()
    if not len(kept):  # every value too long for the fact table (an encoded image): counts only
        return
    kept = kept.cast(pa.binary())
    lengths = np.asarray(pc.binary_length(kept).to_numpy(zero_copy_only=False), dtype=np.float64)
    bs.unique = int(pc.count_distinct(kept).as_py())
    bs.avg_num_bytes = float(lengths.mean())
    bs.min_num_bytes = float(lengths.min())
    bs.max_num_bytes = float(lengths.max())
    bs.max_num_bytes_int = int(lengths.max())


def write(stats, out: Path) -> None:
    """Binary (`.pb`, TFX's FeatureStats.pb) or text format (`.pbtxt`, `.txt`), by the name,
    through a temporary file and a rename."""
    from google.protobuf import text_format

    from tfrview.core.output.atomic import atomic_write_bytes

    text = out.suffix.lower() in TEXT_SUFFIXES
    atomic_write_bytes(
        out, text_format.MessageToString(stats).encode() if text else stats.SerializeToString()
    )


def write_tfx(stats, folder: Path) -> list[Path]:
    """Each dataset (split) as TFX's StatisticsGen artifact lays it out:
    `folder/Split-<name>/FeatureStats.pb`, one binary `DatasetFeatureStatisticsList` of that split
    alone (what TFX's ExampleValidator and SchemaGen read)."""
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    written = []
    for ds in stats.datasets:
        one = st.DatasetFeatureStatisticsList()
        one.datasets.add().CopyFrom(ds)
        out = folder / f"Split-{ds.name}" / "FeatureStats.pb"
        try:
            out.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            from tfrview.core.output.atomic import output_error

            raise output_error(out, exc) from None
        write(one, out)
        written.append(out)
    return written


def tfx_names(stats, paths: list[str], splits: list[str]) -> None:
    """Datasets of files in TFX `Split-<name>/` folders named by those folders (TFX's `eval`, not
    the `validation` it means to tfrview's splits), in place."""
    named = {}
    for p, s in zip(paths, splits, strict=False):
        folder = Path(p).parent.name
        if folder.startswith("Split-") and len(folder) > len("Split-"):
            named.setdefault(s, folder[len("Split-") :])
    for ds in stats.datasets:
        ds.name = named.get(ds.name if ds.name != "all" else "", ds.name)
