"""TensorBoard event files (issue 12): Event records shown as features (wall time readable, step,
one feature per tag), with their summary text, statistics over steps and images."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import numpy as np
from PIL import Image

from tfrview.core.output.writer import write_records
from tfrview.core.records.payload import decode, sniff_kind
from tfrview.core.records.proto import event_pb2
from tfrview.core.records.rowtext import row_text

T0 = 1_763_900_000.25  # 2025-11-23 12:13:20.25 UTC


def _events(steps: int = 50) -> list[bytes]:
    out = [event_pb2.Event(wall_time=T0, file_version="brain.Event:2").SerializeToString()]
    png = io.BytesIO()
    Image.fromarray(np.zeros((8, 12, 3), np.uint8)).save(png, "PNG")
    for s in range(steps):
        ev = event_pb2.Event(wall_time=T0 + s, step=s)
        v = ev.summary.value.add(tag="loss")
        v.simple_value = 1.0 / (s + 1)
        t = ev.summary.value.add(tag="accuracy")  # TF2 writes scalars as tensors
        t.tensor.dtype = 1
        t.tensor.float_val.append(s / steps)
        t.metadata.plugin_data.plugin_name = "scalars"
        if s % 10 == 0:
            im = ev.summary.value.add(tag="samples")
            im.image.height, im.image.width = 8, 12
            im.image.encoded_image_string = png.getvalue()
            h = ev.summary.value.add(tag="weights")
            h.histo.min, h.histo.max, h.histo.num, h.histo.sum = -1.0, 1.0, 100, 5.0
            h.histo.bucket_limit.extend([0.0, 1.0])
            h.histo.bucket.extend([40, 60])
            txt = ev.summary.value.add(tag="notes")
            txt.tensor.dtype = 7
            txt.tensor.string_val.append(b"learning rate halved")
        out.append(ev.SerializeToString())
    return out


def test_an_event_is_features_with_a_readable_wall_time():
    recs = _events()
    assert [sniff_kind(r) for r in recs[:3]] == ["event"] * 3
    first = decode(recs[0])
    assert first.kind == "event" and first.features["file_version"].values == [b"brain.Event:2"]
    assert first.features["wall_time"].values == [b"2025-11-23 12:13:20.250000 UTC"]
    p = decode(recs[1])
    f = p.features
    assert int(f["step"].values[0]) == 0 and float(f["loss"].values[0]) == 1.0
    assert float(f["accuracy"].values[0]) == 0.0
    assert f["samples"].values[0].startswith(b"\x89PNG") and int(f["samples/width"].values[0]) == 12
    assert f["weights"].values[0] == b"histogram of 100 values in [-1, 1], mean 0.05"
    assert f["weights/buckets"].values.tolist() == [40.0, 60.0]
    assert f["notes"].values == [b"learning rate halved"]
    assert row_text(recs[2], None) == ("event", "step 1  ·  loss 0.5  ·  accuracy 0.02")


def test_images_in_events_reach_the_image_panel_and_examples_stay_examples():
    from tfrview.core.records.images import find_images, image_features
    from tfrview.demo import _example

    p = decode(_events()[1])
    assert [r.key for r in find_images(image_features(p))] == ["samples"]
    ex = _example(label=3, x=[1.5]).SerializeToString()
    assert sniff_kind(ex) == "example"


def test_info_on_an_event_file_gives_statistics_over_steps(tmp_path):
    path = tmp_path / "events.out.tfevents.1763900000.host"
    write_records(path, _events(10_000))
    r = subprocess.run(
        [sys.executable, "-m", "tfrview", "info", "--all", "--json", str(path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    f = json.loads(r.stdout)["files"][0]
    assert f["payload_kinds"] == {"event": 10_001}
    assert f["features"]["loss"]["present"] == 10_000 and f["features"]["step"]["present"] == 10_001
    flt = subprocess.run(
        [sys.executable, "-m", "tfrview", "dump", "--json", "--records", "1:2", str(path)],
        capture_output=True,
        text=True,
    )
    assert json.loads(flt.stdout.splitlines()[0])["kind"] == "event"


def test_an_event_file_has_no_qa_findings(tmp_path):
    from tfrview.core.analysis import analyze

    path = tmp_path / "events.out.tfevents.1.host"
    write_records(path, _events(40))
    a = analyze([str(path)], deep=True, jobs=1)
    assert a.problems(0) == []  # the same sample image at every 10th step is not a duplicate


def test_fixed_fields_of_unknown_protobufs_read_as_floats_when_plausible():
    import struct

    from tfrview.core.records.payload import fixed_as_float

    as_u64 = struct.unpack("<Q", struct.pack("<d", T0))[0]
    assert fixed_as_float(1, as_u64) == T0  # a wall time, not 4.7e18
    assert fixed_as_float(5, struct.unpack("<I", struct.pack("<f", 0.25))[0]) == 0.25
    assert fixed_as_float(1, 12345) is None  # a small integer stays an integer
    assert fixed_as_float(1, 0x7FF8000000000001) is None  # NaN bits: not a plausible reading
    assert fixed_as_float(0, 5) is None


def test_box_measures_come_from_the_stored_facts(tmp_path):
    import numpy as np

    from tfrview.core.analysis import analyze
    from tfrview.core.analysis.plots import box_measure
    from tfrview.demo import _example

    recs = [
        _example(
            **{
                "image/object/bbox/xmin": [0.1, 0.5],
                "image/object/bbox/xmax": [0.3, 0.9],
                "image/object/bbox/ymin": [0.2, 0.0],
                "image/object/bbox/ymax": [0.6, 0.1],
                "image/object/class/label": [1, 2],
            }
        ).SerializeToString(),
        _example(
            **{
                "image/object/bbox/xmin": [0.0],
                "image/object/bbox/xmax": [1.0],
                "image/object/bbox/ymin": [0.0],
                "image/object/bbox/ymax": [0.5],
                "image/object/class/label": [1],
            }
        ).SerializeToString(),
    ]
    path = tmp_path / "boxes.tfrecord"
    write_records(path, recs)
    table = analyze([str(path)], deep=True, jobs=1).facts()
    assert np.allclose(box_measure(table, "box width")[0], [0.2, 0.4, 1.0])
    assert np.allclose(box_measure(table, "box area")[0], [0.08, 0.04, 0.5])
    assert np.allclose(box_measure(table, "box aspect (w/h)")[0], [0.5, 4.0, 2.0])
    n_of = {"box width": ([0.35], [0.45]), "box centres (heat map)": ([0.6, 0.0], [0.8, 0.1])}
    from tfrview.core.analysis.plots import box_centres, heatmap, select

    cx, cy, n = box_centres(table)
    assert np.allclose(cx, [0.2, 0.7, 0.5]) and np.allclose(cy, [0.4, 0.05, 0.25]) and list(n) == [0, 0, 1]
    h = heatmap(cx, cy, bins=10)
    # x 0.2, y 0.4 (counts[x bin, y bin])
    assert h["normalised"] and h["boxes"] == 3 and np.asarray(h["counts"])[2, 4] == 1
    assert select(table, "box width", *n_of["box width"]).tolist() == [0]  # record 0's second box
    assert select(table, "box width", [0.5], [1.0], closed=True).tolist() == [1]  # the last bar includes 1.0
    assert select(table, "box centres (heat map)", *n_of["box centres (heat map)"]).tolist() == [0]


def test_image_sizes_and_the_records_behind_a_point():
    import numpy as np
    import pyarrow as pa

    from tfrview.core.analysis.plots import image_sizes, select

    table = pa.table(
        {"n": [0, 1, 2, 3], "image_width": [640, 640, None, 320], "image_height": [480, 480, None, 240]}
    )
    s = image_sizes(table)
    assert (s["width"], s["height"], s["count"], s["images"]) == ([320, 640], [240, 480], [1, 2], 3)
    assert select(table, "image sizes (scatter)", [640, 480], [640, 480]).tolist() == [0, 1]
    assert np.array_equal(select(table, "image sizes (scatter)", [1, 1], [1, 1]), [])


def test_the_quick_scalar_table_equals_the_analysis_plot(tmp_path):
    """An event file's plot before the analysis (a quick read) is the plot the analysis makes."""
    from tfrview.core.analysis import analyze
    from tfrview.core.analysis.plot_names import scalar_to_show
    from tfrview.core.analysis.plots import event_scalars, plot

    path = tmp_path / "events.out.tfevents.1.host"
    write_records(path, _events(120))
    a = analyze([str(path)], deep=True, jobs=1)
    key = scalar_to_show(a.summary.to_json())
    quick_key, table = event_scalars([str(path)], [121])
    assert quick_key == key == "accuracy"
    assert plot(table, key) == plot(a.facts(), key)
    assert event_scalars([str(path)], [120]) is None  # framed otherwise than the window's: not used


