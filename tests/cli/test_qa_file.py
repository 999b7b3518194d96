"""The QA target of issue 12: a file with every planted box and image problem beside clean records,
through `verify --checks --json`: each planted problem found on its record, no finding on a clean
one. The file is made here (no data to ship)."""

from __future__ import annotations

import io
import json
import random
import subprocess
import sys

import numpy as np
from PIL import Image

from tfrview.core.output.writer import write_records
from tfrview.demo import _example

LABELS = {1: "cat", 2: "dog"}


def _jpeg(seed: int, w: int = 64, h: int = 48) -> bytes:
    rnd = np.random.default_rng(seed)  # every clean image its own: no duplicate by accident
    buf = io.BytesIO()
    Image.fromarray(rnd.integers(0, 255, (h, w, 3), dtype=np.uint8)).save(buf, "JPEG", quality=85)
    return buf.getvalue()


def _record(image: bytes, boxes=((0.1, 0.1, 0.5, 0.6),), size=(64, 48), labels=None, **more) -> bytes:
    labels = labels or [1 + i % 2 for i in range(len(boxes))]
    feats = {
        "image/encoded": image,
        "image/format": "jpeg",
        "image/width": size[0],
        "image/height": size[1],
        "image/object/bbox/xmin": [b[0] for b in boxes],
        "image/object/bbox/ymin": [b[1] for b in boxes],
        "image/object/bbox/xmax": [b[2] for b in boxes],
        "image/object/bbox/ymax": [b[3] for b in boxes],
        "image/object/class/label": labels,
        "image/object/class/text": [LABELS[i] for i in labels],
        **more,
    }
    return _example(**feats).SerializeToString()


def _planted() -> dict[str, tuple[bytes, set[str]]]:
    """name -> (record, the problem kinds it must raise)."""
    jpeg = _jpeg(1000)
    cut = _jpeg(1001)
    zeroed = bytearray(_jpeg(1002))
    zeroed[200:] = bytes(len(zeroed) - 200)  # the blocks after the header lost: zeros
    nan = float("nan")
    return {
        "out of range": (_record(_jpeg(1003), boxes=((0.6, 0.5, 1.3, 0.9),)), {"box_out_of_bounds"}),
        "inverted": (_record(_jpeg(1004), boxes=((0.5, 0.1, 0.2, 0.4),)), {"box_inverted"}),
        "zero area": (_record(_jpeg(1005), boxes=((0.2, 0.1, 0.2, 0.4),)), {"box_zero_area"}),
        "nan box": (_record(_jpeg(1006), boxes=((nan, 0.1, 0.5, 0.4),)), {"nan_or_inf"}),
        "list lengths": (
            _record(_jpeg(1007), **{"image/object/bbox/ymax": [0.6, 0.7]}),
            {"box_list_lengths"},
        ),
        "truncated image": (_record(cut[: len(cut) // 2]), {"image_undecodable"}),
        "zeroed image": (_record(bytes(zeroed)), {"image_undecodable"}),
        "random image": (_record(random.Random(5).randbytes(3000)), {"image_not_an_image"}),
        "empty image": (_record(b""), {"image_not_an_image"}),
        "size mismatch": (_record(_jpeg(1008), size=(100, 80)), {"image_size_mismatch"}),
        "duplicate a": (_record(jpeg), set()),
        "duplicate b": (_record(jpeg), {"duplicate_image"}),
    }


def test_every_planted_problem_is_found_and_no_clean_record_is_flagged(tmp_path):
    planted = _planted()
    clean = [_record(_jpeg(i), boxes=((0.1, 0.1, 0.4, 0.5), (0.5, 0.4, 0.9, 0.95))) for i in range(40)]
    names = list(planted)
    recs = clean[:20] + [planted[n][0] for n in names] + clean[20:]
    path = tmp_path / "qa.tfrecord"
    write_records(path, recs)
    lm = tmp_path / "label_map.pbtxt"
    lm.write_text("".join(f"item {{ id: {i} name: '{n}' }}\n" for i, n in LABELS.items()))
    r = subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--checks", "--json", "--label-map", str(lm), str(path)],
        capture_output=True,
        text=True,
    )
    assert r.returncode in (0, 1), r.stderr
    found: dict[int, set[str]] = {}
    for p in json.loads(r.stdout)["files"][0]["problems"]:
        found.setdefault(p["record"], set()).add(p["kind"])
    for k, name in enumerate(names):
        want = planted[name][1]
        assert found.get(20 + k, set()) == want, (name, found.get(20 + k))
    flagged_clean = {n: kinds for n, kinds in found.items() if n < 20 or n >= 20 + len(names)}
    assert flagged_clean == {}  # no false alarm on the 40 clean records
