"""`tfrview rewrite PATH... -o OUTDIR`: a new dataset from a whole one (`core.rewrite`)."""

from __future__ import annotations

import json
import sys

HELP = "write a new dataset: records kept or dropped, classes mapped, re-sharded, split, all or nothing"
EXAMPLES = """\
  tfrview rewrite data/ -o clean/                           every intact record, damaged ones dropped
  tfrview rewrite data/ -o clean/ --where 'boxes > 0' --map-classes 3=1,dog=animal
  tfrview rewrite data/ -o out/ --split train=0.8,val=0.1,test=0.1 --group-by source_id --seed 7
  tfrview rewrite ~/tensorflow_datasets/mnist/3.0.1 -o m2/ --shards 16 --shuffle --index
  tfrview rewrite 'train-*' -o big/ --shard-size 256MB --compression gzip --json"""


def configure(p) -> None:
    from tfrview.cli import _add_jobs, _int_at_least
    from tfrview.core.rewrite.options import GroupBy

    p.add_argument(
        "paths", nargs="+", metavar="PATH", help="files, folders, globs, TFDS folders, ArrayRecord files"
    )
    p.add_argument(
        "-o", "--output", metavar="OUTDIR", required=True, help="the new folder (created whole, at the end)"
    )
    p.add_argument("--force", action="store_true", help="replace OUTDIR if it exists and is not empty")
    p.add_argument(
        "--where", metavar="EXPR", help="keep only records matching the filter (the window's filter language)"
    )
    p.add_argument(
        "--drop-tag", action="append", default=[], metavar="TAG", help="drop records tagged TAG (repeatable)"
    )
    p.add_argument(
        "--keep-tag", action="append", default=[], metavar="TAG", help="keep only records tagged TAG"
    )
    p.add_argument(
        "--drop-records",
        metavar="JSONL",
        help='drop the records a JSON-lines file names, one {"file": PATH, "offset": N} a line',
    )
    p.add_argument(
        "--map-classes", metavar="OLD=NEW,...", help="remap or merge classes by id (3=1) or name (dog=animal)"
    )
    p.add_argument(
        "--label-map", metavar="PBTXT", help="the input's label map (default: a .pbtxt beside the data)"
    )
    g = p.add_mutually_exclusive_group()
    g.add_argument("--shards", type=_int_at_least(1), metavar="N", help="N shards a split")
    g.add_argument("--shard-size", metavar="SIZE", help="shards of about SIZE (e.g. 256MB; the default)")
    p.add_argument("--shuffle", action="store_true", help="shuffle each split (deterministic for --seed)")
    p.add_argument("--seed", type=int, default=0, help="the seed of --shuffle and --split (default 0)")
    p.add_argument("--compression", choices=["none", "gzip", "zlib"], default="none")
    p.add_argument(
        "--split",
        metavar="NAME=FRAC,...",
        help="split by fractions, stratified by class (e.g. train=0.8,val=0.2)",
    )
    p.add_argument("--group-by", choices=[str(x) for x in GroupBy], help="keep each group in one split")
    p.add_argument(
        "--index", action="store_true", help="a DALI/tfrecord index file beside each shard (NAME.idx)"
    )
    p.add_argument(
        "--provenance", choices=["parquet", "jsonl"], default="parquet", help="the provenance file's format"
    )
    p.add_argument(
        "--json", action="store_true", help="one JSON object: counts in, kept, dropped by reason, written"
    )
    _add_jobs(p)


def _options(args):
    from tfrview.core.rewrite.options import options_from_words

    return options_from_words(
        where=args.where,
        drop_tags=tuple(args.drop_tag),
        keep_tags=tuple(args.keep_tag),
        map_classes=args.map_classes,
        shards=args.shards,
        shard_size=args.shard_size,
        shuffle=args.shuffle,
        seed=args.seed,
        compression=args.compression,
        split=args.split,
        group_by=args.group_by,
        index=args.index,
        force=args.force,
        jobs=args.jobs,
        provenance=args.provenance,
    )


def run(args) -> int:
    from pathlib import Path

    from tfrview.cli import Progress
    from tfrview.core.rewrite.run import rewrite
    from tfrview.core.rewrite.tagged import chosen_records, read_record_list
    from tfrview.core.termtext import printable

    opts = _options(args)
    named = read_record_list(Path(args.drop_records)) if args.drop_records else set()
    drop, keep = chosen_records(list(args.paths), named, opts.drop_tags, opts.keep_tags)
    label_map = None
    if args.label_map:
        from tfrview.core.records.labelmap import load_label_map

        label_map = dict(load_label_map(args.label_map))
    elif opts.class_map:
        from tfrview.core.records.labelmap import find_label_map, load_label_map
        from tfrview.core.tfrecord.dataset import expand_paths

        found = find_label_map(expand_paths(list(args.paths)))
        label_map = dict(load_label_map(found)) if found else None
    progress = Progress(True)

    def say(phase: str, done: int, total: int) -> None:
        _count_line(progress, phase, done, total)

    try:
        res = rewrite(args.paths, args.output, opts, drop=drop, keep=keep, label_map=label_map, progress=say)
    finally:
        progress.clear()
    if args.json:
        print(json.dumps(res.to_json()))
        return 0
    d = res.dropped
    print(
        f"{printable(res.outdir)}: wrote {res.kept:,} of {res.records_in:,} records in {len(res.shards)} "
        f"shard{'s' if len(res.shards) != 1 else ''}; dropped {d['damaged']:,} damaged, {d['filter']:,} by the filter, "
        f"{d['tag']:,} by tags" + (f"; {res.changed:,} records' classes mapped" if res.changed else "")
    )
    by_split: dict[str, list] = {}
    for s in res.shards:
        by_split.setdefault(s["split"], []).append(s)
    for s, rows in by_split.items():
        print(f"  {printable(s)}: {sum(r['records'] for r in rows):,} records in {len(rows)} shards")
    for note in res.notes:
        print(f"tfrview: {printable(note)}", file=sys.stderr)
    return 0


def _count_line(progress, phase: str, done: int, total: int) -> None:
    """Progress in counts (files, shards, records), not bytes, on stderr's one line."""
    import time

    if not progress.enabled:
        return
    now = time.monotonic()
    if now - progress._last < 0.1 and done != total:
        return
    progress._last = now
    pct = f" {100 * done / total:5.1f}%" if total else ""
    sys.stderr.write(f"\r{phase}: {done:,} of {total:,}{pct}\033[K")
    sys.stderr.flush()
    progress._shown = True
    type(progress).shown = progress
