"""`tfrview schema infer PATH... -o schema.pbtxt`: a TFDV schema inferred from the data, TFDV's way."""

from __future__ import annotations

from pathlib import Path

HELP = "infer a TFDV schema (schema.pbtxt) from the data, without TensorFlow"
EXAMPLES = (
    "  tfrview schema infer 'train-*' -o schema.pbtxt\n"
    "  tfrview schema infer pipeline/ExampleGen/examples/1/ -o schema.pbtxt   (a TFX root: every split)\n"
    "  tfrview validate --schema schema.pbtxt 'eval-*'\n"
)


def configure(p) -> None:
    from tfrview.cli._tfdv import add_data_args

    sub = p.add_subparsers(dest="schema_command", metavar="ACTION", required=True)
    q = sub.add_parser("infer", help="infer a schema from every record of the data")
    add_data_args(q)
    q.add_argument("-o", "--output", metavar="OUT", required=True, help="the schema to write (text format)")
    q.add_argument(
        "--max-string-domain-size",
        type=int,
        default=100,
        metavar="N",
        help="a text feature of at most N distinct values gets a string domain (TFDV's default: 100)",
    )
    q.add_argument("--force", action="store_true", help="replace OUT if it exists")


def run(args) -> int:
    from tfrview.cli._tfdv import analysed
    from tfrview.core.termtext import printable
    from tfrview.core.tfdv.columns import splits_of, whole
    from tfrview.core.tfdv.schema import infer, write
    from tfrview.core.tfdv.stats import from_splits

    out = Path(args.output)
    analysis, paths, unreadable = analysed(args, output=args.output)
    data = whole(splits_of(analysis))
    schema = infer(from_splits([data]), max_string_domain_size=args.max_string_domain_size)
    write(schema, out)
    domains = sum(1 for f in schema.feature if f.WhichOneof("domain_info"))
    print(
        f"{printable(str(out))}: {len(schema.feature)} features from {data.examples:,} examples"
        f" ({domains} with a domain)"
    )
    return 2 if unreadable else 0
