"""The words of the exports to training formats and of the COCO re-import (vocabularies with one
home, light to import: the CLI's parser names them before any export is loaded)."""

from __future__ import annotations

from enum import StrEnum


class ExportFormat(StrEnum):
    """A training or annotation format an export writes (the window's menu and the CLI's flags)."""

    COCO = "coco"
    YOLO = "yolo"
    VOC = "voc"
    HF_PARQUET = "hf_parquet"
    WEBDATASET = "webdataset"

    @property
    def words(self) -> str:
        return _WORDS[self]

    @property
    def tip(self) -> str:
        """What the export writes, in a few words (the window's menu tip)."""
        return _TIPS[self]

    @property
    def is_file(self) -> bool:
        """One file (else a directory)."""
        return self is ExportFormat.HF_PARQUET


_WORDS = {
    ExportFormat.COCO: "COCO (instances JSON + images)",
    ExportFormat.YOLO: "YOLO (Ultralytics layout, data.yaml)",
    ExportFormat.VOC: "Pascal VOC (XML + JPEGImages)",
    ExportFormat.HF_PARQUET: "Hugging Face Parquet (typed image and class names)",
    ExportFormat.WEBDATASET: "WebDataset (tar shards)",
}
_TIPS = {
    ExportFormat.COCO: "images/{split}/ and annotations/instances_{split}.json, boxes in pixels [x, y, w, h]",
    ExportFormat.YOLO: "images/, labels/ (class cx cy w h) and data.yaml, for Ultralytics",
    ExportFormat.VOC: "Annotations/*.xml, JPEGImages/, ImageSets/Main/",
    ExportFormat.HF_PARQUET: "one Parquet file: load_dataset('parquet', ...) shows the images and class names",
    ExportFormat.WEBDATASET: "tar shards of 1,000 records: key.jpg, key.json, key.cls",
}


class JoinBy(StrEnum):
    """What joins a COCO image to a record."""

    FILENAME = "filename"
    SOURCE_ID = "source_id"
