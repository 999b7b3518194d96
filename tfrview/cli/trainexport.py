"""`tfrview export`'s training formats (--coco, --yolo, --voc, --hf-parquet, --webdataset, with
--where) and what `tfrview import-coco` shares with them: the records of the named files framed
and verified as `verify` numbers them, the label map, the TFDS features and the filter. A helper
module of the CLI, not a command."""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

FORMAT_FLAGS = (
    ("coco", "--coco", "DIR", "COCO: images/{split}/ and annotations/instances_{split}.json"),
    ("yolo", "--yolo", "DIR", "YOLO, Ultralytics layout: images/{split}/, labels/{split}/, data.yaml"),
    ("voc", "--voc", "DIR", "Pascal VOC: Annotations/*.xml, JPEGImages/, ImageSets/Main/{split}.txt"),
    (
        "hf_parquet",
        "--hf-parquet",
        "OUT",
        "one Parquet file typed for Hugging Face datasets (image {bytes, path}, class names)",
    ),
    ("webdataset", "--webdataset", "DIR", "WebDataset tar shards: {key}.jpg, {key}.json, {key}.cls"),
)


def add_arguments(p) -> None:
    """The training formats' flags on `export` (each an output of its own; several at once)."""
    from tfrview.cli import _int_at_least

    for dest, flag, metavar, text in FORMAT_FLAGS:
        p.add_argument(flag, dest=dest, metavar=metavar, help=text)
    p.add_argument(
        "--shard-size",
        type=_int_at_least(1),
        default=None,
        metavar="N",
        help="records in each WebDataset shard (default 1000)",
    )
    add_where(p)


def add_where(p) -> None:
    p.add_argument(
        "--where",
        metavar="EXPR",
        help='only the records this filter keeps (the window\'s filter language: split == "train", '
        "len(image/object/bbox/xmin) > 0, ...; over each record's features and facts)",
    )


def named_folders(args) -> list[Path]:
    """The folders the arguments name (an output inside one is refused: the next run would read it)."""
    return [Path(p) for p in getattr(args, "paths", []) if Path(p).is_dir()]


def wanted(args) -> list[tuple[str, Path]]:
    """(format word, output) for each training format asked for."""
    return [(dest, Path(getattr(args, dest))) for dest, *_ in FORMAT_FLAGS if getattr(args, dest, None)]


def where_test(expr: str | None):
    """`--where` as `formats.dataset_items` takes it ((payload, number, file, split) -> bool), or
    None. Facts of the analysis (copies, leaks, image scores) are refused in one line: an export
    reads each record by itself."""
    if not expr:
        return None
    from tfrview.core.analysis.filterexpr import compile_filter, facts_for, keys_used, parse, resolve_keys
    from tfrview.core.analysis.stepcolumns import NAMES
    from tfrview.core.errors import TfrviewError
    from tfrview.core.records.imagesignals import COLUMNS

    node = resolve_keys(parse(expr), set())
    needs = sorted(k for k in keys_used(node) if k in NAMES or k in COLUMNS)
    if needs:
        raise TfrviewError(
            f"--where: {', '.join(needs)} come from the analysis of the whole dataset; an export's filter "
            "reads each record's features and facts (filter in the window and export the selection)"
        )
    test = compile_filter(node)

    def keep(payload, number: int, file: str, split: str) -> bool:
        return test(facts_for(payload, number, Path(file).name, [], split=split))

    return keep


@contextmanager
def opened_dataset(args, paths, splits):
    """The files framed and verified as `verify` numbers them: (dataset, label map, TFDS features
    of the first file's folder or None). Files that cannot be read are said and left out."""
    from tfrview.cli import Progress, _label_map_for_checks
    from tfrview.core.errors import TfrviewError
    from tfrview.core.termtext import printable
    from tfrview.core.tfds.features import features_of_folder
    from tfrview.core.tfrecord.dataset import Dataset

    with Dataset.open([str(p) for p in paths]) as ds:
        for f in ds.files:
            if f.error:
                print(f"tfrview: {printable(str(f.path) + ': ' + f.error)}", file=sys.stderr)
        progress = Progress(True)
        ds.frame_and_verify()
        progress.clear()
        if not ds.count:
            raise TfrviewError("no records in the files named")
        label_map, _ = _label_map_for_checks(args, paths)
        tfds = features_of_folder(Path(paths[0]).parent) if paths else None
        if tfds is not None and getattr(tfds, "error", None):
            tfds = None
        yield ds, label_map, tfds


def counter(total: int, what: str):
    """The exports' progress callback (records done -> go on) and its display: a line on a
    terminal's stderr, at most every 0.1 s (the CLI's `Progress`, counting records, not bytes)."""
    import time

    from tfrview.cli import Progress

    shown = Progress(True)

    def progress(done: int) -> bool:
        if not shown.enabled:
            return True
        now = time.monotonic()
        if now - shown._last >= 0.1 or done == total:
            shown._last = now
            sys.stderr.write(f"\r{what}: {done:,} of {total:,} records\033[K")
            sys.stderr.flush()
            shown._shown = True
            Progress.shown = shown
        return True

    return progress, shown


def run_formats(args, paths, splits) -> int:
    """Write every training format asked for. Each output is checked before any is written."""
    from tfrview.core.errors import TfrviewError
    from tfrview.core.output.atomic import check_new_output
    from tfrview.core.output.formats import ExportFormat, dataset_items, export_annotated
    from tfrview.core.termtext import printable

    outs = wanted(args)
    inputs = [Path(p) for p in paths]
    for _, out in outs:
        check_new_output(out, inputs + named_folders(args), args.force)
    if len({str(o.resolve()) for _, o in outs}) < len(outs):
        raise TfrviewError("two formats name the same output")
    keep = where_test(getattr(args, "where", None))
    with opened_dataset(args, paths, splits) as (ds, label_map, tfds):
        words = _split_words(ds, paths, splits)
        for fmt, out in outs:
            progress, shown = counter(ds.count, f"{fmt} export")
            try:
                res = export_annotated(
                    ExportFormat(fmt),
                    dataset_items(ds, range(ds.count), words, keep),
                    out,
                    label_map=label_map,
                    tfds=tfds,
                    inputs=inputs,
                    force=args.force,
                    progress=progress,
                    shard_size=args.shard_size,
                )
            finally:
                shown.clear()
            print(
                f"{printable(str(out))}: {ExportFormat(fmt).words}: wrote {res.written:,} images"
                + (f"; skipped {res.skipped:,} records" if res.skipped else "")
            )
            for note in res.notes[:10]:
                print(f"  {printable(note)}")
    return 0


def _split_words(ds, paths, splits) -> list[str]:
    """Each of the dataset's files' split: the CLI's (`--split` first, then the paths' names)."""
    by_path = {str(Path(p)): s for p, s in zip(paths, splits, strict=False)}
    return [by_path.get(str(f.path), f.split) for f in ds.files]
