import json

import numpy as np
import pytest
from PIL import Image

from tests.helpers import RACCOON, payloads, read_all
from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.output.export import draw_overlay, export_images, export_jsonl, export_records
from tfrview.core.records.overlays import Box, Overlay
from tfrview.core.tfrecord.report import index_source, verify_source
from tfrview.core.tfrecord.source import open_source


@pytest.mark.parametrize("compression", ["none", "gzip", "zlib"])
def test_export_records_roundtrip_byte_identical(tmp_path, compression):
    pls = payloads(25)
    out = tmp_path / "sel.tfrecord"
    res = export_records(iter(pls[5:15]), out, compression)
    assert res.written == 10
    with open_source(out) as src:
        idx, rep = verify_source(src)
        assert rep.ok and src.compression == compression
        assert read_all(src, idx) == pls[5:15]


def test_export_refuses_an_input_and_cancels_cleanly(tmp_path):
    p = tmp_path / "in.tfrecord"
    p.write_bytes(b"")
    with pytest.raises(TfrviewError, match="refusing"):
        export_records(iter([b"x"]), p, inputs=[p])
    out = tmp_path / "out.tfrecord"
    with pytest.raises(Cancelled, match="cancelled"):
        export_records(iter([b"a", b"b", b"c"]), out, progress=lambda n: n < 2)
    assert not out.exists() and sorted(x.name for x in tmp_path.iterdir()) == ["in.tfrecord"]


def test_export_jsonl_matches_dump_json(tmp_path):
    with open_source(RACCOON) as src:
        idx = index_source(src)
        items = [
            (n, int(idx.offsets[n]), src.read(int(idx.offsets[n]) + 12, int(idx.lengths[n]))) for n in (2, 7)
        ]
    out = tmp_path / "f.jsonl"
    assert export_jsonl(iter(items), out).written == 2
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [d["record"] for d in lines] == [2, 7]
    assert lines[0]["features"]["image/object/class/text"]["values"] == ["raccoon"]
    assert lines[0]["offset"] == items[0][1] and lines[0]["length"] == len(items[0][2])


def test_export_images_with_and_without_boxes(tmp_path):
    with open_source(RACCOON) as src:
        idx = index_source(src)
        data = src.read(int(idx.offsets[0]) + 12, int(idx.lengths[0]))
    plain = export_images(iter([(0, data)]), tmp_path / "plain", with_overlays=False)
    boxed = export_images(iter([(0, data)]), tmp_path / "boxed", with_overlays=True)
    assert plain.written == boxed.written == 1
    a = np.asarray(Image.open(tmp_path / "plain" / "record-0.png").convert("RGB")).astype(int)
    b = np.asarray(Image.open(tmp_path / "boxed" / "record-0.png").convert("RGB")).astype(int)
    assert a.shape == b.shape == (315, 639, 3)
    # the box's left edge (x = 142) is drawn over the photo; far from the box nothing changed
    assert np.abs(a[150, 141:144] - b[150, 141:144]).sum() > 100
    assert np.abs(a[300, 600] - b[300, 600]).sum() == 0


def test_draw_overlay_pure_function():
    px = np.zeros((50, 80, 3), np.uint8)
    im = draw_overlay(px, Overlay(None, (Box(10, 10, 40, 30, 0, 1, "cat"),)), labels=False)
    arr = np.asarray(im)
    assert arr[20, 10].any() and not arr[45, 70].any()


def test_export_images_skips_undecodable(tmp_path):
    from tests.core.test_payload import make_example

    bad = make_example(**{"image/encoded": [b"\xff\xd8\xff\xe0" + bytes(40)]})
    res = export_images(iter([(3, bad)]), tmp_path / "imgs")
    assert res.written == 0 and res.skipped == 1 and "record 3" in res.notes[0]


def test_records_that_are_bare_images_are_images(tmp_path):
    """A TFRecord of JPEG bytes, no Example (issue 9): shown and exported as images."""
    import io

    from PIL import Image

    from tfrview.core.records.images import find_images, image_features
    from tfrview.core.records.payload import decode
    from tfrview.core.records.thumbs import make_thumbnail

    buf = io.BytesIO()
    Image.new("RGB", (64, 48), "blue").save(buf, "JPEG")
    p = decode(buf.getvalue())
    (ref,) = find_images(image_features(p))
    assert ref.detail == "JPEG"
    assert make_thumbnail(buf.getvalue(), 32).pixels is not None
    res = export_images(iter([(0, buf.getvalue()), (1, b"just text")]), tmp_path / "imgs")
    assert res.written == 1 and res.skipped == 1 and res.notes == ("record 1: no image (bytes)",)


def test_a_killed_writers_temporary_is_removed_and_a_live_ones_is_not(tmp_path):
    """Every temporary beside an output (a file or a folder) names its writer's process: the next
    write to that output removes the ones whose writer is gone, and leaves one still being written."""
    import os
    import subprocess
    import sys

    from tfrview.core.output.atomic import PARTIAL, clean_stale, new_temp_dir, new_temp_file

    out = tmp_path / "out.tfrecord"
    killed = (
        "import os, sys; from pathlib import Path; from tfrview.core.output.writer import RecordWriter;"
        "from tfrview.core.output.atomic import new_temp_dir;"
        "w = RecordWriter(Path(sys.argv[1])); w.write(b'x'); new_temp_dir(Path(sys.argv[1]));"
        "os.kill(os.getpid(), 9)"
    )
    gone = subprocess.run([sys.executable, "-c", killed, str(out)], check=False)
    assert gone.returncode == -9
    stale = list(tmp_path.glob(f".out.tfrecord.*{PARTIAL}"))
    assert sorted(p.is_dir() for p in stale) == [False, True]  # a file and a folder, left
    fd, live = new_temp_file(out)  # this process is writing it
    os.close(fd)
    live_dir = new_temp_dir(out)
    other = tmp_path / "other.tfrecord"
    fd, not_mine = new_temp_file(other)  # another output's temporary
    os.close(fd)
    export_records([b"a", b"b"], out)  # the next write to `out` cleans beside it
    assert sorted(tmp_path.glob(f"*{PARTIAL}")) == sorted([live, live_dir, not_mine])
    with open_source(out) as src:
        assert read_all(src, verify_source(src)[0]) == [b"a", b"b"]
    assert clean_stale(out) == []  # nothing stale left; the live ones stay
    assert live.exists() and live_dir.is_dir()
    assert os.listdir(live_dir) == []  # the pid is in the name: nothing inside but what is written
    from tfrview.core.output.atomic import atomic_dir

    with atomic_dir(tmp_path / "folder") as d:
        (d / "a.txt").write_text("a")
    assert os.listdir(tmp_path / "folder") == ["a.txt"]  # no bookkeeping file renamed with it
