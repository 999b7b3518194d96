"""TFDS prepared directories built in the test, as TFDS writes them: `features.json` in the shape of
its `Feature` proto as JSON (pythonClassName, camelCase content, int64 numbers as strings),
`<name>.labels.txt` beside it (nested names joined with `-`), and shards named
`{name}-{split}.tfrecord-NNNNN-of-NNNNN` holding the Examples TFDS's serializer writes (nested keys
joined with `/`, a Sequence's items concatenated). Written with tfrview's own writer; no TFDS."""

from __future__ import annotations

import io
import json
import zlib
from pathlib import Path

import numpy as np
from PIL import Image as PILImage

from tfrview.core.output.writer import write_records
from tfrview.demo import _example

F = "tensorflow_datasets.core.features."


def image(shape, encoding="jpeg", colormap=False) -> dict:
    content = {"shape": {"dimensions": [str(d) for d in shape]}, "dtype": "uint8", "encodingFormat": encoding}
    if colormap:
        content["useColormap"] = True
    return {"pythonClassName": F + "image_feature.Image", "image": content}


def class_label(n: int) -> dict:
    return {"pythonClassName": F + "class_label_feature.ClassLabel", "classLabel": {"numClasses": str(n)}}


def tensor(shape, dtype="float32", encoding="none", scalar=False) -> dict:
    cls = "scalar.Scalar" if scalar else "tensor_feature.Tensor"
    dims = {"dimensions": [str(d) for d in shape]} if shape else {}
    return {"pythonClassName": F + cls, "tensor": {"shape": dims, "dtype": dtype, "encoding": encoding}}


def text() -> dict:
    return {"pythonClassName": F + "text_feature.Text", "text": {}, "description": "free text"}


def bbox() -> dict:
    return {
        "pythonClassName": F + "bounding_boxes.BBoxFeature",
        "boundingBox": {"shape": {"dimensions": ["4"]}, "dtype": "float32"},
    }


def fdict(**features) -> dict:
    return {"pythonClassName": F + "features_dict.FeaturesDict", "featuresDict": {"features": features}}


def sequence(item: dict, dataset=False, length=-1) -> dict:
    cls = "dataset_feature.Dataset" if dataset else "sequence_feature.Sequence"
    return {"pythonClassName": F + cls, "sequence": {"feature": item, "length": str(length)}}


