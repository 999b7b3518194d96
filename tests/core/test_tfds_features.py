"""features.json read strictly as data (core/tfds/features.py): TFDS's JSON shape, the allow-list,
labels files beside it, the limits, and a class outside the allow-list never imported (issue 22)."""

from __future__ import annotations

import json
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from tests import tfdsdata as td
from tfrview.core.limits import MAX_TFDS_FEATURE_DEPTH, MAX_TFDS_FEATURES
from tfrview.core.tfds.features import (
    BBoxFeature,
    ClassLabel,
    FeatureError,
    FeaturesDict,
    Image,
    Sequence,
    Tensor,
    UnknownFeature,
    features_of_folder,
    load_features,
    parse_features,
)

ROOT = Path(__file__).resolve().parents[2]


def test_a_detection_dataset_is_read_as_tfds_writes_it(tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    f = load_features(d / "features.json")
    assert f.error is None and f.notes == ()
    assert isinstance(f.root, FeaturesDict)
    assert list(f.flat) == [
        "image",
        "label",
        "objects/bbox",
        "objects/label",
        "objects/area",
        "depth",
        "embedding",
        "caption",
    ]
    assert f.flat["label"].spec == ClassLabel(
        class_name=td.F + "class_label_feature.ClassLabel",
        num_classes=3,
        names=("cat", "dog", "bird"),
        names_from="label.labels.txt",
    )
    # nested ClassLabel names come from `objects-label.labels.txt`, as TFDS names the file
    assert f.label_maps["objects/label"] == {0: "person", 1: "car", 2: "tree"}
    assert f.flat["objects/bbox"].sequences == ("objects",)
    assert isinstance(f.flat["objects/bbox"].spec, BBoxFeature)
    assert f.boxes == (("objects/bbox", "objects/label"),)
    assert f.record_labels == ("label",)
    depth = f.flat["depth"].spec
    assert isinstance(depth, Tensor) and (depth.shape, depth.dtype, depth.encoding) == (
        (2, 3),
        "float32",
        "zlib",
    )
    img = f.flat["image"].spec
    assert isinstance(img, Image) and (img.shape, img.encoding) == ((None, None, 3), "jpeg")
    assert f.flat["depth"].text == "Tensor float32 [2x3] zlib"
    assert f.flat["objects/label"].text == (
        "ClassLabel, 3 classes, names (objects-label.labels.txt), one an item of objects"
    )
    # plain data: it pickles into the pool's tasks and keeps its answers
    g = pickle.loads(pickle.dumps(f))
    assert g.flat == f.flat and g.boxes == f.boxes and g.label_maps == f.label_maps


def test_rlds_steps_are_per_step_keys(tmp_path: Path) -> None:
    f = features_of_folder(td.rlds(tmp_path / "r"))
    assert f is not None and f.error is None
    step = f.flat["steps/observation/image"]
    assert step.steps and step.sequences == ("steps",)
    assert step.text == "Image 64x64x3 uint8 png, one a step"
    assert f.flat["steps/is_first"].text == "Scalar bool [scalar], one a step"
    assert not f.flat["episode_metadata/file_path"].steps
    assert isinstance(f.root, FeaturesDict)
    assert isinstance(dict(f.root.features)["steps"], Sequence) and dict(f.root.features)["steps"].dataset


def test_inline_names_colormap_and_ragged_keys() -> None:
    seg = td.image([-1, -1, 1], "png", colormap=True)
    lab = td.class_label(2)
    lab["classLabel"]["names"] = ["background", "road"]
    nested = td.sequence(td.sequence(td.tensor([], "int64")))
    f = parse_features(json.dumps(td.fdict(mask=seg, kind=lab, tokens=nested)))
    assert f.flat["mask"].spec.use_colormap and "segmentation (use_colormap)" in f.flat["mask"].text
    assert f.label_maps["kind"] == {0: "background", 1: "road"}
    assert f.lookup("tokens/ragged_flat_values") is f.flat["tokens"]
    assert f.lookup("tokens/ragged_row_lengths_0") is f.flat["tokens"]


def test_a_feature_without_a_class_name_is_read_by_its_content() -> None:
    f = parse_features(
        json.dumps({"featuresDict": {"features": {"x": {"tensor": {"shape": {}, "dtype": "int64"}}}}})
    )
    assert isinstance(f.flat["x"].spec, Tensor)


def test_a_known_name_with_other_content_is_unknown_not_guessed() -> None:
    odd = {"pythonClassName": td.F + "image_feature.Image", "tensor": {"dtype": "uint8"}}
    f = parse_features(json.dumps(td.fdict(x=odd)))
    assert isinstance(f.flat["x"].spec, UnknownFeature) and f.flat["x"].spec.content == "tensor"


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("{not json", "not JSON"),
        ("[1, 2]", "a JSON list, not an object"),
        ('{"a": 1}', "not TFDS features"),
        ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
        (json.dumps(td.fdict(x=td.fdict(y="nope"))), "feature 'x-y' is a str"),
    ],
)
def test_bad_features_json_is_one_line(text: str, words: str) -> None:
    with pytest.raises(FeatureError) as exc:
        parse_features(text)
    msg = str(exc.value)
    assert words in msg and "\n" not in msg and msg.startswith("features.json: ")


