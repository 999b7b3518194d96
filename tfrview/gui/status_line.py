"""What the status bar says, as pure functions of plain facts (no Qt): tested on their own, and the
window only gathers the facts. The label that shows the line elides it in the middle to fit the
window and keeps the whole line in its tooltip (`widgets.elided_label`)."""

from __future__ import annotations

import html
import time
from collections import Counter
from dataclasses import dataclass

from tfrview.core.tfrecord.framing import Compression
from tfrview.core.units import human_bytes
from tfrview.gui.scan_phase import ScanPhase

SEP = "  ·  "


@dataclass(frozen=True, slots=True)
class StatusFacts:
    records: int
    size_bytes: int
    compressions: frozenset[str]  # of the files opened ('none', 'gzip', 'zlib')
    payload_kinds: str = ""  # 'Example payloads (+2 other kinds)'
    files: int = 1
    missing: int = 0  # shards a -of-N set lacks
    phase: ScanPhase | None = None  # where the window's scan is
    note: str = ""  # the scan's warning (a likely decompression bomb, ...)
    done_bytes: int = 0
    total_bytes: int = 0
    checked_at: float | None = None  # every file's CRCs came from a stored check made then
    checks: str = ""  # the analysis' own words ('QA checks done')
    analysis_note: str = ""
    labels: str = ""  # the label map's file name
    page: tuple[int, int] | None = None  # the first and last record shown, when the rows page
    tfds: str = ""  # a TFDS dataset's `name/version` (tfds.layout), said first
    tfds_splits: int = 0
    tfds_records: int | None = None  # by its dataset_info.json (None: not said)
    tfds_newest_of: int = 0  # the newest of this many versions was opened (a dataset folder was)


def status_text(f: StatusFacts) -> str:
    """The status bar's line, its parts in order of what a person looks for first."""
    files = f" in {f.files:,} files" if f.files > 1 else ""
    parts = [f"{f.records:,} records{files}", human_bytes(f.size_bytes)]
    if f.tfds:
        said = f"{f.tfds_records:,} records in " if f.tfds_records is not None else ""
        plural = "s" if f.tfds_splits != 1 else ""
        newest = f"newest of {f.tfds_newest_of} versions; " if f.tfds_newest_of > 1 else ""
        parts.insert(0, f"TFDS {f.tfds} ({newest}{said}{f.tfds_splits} split{plural} by its metadata)")
    parts.append(
        " / ".join(Compression(c).shown for c in sorted(f.compressions, reverse=True)) or "uncompressed"
    )
    if f.payload_kinds:
        parts.append(f.payload_kinds)
    if f.missing:
        parts.append(f"⚠ {f.missing} shard{'s' if f.missing != 1 else ''} missing")
    if f.note:
        parts.append(f"⚠ {f.note}" + ("; Esc stops it" if f.phase is ScanPhase.INDEX else ""))
    when = ""
    if f.phase in (ScanPhase.INDEX, ScanPhase.VERIFY):
        parts.append(f"{f.phase}ing {human_bytes(f.done_bytes)} of {human_bytes(f.total_bytes)}")
    elif f.phase is ScanPhase.DONE:
        checked = _checked_words(f.compressions)
        if f.checked_at:
            when = time.strftime("%Y-%m-%d %H:%M", time.localtime(f.checked_at))
            parts.append(f"{checked} {when} (unchanged since)")
        else:
            parts.append(checked)
    elif f.phase is ScanPhase.CANCELLED:
        parts.append("⚠ stopped: only partly read (Resume goes on)")
    if f.checks:
        said = f.analysis_note and f.analysis_note != f"checked {when}"  # not the CRCs' date again
        parts.append(f.checks + (f" ({f.analysis_note})" if said else ""))
    if f.labels:
        parts.append(f"labels: {f.labels}")
    if f.page is not None:
        parts.append(f"showing records {f.page[0]:,}–{f.page[1]:,} (Ctrl+G for others)")
    return SEP.join(parts)


def _checked_words(compressions: frozenset[str]) -> str:
    """What a finished verify checked: an ArrayRecord file's records by its chunk hashes (the CRCs
    of its frames are ours, computed from the decoded bytes), any other file's by their CRCs."""
    ar = Compression.ARRAYRECORD in compressions
    if ar and len(compressions) == 1:
        return "all chunk hashes checked"
    return "all CRCs and chunk hashes checked" if ar else "all CRCs checked"


def problems_text(counts: Counter, top: int = 2) -> str:
    """The problems' count and their commonest kinds, as rich text ('' when there is none); the
    label's tooltip lists every kind."""
    n = sum(counts.values())
    if not n:
        return ""
    kinds = " · ".join(f"{html.escape(str(k))} {v:,}" for k, v in counts.most_common(top))
    more = " · …" if len(counts) > top else ""
    return f"<span style='color:#b00020'>⚠ {n:,} problem{'s' if n != 1 else ''}</span>: {kinds}{more}"


def problems_tip(counts: Counter, file_errors: list[str], files_listed: int = 20) -> str:
    """The problem count's tooltip: every kind with its count, then the files that would not open
    or read (the first `files_listed`)."""
    lines = [f"{k}: {v}" for k, v in counts.most_common()] + file_errors[:files_listed]
    return "\n".join(lines) + "\n\nF8 / Shift+F8 step through them"


def missing_tip(missing: list[str], listed: int = 50) -> str:
    """The status line's tooltip addition when a -of-N set lacks shards: the first `listed` of them."""
    return "Missing shards:\n" + "\n".join(missing[:listed])
