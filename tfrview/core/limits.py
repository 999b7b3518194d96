"""Every resource limit tfrview applies to what it reads, in one place.

Hostile or broken input must never cost unbounded memory or time. Each limit below says what it
bounds; code that hits one reports it (a problem of kind `limit_exceeded`, a note on the payload,
or a one-line message) rather than truncating silently. The budget they add up to: a file under
100 MB never needs more than ~300 MB beyond the interpreter, whatever it holds.
"""

from __future__ import annotations

import logging
import math
import os

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
# A JSON-lines list of records a rewrite drops (`rewrite --drop-records`, the tags' export form)
MAX_RECORD_LIST_BYTES = 256 << 20
MAX_RECORD_LIST_LINE = 64 << 10  # one {"file": PATH, "offset": N} object, with room for other fields
# A TFDS `features.json` (core/tfds/features.py), read as JSON data only: its size, how deep its
# features nest (RLDS nests 3 or 4 levels), how many features it declares in all, and each
# `<name>.labels.txt` beside it (its size and the class names kept of it; past them the rest are
# not named and a note says so). Past any other, the features are not read and one line says why.
MAX_TFDS_FEATURES_BYTES = 16 << 20
MAX_TFDS_FEATURE_DEPTH = 32
MAX_TFDS_FEATURES = 10_000
MAX_TFDS_LABELS_BYTES = 16 << 20
MAX_TFDS_CLASS_NAMES = 200_000
# Folders whose parsed features a process keeps (core/tfds/features.features_of_folder): one load a
# folder, each entry a few KB of specs and its class names.
TFDS_FEATURES_MEMO = 16

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


def too_large(what: str, size: int | None, limit: int, unit: str = "bytes", name: str = "") -> str:
    """The one wording every limit uses when hit, ending with the limit's name in this module (a
    person can look it up here and in the README); size None: more than the limit, not counted."""
    from tfrview.core.units import human_bytes  # start-up: kept off the CLI's path

    if unit == "bytes":
        text = (
            f"{what} is {human_bytes(size)}, over the {human_bytes(limit)} limit"
            if size is not None
            else (f"{what} is over the {human_bytes(limit)} limit")
        )
    elif size is None:
        text = f"{what} has over {limit:,} {unit}"
    else:
        text = f"{what} has {size:,} {unit}, over the limit of {limit:,}"
    return f"{text} (limits.{name})" if name else text


def inflation_note(path: str, compression: str, inflated: int, consumed: int) -> str | None:
    """What to say about a compressed stream that inflates like a decompression bomb, or None."""
    if (
        compression == "none"
        or inflated < BOMB_MIN_BYTES
        or consumed <= 0
        or inflated < BOMB_RATIO * consumed
    ):
        return None
    from tfrview.core.units import human_bytes  # start-up: kept off the CLI's path

    return (
        f"{path}: the {compression.upper()} stream inflates {inflated / consumed:,.0f}:1 "
        f"({human_bytes(inflated)} so far from {human_bytes(consumed)}): a decompression bomb? "
        "Reading goes on at inflate speed"
    )


# Remote files (core/tfrecord/remote.py): the bytes fetched from remote objects kept on local disk,
# in the user's cache directory, by URL and version, so that the CRC pass, the analysis workers and
# a later session read what was fetched once. Trimmed to this, least recently used first, once every
# 256 objects opened (REMOTE_TRIM_EVERY); `tfrview cache` counts it, `tfrview cache --clear` empties it.
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

# Remote reads (core/tfrecord/remote.py): how long a server may keep tfrview waiting. A connection
# not made within NET_CONNECT_TIMEOUT, or an open one on which the server sends nothing for
# NET_READ_TIMEOUT, fails its request; so does one request (a size, a fetch of at most 32 MB) whose
# answer is not whole within NET_REQUEST_TIMEOUT, however it trickles. A size request (HTTP: HEAD,
# then GET if HEAD says no size) ends within NET_CONNECT_TIMEOUT + NET_READ_TIMEOUT. A request that
# timed out is not tried again: a silent server is said once, after its timeout. The environment
# variable TFRVIEW_NET_TIMEOUT (seconds) replaces NET_READ_TIMEOUT, and bounds the connect timeout
# too (a slow link: wait longer; a test: a second).
NET_CONNECT_TIMEOUT = 10.0
NET_READ_TIMEOUT = 30.0
NET_REQUEST_TIMEOUT = 300.0


