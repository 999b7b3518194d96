"""TFDV's `Schema`: inferred from statistics by TFDV's rules, read and written as text format.

Inference (`infer`, as TFDV's `infer_schema` with its defaults): each feature's type (INT, FLOAT,
BYTES); presence `min_fraction: 1.0` when every example holds it, and `min_count: 1`; its shape
`dim { size: N }` when every example holds exactly N values (`infer_feature_shape`), else
`value_count { min: 1 max: 1 }` when each holder has one value, else `value_count { min: 1 }` when
each has at least one; a `StringDomain` for a text feature of at most `max_string_domain_size`
(100) distinct values, kept at the schema's top level and named by the feature (`domain:`), as
TFDV writes it. Integer and float domains are not inferred (TFDV infers none from plain
statistics); validation checks those a person writes. A feature whose texts were too long for the
fact table (an encoded image) gets no domain.
"""

from __future__ import annotations

import logging
from pathlib import Path

from tfrview.core.errors import TfrviewError
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)


class SchemaError(TfrviewError):
    """A schema, statistics or anomalies file that cannot be read."""


def infer(stats, max_string_domain_size: int = 100, infer_feature_shape: bool = True):
    """A `Schema` from a `DatasetFeatureStatisticsList`'s first dataset (TFDV's rule: the schema is
    inferred from one statistics set, usually the training split)."""
    from tfrview.core.tfdv.proto import schema_pb2 as sc
    from tfrview.core.tfdv.proto import statistics_pb2 as st

    schema = sc.Schema()
    if not stats.datasets:
        return schema
    ds = stats.datasets[0]
    n = ds.num_examples
    types = {
        st.FeatureNameStatistics.INT: sc.INT,
        st.FeatureNameStatistics.FLOAT: sc.FLOAT,
        st.FeatureNameStatistics.STRING: sc.BYTES,
        st.FeatureNameStatistics.BYTES: sc.BYTES,
    }
    for fs in ds.features:
        name = fs.name or "/".join(fs.path.step)
        f = schema.feature.add(name=name, type=types.get(fs.type, sc.BYTES))
        cs = common_of(fs)
        if cs is None:
            continue
        if n and cs.num_non_missing == n:
            f.presence.min_fraction = 1.0
        f.presence.min_count = 1
        if (
            cs.num_non_missing
            and cs.min_num_values == cs.max_num_values
            and cs.num_non_missing == n
            and infer_feature_shape
        ):
            f.shape.dim.add(size=cs.min_num_values)
        elif cs.num_non_missing and cs.min_num_values == cs.max_num_values == 1:
            f.value_count.min, f.value_count.max = 1, 1
        elif cs.num_non_missing and cs.min_num_values >= 1:
            f.value_count.min = 1
        ss = fs.string_stats
        if (
            fs.WhichOneof("stats") == "string_stats"
            and 0 < ss.unique <= max_string_domain_size
            and len(ss.rank_histogram.buckets) == ss.unique
        ):
            dom = schema.string_domain.add(name=name)
            dom.value.extend(sorted(b.label for b in ss.rank_histogram.buckets))
            f.domain = name
    return schema


def common_of(fs):
    """A feature statistics' `common_stats`, whichever kind of statistics holds it (None: none)."""
    which = fs.WhichOneof("stats")
    return getattr(fs, which).common_stats if which else None


def _domain(schema, feature, kind: str):
    """The feature's `<kind>_domain`: its own, or the top-level one its `domain` names (None)."""
    which = feature.WhichOneof("domain_info")
    if which == f"{kind}_domain":
        return getattr(feature, which)
    if which == "domain":
        for d in getattr(schema, f"{kind}_domain"):
            if d.name == feature.domain:
                return d
    return None


def string_domain(schema, feature):
    """The feature's string domain: its own, or the top-level one its `domain` names (None)."""
    return _domain(schema, feature, "string")


def int_domain(schema, feature):
    return _domain(schema, feature, "int")


def float_domain(schema, feature):
    return _domain(schema, feature, "float")


def write(schema, out: Path) -> None:
    """The schema as text format (TFX's schema.pbtxt), through a temporary file and a rename."""
    from google.protobuf import text_format

    from tfrview.core.output.atomic import atomic_write_text

    atomic_write_text(out, text_format.MessageToString(schema))


def read_message(path: Path, message, text: bool | None = None):
    """A TFDV file into `message` (a fresh message of the expected type): text format when `text`
    (None: by the name, `.pbtxt`/`.txt`/`.textproto`, else binary), within
    `limits.MAX_TFDV_FILE_BYTES`. Fields of TensorFlow Metadata's that our `.proto` leaves out are
    skipped, said once in the log. A file that is no such message: one-line `SchemaError`."""
    from google.protobuf import message as pb_message
    from google.protobuf import text_format

    from tfrview.core.limits import MAX_TFDV_FILE_BYTES, too_large

    what = type(message).__name__
    try:
        size = path.stat().st_size
        if size > MAX_TFDV_FILE_BYTES:
            raise SchemaError(
                f"{printable(str(path))}: "
                + too_large("the file", size, MAX_TFDV_FILE_BYTES, name="MAX_TFDV_FILE_BYTES")
            )
        data = path.read_bytes()
    except OSError as exc:
        raise SchemaError(f"{printable(str(path))}: cannot read ({exc.strerror or exc})") from None
    if text is None:
        text = path.suffix.lower() in (".pbtxt", ".txt", ".textproto")
    try:
        if text:
            text_format.Parse(data.decode("utf-8"), message, allow_unknown_field=True)
        else:
            message.ParseFromString(data)
    except (text_format.ParseError, pb_message.DecodeError, UnicodeDecodeError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise SchemaError(f"{printable(str(path))}: not a TFDV {what} ({printable(first)})") from None
    return message


def read_schema(path: Path):
    from tfrview.core.tfdv.proto import schema_pb2 as sc

    schema = read_message(path, sc.Schema())
    for f in schema.feature:
        if not f.name:
            raise SchemaError(f"{printable(str(path))}: a feature without a name")
    return schema