def test_event_records_give_their_features_in_dump_json_and_the_json_lines_export(tmp_path):
    """Issue 20: both JSON outputs gave an event as {"kind": "event"} alone."""
    from tfrview.core.output.export import export_jsonl

    path = tmp_path / "events.out.tfevents.1763900000.host"
    recs = _events(3)
    write_records(path, recs)
    r = subprocess.run(
        [sys.executable, "-m", "tfrview", "dump", "--json", str(path)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stderr
    dumped = [json.loads(line) for line in r.stdout.splitlines()]
    out = tmp_path / "events.jsonl"
    export_jsonl([(n, 0, data) for n, data in enumerate(recs)], out)
    exported = [json.loads(line) for line in out.read_text().splitlines()]
    for rows in (dumped, exported):
        assert [d["kind"] for d in rows] == ["event"] * 4
        assert rows[0]["features"]["file_version"]["values"] == ["brain.Event:2"]
        f = rows[2]["features"]  # step 1
        assert f["wall_time"] == {"type": "bytes_list", "values": ["2025-11-23 12:13:21.250000 UTC"]}
        assert f["step"] == {"type": "int64_list", "values": [1]}
        assert f["loss"] == {"type": "float_list", "values": [0.5]}  # a scalar: its value
        assert f["accuracy"]["values"] == [np.float32(1 / 3).item()]  # a TF2 scalar tensor: its value
        img = rows[1]["features"]  # step 0 also logs an image, a histogram and a text
        assert img["samples/width"]["values"] == [12] and img["samples/height"]["values"] == [8]
        assert img["weights"]["values"] == ["histogram of 100 values in [-1, 1], mean 0.05"]
        assert img["weights/buckets"]["values"] == [40.0, 60.0]
        assert img["notes"]["values"] == ["learning rate halved"]