def net_timeouts() -> tuple[float, float, float]:
    """(connect, read, request) timeouts in seconds, TFRVIEW_NET_TIMEOUT applied (read at each call:
    child processes and tests see what their environment says)."""

    connect, read, request = NET_CONNECT_TIMEOUT, NET_READ_TIMEOUT, NET_REQUEST_TIMEOUT
    text = os.environ.get("TFRVIEW_NET_TIMEOUT", "").strip()
    if text:
        try:
            value = float(text)
            if not (math.isfinite(value) and value > 0):
                raise ValueError(text)
        except ValueError:
            logging.getLogger(__name__).warning(
                "TFRVIEW_NET_TIMEOUT=%r is no positive number of seconds: ignored", text
            )
        else:
            read = value
            connect = min(connect, value)
            request = max(request, value)
    return connect, read, request


# A server that answers a byte-range request with the whole object (status 200: it ignores Range)
# is read that way only for an object up to this size; past it, or when it does not say the length,
# the answer is dropped at its headers: every fetch would bring the whole object again.
NET_WHOLE_OBJECT_BYTES = 16 << 20

# The result store (core/analysis/cache.py, one SQLite file shared by every tfrview process): a
# process waits this long for another's write before it says the store is busy and goes on without it.
STORE_BUSY_SECONDS = 10.0

# A schema for custom payloads (records/protoschema.py): a descriptor set or .proto file is read whole;
# 16 MB holds any real one. A record read through it keeps MAX_LIST_VALUES values a repeated field.
MAX_SCHEMA_BYTES = 16 << 20

# Label maps found beside the data (records/labelmap.find_label_map): each .pbtxt there is parsed
# to see whether it is a label map (a 16 MB one takes ~6 s), so at most this many are tried, of at
# most this many bytes together (real ones are a few KB: LVIS's 1,203 classes fit in ~100 KB);
# the rest are skipped, and that is said. A map given by name (--label-map) is not bound by these.
LABEL_MAP_CANDIDATES = 16
LABEL_MAP_CANDIDATE_BYTES = 4 << 20

# Boxes of one record drawn and listed (records/overlays.compute_overlay): past this many, the first
# ones are drawn, the rest are counted and said (a record with 1 M boxes cost the window 2 GB and a
# 30 s stall as one Python object a box). Checks and summaries count every box, by array operations.
MAX_BOXES_DRAWN = 2_000
# Of those, the first this many carry their class label (2,000 labels cost the window 0.3-0.6 s a
# repaint on a loaded machine, and overlap into noise); the image panel says so.
MAX_BOX_LABELS_DRAWN = 200

# Proof searches for lost CR bytes (core/tfrecord/lineendings.py), bounded beyond PROOF_SPACE: how
# many placements there are says nothing of the work of finding the one that passes (k lost CR
# bytes among m LF bytes enumerate C(m, k'-2) heads of m lookups each, k' the smaller of k and
# m - k). A search is refused before it starts when it would take more than PROOF_WORK steps (an
# array element looked up; ~1 s), and the searches of one file's walk stop after PROOF_SECONDS
# (repair) or PROOF_DETECT_SECONDS (naming a file's cause for info, verify and the analysis). A
# record not searched is left out: "proof search budget exceeded (limits.NAME)".
PROOF_WORK = 1 << 25
PROOF_SECONDS = 60.0
PROOF_DETECT_SECONDS = 5.0
# Naming causes (core/tfrecord/forensics.py): the bytes of damaged records searched for one flipped
# bit a file, all together (each MB costs 0.1-0.5 s): CAUSE_RECORDS records of up to 16 MB were up to
# 1 GiB, minutes of `verify`. The record that crosses it is searched whole (so at most 4 + 16 MB);
# past it, the next damaged record's cause says the limit. `tfrview repair` searches every record.
CAUSE_SEARCH_BYTES = 4 << 20

# TF-Ranking's ExampleListWithContext (records/payload.py): the examples of one list decoded (each an
# Example, with the Example limits); past this, the list's further examples are counted, not decoded.
MAX_LIST_EXAMPLES = 10_000

