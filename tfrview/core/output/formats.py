"""Exports to the formats people train and annotate with (COCO, YOLO, Pascal VOC, Hugging Face
Parquet, WebDataset): the one driver. Records become `annotated.Annotated` images through the one
reading; each format's module writes them into a temporary directory (or file) that replaces the
output only when every record is written: all or nothing, inputs never touched."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from tfrview.core.output.annotated import Classes, NoImagesError, Tally, annotated_records
from tfrview.core.output.atomic import atomic_dir, check_new_output, clean_stale, new_temp_file, output_error
from tfrview.core.output.export import ExportResult, Progress
from tfrview.core.output.words import ExportFormat
from tfrview.core.records.reading import BoxSpec, ReadingContext
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)


def export_annotated(
    fmt: ExportFormat,
    items: Iterable[tuple[int, bytes | None, str]],
    out: Path,
    *,
    label_map: Mapping[int, str] | None = None,
    specs: tuple[BoxSpec, ...] = (),
    tfds=None,
    inputs: list[Path] = (),
    force: bool = False,
    progress: Progress | None = None,
    shard_size: int | None = None,
) -> ExportResult:
    """Export (record number, payload or None for a damaged record, split) items as `fmt` into
    `out`. One-line errors, nothing written: the output is an input, inside one or exists (without
    `force`); no record has an image (NoImagesError). Damaged and imageless records are skipped and
    counted in the result's notes."""
    from tfrview.core.output import coco, hfparquet, voc, webdataset, yolo  # one format's module used

    fmt = ExportFormat(fmt)
    out = Path(out)
    check_new_output(out, list(inputs), force, folder=not fmt.is_file)
    clean_stale(out)  # what a killed write to it left
    context = ReadingContext(label_map=label_map, chosen=tuple(specs), tfds=tfds)
    classes = Classes()
    classes.seed(label_map)
    if tfds is not None:
        for _, label in tfds.boxes:
            classes.seed(tfds.class_names(label) if label else None)
    tally = Tally()
    records = annotated_records(items, context, classes, tally, progress)
    if fmt.is_file:
        fd, final = new_temp_file(out)
        os.close(fd)
        fd, scratch = new_temp_file(out)
        os.close(fd)
        try:
            written = hfparquet.write_hf_parquet(records, final, scratch, classes)
            if not written:
                raise NoImagesError(_no_images(tally))
            os.replace(final, out)
        except OSError as exc:
            raise output_error(out, exc) from None
        finally:
            final.unlink(missing_ok=True)
            scratch.unlink(missing_ok=True)
    else:
        with atomic_dir(out, force) as tmp:
            if fmt is ExportFormat.COCO:
                written = coco.write_coco(records, tmp, classes)
            elif fmt is ExportFormat.YOLO:
                written = yolo.write_yolo(records, tmp, classes, root=out)
            elif fmt is ExportFormat.VOC:
                written = voc.write_voc(records, tmp, classes)
            else:
                written = webdataset.write_webdataset(
                    records, tmp, classes, shard_size or webdataset.SHARD_RECORDS
                )
            if not written:
                raise NoImagesError(_no_images(tally))
    log.info("%s: %d records exported as %s", printable(str(out)), written, fmt.value)
    return ExportResult(written, tally.skipped, tally.lines())


def _no_images(tally: Tally) -> str:
    why = f" ({tally.notes[0]}{', ...' if tally.skipped > 1 else ''})" if tally.notes else ""
    return f"no record with an image to export{why}"


def dataset_items(dataset, numbers: Iterable[int], splits: list[str] | None = None, where=None):
    """(record number, payload or None for a damaged record, split) for records of a framed and
    verified dataset (`Dataset.frame_and_verify`), as `export_annotated` takes them. `splits`: each
    file's split (`tfrecord.splits.split_of_files`; default the files' own). `where(payload,
    number, file, split) -> bool`: a filter (the CLI's `--where`, `filterexpr` over the record's
    facts; the analysis layer sits above this one): records it refuses are not exported, and a
    damaged record is then left out unread."""
    from tfrview.core.output.export import record_copies
    from tfrview.core.tfrecord.splits import split_of_files

    starts = dataset.starts()
    words = splits if splits is not None else split_of_files([f.path for f in dataset.files])
    for n, copy in record_copies(dataset, numbers):
        fi = int(starts.searchsorted(n, side="right")) - 1
        split = words[fi] if fi < len(words) else ""
        if copy is None:
            if where is None:
                yield n, None, split
            continue
        if where is not None and not where(copy.payload, n, str(dataset.files[fi].path), split):
            continue
        yield n, copy.payload, split
