"""`tfrview export --stats OUT PATH...`: TFDV's `DatasetFeatureStatisticsList` of the data, from
the stored analysis (no second pass over data already analysed), one dataset a split."""

from __future__ import annotations

import os
from pathlib import Path


def export_stats(args) -> int:
    from tfrview.cli import _check_output
    from tfrview.cli._tfdv import analysed
    from tfrview.core.errors import TfrviewError
    from tfrview.core.termtext import printable
    from tfrview.core.tfdv.stats import statistics, tfx_names, write, write_tfx

    if args.parquet or not args.stats:
        raise TfrviewError("name one of --parquet OUT or --stats OUT")
    out = Path(args.stats)
    tfx = args.stats.endswith(("/", os.sep)) or out.is_dir()  # TFX's StatisticsGen layout
    analysis, paths, unreadable = analysed(args, output=None if tfx else args.stats)
    stats = statistics(analysis)
    tfx_names(stats, paths, list(analysis.splits))
    if tfx:
        for d in stats.datasets:
            _check_output(out / f"Split-{d.name}" / "FeatureStats.pb", [Path(p) for p in paths], args.force)
        write_tfx(stats, out)
    else:
        write(stats, out)
    said = ", ".join(f"{printable(d.name)} {d.num_examples:,} examples" for d in stats.datasets)
    nfeat = max((len(d.features) for d in stats.datasets), default=0)
    where = f"{printable(str(out))}/Split-*/FeatureStats.pb" if tfx else printable(str(out))
    print(f"{where}: {len(stats.datasets)} datasets ({said}), {nfeat} features")
    return 2 if unreadable else 0


def tfdv_info(args) -> int | None:
    """`tfrview info` of TFDV files (FeatureStats.pb, schema.pbtxt, SchemaDiff.pb): each as its
    table; None when some argument is no TFDV file (the record files' info then)."""
    import json
    import sys

    from tfrview.core.errors import one_line
    from tfrview.core.termtext import printable
    from tfrview.core.tfdv.files import kind_of, table
    from tfrview.core.tfdv.schema import SchemaError

    paths = list(getattr(args, "paths", None) or [])
    if not paths or getattr(args, "split", None) or any(kind_of(p) is None for p in paths):
        return None
    docs, errors = [], 0
    for p in paths:
        try:
            t = table(p)
        except SchemaError as exc:
            errors += 1
            if args.json:
                docs.append({"path": p, "error": one_line(exc)})
            else:
                print(f"tfrview: {one_line(exc)}", file=sys.stderr)
            continue
        if args.json:
            docs.append(
                {
                    "path": p,
                    "tfdv": str(t.kind),
                    "summary": t.summary,
                    "columns": list(t.columns),
                    "rows": [list(r) for r in t.rows],
                }
            )
            continue
        print(f"{printable(p)}: {t.kind.title}, {printable(t.summary)}")
        widths = [min(max([len(c)] + [len(str(r[i])) for r in t.rows]), 40) for i, c in enumerate(t.columns)]
        print("  " + "  ".join(c.ljust(w) for c, w in zip(t.columns, widths, strict=True)).rstrip())
        for r in t.rows:
            cells = [printable(str(v))[:40].ljust(w) for v, w in zip(r, widths, strict=True)]
            print("  " + "  ".join(cells).rstrip())
    if args.json:
        print(json.dumps({"files": docs}))
    return 2 if errors else 0
