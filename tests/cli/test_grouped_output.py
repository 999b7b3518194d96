"""verify --checks text folds repeated findings into one line with their count (issue 12);
--json keeps every problem."""

from __future__ import annotations

import json
import subprocess
import sys

from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def test_repeats_are_one_line_in_text_and_every_one_in_json(tmp_path):
    recs = [_example(**{"image/encoded": b"img_%03d.jpg" % i, "image/format": "jpeg"}).SerializeToString()
            for i in range(12)]  # fmt: skip
    path = tmp_path / "names.tfrecord"
    write_records(path, recs)
    text = subprocess.run([sys.executable, "-m", "tfrview", "verify", "--checks", str(path)],
                          capture_output=True, text=True).stdout  # fmt: skip
    lines = [ln for ln in text.splitlines() if "image_not_an_image" in ln]
    assert len(lines) == 1 and "×12" in lines[0] and "(records 0, 1, 2, 3, 4, 5, 6, 7, …)" in lines[0], text
    out = subprocess.run([sys.executable, "-m", "tfrview", "verify", "--checks", "--json", str(path)],
                         capture_output=True, text=True).stdout  # fmt: skip
    kinds = [p["kind"] for p in json.loads(out)["files"][0]["problems"]]
    assert kinds.count("image_not_an_image") == 12
