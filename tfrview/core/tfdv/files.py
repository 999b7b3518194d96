"""TFDV's files as tables a person reads: statistics (TFX's `FeatureStats.pb`, a
`DatasetFeatureStatisticsList`, binary or text), schemas (`schema.pbtxt`) and anomalies
(`SchemaDiff.pb`, `anomalies.pbtxt`). `kind_of` says which a path is, by its name first and its
content after (a file no rule names is none: a record file); `table` reads it into rows of plain
values (one a feature; statistics one a split and feature), which `tfrview info` prints and the
window shows read-only.
"""

from __future__ import annotations

import enum
import os
from dataclasses import dataclass
from pathlib import Path

from tfrview.core.tfdv.schema import SchemaError, common_of, read_message


class TfdvFile(enum.StrEnum):
    """What a TFDV file holds."""

    STATISTICS = "statistics"
    SCHEMA = "schema"
    ANOMALIES = "anomalies"

    @property
    def title(self) -> str:
        return {
            TfdvFile.STATISTICS: "TFDV statistics",
            TfdvFile.SCHEMA: "TFDV schema",
            TfdvFile.ANOMALIES: "TFDV anomalies",
        }[self]


# TFX's file names, and the names people give them (lower case)
_NAMES = {
    "featurestats.pb": TfdvFile.STATISTICS,
    "featurestats.pbtxt": TfdvFile.STATISTICS,
    "stats.pb": TfdvFile.STATISTICS,
    "stats.pbtxt": TfdvFile.STATISTICS,
    "statistics.pb": TfdvFile.STATISTICS,
    "statistics.pbtxt": TfdvFile.STATISTICS,
    "schema.pbtxt": TfdvFile.SCHEMA,
    "schema.pb": TfdvFile.SCHEMA,
    "schemadiff.pb": TfdvFile.ANOMALIES,
    "schemadiff.pbtxt": TfdvFile.ANOMALIES,
    "anomalies.pb": TfdvFile.ANOMALIES,
    "anomalies.pbtxt": TfdvFile.ANOMALIES,
}
_TEXT = (".pbtxt", ".txt", ".textproto")
# the first field of each message in text format (what a .pbtxt of no known name starts with)
_FIRST_WORDS = {
    "datasets": TfdvFile.STATISTICS,
    "feature": TfdvFile.SCHEMA,
    "string_domain": TfdvFile.SCHEMA,
    "baseline": TfdvFile.ANOMALIES,
    "anomaly_info": TfdvFile.ANOMALIES,
}


def kind_of(path: str | os.PathLike) -> TfdvFile | None:
    """The TFDV file a path is (None: none). By name (`FeatureStats.pb`, `schema.pbtxt`,
    `SchemaDiff.pb`, `*.stats.pb`, `*_anomalies.pbtxt`...); a `.pbtxt` of another name by its first
    field; a local file only."""
    p = Path(path)
    if not os.path.isfile(p):  # a folder, a URL, a missing file: no TFDV file here
        return None
    name = p.name.lower()
    if name in _NAMES:
        return _NAMES[name]
    for end, kind in _NAMES.items():
        if name.endswith(("." + end, "_" + end, "-" + end)):
            return kind
    if p.suffix.lower() in _TEXT and p.suffix.lower() != ".txt":
        try:
            with open(p, "rb") as fh:
                head = fh.read(4096).decode("utf-8", "replace")
        except OSError:
            return None
        for line in head.splitlines():
            word = line.strip().split(" ", 1)[0].split("{", 1)[0].split(":", 1)[0].strip()
            if word and not word.startswith("#"):
                return _FIRST_WORDS.get(word)
    return None


def read(path: str | os.PathLike, kind: TfdvFile | None = None):
    """The file's message (a one-line `SchemaError` when it is not what it claims)."""
    from tfrview.core.tfdv.proto import anomalies_pb2, schema_pb2, statistics_pb2

    p = Path(path)
    kind = kind or kind_of(p)
    if kind is None:
        raise SchemaError(f"{p}: not a TFDV statistics, schema or anomalies file")
    message = {
        TfdvFile.STATISTICS: statistics_pb2.DatasetFeatureStatisticsList,
        TfdvFile.SCHEMA: schema_pb2.Schema,
        TfdvFile.ANOMALIES: anomalies_pb2.Anomalies,
    }[kind]()
    return read_message(p, message, text=p.suffix.lower() in _TEXT)


@dataclass(frozen=True)
class Table:
    """A TFDV file as rows of plain values (numbers or text; "" where there is none)."""

    kind: TfdvFile
    columns: tuple[str, ...]
    rows: tuple[tuple, ...]
    summary: str  # one line: what the file holds


def table(path: str | os.PathLike) -> Table:
    p = Path(path)
    kind = kind_of(p)
    msg = read(p, kind)
    if kind is TfdvFile.STATISTICS:
        return _stats_table(msg)
    if kind is TfdvFile.SCHEMA:
        return _schema_table(msg)
    return _anomalies_table(msg)


