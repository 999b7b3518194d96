"""Exporting records: to a new TFRecord file, to JSON lines, or their images to a folder (with or
without boxes and labels drawn on). Every file is new and written atomically; inputs are refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tfrview.core.errors import Cancelled
from tfrview.core.output.atomic import atomic_file, clean_stale, refuse_overwriting_inputs
from tfrview.core.output.writer import RecordWriter
from tfrview.core.records.drawing import draw_overlay
from tfrview.core.records.images import ImageError, decode_image, find_images, image_features
from tfrview.core.records.masks import instance_colours, is_mask_key, mask_overlay
from tfrview.core.records.overlays import compute_overlay
from tfrview.core.records.payload import decode, payload_json
from tfrview.core.records.reading import BoxSpec, chosen_spec
from tfrview.core.tfrecord.framing import HEADER_SIZE
from tfrview.core.tfrecord.index import BAD_DATA_CRC, VERIFIED, data_crc_ok
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.status import record_status

Progress = Callable[[int], bool]  # called with records done; returning False cancels


@dataclass(frozen=True)
class ExportResult:
    written: int
    skipped: int = 0
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class RecordCopy:
    """A record to export: its payload (a PayloadHead when too large to hold) and, for a damaged
    record the person chose to keep, its original data CRC (which fails, and so keeps saying so)."""

    payload: bytes
    footer: bytes | None = None


def record_copies(dataset, numbers: Iterable[int], keep_damaged: bool = False):
    """(record number, RecordCopy, or None for a damaged record left out) for each record of a
    dataset (see `copies_of_spans`)."""

    def spans():
        for n in numbers:
            f, k, off, ln = dataset.record_span(n)
            yield n, f.source, off, ln, int(f.index.status[k])

    return copies_of_spans(spans(), keep_damaged)


def copies_of_spans(spans: Iterable[tuple], keep_damaged: bool = False):
    """(record number, RecordCopy, or None for a damaged record left out) for each (number, source,
    offset, length, status). A record whose data CRC fails is never re-framed with a fresh CRC:
    that would launder the damage into a file that verifies clean. Records not verified yet are
    checked here."""

    for n, src, off, ln, status in spans:
        intact = not status & BAD_DATA_CRC if status & VERIFIED else data_crc_ok(src, off, ln)
        if not intact and not keep_damaged:
            yield n, None
            continue
        payload = bounded_payload(src.read, off, ln, src.pieces)
        yield n, RecordCopy(payload, None if intact else src.read(off + HEADER_SIZE + ln, 4))


def save_spans(path, dataset, numbers) -> None:
    """Where the records to export are (number, file, offset, length, CRC status), for a job
    process: numpy arrays in one .npz, found by array operations (a selection of millions)."""
    import numpy as np

    nums = np.asarray(numbers, dtype=np.int64)
    starts = dataset.starts()
    fi = np.searchsorted(starts, nums, side="right") - 1
    k = nums - starts[fi]
    offset, length, status = (np.zeros(len(nums), dtype=np.int64) for _ in range(3))
    for f in np.unique(fi):
        sel = fi == f
        idx = dataset.files[int(f)].index
        offset[sel] = idx.offsets[k[sel]]
        length[sel] = idx.lengths[k[sel]]
        status[sel] = idx.status[k[sel]]
    np.savez(path, number=nums, file_no=fi, offset=offset, length=length, status=status)


def crc_word(status: int) -> str:
    """A record's CRC status in the one word every output uses (`tfrecord.status`)."""

    return str(record_status(status))


