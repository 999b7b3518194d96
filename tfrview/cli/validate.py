"""`tfrview validate --schema schema.pbtxt PATH...`: TFDV's anomalies of the data against a
schema, each with the records behind it; exit status 1 when there are any (a CI gate)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

HELP = "check the data against a TFDV schema: TFDV's anomaly kinds, with the records behind each"
EXAMPLES = (
    "  tfrview validate --schema schema.pbtxt 'eval-*' && echo clean\n"
    "  tfrview validate --schema schema.pbtxt data/ --json | jq '.anomalies[].kind'\n"
    "  tfrview validate --schema schema.pbtxt data/ --anomalies-out anomalies.pbtxt\n"
)


def configure(p) -> None:
    from tfrview.cli import _int_at_least
    from tfrview.cli._tfdv import add_data_args

    p.add_argument("--schema", metavar="SCHEMA", required=True, help="a TFDV schema (schema.pbtxt)")
    add_data_args(p)
    p.add_argument("--json", action="store_true", help="one JSON object on stdout")
    p.add_argument(
        "--records",
        type=_int_at_least(0),
        default=10,
        metavar="N",
        help="the first N records behind each anomaly listed (default 10; the count is always said)",
    )
    p.add_argument(
        "--environment",
        metavar="NAME",
        help="judge only the features the schema expects in this environment (TFDV's TRAINING, SERVING...)",
    )
    p.add_argument(
        "--anomalies-out",
        metavar="OUT",
        help="also write the anomalies as TFDV's Anomalies message (.pbtxt text, else binary)",
    )


def run(args) -> int:
    from tfrview.cli._tfdv import analysed
    from tfrview.core.termtext import printable
    from tfrview.core.tfdv.anomalies import to_proto, validate
    from tfrview.core.tfdv.columns import splits_of, whole
    from tfrview.core.tfdv.schema import read_schema

    schema = read_schema(Path(args.schema))  # a bad schema fails before the data is read
    analysis, paths, unreadable = analysed(args, quiet=args.json)
    data = whole(splits_of(analysis))
    found = validate(schema, data, first=args.records, environment=args.environment)
    if args.anomalies_out:
        from google.protobuf import text_format

        from tfrview.core.output.atomic import atomic_write_bytes

        out = Path(args.anomalies_out)
        msg = to_proto(schema, found)
        text = out.suffix.lower() in (".pbtxt", ".txt", ".textproto")
        atomic_write_bytes(
            out, text_format.MessageToString(msg).encode() if text else msg.SerializeToString()
        )
    if args.json:
        print(
            json.dumps(
                {
                    "schema": args.schema,
                    "examples": data.examples,
                    "features": len(data.features),
                    "ok": not found,
                    "anomalies": [a.to_json(paths) for a in found],
                    "unreadable_files": unreadable,
                }
            )
        )
    else:
        for a in found:
            print(f"{printable(a.feature)}: {a.kind}  {a.kind.words}")
            print(f"  {printable(a.description)}")
            shown = ", ".join(
                f"{printable(paths[f])}#{r}" for f, r in zip(a.file.tolist(), a.record.tolist(), strict=True)
            )
            more = a.records - len(a.record)
            print(f"  {a.records:,} records: {shown}" + (f", and {more:,} more" if more > 0 else ""))
        what = f"{len(found)} anomal{'y' if len(found) == 1 else 'ies'}" if found else "no anomalies"
        print(f"{what} in {data.examples:,} examples against {printable(args.schema)}", file=sys.stdout)
    if unreadable:
        return 2
    return 1 if found else 0