STATS_COLUMNS = (
    "split",
    "feature",
    "type",
    "present",
    "missing",
    "values min",
    "values max",
    "values avg",
    "mean",
    "std dev",
    "zeros",
    "min",
    "median",
    "max",
    "unique",
    "top values",
    "avg length",
)


def _num(x: float) -> float | str:
    return round(float(x), 6)


def _stats_table(stats) -> Table:
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    rows = []
    for ds in stats.datasets:
        for fs in ds.features:
            cs = common_of(fs)
            which = fs.WhichOneof("stats")
            row = {
                "split": ds.name,
                "feature": fs.name or "/".join(fs.path.step),
                "type": st.FeatureNameStatistics.Type.Name(fs.type),
            }
            if cs is not None:
                row.update(
                    {
                        "present": cs.num_non_missing,
                        "missing": cs.num_missing,
                        "values min": cs.min_num_values,
                        "values max": cs.max_num_values,
                        "values avg": _num(cs.avg_num_values),
                    }
                )
            if which == "num_stats":
                ns = fs.num_stats
                row.update(
                    {
                        "mean": _num(ns.mean),
                        "std dev": _num(ns.std_dev),
                        "zeros": ns.num_zeros,
                        "min": _num(ns.min),
                        "median": _num(ns.median),
                        "max": _num(ns.max),
                    }
                )
            elif which == "string_stats":
                ss = fs.string_stats
                row.update(
                    {
                        "unique": ss.unique,
                        "top values": ", ".join(f"{v.value} ({int(v.frequency)})" for v in ss.top_values[:5]),
                        "avg length": _num(ss.avg_length),
                    }
                )
            elif which == "bytes_stats":
                bs = fs.bytes_stats
                if bs.unique:  # none when every value was too long for the fact table (images)
                    row.update({"unique": bs.unique, "avg length": _num(bs.avg_num_bytes)})
            rows.append(tuple(row.get(c, "") for c in STATS_COLUMNS))
    splits = ", ".join(f"{ds.name} ({ds.num_examples:,} examples)" for ds in stats.datasets)
    nfeat = len({r[1] for r in rows})
    return Table(
        TfdvFile.STATISTICS,
        STATS_COLUMNS,
        tuple(rows),
        f"{len(stats.datasets)} dataset(s): {splits}; {nfeat} features",
    )


SCHEMA_COLUMNS = ("feature", "type", "presence", "values", "domain")


def _schema_table(schema) -> Table:
    from tfrview.core.tfdv.proto import schema_pb2 as sc
    from tfrview.core.tfdv.schema import float_domain, int_domain, string_domain

    rows = []
    for f in schema.feature:
        presence = []
        if f.presence.HasField("min_fraction"):
            presence.append(f"min_fraction {f.presence.min_fraction:g}")
        if f.presence.HasField("min_count"):
            presence.append(f"min_count {f.presence.min_count}")
        which = f.WhichOneof("shape_type")
        if which == "shape":
            values = "shape " + " x ".join(str(d.size) for d in f.shape.dim)
        elif which == "value_count":
            vc = f.value_count
            values = f"{vc.min if vc.HasField('min') else ''}..{vc.max if vc.HasField('max') else ''}"
        else:
            values = ""
        domain = ""
        sd, idom, fdom = string_domain(schema, f), int_domain(schema, f), float_domain(schema, f)
        if sd is not None:
            shown = ", ".join(sd.value[:8])
            domain = f"{len(sd.value)} strings: {shown}" + (", ..." if len(sd.value) > 8 else "")
        elif idom is not None:
            domain = (
                f"int {idom.min if idom.HasField('min') else ''}..{idom.max if idom.HasField('max') else ''}"
            )
        elif fdom is not None:
            domain = f"float {fdom.min if fdom.HasField('min') else ''}..{fdom.max if fdom.HasField('max') else ''}"
        elif f.WhichOneof("domain_info") == "bool_domain":
            domain = "bool"
        rows.append((f.name, sc.FeatureType.Name(f.type), ", ".join(presence), values, domain))
    return Table(TfdvFile.SCHEMA, SCHEMA_COLUMNS, tuple(rows), f"{len(rows)} features")


ANOMALY_COLUMNS = ("feature", "kind", "short description", "description")


def _anomalies_table(anomalies) -> Table:
    from tfrview.core.tfdv.proto import anomalies_pb2 as an

    rows = []
    for name in sorted(anomalies.anomaly_info):
        info = anomalies.anomaly_info[name]
        for r in info.reason or [None]:
            if r is None:
                rows.append((name, "", info.short_description, info.description))
            else:
                rows.append((name, an.AnomalyInfo.Type.Name(r.type), r.short_description, r.description))
    if anomalies.HasField("dataset_anomaly_info"):
        info = anomalies.dataset_anomaly_info
        for r in info.reason:
            rows.append(("(dataset)", an.AnomalyInfo.Type.Name(r.type), r.short_description, r.description))
    said = f"{len(anomalies.anomaly_info)} features with anomalies" if rows else "no anomalies"
    return Table(TfdvFile.ANOMALIES, ANOMALY_COLUMNS, tuple(rows), said)