# A filter on the QA findings (`problem`) typed while the analysis runs (gui/controllers/filter.py)
# runs again as findings arrive, at most once every this many seconds, and once more when the pass
# ends; until then its count says "QA still running".
FILTER_RERUN_SECONDS = 2.0

# Distinct feature keys the analysis pass tracks (analysis/checks.Schema, analysis/datasummary):
# schema counts, statistics and each record's schema signature hold at most this many keys, a file
# and a dataset (the first seen, in file order); occurrences of further keys are counted as "other
# keys" and said once (a `limit_exceeded` finding, a line in `info`). 100 Examples of 10,000
# distinct keys each once cost 2.5 GB and 44 s; the fact table has its own FACT_KEYS (a file and,
# since, a dataset: the Parquet export's feature columns).
TRACKED_KEYS = 4096

# The analysis pass's tasks (core/analysis/pool.batches): small files go to a worker together, up to
# this many bytes or files a task (each file's result is still its own, stored and reported per
# file), so 2,048 shards of 100 KB cost a few dozen tasks, not 2,048 (~20 ms each of start, pickling
# and a transaction). A task is smaller when the dataset is small, so every core gets several.
TASK_BYTES = 64 << 20
TASK_FILES = 512
# The deep pass (every record decoded) holds a task's decoded facts until it ends: its tasks take
# fewer bytes (16 MB of 116-byte Examples is ~140,000 records, a few seconds on one core).
TASK_DEEP_BYTES = 16 << 20
# A file's deep pass runs in parts of about 64 MB (analysis/shard.PART_BYTES) and of about this
# many records (estimated from the records of its first MB and rounded: a 250,000-record shard is
# one part; at most 375,000 records a part): a worker's decoded records take ~1 KB each until its
# part ends, so 666,000 tiny records a part (a 2 M-record file of 210 MB) held 1 GB. Each part frames the whole file (~1.5 us a record), so parts are not made smaller still.
PART_RECORDS = 250_000

# --- one reading of a record (records/reading.py) ---
# Feature layouts (keys and types) whose box roles a ReadingContext remembers; a dataset of ever
# new layouts starts again past this many (a layout of over 256 keys is never remembered).
READING_LAYOUTS = 1024
# Records with boxes whose one agreed convention the rest of a dataset is read by (a ReadingContext
# looks at no more before it settles).
AGREEING_RECORDS = 16

# The window's log file (core/logs.configure_file, in userdirs.state_dir()): it is rotated at this
# size and this many older files are kept, so a window left open for weeks holds at most ~3 MB of
# log; each fresh file starts with a line naming LOG_FILE_BYTES.
LOG_FILE_BYTES = 1 << 20
LOG_FILES_KEPT = 2

# The deep pass's column path for plain Examples (analysis/plain.py): records of one batch are
# counted together by array operations; a batch holds their protobuf lists (of ~100-byte records:
# ~2 MB) until it is counted.
PLAIN_BATCH_RECORDS = 4096
# The deep pass reads a part's records this many bytes of the file at a time (one read a record
# cost more than decoding a tiny one); a larger record is read alone.
DEEP_READ_BYTES = 4 << 20

# Remote splits of many small objects (core/tfrecord/remote.fetch_ahead): the objects of one task
# of the analysis pass up to NET_SMALL_OBJECT_BYTES are each fetched whole in one request (no size
# request when the listing said it), NET_IN_FLIGHT requests at a time, while the task's files are
# framed and checked in order: 2,048 shards of 100 KB behind 50 ms a request are ~64 rounds of
# 50 ms, not 6,000 requests one after another. Fetched bytes in memory stay under NET_IN_FLIGHT x
# NET_SMALL_OBJECT_BYTES (128 MB); a larger object is fetched as it is scanned, as before.
NET_IN_FLIGHT = 32
NET_SMALL_OBJECT_BYTES = 4 << 20

# --- issue 19, per-shard costs (wt-shards) ---
# A plain local file up to this size is read whole in one read and framed from memory when the
# analysis pass only frames and checks CRCs (tfrecord/smallfile.py): thousands of small shards then
# cost no stream set-up a file. Any damage, compression or change sends the file down the usual
# path, which says why; memory holds one such file at a time.
SMALL_FILE_WHOLE_BYTES = 4 << 20