def jpeg(w=96, h=64, colour=(200, 80, 40)) -> bytes:
    a = np.zeros((h, w, 3), np.uint8)
    a[:] = (30, 60, 90)
    a[h // 4 : 3 * h // 4, w // 4 : 3 * w // 4] = colour
    b = io.BytesIO()
    PILImage.fromarray(a).save(b, "JPEG")
    return b.getvalue()


def png(a: np.ndarray) -> bytes:
    b = io.BytesIO()
    PILImage.fromarray(a).save(b, "PNG")
    return b.getvalue()


DEPTH = np.arange(6, dtype=np.float32).reshape(2, 3) / 4


def detection(d: Path, records: int = 4, features: dict | None = None) -> Path:
    """A detection dataset (`tfds.features` of COCO's kind): image, a record label, objects with
    boxes in normalised [ymin, xmin, ymax, xmax] and their classes, a zlib Tensor and a bytes one.
    Returns the version directory."""
    d.mkdir(parents=True, exist_ok=True)
    feats = features or fdict(
        image=image([-1, -1, 3]),
        label=class_label(3),
        objects=sequence(fdict(bbox=bbox(), label=class_label(3), area=tensor([], "int64"))),
        depth=tensor([2, 3], "float32", "zlib"),
        embedding=tensor([4], "float32", "bytes"),
        caption=text(),
    )
    (d / "features.json").write_text(json.dumps(feats, indent=4))
    (d / "label.labels.txt").write_text("cat\ndog\nbird\n")
    (d / "objects-label.labels.txt").write_text("person\ncar\ntree\n")
    recs = []
    for i in range(records):
        recs.append(
            _example(
                image=jpeg(),
                label=i % 3,
                **{
                    "objects/bbox": [0.25, 0.25, 0.75, 0.75, 0.1, 0.05, 0.3, 0.5],
                    "objects/label": [1, (i + 2) % 3],
                    "objects/area": [100, 20],
                    "depth": zlib.compress((DEPTH + i).tobytes()),
                    "embedding": np.array([1, 2, 3, i], np.float32).tobytes(),
                    "caption": f"record {i}",
                },
            ).SerializeToString()
        )
    write_records(d / "demo-train.tfrecord-00000-of-00001", recs)
    return d


def rlds(d: Path, episodes: int = 2, steps: int = 5) -> Path:
    """An RLDS robotics dataset (Open X-Embodiment's shape): `steps` a tfds Dataset of observation
    image and state, action, flags and an instruction; `episode_metadata/file_path`."""
    d.mkdir(parents=True, exist_ok=True)
    feats = fdict(
        steps=sequence(
            fdict(
                observation=fdict(image=image([64, 64, 3], "png"), state=tensor([3], "float32")),
                action=tensor([7], "float32"),
                is_first=tensor([], "bool", scalar=True),
                reward=tensor([], "float32", scalar=True),
                language_instruction=text(),
            ),
            dataset=True,
        ),
        episode_metadata=fdict(file_path=text()),
    )
    (d / "features.json").write_text(json.dumps(feats, indent=4))
    recs = []
    for e in range(episodes):
        frames = []
        for t in range(steps):
            a = np.zeros((64, 64, 3), np.uint8)
            a[:, : 8 + 10 * t] = (40 * t, 100, 200)
            frames.append(png(a))
        recs.append(
            _example(
                **{
                    "steps/observation/image": frames,
                    "steps/observation/state": [float(x) for x in range(steps * 3)],
                    "steps/action": [float(t) / 10 for t in range(steps * 7)],
                    "steps/is_first": [1] + [0] * (steps - 1),
                    "steps/reward": [0.0] * (steps - 1) + [1.0],
                    "steps/language_instruction": ["pick the block"] * steps,
                    "episode_metadata/file_path": f"/data/episode_{e}.h5",
                }
            ).SerializeToString()
        )
    write_records(d / "robot-train.tfrecord-00000-of-00001", recs)
    return d


# --- `dataset_info.json` and a whole `<data_dir>/<name>/<version>/` folder: the shape of
# tensorflow/datasets' `testing/test_data/dataset_info/mnist/3.0.1/dataset_info.json`
# (Apache-2.0; no file copied): its `DatasetInfo` proto as camelCase JSON, int64s as strings.


def info_doc(name: str, version: str, lengths: dict[str, list[int]], file_format: str = "tfrecord") -> dict:
    """A dataset_info.json document as TFDS writes it."""
    return {
        "citation": "@article{x,\n  title={A test},\n  year={2026}\n}\n",
        "description": f"The {name} test dataset.\nSecond line.",
        "location": {"urls": ["https://example.invalid/"]},
        "name": name,
        "schema": {"feature": [{"name": "image", "type": "INT"}, {"name": "label", "type": "INT"}]},
        "downloadSize": "2000",
        "fileFormat": file_format,
        "splits": [
            {
                "filepathTemplate": "{DATASET}-{SPLIT}.{FILEFORMAT}-{SHARD_X_OF_Y}",
                "name": split,
                "numBytes": str(100 * sum(ls)),
                "shardLengths": [str(n) for n in ls],
                "statistics": {"numExamples": str(sum(ls)), "features": [{"name": "label"}]},
            }
            for split, ls in lengths.items()
        ],
        "supervisedKeys": {"tuple": {"items": [{"featureKey": "image"}, {"featureKey": "label"}]}},
        "version": version,
        "moduleName": f"tensorflow_datasets.{name}",
    }


def make_tfds(
    data_dir: Path,
    name: str = "mnist",
    version: str = "3.0.1",
    lengths: dict[str, list[int]] | None = None,
    held: dict[str, list[int]] | None = None,
) -> Path:
    """The version folder of a TFDS dataset whose shards hold `held` records (default: what
    `lengths`, the metadata's shardLengths, says)."""
    lengths = lengths or {"train": [3, 4, 2], "test": [2]}
    held = held or lengths
    root = data_dir / name / version
    root.mkdir(parents=True)
    for split, ls in held.items():
        for i, n in enumerate(ls):
            recs = [_example(label=k % 3, text=f"{split}{i}-{k}").SerializeToString() for k in range(n)]
            write_records(root / f"{name}-{split}.tfrecord-{i:05d}-of-{len(ls):05d}", recs)
    (root / "dataset_info.json").write_text(json.dumps(info_doc(name, version, lengths), indent=2))
    (root / "features.json").write_text(json.dumps(fdict(text=text(), label=class_label(3))))
    return root