def export_records(
    items: Iterable,
    out: Path,
    compression: str = "none",
    inputs: list[Path] = (),
    progress: Progress | None = None,
) -> ExportResult:
    """Records into a new TFRecord file: payloads (re-framed with fresh headers and CRCs) or the
    (number, RecordCopy | None) pairs of `record_copies` (None: a damaged record left out)."""
    refuse_overwriting_inputs(out, list(inputs))
    clean_stale(out)  # what a killed write to it left
    left_out: list[int] = []
    kept_damaged: list[int] = []
    with RecordWriter(out, compression) as w:
        for i, item in enumerate(items):
            number, copy = item if isinstance(item, tuple) else (None, RecordCopy(item))
            if copy is None:
                left_out.append(number)
            else:
                w.write(copy.payload, copy.footer)
                if copy.footer is not None:
                    kept_damaged.append(number)
            if progress is not None and not progress(i + 1):
                raise Cancelled("export cancelled")
    notes = []
    if left_out:
        notes.append(f"left out {len(left_out):,} damaged record(s) (data CRC fails): {_numbers(left_out)}")
    if kept_damaged:
        notes.append(
            f"kept {len(kept_damaged):,} damaged record(s) with their failing CRC: {_numbers(kept_damaged)}"
        )
    return ExportResult(w.count, len(left_out), tuple(notes))


def _numbers(ns: list[int], most: int = 20) -> str:
    shown = ", ".join(str(n) for n in ns[:most])
    return shown + (f" and {len(ns) - most:,} more" if len(ns) > most else "")


def export_jsonl(
    items: Iterable[tuple], out: Path, inputs: list[Path] = (), progress: Progress | None = None
) -> ExportResult:
    """One JSON object per record, as `tfrview dump --json` prints them. Items are (number, offset,
    payload) or (number, offset, payload, extra): extra (file, CRC status, problems) goes in too."""
    refuse_overwriting_inputs(out, list(inputs))
    clean_stale(out)  # what a killed write to it left
    n = 0
    with atomic_file(out, "w") as fh:
        for number, offset, data, *extra in items:
            size = getattr(data, "full_size", len(data))
            d = {
                "record": number,
                "offset": offset,
                "length": size,
                **(extra[0] if extra else {}),
                **payload_json(decode(data)),
            }
            fh.write(json.dumps(d) + "\n")
            n += 1
            if progress is not None and not progress(n):
                raise Cancelled("export cancelled")
    return ExportResult(n)


def export_images(
    items: Iterable[tuple],
    folder: Path,
    with_overlays: bool = True,
    label_map: dict[int, str] | None = None,
    progress: Progress | None = None,
    specs: tuple[BoxSpec, ...] = (),
) -> ExportResult:
    """Every image of every record as PNG: record-<n>.png, or record-<n>-<k>.png for several.
    `specs`: the box specs the person chose (`reading.chosen_spec`): boxes as the window draws them.
    An item may carry a third value, the TFDS features of its folder (`tfds.features`): its boxes
    and caption are then named by their ClassLabels, as the window names them."""
    folder.mkdir(parents=True, exist_ok=True)
    written = skipped = done = 0
    notes: list[str] = []
    for number, data, *rest in items:
        tfds = rest[0] if rest and rest[0] is not None and rest[0].root is not None else None
        p = decode(data)
        feats = image_features(p)
        refs = find_images(feats)
        if not refs:
            skipped += 1
            notes.append(f"record {number}: no image ({p.kind.replace('_', ' ')})")
        for k, ref in enumerate(refs):
            try:
                img = decode_image(feats, ref)
            except ImageError as exc:
                skipped += 1
                notes.append(f"record {number}: {exc}")
                continue
            ov = (
                compute_overlay(feats, img.width, img.height, label_map, chosen_spec(specs, feats), tfds)
                if with_overlays
                else None
            )
            im = (
                draw_overlay(img.pixels, ov, mask_rgba=_mask_of(feats, ref, img, ov))
                if with_overlays
                else _plain(img.pixels)
            )
            name = f"record-{number}.png" if len(refs) == 1 else f"record-{number}-{k}.png"
            with atomic_file(folder / name, "wb") as fh:
                im.save(fh, "PNG")
            written += 1
        done += 1
        if progress is not None and not progress(done):
            raise Cancelled("export cancelled")
    return ExportResult(written, skipped, tuple(notes[:50]))


def _mask_of(feats, ref, img, overlay) -> np.ndarray | None:
    """The coloured mask to draw over an exported image (never over a mask itself)."""

    if is_mask_key(ref.key, feats):
        return None
    m = mask_overlay(feats, img.width, img.height, instance_colours(overlay))
    return m.rgba if m is not None else None


def _plain(pixels: np.ndarray):
    from PIL import Image  # heavy: PIL on first use only

    return Image.fromarray(pixels)
