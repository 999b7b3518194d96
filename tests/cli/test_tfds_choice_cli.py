"""A TFDS folder of several configs and versions on the command line: without a choice, one line
naming every config/version and the flags that choose; --tfds-config and --tfds-version open the
one named (its newest version by default); a dataset folder of several versions opens its newest
and says which."""

from __future__ import annotations

import json

import pytest

from tests.tfdsdata import make_tfds
from tfrview.cli import main


def run(capsys, *args):
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def bridge(tmp_path):
    make_tfds(tmp_path / "bridge", name="default", version="1.0.0")
    make_tfds(tmp_path / "bridge", name="other", version="2.0.0")
    make_tfds(tmp_path / "bridge", name="other", version="2.1.0", lengths={"train": [5, 1]})
    return tmp_path / "bridge"


def test_several_configs_without_a_choice_is_one_line_listing_them(capsys, bridge) -> None:
    for cmd in ("info", "verify", "dump"):
        code, out, err = run(capsys, cmd, str(bridge))
        assert code == 2 and out == ""
        assert err.strip() == (
            f"tfrview: {bridge}: holds 2 TFDS datasets or configs (default/1.0.0, other/2.0.0, "
            "other/2.1.0): open one with --tfds-config NAME [--tfds-version V]"
        )


def test_tfds_config_and_version_choose(capsys, bridge) -> None:
    code, out, _ = run(capsys, "info", str(bridge), "--tfds-config", "other", "--json")
    doc = json.loads(out)
    assert code == 0 and [(t["name"], t["version"]) for t in doc["tfds"]] == [("other", "2.1.0")]
    code, out, _ = run(capsys, "verify", str(bridge), "--tfds-config", "other", "--tfds-version", "2.0.0")
    assert code == 0 and "other/2.0.0/other-train.tfrecord-00000-of-00003: OK" in out
    assert "total: 4 files" in out
    code, out, _ = run(capsys, "dump", str(bridge), "--tfds-config", "default", "--records", "0")
    assert code == 0 and "default/1.0.0/default-train.tfrecord-00000-of-00003" in out
    code, _, err = run(capsys, "info", str(bridge), "--tfds-config", "other", "--tfds-version", "9")
    assert code == 2 and "no TFDS version 9 (it holds 2.0.0, 2.1.0)" in err


def test_a_folder_of_several_versions_opens_the_newest_and_says_so(capsys, bridge) -> None:
    code, out, err = run(capsys, "info", str(bridge / "other"))
    assert code == 0 and "TFDS other/2.1.0" in out
    assert "opened version 2.1.0, the newest of 2.0.0, 2.1.0" in err