def test_limits_on_nesting_and_count_are_named() -> None:
    deep: dict = td.tensor([])
    for _ in range(MAX_TFDS_FEATURE_DEPTH + 1):
        deep = td.fdict(a=deep)
    with pytest.raises(FeatureError, match=r"limits\.MAX_TFDS_FEATURE_DEPTH"):
        parse_features(json.dumps(deep))
    many = td.fdict(**{f"k{i}": td.text() for i in range(MAX_TFDS_FEATURES + 1)})
    with pytest.raises(FeatureError, match=r"limits\.MAX_TFDS_FEATURES\)"):
        parse_features(json.dumps(many))


def test_a_bad_file_in_a_folder_is_said_not_raised(tmp_path: Path) -> None:
    assert features_of_folder(tmp_path) is None  # no features.json: nothing to say
    (tmp_path / "features.json").write_text("{oops")
    f = features_of_folder(tmp_path)
    assert f is not None and f.root is None and f.error.startswith("features.json: not JSON")
    (tmp_path / "features.json").write_text(json.dumps(td.fdict(label=td.class_label(3))))
    (tmp_path / "label.labels.txt").write_text("a\n\nb\n")  # blank lines skipped, as TFDS does
    f = features_of_folder(tmp_path)  # a changed file is loaded again
    assert f.error is None and f.label_maps["label"] == {0: "a", 1: "b"}
    assert f.notes == ("label.labels.txt: 2 names for the 3 classes features.json declares",)


EVIL = """
from pathlib import Path
Path({marker!r}).write_text("imported")

class Evil:
    def __init__(self, *a, **k):
        Path({marker!r}).write_text("constructed")
"""


def _plant(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A TFDS dir whose features.json names `evil_module.Evil` (top level and one feature), and an
    `evil_module.py` that writes a marker file when imported."""
    marker = tmp_path / "MARKER"
    evil_dir = tmp_path / "plant"
    evil_dir.mkdir()
    (evil_dir / "evil_module.py").write_text(EVIL.format(marker=str(marker)))
    feats = td.fdict(
        image=td.image([-1, -1, 3]),
        label=td.class_label(3),
        payload={"pythonClassName": "evil_module.Evil", "featuresDict": {"features": {}}},
    )
    d = td.detection(tmp_path / "v", records=2, features=feats)
    return d, evil_dir, marker


def test_a_class_outside_the_allow_list_is_never_imported(tmp_path: Path, monkeypatch) -> None:
    d, evil_dir, marker = _plant(tmp_path)
    monkeypatch.syspath_prepend(str(evil_dir))
    f = features_of_folder(d)
    assert f.error is None
    spec = f.flat["payload"].spec
    assert isinstance(spec, UnknownFeature) and spec.class_name == "evil_module.Evil"
    assert "unknown feature class evil_module.Evil" in f.flat["payload"].text
    assert f.label_maps["label"] == {0: "cat", 1: "dog", 2: "bird"}  # the rest is read
    top = parse_features(
        json.dumps({"pythonClassName": "evil_module.Evil", "featuresDict": {"features": {}}})
    )
    assert isinstance(top.root, UnknownFeature) and "evil_module.Evil" in top.notes[0]
    assert not marker.exists()
    assert "evil_module" not in sys.modules


def test_the_cli_opens_the_planted_dataset_and_runs_nothing(tmp_path: Path) -> None:
    """The path a person takes (`tfrview dump` of a shard, its features loaded from its folder) in a
    fresh process whose sys.path holds the planted module: nothing imports it."""
    d, evil_dir, marker = _plant(tmp_path)
    env_path = f"{ROOT}:{evil_dir}"
    shard = next(d.glob("*.tfrecord-*"))
    out = subprocess.run(
        [sys.executable, "-m", "tfrview.cli", "dump", str(shard), "--records", "0:1"],
        capture_output=True,
        text=True,
        env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin", "TFRVIEW_NO_SPARE": "1"},
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert "record 0" in out.stdout
    assert not marker.exists()
