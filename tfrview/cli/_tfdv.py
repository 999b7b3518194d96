"""What the TFDV commands share (`schema infer`, `validate`, `export --stats`): the data's deep
analysis, stored results of unchanged files taken as they are (no second pass over data the
window or `verify --checks` read), the rest read once on worker processes."""

from __future__ import annotations

import sys

from tfrview.core.termtext import printable


def add_data_args(p) -> None:
    """PATH..., --split, --label-map, -j/--dask: the data a TFDV command reads."""
    from tfrview.cli import _add_jobs, _add_splits

    p.add_argument("paths", nargs="*", metavar="PATH", help="files, directories (a TFX Split-*/ root), globs")
    p.add_argument(
        "--label-map", metavar="PBTXT", help="label map for class names (default: a .pbtxt beside the data)"
    )
    _add_splits(p)
    p.set_defaults(one_dataset=True, rule=[])
    _add_jobs(p)


def analysed(args, quiet: bool = False, output: str | None = None):
    """(the merged deep analysis, every file's path, unreadable files). A file that cannot be
    read is said on stderr; an argument naming nothing is a TfrviewError; `output` (a file to be
    written) is checked against the inputs and --force before any file is read."""
    from tfrview.cli import (
        Progress,
        _files_and_splits,
        _grouped_plan,
        _label_map_for_checks,
        _run_pass,
    )
    from tfrview.core.analysis.merge import merge
    from tfrview.core.errors import TfrviewError
    from tfrview.core.tfrecord.groups import group_files

    failed, paths, splits = _files_and_splits(args)
    for _, err in failed:
        raise TfrviewError(err)
    if output is not None:
        from pathlib import Path

        from tfrview.cli import _check_output

        _check_output(Path(output), [Path(p) for p in paths], args.force)
    groups = group_files(paths, True)
    label_maps = [_label_map_for_checks(args, [paths[i] for i in g.files])[0] for g in groups]
    tasks = _grouped_plan(paths, groups, True, label_maps, notices=True)
    results = _run_pass(tasks, args.jobs, Progress(not quiet), "reading", args.dask)
    unreadable = [r for r in results if r.error is not None]
    for r in unreadable:
        print(f"tfrview: {printable(r.error)}", file=sys.stderr)
    return merge(results, groups, splits=splits), [str(p) for p in paths], len(unreadable)