# One big plain file framed and CRC-checked in parts (core/tfrecord/parts.py): a local uncompressed
# file of FRAME_PARTS_BYTES or more is framed and checked by one process a core (at most one per
# FRAME_PART_MIN_BYTES of the file: a process costs a start, ~0.2 s), its chunks joined where they
# agree; the rest is framed on one core from the first disagreement.
# Compressed files are framed on one core: a deflate stream cannot be entered in the middle.
FRAME_PARTS_BYTES = 64 << 20
FRAME_PART_MIN_BYTES = 32 << 20
# The ranges are chunks of about FRAME_CHUNK_BYTES (at least two a process, at most 4,096), which the
# caller and its part processes (one a core, at most one per FRAME_PART_MIN_BYTES of the file) each
# take when free (childproc.deal_chunks): whoever starts first or runs faster frames more. A chunk
# costs a search for its first header (a few KB) and a part in the answer; one 8 MB window each.
FRAME_CHUNK_BYTES = 8 << 20

# --- issue 20: limits that lived in the modules that apply them (wt2-limits) ---
# The deep pass of one file (analysis/shard.py): parts of about PART_BYTES (with limits.PART_RECORDS),
# at most MAX_PARTS of them (more parts each frame the whole file again: 16 x ~1.5 us a record), the
# record count estimated from the file's first PART_SAMPLE_BYTES.
PART_BYTES = 64 << 20
MAX_PARTS = 16
PART_SAMPLE_BYTES = 1 << 20
# Distinct class ids a file's result remembers (analysis/shard.py), to judge a label map found beside
# the data: a set of 100,000 ints is ~5 MB a file; past it, further ids are not remembered.
CLASS_IDS_TRACKED = 100_000
# Distinct values of one key whose counts the Dataset Summary keeps (analysis/datasummary.py): past
# it, new values are no longer counted (values already tracked still are).
TOP_TRACK = 5000
# Distinct image hashes remembered for the duplicate-image check (analysis/merge.py): 5 M hashes
# in a dict; past it, further images are not compared with the rest.
DUPLICATES_TRACKED = 5_000_000
# Candidate pairs the near-copy index of analysis/duplicates.py expects to compare (its choice of
# shared hash bytes keeps the expected count under this: ~16 bytes each in arrays, ~0.5 GB at most).
DUPLICATE_CANDIDATES = 30_000_000
# The duplicate groups the report and the window list (analysis/duplicates.py: every record's
# dup_group column still has them all), and the members listed a group (with a count of the rest).
DUPLICATE_GROUPS_SHOWN = 10_000
DUPLICATE_GROUP_MEMBERS_SHOWN = 32
# A feature layout of more keys than this is never remembered by a ReadingContext (records/reading.py):
# READING_LAYOUTS layouts of 10,000 keys each would hold 10 M tuples.
READING_LAYOUT_KEYS = 256
# Records searched for one flipped bit (tfrecord/bitflip.py, output/repair.py): each MB costs
# 0.1-0.5 s; larger damaged records are left damaged, and that is said.
MAX_REPAIR_BYTES = 16 << 20
# Framing (tfrecord/index.py): a compressed stream's bytes held at once, records longer than
# BIG_RECORD_BYTES skipped over rather than buffered, and the distinct record lengths whose length
# CRC is remembered (a dict of ints).
FRAME_WINDOW_BYTES = 8 << 20
BIG_RECORD_BYTES = 64 << 20
LENGTH_CRC_CACHE = 1 << 16
# Line-ending conversions (tfrecord/lineendings.py): CR bytes one record may have lost (ends beyond
# are not looked for), and what of a file is read to judge whether it went through one.
LOST_CR_MAX = 4096
LINE_ENDINGS_HEAD_BYTES = 4 << 20
LINE_ENDINGS_HEAD_RECORDS = 64
# Remote reads (tfrecord/remote.py): a sequential scan's fetches double up to NET_MAX_BLOCK; a read
# that failed in a way that can pass is tried NET_RETRIES times; a listing that gave no sizes asks
# NET_LISTING_THREADS at a time; the kept bytes are trimmed once every REMOTE_TRIM_EVERY objects
# opened; at most REMOTE_HANDED_MAX objects are held open for workers (two descriptors each).
NET_MAX_BLOCK = 32 << 20
NET_RETRIES = 3
NET_LISTING_THREADS = 64
REMOTE_TRIM_EVERY = 256
REMOTE_HANDED_MAX = 64
# What a listing said of each object (size, version) answers opening it without a request for this
# many seconds (an object rewritten since is asked again after it), for at most this many objects
# (the oldest dropped first: ~300 bytes each).
REMOTE_LISTED_SECONDS = 600.0
REMOTE_LISTED_MAX = 1 << 16
# Points of one series a plot hands the window (analysis/plots.py): every k-th beyond it (a plot's
# resolution, not the data's).
SERIES_POINTS = 200_000
# Event files up to this many bytes together are read for their first plot before the analysis
# (procs/jobs.py); larger ones wait for the pass's facts.
QUICK_EVENT_BYTES = 64 << 20
# The window (gui/): rows an item view is given at once (under Qt's ~71.5 M-row limit for item
# views; past it the record table pages), rows whose text the record table caches, thumbnails the
# gallery caches (160x120 each, ~75 KB: ~230 MB at most), boxes drawn antialiased (past it, plain
# lines: antialiasing thousands of boxes slows every repaint).
ROW_CAP = 50_000_000
CACHE_ROWS = 4096
GALLERY_CACHE = 3000
SMOOTH_BOXES = 200
# Memo caches of small answers (a key's name, a folder's real path): entries, not bytes.
NAME_MEMO = 4096
# How long tfrview waits for a process it ends or a tool it runs, in seconds: the spare job process
# at exit (the OS reaps it past this), a pool worker after terminate(), `ldd` on one of Qt's X11
# libraries (gui/x11_libs.py), a desktop database tool (desktop.py: update-desktop-database and the
# like, which can be slow on a cold cache).
SPARE_EXIT_SECONDS = 5.0
WORKER_EXIT_SECONDS = 5.0
LDD_SECONDS = 10.0
DESKTOP_TOOL_SECONDS = 120.0
# How long a command waits for its group worker (analysis/groupproc.py) to end by itself once told
# there are no more groups (it answers, then ends at once: ~5 ms) before it ends it.
GROUP_WORKER_END_SECONDS = 0.05
# --- issue 19, a split's files opened lazily (wt2-lazyopen) ---
# The files of a dataset are opened when first framed or read (core/tfrecord/lazyfile.py), and at
# most OPEN_FILES_HELD of their descriptors are held at once in a process (a quarter of a lower
# `ulimit -n`); past it the least recently used idle one is closed and opened again when read
# again. Logged as "OPEN_FILES_HELD" when every held descriptor is being read at once.
OPEN_FILES_HELD = 128
# --- issue 22, TFDS metadata (wt5-tfdsmeta) ---
# A TFDS `dataset_info.json` is read whole and parsed as JSON: files over MAX_TFDS_INFO_BYTES are not
# read (a real one, statistics included, is kilobytes to a few megabytes), JSON nested deeper than
# MAX_TFDS_JSON_DEPTH levels is refused (TFDS writes ~10), and a split naming more than
# MAX_TFDS_SHARDS shards has its shards not listed (DROID has 2,048). Each says its name when hit.
MAX_TFDS_INFO_BYTES = 32 << 20
MAX_TFDS_JSON_DEPTH = 64
MAX_TFDS_SHARDS = 100_000
# --- issue 22, ArrayRecord and Riegeli files (core/arrayrecord/, wt5-arrayrecord) ---
# A chunk's decoded records are held whole while a record of it is read (one chunk per file is
# kept): a chunk that decodes to more than this is refused in one line (a group_size:65536 chunk of
# 4 KB records is 256 MB). A footer's chunk list (about 10 bytes a chunk) is read whole: past
# AR_FOOTER_BYTES the file is read as if it had none, by its block headers. The chunks a file may
# list (each costs 24 bytes of index arrays) and the records it may hold bound what is allocated
# before any of it is read; every claim is also checked against the file's size first.
AR_CHUNK_BYTES = 256 << 20
AR_FOOTER_BYTES = 512 << 20
AR_MAX_CHUNKS = 50_000_000
AR_MAX_RECORDS = 2_000_000_000
# A transposed chunk ('t') is decoded by walking its state machine, a batch of steps (a field, a
# submessage's start or end, a record's start) at a time: the walk is held as a few bytes a
# transition byte, the per-step arrays for one batch only; a chunk whose transitions walk more
# steps than this is refused in one line (64 MiB of small Examples walk about 24 M).
AR_TRANSPOSED_STEPS = 40_000_000
# A Riegeli metadata chunk ('m': a RecordsMetadata proto, which may carry .proto file descriptors)
# is read only up to this many bytes, stored or decoded; a bigger one is said in one line, unread.
AR_METADATA_BYTES = 16 << 20
# A pickle record is shown as `pickletools` disassembly of at most this many of its bytes (never
# unpickled).
PICKLE_SHOWN_BYTES = 64 << 10
# A msgpack record (issue 22) is decoded by the `msgpack` package only when the whole payload is one
# map or array: a container may claim at most MSGPACK_MAX_ITEMS entries (and never more than the
# payload has bytes: each entry takes one at least), checked before anything is allocated; what is
# shown (the window's tree, `dump`'s text and JSON) stops MSGPACK_MAX_DEPTH levels down and after
# MSGPACK_SHOWN_NODES values, each cut said. Nesting past the decoder's own 1,024 levels is bytes.
MSGPACK_MAX_ITEMS = 1_000_000
MSGPACK_MAX_DEPTH = 32
MSGPACK_SHOWN_NODES = 10_000
# --- issue 23, TFDV files (core/tfdv/, wt6-tfdv) ---
# A TFDV schema, statistics or anomalies file (schema.pbtxt, FeatureStats.pb, SchemaDiff.pb) is read
# whole and parsed by protobuf: a bigger one is refused in one line. TFX's statistics of a wide
# dataset are a few megabytes; 256 MB holds 1,000 rank-histogram buckets of tens of thousands of features.
MAX_TFDV_FILE_BYTES = 256 << 20
# --- issue 23, exports to training formats and the COCO re-import (wt6-exports) ---
# A COCO annotations file is read whole and parsed as JSON (COCO 2017's train instances are 448 MB):
# a file over MAX_COCO_JSON_BYTES is refused in one line naming it.
MAX_COCO_JSON_BYTES = 2 << 30
# What an export or a re-import names one by one: the records an export skipped (the rest counted in
# its result), and the names and records a re-import's report lists of each kind (the rest counted).
EXPORT_NOTES_LISTED = 50
IMPORT_REPORT_LISTED = 1000
# --- issue 23, the person's tags (core/tags/, wt6-tags) ---
# A tag's free note is kept to this many characters (longer is cut, and that is logged); a line of a
# tags JSON-lines file (`tfrview tags import`) longer than TAG_LINE_BYTES is refused in one line,
# naming it, before it is parsed. The store waits STORE_BUSY_SECONDS for another process's write.
TAG_NOTE_CHARS = 2_000
TAG_LINE_BYTES = 64 << 10
# The window keeps the last TAG_UNDO_STEPS tagging actions for Ctrl+Z (each holds the rows it
# changed, as arrays: a bulk tag of a million records is one step of ~30 MB); older ones are let go.
TAG_UNDO_STEPS = 64
# --- issue 24, predictions against the ground truth (wt6-predcore) ---
# A predictions file (a COCO results JSON, or a TFRecord of predictions) is read whole into arrays:
# one over PREDICTIONS_FILE_BYTES is refused in one line (a COCO results file of 5,000 images x 100
# detections is ~50 MB; JSON parsing costs ~10 times its size in memory while it lasts), and one of
# more than MAX_PREDICTIONS predictions too (each costs ~60 bytes of arrays once joined). The
# evaluation keeps the first-pass matching of EVAL_FIRST_PASSES IoU thresholds (each ~10 bytes a box
# and a prediction's padded cell), so moving a slider back and forth re-matches nothing.
PREDICTIONS_FILE_BYTES = 256 << 20
MAX_PREDICTIONS = 20_000_000
EVAL_FIRST_PASSES = 3
