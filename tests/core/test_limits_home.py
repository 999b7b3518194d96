"""Every resource limit lives in tfrview/core/limits.py, is documented in the README's limits
section, and says its name when hit (issue 20). The checks read the source as Python's AST, so a
new limit defined elsewhere, or left out of the README, fails here before a reviewer has to spot it."""

from __future__ import annotations

import ast
from pathlib import Path

from tfrview.core import limits
from tfrview.core.limits import MAX_LIST_VALUES, too_large
from tfrview.core.records.payload import cut_note

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tfrview"

# Module-level UPPER_CASE numbers compared against a size or a count that are no resource limit:
# format facts, detection thresholds and cadences. Each says why it stays where it is.
NOT_LIMITS = {
    "cli/_info_answer.py": {"VERSION"},  # the layout of info's stored answer, compared for equality
    "core/analysis/evaluation.py": {"MAX_DETS"},  # COCO's maxDets: part of the metric's definition
    "core/tfrecord/framing.py": {"HEADER_SIZE", "FOOTER_SIZE"},  # the TFRecord format
    "core/tfds/info.py": {"_DIGITS"},  # the format: a uint64 (TFDS's int64 fields) in decimal
    "core/tfds/layout.py": {"_FEW_FILES"},  # a folder of shards is no dataset folder: a heuristic
    "core/arrayrecord/riegeli.py": {
        "BLOCK_SIZE",
        "BLOCK_HEADER_SIZE",
        "USABLE_BLOCK_SIZE",
        "CHUNK_HEADER_SIZE",
    },  # the Riegeli format
    "core/tfrecord/index.py": {"_HOP"},  # a framing strategy: long records framed by header alone
    # likewise: when the chain of lengths is foreseen where lengths repeat (the same starts either way)
    "core/tfrecord/window.py": {"_MATCH", "_BACKOFF_BYTES", "_SMALL"},
    "core/tfrecord/source.py": {"_MIN_FEED", "_TINY_FEED", "_MIN_READ"},  # piece sizes of reads
    "core/tfrecord/lineendings.py": {"_SETUP_STEPS", "_PREFIX_STEPS", "_SEEN_BITS"},  # cost model
    "core/records/payload.py": {"_FEW"},  # which of two equivalent parsers is faster
    "core/analysis/plain.py": {"_FEW"},  # likewise
    # likewise: past them a record is parsed by upb rather than in bulk (no bound on what is read)
    "core/records/examplecols.py": {"MAX_ENTRIES", "MAX_BYTES_VALUES", "MAX_KEY_BYTES"},
    "core/tfrecord/smallfile.py": {"_FEW_BYTES"},  # likewise: one record at a time or numpy
    "core/analysis/facts.py": {"_EXACT"},  # integers a double holds exactly: a fact of float64
    "core/analysis/checks.py": {"MOST", "MOSTLY_IMAGES", "SIGNAL_SIDE"},  # shares, a working scale
    "core/analysis/results.py": {"IDENTITY_ENDS"},  # bytes of a file's identity: a stored format
    "core/tags/identity.py": {"ENDS", "_SPAN"},  # bytes of a file's tag key; a read's piece size
    "core/tags/store.py": {"_SCHEMA"},  # the store's version
    "gui/controllers/tags.py": {"ASK_ABOVE"},  # when the window asks before a long action: no bound
    # store versions; a cadence; how settled a ctime must be to vouch for a file (a rule of trust)
    "core/analysis/cache.py": {"FORMAT", "_SCHEMA", "_TOUCH_AFTER", "_SETTLED_NS"},
    "core/analysis/progress.py": {"EVERY", "SUMMARY_SECONDS"},  # cadences of progress messages
    "core/analysis/compare.py": {"CATEGORY_INTS"},  # which integers are ids: a rule of meaning, no bound
    "core/procs/jobs.py": {"PROGRESS_SECONDS"},  # a cadence
    "core/records/textfmt.py": {"TEXT_LIMIT"},  # presentation: a text cell's width
    "cli/__init__.py": {"FILES_LISTED"},  # presentation: files listed in text output
    "gui/workers/jobs.py": {"BATCH_SECONDS"},  # a cadence
    "gui/controllers/shards.py": {"REFRESH_MS", "REFRESH_COST_SHARE"},  # a cadence
    "gui/models/problems.py": {"_NO_TARGET", "_ARRANGE_MS"},  # a sort key; a cadence
    "gui/main_window.py": {"ROW_TIMER_MS", "MAX_RECENT"},  # a cadence; a menu's length
    "gui/widgets/feature_tree.py": {"PAGE"},  # presentation: values shown per click
    "gui/widgets/record_table_view.py": {"_NUMBER_PAUSE_MS"},  # typing, not a resource
    "core/records/masks.py": {"IGNORE"},  # a label value (DeepLab's "ignore")
    "core/tfrecord/remote.py": {"HEAD_BYTES", "PAGE"},  # bytes that tell the compression; a page
    "gui/painting.py": {"FIT_MARGIN"},  # presentation: pixels around a fitted image
    "core/tfrecord/bitflip.py": {"_BLOCK"},  # the search's stride, not its extent
    "core/tfrecord/forensics.py": {"ZERO_RUN_MIN", "_SLACK", "_BLOCK"},  # likewise, and zeroed blocks
    "core/tfrecord/parts.py": {"_MARGIN"},  # records framed again
    # what a score means: blur's working scale, grey levels that count as equal bands
    "core/records/imagesignals.py": {"BLUR_SIDE", "GRAY_TOLERANCE"},
    "core/analysis/rules.py": {"MAD_SIGMA"},  # a normal distribution's sigma per MAD: a fact
    "core/arrayrecord/transposed.py": {"_U32", "_NUM_RESERVED"},  # the format: varint32, reserved ids
}
# How work is split, not how much of it is allowed: piece, batch and message sizes. Each bounds the
# memory of one step, never what is read or kept in all; a path-choosing threshold likewise.
PIECES = {
    "core/output/hfparquet.py": {"ROW_GROUP"},  # records a Parquet row group: splits the writing
    "core/analysis/evaluation.py": {"IOU_PIECE"},  # IoU cells computed at once
    # stored fact tables fetched and gathered at once (the answer is the same whatever they are)
    "core/analysis/factcolumns.py": {"BATCH_FILES", "BATCH_ROWS"},
    "core/analysis/labelrules.py": {"PAIRS_A_PIECE"},  # box pairs compared at once
    "core/procs/scanproc.py": {"_CHUNK"},
    # small files read into one buffer and framed at once (each file's answer is the same whatever it is)
    "core/tfrecord/smallfile.py": {"_RUN_BYTES"},
    "core/records/images.py": {"_BLOCK_PIXELS"},
    "core/arrayrecord/reader.py": {
        "_WALK_BATCH",
        "POSTSCRIPT_MAGIC",
    },  # headers hashed at once; a format fact
    "core/records/imagesignals.py": {"_TABLE_COUNTS"},  # entropy by a table or by log2: a path
    "core/records/payload.py": {"_PIECE"},
    "core/records/protoschema.py": {"_PIECE"},
    # transition patterns memoised (past it: byte by byte), slices or index arrays, a copy batch;
    # a string buffer long enough to chain by blocks, the bytes walked first to see its strings
    "core/arrayrecord/transposed.py": {
        "_MAX_GRAMS",
        "_COPY_BIG",
        "_INDEX_BATCH",
        "_EXACT",
        "_CHAIN_BLOCKS_FROM",
        "_CHAIN_SAMPLE",
    },
    "core/rewrite/run.py": {"RUN_BYTES", "GAP_BYTES"},  # records read in one read; a gap read over
    "core/rewrite/outdir.py": {"RUN_BYTES"},  # a written shard read back a window at a time
    "core/tfrecord/index.py": {"_RESYNC_BLOCK", "SPLIT_CUT"},  # SPLIT_CUT: a flag value
    "core/tfrecord/lineendings.py": {"_CHUNK"},
    "core/tfrecord/parts.py": {"_WINDOW", "_SPILL"},  # a window, and how far it reads past its range
    # chunk tokens in one pipe (below its size: never a wait); a chunk's size in long records
    "core/childproc.py": {"_MAX_CHUNKS", "_RECORDS_A_CHUNK"},
    "core/analysis/plain.py": {"_SEGMENT"},  # records of a bulk parse counted at once
    "core/tfrecord/source.py": {"_INPUT_BLOCK", "_OUTPUT_BLOCK", "_ZERO_STRIDE"},
    "gui/workers/scan.py": {"CHILD_MIN_BYTES", "STORE_BATCH", "POOL_MIN_FILES"},
    "gui/models/record_table.py": {"FULL_WALK_S"},  # how often the rows timer asks every file: a path
}


