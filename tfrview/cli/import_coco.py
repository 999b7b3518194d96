"""`tfrview import-coco ANNOTATIONS.json PATH... -o OUT`: corrected COCO boxes (e.g. from CVAT)
written into a new TFRecord (`core/output/coco_import.py`), with a JSON report of what matched."""

from __future__ import annotations

from pathlib import Path

HELP = "write a new TFRecord with the boxes and classes of corrected COCO annotations"
EXAMPLES = (
    "  tfrview import-coco fixed/instances_train.json data/train-* -o train-fixed.tfrecord\n"
    "  tfrview import-coco cvat.json data/ -o fixed.tfrecord --join source_id --report report.json\n"
)


def configure(p) -> None:
    from tfrview.cli.trainexport import add_where
    from tfrview.core.output.words import JoinBy
    from tfrview.core.tfrecord.framing import Compression

    p.add_argument("annotations", metavar="ANNOTATIONS.json", help="COCO instances JSON")
    p.add_argument("paths", nargs="+", metavar="PATH", help="the records the annotations are of")
    p.add_argument("-o", "--output", metavar="OUT", required=True, help="the new TFRecord file")
    p.add_argument(
        "--join",
        choices=[j.value for j in JoinBy],
        default=JoinBy.FILENAME.value,
        help="join images to records by file name (image/filename) or source_id (image/source_id; "
        "a COCO image without source_id by its id) (default filename)",
    )
    p.add_argument("--report", metavar="JSON", help="where the report goes (default OUT.report.json)")
    p.add_argument(
        "--compression",
        choices=[str(c) for c in Compression if c != Compression.ARRAYRECORD],
        default="none",
    )
    p.add_argument(
        "--label-map",
        metavar="PBTXT",
        help="label map the category names are checked against (default: beside the data)",
    )
    p.add_argument("--force", action="store_true", help="replace OUT and the report if they exist")
    add_where(p)


def run(args) -> int:
    from tfrview.cli import _files_and_splits
    from tfrview.cli.trainexport import _split_words, counter, named_folders, opened_dataset, where_test
    from tfrview.core.errors import TfrviewError
    from tfrview.core.output.coco_import import import_coco
    from tfrview.core.output.formats import dataset_items
    from tfrview.core.termtext import printable

    args.split = []
    failed, paths, splits = _files_and_splits(args)
    for _, err in failed:
        raise TfrviewError(err)
    out = Path(args.output)
    report = Path(args.report) if args.report else out.with_name(out.name + ".report.json")
    keep = where_test(args.where)
    with opened_dataset(args, paths, splits) as (ds, label_map, tfds):
        progress, shown = counter(ds.count, "import")
        try:
            rep = import_coco(
                Path(args.annotations),
                dataset_items(ds, range(ds.count), _split_words(ds, paths, splits), keep),
                out,
                join=args.join,
                label_map=label_map,
                tfds=tfds,
                inputs=[Path(p) for p in paths] + [Path(args.annotations)] + named_folders(args),
                force=args.force,
                compression=args.compression,
                progress=progress,
                report_path=report,
            )
        finally:
            shown.clear()
    print(f"{printable(str(out))}: wrote {rep.written:,} records; {rep.line()}")
    print(f"{printable(str(report))}: the report")
    for name in rep.category_mismatches[:10]:
        print(f"  category not as the label map names it: {printable(name)}")
    return 0
