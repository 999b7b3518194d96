"""TensorBoard event files (`events.out.tfevents.*`) are TFRecords of `Event` messages: each record
is shown as features, like an Example's, so the table, the tree, the filter, the summary and the
image panel work on them as they are: `wall_time` as a readable time, `step`, and one feature per
summary tag (a scalar's value, an image's bytes, a text's strings, a histogram's buckets).
"""

from __future__ import annotations

import struct
import time

import numpy as np

from tfrview.core.limits import MAX_LIST_VALUES
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST, Feature

WALL_TIME_RANGE = (1e8, 5e9)  # 1973..2128: a first field read as seconds since the epoch
_EVENT_FIELDS = {1: 1, 2: 0, 3: 2, 4: 2, 5: 2, 6: 2, 7: 2, 8: 2, 9: 2}  # field number -> wire type
_DTYPES = {
    1: np.float32,
    2: np.float64,
    3: np.int32,
    9: np.int64,
    10: np.bool_,
    4: np.uint8,
    5: np.int16,
    6: np.int8,
    17: np.uint16,
    22: np.uint32,
    23: np.uint64,
    19: np.float16,
}
_SESSION = {1: "start", 2: "stop", 3: "checkpoint"}


def looks_like_event(data: bytes, fields: list[tuple[int, int, int, int]]) -> bool:
    """An Event: field 1 a double that reads as a time (wall_time), every field one an Event has,
    with its wire type."""
    if not fields or fields[0][0] != 1 or fields[0][1] != 1:
        return False
    if any(_EVENT_FIELDS.get(num) != wt for num, wt, _, _ in fields):
        return False
    (t,) = struct.unpack_from("<d", data, fields[0][2])
    return WALL_TIME_RANGE[0] < t < WALL_TIME_RANGE[1]


def _pb():
    from tfrview.core.records.proto import event_pb2  # heavy: protobuf on first use only

    return event_pb2


def event_features(data: bytes, notes: list[str]) -> dict:
    """The features of one Event record (see the module's docstring); {} if it does not parse."""

    try:
        ev = _pb().Event.FromString(data)
    except Exception:  # protobuf's DecodeError and friends: not an Event after all
        return {}

    def text(s: str | bytes) -> Feature:
        return Feature(BYTES_LIST, [s.encode() if isinstance(s, str) else bytes(s)])

    def floats(v) -> Feature:
        return Feature(FLOAT_LIST, np.asarray(v, dtype=np.float32).ravel())

    def ints(v) -> Feature:
        return Feature(INT64_LIST, np.asarray(v, dtype=np.int64).ravel())

    out: dict[str, Feature] = {
        "wall_time": text(
            time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(ev.wall_time))
            + f".{int(ev.wall_time % 1 * 1e6):06d} UTC"
        ),
        "step": ints([ev.step]),
    }
    what = ev.WhichOneof("what")
    if what == "file_version":
        out["file_version"] = text(ev.file_version)
    elif what == "log_message":
        out["log_message"] = text(ev.log_message.message)
    elif what == "session_log":
        s = ev.session_log
        out["session_log"] = text(
            " ".join(x for x in (_SESSION.get(s.status, str(s.status)), s.checkpoint_path, s.msg) if x)
        )
    elif what in ("graph_def", "meta_graph_def"):
        out[what] = text(getattr(ev, what))
    elif what == "tagged_run_metadata":
        out[f"run_metadata/{ev.tagged_run_metadata.tag}"] = text(ev.tagged_run_metadata.run_metadata)
    elif what == "summary":
        for v in ev.summary.value:
            key = v.tag or v.node_name or "(no tag)"
            while key in out:
                key += "#"
            out.update(_value_features(key, v, text, floats, ints, notes))
    return out


def _value_features(key: str, v, text, floats, ints, notes: list[str]) -> dict:
    kind = v.WhichOneof("value")
    if kind == "simple_value":
        return {key: floats([v.simple_value])}
    if kind == "image":
        return {
            key: text(v.image.encoded_image_string),
            f"{key}/height": ints([v.image.height]),
            f"{key}/width": ints([v.image.width]),
        }
    if kind == "audio":
        return {key: text(v.audio.encoded_audio_string), f"{key}/sample_rate": floats([v.audio.sample_rate])}
    if kind == "histo":
        h = v.histo
        mean = h.sum / h.num if h.num else 0.0
        return {
            key: text(f"histogram of {h.num:,.0f} values in [{h.min:.6g}, {h.max:.6g}], mean {mean:.6g}"),
            f"{key}/bucket_limits": floats(h.bucket_limit),
            f"{key}/buckets": floats(h.bucket),
        }
    if kind == "tensor":
        return {key: _tensor_feature(v.tensor, text, floats, ints, key, notes)}
    return {key: text(b"")}


def _tensor_feature(t, text, floats, ints, key: str, notes: list[str]):

    if t.dtype == 7 or t.string_val:  # strings: text summaries, and TF2 images ([width, height, png...])
        vals = list(t.string_val)
        if len(vals) > MAX_LIST_VALUES:
            notes.append(f"{key}: only the first {MAX_LIST_VALUES:,} of {len(vals):,} strings are shown")
            vals = vals[:MAX_LIST_VALUES]
        return Feature(BYTES_LIST, vals)
    for field in ("float_val", "double_val"):
        if len(getattr(t, field)):
            return floats(getattr(t, field))
    for field in ("int_val", "int64_val", "bool_val"):
        if len(getattr(t, field)):
            return ints(getattr(t, field))
    dtype = _DTYPES.get(t.dtype)
    if dtype is not None and t.tensor_content:
        arr = np.frombuffer(
            t.tensor_content[: len(t.tensor_content) // np.dtype(dtype).itemsize * np.dtype(dtype).itemsize],
            dtype=np.dtype(dtype).newbyteorder("<"),
        )
        if arr.size > MAX_LIST_VALUES:
            notes.append(f"{key}: only the first {MAX_LIST_VALUES:,} of {arr.size:,} values are shown")
            arr = arr[:MAX_LIST_VALUES]
        return floats(arr) if np.issubdtype(arr.dtype, np.floating) else ints(arr)
    return text(b"")