def _limit_names() -> list[str]:
    tree = ast.parse((PACKAGE / "core" / "limits.py").read_text())
    return [
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign)
        for t in node.targets
        if isinstance(t, ast.Name) and t.id.isupper()
    ]


def _readme_limits_section() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("Every resource limit lives in `tfrview/core/limits.py`")
    return text[start:]


def test_every_limit_is_named_in_the_readme() -> None:
    names = _limit_names()
    assert {"MAX_DECODE_BYTES", "PART_BYTES", "TOP_TRACK", "ROW_CAP"} <= set(names)
    section = _readme_limits_section()
    missing = [n for n in names if n not in section]
    assert missing == [], f"limits.py names not in the README's limits section: {missing}"


def _is_number(node: ast.expr) -> bool:
    """A literal number, or arithmetic of literal numbers (8 << 20, 256 * 1024)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, int | float) and not isinstance(node.value, bool)
    if isinstance(node, ast.BinOp):
        return _is_number(node.left) and _is_number(node.right)
    return isinstance(node, ast.UnaryOp) and _is_number(node.operand)


def _bounding_constants(path: Path) -> set[str]:
    """UPPER_CASE module-level numbers of `path` that its code compares with something or passes to
    min/max: what a simple AST check can tell of a bound on a size or a count."""
    tree = ast.parse(path.read_text())
    numbers = {
        t.id
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for t in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(t, ast.Name)
        and t.id.lstrip("_").isupper()
        and node.value is not None
        and _is_number(node.value)
    }
    used: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            parts = [node.left, *node.comparators]
        elif (
            isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("min", "max")
        ):
            parts = list(node.args)
        else:
            continue
        for part in parts:
            used |= {n.id for n in ast.walk(part) if isinstance(n, ast.Name) and n.id in numbers}
    return used


def test_no_module_defines_its_own_bound() -> None:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "core/limits.py" or "/proto/" in rel:
            continue
        own = _bounding_constants(path) - NOT_LIMITS.get(rel, set()) - PIECES.get(rel, set())
        if own:
            found[rel] = sorted(own)
    assert found == {}, f"bounds defined outside limits.py (move them there, or say why not): {found}"


def test_the_check_catches_a_bound_defined_elsewhere(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text("CAP = 4 << 20\nPAD = 3\n\ndef f(n):\n    return n > CAP\n")
    assert _bounding_constants(module) == {"CAP"}


def test_every_too_large_call_names_its_limit() -> None:
    names = set(_limit_names())
    unnamed = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) in (
                "too_large",
                "cut_note",
            ):
                given = [k.value for k in node.keywords if k.arg == "name"] or node.args[4:5]
                passed_on = given and isinstance(given[0], ast.Name) and given[0].id == "name"  # a wrapper's
                if not passed_on and not (
                    given and isinstance(given[0], ast.Constant) and given[0].value in names
                ):
                    unnamed.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert unnamed == [], f"limit messages that do not name their limit: {unnamed}"


def test_the_one_wording_ends_with_the_name() -> None:
    assert too_large("the schema", 20 << 20, 16 << 20, name="MAX_SCHEMA_BYTES") == (
        "the schema is 21.0 MB, over the 16.8 MB limit (limits.MAX_SCHEMA_BYTES)"
    )
    assert too_large("the image", 60, 50, "pixels", "MAX_IMAGE_PIXELS") == (
        "the image has 60 pixels, over the limit of 50 (limits.MAX_IMAGE_PIXELS)"
    )
    assert cut_note("xs", "values", MAX_LIST_VALUES + 1, MAX_LIST_VALUES, "MAX_LIST_VALUES") == (
        f"xs: {MAX_LIST_VALUES + 1:,} values, over the limit of {MAX_LIST_VALUES:,}; "
        f"the first {MAX_LIST_VALUES:,} are decoded (limits.MAX_LIST_VALUES)"
    )
    assert all(isinstance(getattr(limits, n), int | float) for n in _limit_names())


def test_every_exception_listed_still_exists() -> None:
    """A name left in NOT_LIMITS or PIECES after its constant moved or went would hide a new one."""
    stale = []
    for listing in (NOT_LIMITS, PIECES):
        for rel, names in listing.items():
            tree = ast.parse((PACKAGE / rel).read_text())
            defined = {
                t.id
                for node in tree.body
                if isinstance(node, ast.Assign)
                for t in node.targets
                if isinstance(t, ast.Name)
            }
            stale += [f"{rel}:{n}" for n in sorted(names - defined)]
    assert stale == []


# Literal waits and cache sizes that are no limit: a poll interval, a memo no input can grow.
LITERAL_OK = {
    ("core/analysis/pool.py", "timeout"),  # wait(timeout=0.2): how often the pool looks, not a bound
    ("cli/__init__.py", "maxsize"),  # _stamp: a second's words, a few hundred at most whatever the input
    ("core/records/imagesignals.py", "maxsize"),  # resize matrices by draft size: a few KB each
}


def test_no_literal_timeout_or_cache_size_outside_limits() -> None:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel == "core/limits.py" or "/proto/" in rel:
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                for k in node.keywords:
                    # one answer
                    once = k.arg == "maxsize" and isinstance(k.value, ast.Constant) and k.value.value == 1
                    if (
                        k.arg in ("timeout", "maxsize")
                        and _is_number(k.value)
                        and not once
                        and (rel, k.arg) not in LITERAL_OK
                    ):
                        found.append(f"{rel}:{node.lineno} {k.arg}=")
    assert found == [], f"literal timeouts or cache sizes outside limits.py: {found}"
