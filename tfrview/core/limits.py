"""Every resource limit tfrview applies to what it reads, in one place.

Hostile or broken input must never cost unbounded memory or time. Each limit below says what it
bounds; code that hits one reports it (a problem of kind `limit_exceeded`, a note on the payload,
or a one-line message) rather than truncating silently. The budget they add up to: a file under
100 MB never needs more than ~300 MB beyond the interpreter, whatever it holds.
"""

from __future__ import annotations

# --- records -------------------------------------------------------------------------------------
# A record larger than this is never read whole for decoding: its CRC is streamed, its first
# HEAD_BYTES are shown, and writers copy it in pieces.
MAX_DECODE_BYTES = 64 << 20
HEAD_BYTES = 4096
# Pieces in which big records are checksummed and copied.
STREAM_PIECE = 8 << 20
# Payloads up to this size are parsed by protobuf's C parser (upb), which may use up to ~10x the
# payload in memory; larger ones by tfrview's own bounded walker, which stops at the limits below.
UPB_MAX_BYTES = 1 << 20

# --- inside one record ---------------------------------------------------------------------------
MAX_FEATURES = 10_000  # feature keys decoded per Example / context / feature_lists map
MAX_LIST_VALUES = 1_000_000  # values decoded per feature list
MAX_STEPS = 10_000  # steps decoded per SequenceExample feature list
MAX_NESTING = 32  # levels of a schema-less protobuf shown as nested fields
MAX_WIRE_FIELDS = 100_000  # fields of a schema-less protobuf shown, all levels together

# --- images --------------------------------------------------------------------------------------
MAX_IMAGE_PIXELS = 50_000_000  # larger images are refused as decompression bombs
MAX_IMAGE_DECODED_BYTES = 160 << 20  # width x height x bands x bytes per band, before any conversion

# --- side files ----------------------------------------------------------------------------------
MAX_INDEX_FILE_BYTES = 256 << 20  # an 'offset size' index file (~12 M records)
MAX_INDEX_LINE = 64  # two 20-digit numbers and a space fit easily
MAX_LABEL_MAP_BYTES = 16 << 20
MAX_LABEL_MAP_NESTING = 16  # a StringIntLabelMap nests 2 or 3 levels

# --- the analysis pass: fact tables and the cache --------------------------------------------------
# The fact table holds what the filter and exports need of each record, not the record: lists are
# kept up to FACT_VALUES values (their length is always kept), bytes values up to FACT_BYTES bytes
# (longer ones, images above all, are null there), and at most FACT_KEYS feature keys per file and
# per dataset (the first, in file order: the Parquet export's feature columns).
# What a filter cannot see for these reasons is said when it matters (see analysis.vfilter).
FACT_VALUES = 256
FACT_BYTES = 256
FACT_KEYS = 1024
# The analysis cache (user's cache directory) is trimmed, least recently used first, to this size.
CACHE_MAX_BYTES = 4 << 30

# --- compressed streams --------------------------------------------------------------------------
# Past this ratio of inflated to compressed bytes (and BOMB_MIN_BYTES inflated), a stream is said to
# be a likely decompression bomb; reading goes on, at inflate speed, and can be stopped.
BOMB_RATIO = 100
BOMB_MIN_BYTES = 1 << 30


def too_large(what: str, size: int, limit: int, unit: str = "bytes") -> str:
    """The one wording every limit uses when hit."""
    from tfrview.core.units import human_bytes

    if unit == "bytes":
        return f"{what} is {human_bytes(size)}, over the {human_bytes(limit)} limit"
    return f"{what} has {size:,} {unit}, over the limit of {limit:,}"


def inflation_note(path: str, compression: str, inflated: int, consumed: int) -> str | None:
    """What to say about a compressed stream that inflates like a decompression bomb, or None."""
    if compression == "none" or inflated < BOMB_MIN_BYTES or consumed <= 0 or inflated < BOMB_RATIO * consumed:
        return None
    from tfrview.core.units import human_bytes

    return (
        f"{path}: the {compression.upper()} stream inflates {inflated / consumed:,.0f}:1 "
        f"({human_bytes(inflated)} so far from {human_bytes(consumed)}): a decompression bomb? "
        "Reading goes on at inflate speed"
    )

# Remote files (core/tfrecord/remote.py): the bytes fetched from remote objects kept on local disk,
# in the user's cache directory, by URL and version, so that the CRC pass, the analysis workers and
# a later session read what was fetched once. Trimmed to this, least recently used first, whenever
# an object is opened; `tfrview cache --clear` empties it.
REMOTE_SPILL_BYTES = 16 << 30
# While one remote file is framed, the next ones are fetched ahead (network waits overlap): this
# many files ahead, at most this many bytes of each (past it, the scan fetches as it reads).
READ_AHEAD_FILES = 8
READ_AHEAD_BYTES = 16 << 20

# Naming causes (core/tfrecord/forensics.py): damaged records examined a file for one flipped bit or
# zeroed blocks (each costs up to 0.1 s a MB), and the bytes read for a damaged region's cause.
CAUSE_RECORDS = 64
CAUSE_BYTES = 16 << 20

# Payloads larger than this are decoded one at a time in a process (records/payload.decode): the
# window's row summary, feature tree and sample could otherwise decode one huge record three times
# at once (measured: 580 MB peak for a 38 MB list of 40 M integers, 380 MB one at a time).
ONE_AT_A_TIME_BYTES = 8 << 20

# Repairs that search (core/tfrecord/lineendings.py): a record that lost k CR bytes is searched only
# when the ways to put them back before its LF bytes number at most this many. A second way that
# passes the data CRC refuses the record; a wrong way passes by accident 1 time in 2^32, so with
# 2^26 ways a lone match that is not the lost bytes' true place has odds under 1 in 64 even if the
# record was damaged some other way too (a 100 KB JPEG has ~400 LF bytes: up to 3 lost CR bytes).
PROOF_SPACE = 1 << 26
# A file whose line-ending conversion is undone is read whole into memory (repair only).
LINE_ENDINGS_MAX_BYTES = 1 << 30

# A SequenceExample's frames offered as images and drawn in the filmstrip (records/frames.py).
MAX_FRAMES = 64
# Values that are no image kept per key per file, for a key the dataset turns out to hold images in
# (analysis/checks.ImageKeys): past this, a file's further odd values of that key go unnamed.
IMAGE_KEY_ODD_TRACKED = 64

# Distinct feature keys the analysis pass tracks (analysis/checks.Schema, analysis/datasummary):
# schema counts, statistics and each record's schema signature hold at most this many keys, a file
# and a dataset (the first seen, in file order); occurrences of further keys are counted as "other
# keys" and said once (a `limit_exceeded` finding, a line in `info`). 100 Examples of 10,000
# distinct keys each once cost 2.5 GB and 44 s; the fact table has its own FACT_KEYS (a file and,
# since, a dataset: the Parquet export's feature columns).
TRACKED_KEYS = 4096
