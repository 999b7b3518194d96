"""TFDS prepared directories built for tests: `<data_dir>/<name>/<version>/` with a
`dataset_info.json` of the shape TFDS writes (its `DatasetInfo` proto as camelCase JSON, int64s as
strings, `schema`, `location`, per-split `statistics`: the shape of tensorflow/datasets'
`testing/test_data/dataset_info/mnist/3.0.1/dataset_info.json`, Apache-2.0; no file copied) and
shards written by tfrview's own writer."""

from __future__ import annotations

import json
from pathlib import Path

from tfrview.core.output.writer import write_records
from tfrview.demo import _example


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
    (root / "features.json").write_text(json.dumps({"pythonClassName": "x.FeaturesDict"}))
    return root
