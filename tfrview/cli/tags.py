"""`tfrview tags list|export|import`: the person's tags (core/tags) on the command line. Tags are
made in the window (D, K, R, N on records); here they are listed, shared as JSON lines and read
back. The store lives in the user's data directory (`--store` names another)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HELP = "the person's tags on records: list them, export them as JSON lines, import them"
EXAMPLES = """\
  tfrview tags list                          every tag, by the path it was tagged at
  tfrview tags list data/train-*.tfrecord     the tags of these files, with record numbers
  tfrview tags list data/ --json             one JSON object
  tfrview tags export -o tags.jsonl          every tag as JSON lines (or only PATHs' tags)
  tfrview tags import tags.jsonl             read them back (one transaction; a bad line changes nothing)"""


def configure(p) -> None:
    p.add_argument("--store", metavar="DB", help="the tags store (default: the user's data directory)")
    sub = p.add_subparsers(dest="tags_action", metavar="ACTION", required=True)
    ls = sub.add_parser("list", help="the tags of PATHs (with their record numbers), or every tag")
    ls.add_argument("paths", nargs="*", metavar="PATH")
    ls.add_argument("--json", action="store_true", help="one JSON object")
    ex = sub.add_parser("export", help="tags as JSON lines")
    ex.add_argument("paths", nargs="*", metavar="PATH", help="only these files' tags")
    ex.add_argument("-o", "--output", required=True, metavar="OUT")
    ex.add_argument("--force", action="store_true", help="replace OUT if it exists")
    im = sub.add_parser("import", help="read tags from JSON lines (`export`'s)")
    im.add_argument("file", metavar="FILE")


def _open(args):
    from tfrview.core.tags import TagStore
    from tfrview.core.termtext import printable

    store = TagStore.open(args.store)
    if store.note:  # a damaged store kept aside: said once, on stderr, whatever the output format
        print(f"tfrview: {printable(store.note)}", file=sys.stderr)
    return store


def run(args) -> int:
    action = {"list": _list, "export": _export, "import": _import}[args.tags_action]
    store = _open(args)
    try:
        return action(args, store)
    finally:
        store.close()


def _files(paths: list[str]):
    """The files PATHs name (as every command expands them); a name of nothing is a TfrviewError."""
    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.dataset import name_files

    failed, files = name_files(paths)
    if failed:
        raise TfrviewError(failed[0][1])
    return files


def _list(args, store) -> int:
    from tfrview.core.termtext import printable

    rows: list[dict] = []
    stale = 0
    if args.paths:
        from tfrview.core.tfrecord.dataset import Dataset

        ds = Dataset.open([str(f) for f in _files(args.paths)])
        try:
            for _ in ds.scan():
                pass
            base = 0
            for f in ds.files:
                if f.source is None:
                    continue
                ft = store.file_tags(f.path)
                stale += ft.stale
                offs = f.index.offsets[: f.index.count].astype("int64")
                codes = ft.codes_at(offs)
                for k in codes.nonzero()[0].tolist():
                    tag = ft.tag_at(int(offs[k]))
                    rows.append(
                        {
                            "path": str(f.path),
                            "record": base + k,
                            "offset": int(offs[k]),
                            "tag": str(tag.word),
                        }
                        | {"note": tag.note}
                    )
                base += f.index.count
        finally:
            ds.close()
    else:
        for key, path, offset, _length, _crc, word, note in store.entries():
            rows.append({"path": path, "offset": offset, "tag": str(word), "note": note, "file": str(key)})
    counts: dict[str, int] = {}
    for r in rows:
        counts[r["tag"]] = counts.get(r["tag"], 0) + 1
    if args.json:
        print(json.dumps({"store": str(store.path), "tags": rows, "counts": counts, "stale": stale}))
        return 0
    for r in rows:
        where = f"record {r['record']:,}  offset {r['offset']}" if "record" in r else f"offset {r['offset']}"
        note = f"  {printable(r['note'])}" if r["note"] else ""
        print(f"{printable(r['path'])}  {where}  {r['tag']}{note}")
    said = ", ".join(f"{n:,} {w}" for w, n in sorted(counts.items())) or "no tags"
    tail = f"; {stale:,} stale (their file changed: not applied)" if stale else ""
    print(f"total: {said}{tail} ({printable(str(store.path))})")
    return 0


def _export(args, store) -> int:
    from tfrview.cli import _check_output
    from tfrview.core.output.atomic import atomic_file
    from tfrview.core.tags import file_key
    from tfrview.core.tags.jsonl import write_jsonl
    from tfrview.core.termtext import printable

    out = Path(args.output)
    _check_output(out, [], args.force)
    keys = None
    if args.paths:
        keys = {k for k in (file_key(f) for f in _files(args.paths)) if k is not None}
    with atomic_file(out, "w") as f:
        n = write_jsonl(store, f, keys)
    print(f"{printable(str(out))}: {n:,} tags written")
    return 0


def _import(args, store) -> int:
    from tfrview.core.tags.jsonl import import_jsonl
    from tfrview.core.termtext import printable

    _, n = import_jsonl(store, args.file)
    print(f"{printable(args.file)}: {n:,} tags read into {printable(str(store.path))}")
    return 0
