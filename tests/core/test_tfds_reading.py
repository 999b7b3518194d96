"""The reading of a TFDS dataset's records by what its features.json declares (issue 22): boxes of a
BBoxFeature read as normalised [ymin, xmin, ymax, xmax] with their ClassLabel's names, the record
label named, Tensors decoded to arrays of their shape, per-step RLDS values."""

from __future__ import annotations

import json
import pickle
import zlib
from pathlib import Path

import numpy as np

from tests import tfdsdata as td
from tests.helpers import payloads_of
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.payload import decode
from tfrview.core.records.reading import BoxConvention, ReadingContext, read_record
from tfrview.core.records.tfdsvalues import declared
from tfrview.core.tfds.features import features_of_folder, parse_features


def _records(d: Path) -> list:
    return [decode(p) for p in payloads_of(next(d.glob("*.tfrecord-*")))]


def test_boxes_and_labels_are_read_as_the_features_declare(tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    ctx = ReadingContext(tfds=features_of_folder(d))
    r = read_record(_records(d)[1], ctx)
    assert r.spec.convention == BoxConvention.TFDS_YXYX
    assert (r.spec.keys, r.spec.class_id) == (("objects/bbox",), "objects/label")
    np.testing.assert_allclose(r.normalized, [[0.25, 0.25, 0.75, 0.75], [0.05, 0.1, 0.5, 0.3]], rtol=1e-6)
    assert [r.box_name(i) for i in range(2)] == ["car", "person"]  # objects-label.labels.txt
    assert r.caption == "label: 1 (dog)"  # label.labels.txt
    assert r.class_counts == {"car": 1, "person": 1}
    assert r.class_zero_key is None  # a ClassLabel counts from 0: no background id
    ov = compute_overlay(_records(d)[1].features, 96, 64, tfds=ctx.tfds)
    assert [(round(b.x0), round(b.y0), round(b.x1), round(b.y1), b.label) for b in ov.boxes] == [
        (24, 16, 72, 48, "car"),
        (5, 6, 48, 19, "person"),
    ]
    # without the features: the same values are guessed and the ids stay numbers
    plain = read_record(_records(d)[1])
    assert plain.caption == "label: 1" and plain.class_counts == {"id 0": 1, "id 1": 1}


def test_a_box_key_no_name_rule_finds_is_found_by_its_feature(tmp_path: Path) -> None:
    feats = td.fdict(
        image=td.image([-1, -1, 3]), regions=td.sequence(td.fdict(where=td.bbox(), kind=td.class_label(2)))
    )
    f = parse_features(json.dumps(feats))
    from tfrview.demo import _example

    p = decode(_example(**{"regions/where": [0.1, 0.2, 0.3, 0.4], "regions/kind": [1]}).SerializeToString())
    assert read_record(p).spec is None  # `where` names no box rule
    r = read_record(p, ReadingContext(tfds=f))
    assert r.spec.keys == ("regions/where",) and r.spec.class_id == "regions/kind"
    np.testing.assert_allclose(r.boxes, [[0.2, 0.1, 0.4, 0.3]], rtol=1e-6)


def test_tensors_are_decoded_to_their_declared_shape(tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    tfds = features_of_folder(d)
    got = declared(tfds, _records(d)[2].features)
    np.testing.assert_array_equal(got["depth"].array, td.DEPTH + 2)
    assert got["depth"].array.shape == (2, 3) and got["depth"].text == "Tensor float32 [2x3] zlib"
    np.testing.assert_array_equal(got["embedding"].array, [1, 2, 3, 2])
    assert got["label"].value == "2 (bird)"
    assert got["objects/label"].value == "1 (car), 1 (car)"
    assert got["objects/area"].array.tolist() == [100, 20]
    assert "image" in got and got["image"].value is None
    bad = dict(_records(d)[0].features)
    from tfrview.core.records.feature import BYTES_LIST, Feature

    bad["depth"] = Feature(BYTES_LIST, [zlib.compress(b"\0" * 12)])
    assert declared(tfds, bad)["depth"].error == "3 values where the shape [2, 3] needs 6"
    bad["depth"] = Feature(BYTES_LIST, [b"not zlib"])
    assert declared(tfds, bad)["depth"].error.startswith("zlib data does not inflate")


def test_rlds_steps_are_per_step_arrays(tmp_path: Path) -> None:
    d = td.rlds(tmp_path / "r", steps=5)
    tfds = features_of_folder(d)
    got = declared(tfds, _records(d)[0].features)
    assert got["steps/action"].array.shape == (5, 7)
    assert got["steps/is_first"].array.tolist() == [True, False, False, False, False]
    assert got["steps/observation/image"].text == "Image 64x64x3 uint8 png, one a step"


def test_a_context_with_features_pickles(tmp_path: Path) -> None:
    d = td.detection(tmp_path / "v")
    ctx = ReadingContext(tfds=features_of_folder(d))
    back = pickle.loads(pickle.dumps(ctx))
    assert read_record(_records(d)[0], back).caption == "label: 0 (cat)"


def test_a_colormap_image_is_a_mask(tmp_path: Path) -> None:
    """An Image declared with `use_colormap` (a segmentation map) is the record's mask whatever its
    key, drawn over the image in class colours; its LabeledImage names come with it."""
    from tfrview.core.records.masks import is_mask_key, mask_overlay
    from tfrview.demo import _example

    seg = td.image([-1, -1, 1], "png", colormap=True)
    seg["image"]["label"] = {"numClasses": "3", "names": ["sky", "road", "car"]}
    f = parse_features(json.dumps(td.fdict(image=td.image([-1, -1, 3], "png"), layout=seg)))
    m = np.zeros((24, 32), np.uint8)
    m[12:, :] = 1
    m[14:20, 4:10] = 2
    p = decode(_example(image=td.png(np.zeros((24, 32, 3), np.uint8)), layout=td.png(m)).SerializeToString())
    assert read_record(p).mask_keys == ()
    r = read_record(p, ReadingContext(tfds=f))
    assert r.mask_keys == ("layout",)
    assert is_mask_key("layout", p.features, f) and not is_mask_key("layout", p.features)
    ov = mask_overlay(p.features, 32, 24, tfds=f)
    assert ov.key == "layout" and dict(ov.classes) == {1: 32 * 12 - 36, 2: 36}
    assert f.flat["layout"].spec.label.names == ("sky", "road", "car")
    assert f.flat["layout"].text == "Image ?x?x1 uint8 png segmentation (use_colormap) 3 classes"


def test_a_step_of_an_rlds_episode_is_read_as_one_example(tmp_path: Path) -> None:
    from tfrview.core.records.frames import step_features, step_image_keys

    d = td.rlds(tmp_path / "r", steps=5)
    tfds = features_of_folder(d)
    p = _records(d)[1]
    assert step_image_keys(p.features, tfds) == ["steps/observation/image"]
    assert step_image_keys(p.features, None) == []
    s = step_features(p.features, tfds, 2)
    np.testing.assert_allclose(s["steps/action"].values, np.arange(14, 21) / 10, rtol=1e-6)
    assert s["steps/observation/image"].values == [p.features["steps/observation/image"].values[2]]
    assert s["steps/is_first"].values.tolist() == [0]
    assert s["episode_metadata/file_path"].values == [b"/data/episode_1.h5"]  # outside the steps: as it is
    assert "steps/action" not in step_features(p.features, tfds, 5)  # past the last step: nothing


def test_items_of_a_sequence_are_cut_by_their_spec(tmp_path: Path) -> None:
    from tfrview.core.records.frames import step_features

    d = td.detection(tmp_path / "v")
    tfds = features_of_folder(d)
    s = step_features(_records(d)[1].features, tfds, 1)
    np.testing.assert_allclose(s["objects/bbox"].values, [0.1, 0.05, 0.3, 0.5], rtol=1e-6)
    assert s["objects/label"].values.tolist() == [0] and s["objects/area"].values.tolist() == [20]
    assert s["label"].values.tolist() == [1]


def test_a_video_is_frames() -> None:
    from tfrview.core.records.frames import step_features, step_image_keys
    from tfrview.demo import _example

    video = {
        "pythonClassName": td.F + "video_feature.Video",
        "video": {
            "shape": {"dimensions": ["-1", "16", "16", "3"]},
            "dtype": "uint8",
            "encodingFormat": "png",
        },
    }
    f = parse_features(json.dumps(td.fdict(clip=video, label=td.class_label(2))))
    assert f.flat["clip"].text == "Video ?x16x16x3 uint8 png frames"
    frames = [td.png(np.full((16, 16, 3), 40 * t, np.uint8)) for t in range(3)]
    p = decode(_example(clip=frames, label=1).SerializeToString())
    assert step_image_keys(p.features, f) == ["clip"]
    assert step_features(p.features, f, 2)["label"].values.tolist() == [1]


def test_a_thumbnail_names_its_boxes_by_the_features(tmp_path: Path) -> None:
    from tfrview.core.records.thumbs import make_thumbnail

    d = td.detection(tmp_path / "v")
    data = payloads_of(next(d.glob("*.tfrecord-*")))[1]
    named = make_thumbnail(data, 96, tfds=features_of_folder(d))
    assert "car" in named.caption and "person" in named.caption and "label: 1 (dog)" in named.caption
    assert "car" not in make_thumbnail(data, 96).caption
