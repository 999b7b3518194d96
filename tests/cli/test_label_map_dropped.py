"""Issue 18.6: a label map beside the data that is not used is said once, with its reason, and
the checks that name classes with it say nothing (not "not using" and "the label map does not
name" together)."""

from __future__ import annotations

import subprocess
import sys

from tests import segdata


def _verify(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "tfrview", "verify", "--checks", *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_a_label_map_not_used_is_said_once_with_its_reason(tmp_path):
    path = segdata.build(tmp_path / "d", labels=[5, 6, 7, 1])  # the map names 1 of the 4 labels
    r = _verify(str(path))
    said = [line for line in r.stderr.splitlines() if "labels.pbtxt" in line]
    assert said == [
        f"not using {tmp_path / 'd' / 'labels.pbtxt'} found beside the data: it names 1 of the 4 "
        "class ids the data holds (not 5, 6, 7) (--label-map uses it anyway)"
    ]
    assert "mask_class_not_in_map" not in r.stdout and "label_not_in_map" not in r.stdout
    assert "mask_size_mismatch" in r.stdout  # the checks that need no label map still speak
    given = _verify("--label-map", str(tmp_path / "d" / "labels.pbtxt"), str(path))
    assert "mask_class_not_in_map" in given.stdout and "not using" not in given.stderr  # asked for: used
