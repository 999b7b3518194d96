"""The messages a job process sends the window, as frozen dataclasses with one JSON framing.

Why: the window used to dispatch plain dicts by which key they held, in four places, each with
its own idea of what a job may say. A message is now a type; the window `match`es on it, and a
job that ends says so with one shape: `Done` when it succeeded, `Failed` (one line and the kind of
error) when it did not. On the wire each message is one JSON object on one line, with its `type`:

    {"type": "progress", "phase": "analysis", "done": 3, "total": 10}

Never pickle (a child's bytes are never code to the window) and never text parsed back: `decode`
takes exactly what `encode` wrote, and anything else is a `ValueError`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from typing import TYPE_CHECKING, Any, ClassVar

from tfrview.core import jsontext
from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.problems import Problem

if TYPE_CHECKING:
    from tfrview.core.analysis.compare import Comparison
    from tfrview.core.output.export import ExportResult
    from tfrview.core.output.repair import RepairResult
    from tfrview.core.output.salvage import SalvageResult


@dataclass(frozen=True, slots=True)
class Progress:
    """How far a job is: `done` of `total` in a phase ("analysis", "filter", "writing", …)."""

    TYPE: ClassVar[str] = "progress"
    phase: str
    done: int
    total: int


@dataclass(frozen=True, slots=True)
class ProblemFound:
    """A problem the analysis found in file number `file` (the window's numbering)."""

    TYPE: ClassVar[str] = "problem"
    file: int
    problem: Problem

    def to_json(self) -> dict:
        return {"type": self.TYPE, "file": self.file, "problem": self.problem.to_json()}

    @classmethod
    def from_json(cls, d: dict) -> ProblemFound:
        return cls(int(d["file"]), Problem.from_json(d["problem"]))


@dataclass(frozen=True, slots=True)
class CauseFound:
    """Why a problem the window framed itself happened (its kind and offset name it)."""

    TYPE: ClassVar[str] = "cause"
    file: int
    kind: str
    offset: int
    text: str


@dataclass(frozen=True, slots=True)
class FileCause:
    """Why a whole file broke (a line-ending conversion, a copy cut short, …)."""

    TYPE: ClassVar[str] = "file_cause"
    file: int
    text: str


@dataclass(frozen=True, slots=True)
class Plot:
    """A plot's data as `analysis.plots.plot` makes it (one of series, histogram, heatmap or
    scatter): a plot job's answer, or an event file's first scalar sent with the analysis."""

    TYPE: ClassVar[str] = "plot"
    data: dict

    @property
    def series_key(self) -> str | None:
        """The key a series plots (None for any other plot)."""
        return (self.data.get("series") or {}).get("key")


@dataclass(frozen=True, slots=True)
class Summary:
    """The dataset summary (partial ones as files finish); the last one says how many files were
    analysed, how many of them came from the store, and when the oldest of those was read."""

    TYPE: ClassVar[str] = "summary"
    summary: dict
    partial: bool
    cached: int = 0
    files: int = 0
    analysed_at: float | None = None


@dataclass(frozen=True, slots=True)
class SplitSummary:
    """One split's summary (`DatasetSummary.to_json()` of its files), sent by the analysis before
    the whole dataset's last `Summary` when the files are in more than one split; `files` the
    window's numbers of its files."""

    TYPE: ClassVar[str] = "split_summary"
    split: str
    summary: dict
    files: list[int] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Matches:
    """Record numbers (global) a filter or a plot selection matched, among the first `upto`."""

    TYPE: ClassVar[str] = "matches"
    matches: list[int] = field(default_factory=list)
    upto: int = 0
    total: int = 0


@dataclass(frozen=True, slots=True)
class Compared:
    """A compare job's answer: the comparison as `analysis.compare` made it (read back as that
    dataclass, never rebuilt from text); `selectable`: the window's record numbers are the job's,
    so a bar of side A (and of side B when it is the window's too) can show its records."""

    TYPE: ClassVar[str] = "compared"
    comparison: Comparison
    selectable: bool = True

    def to_json(self) -> dict:
        return {"type": self.TYPE, "comparison": self.comparison.to_json(), "selectable": self.selectable}

    @classmethod
    def from_json(cls, d: dict) -> Compared:
        from tfrview.core.analysis.compare import Comparison  # the scan process never needs it

        extra = set(d) - {"type", "comparison", "selectable"}
        if extra:
            raise ValueError(f"unexpected fields {sorted(extra)} in a compared message")
        return cls(Comparison.from_json(d["comparison"]), bool(d.get("selectable", True)))


@dataclass(frozen=True, slots=True)
class Note:
    """Something the person should know of the answer (e.g. facts the store keeps only in part)."""

    TYPE: ClassVar[str] = "note"
    text: str


@dataclass(frozen=True, slots=True)
class Scores:
    """A score of every record saved at `path` (.npy, one float64 a record of the dataset, NaN for
    a record without one): a million numbers in a file, not in a JSON line. `scored`: how many
    records have one."""

    TYPE: ClassVar[str] = "scores"
    key: str
    path: str
    records: int
    scored: int


@dataclass(frozen=True, slots=True)
class Evaluated:
    """The evaluation an `EvaluateRequest` asked for (`analysis.evaluation`): what a person reads
    (the per-class table, mAP, the confusion matrix, the join's report) in the message, and every
    array at `path` (a .npz, `np.load(path)`), indexed by the dataset's record number n (the
    window's numbering: a file's records after the previous files'):

    - `record_tp`, `record_fp`, `record_fn` (int32, -1: a record not evaluated), `record_max_fp_score`
      (float32, NaN: no false positive): one a record of the dataset;
    - `recall_points` (101,), `pr_precision` and `pr_score` (k, 101): each class's PR curve at this
      IoU (interpolated precision at each recall point, the score reaching it; NaN: never);
    - the ground-truth boxes: `gt_n`, `gt_slot` (its number in its record), `gt_class` (into
      `names`), `gt_box` (g, 4: x0, y0, x1, y1 in [0, 1]), `gt_outcome` (`records.matching.BoxOutcome`),
      `gt_partner` (the prediction it matched or was confused with, -1);
    - the predictions: `pred_n`, `pred_slot` (its number in its record, or its entry in the
      predictions file), `pred_class`, `pred_score`, `pred_box`, `pred_outcome` (-1: under the score
      threshold), `pred_partner` (the box, -1), `pred_iou` (best IoU with any box of its image);
    - the likely label errors: `error_kind` (0 possible_missing_label, 1 possible_wrong_class,
      2 possible_spurious_label), `error_index` (a prediction for 0 and 1, a box for 2), `error_n`;
    - `grid_ious` (i,), `grid_scores` (s,) and, at each pair, `grid_confusion` (i, s, k+1, k+1),
      `grid_tp`, `grid_fp`, `grid_fn` (i, s, k): the request's `iou_grid` (or its IoU alone) by its
      `score_grid`.

    `confusion`: rows ground truth, columns predicted, the last of each the background."""

    TYPE: ClassVar[str] = "evaluated"
    path: str
    iou: float
    score: float
    names: list[str]
    confusion: list[list[int]]
    classes: list[dict]  # `Evaluation.table()`: class, boxes, tp, fp, fn, precision, recall, ap50, ap
    map: float | None
    map50: float | None
    images: int
    boxes: int
    predictions: int
    source: str  # "record" or the predictions file's name
    join: list[str] = field(default_factory=list)  # the join's report, line by line
    notes: list[str] = field(default_factory=list)
    likely_errors: int = 0


@dataclass(frozen=True, slots=True)
class Wrote:
    """What a salvage, repair or export wrote, as the result dataclass its writer returned (the
    window reads it as it is, never rebuilds it); `renumbered` when the job framed the files
    otherwise than the window numbered them."""

    TYPE: ClassVar[str] = "wrote"
    result: RepairResult | SalvageResult | ExportResult
    renumbered: bool = False

    def to_json(self) -> dict:
        kind = _WRITERS[type(self.result).__name__]
        return {"type": self.TYPE, "kind": kind, "result": asdict(self.result), "renumbered": self.renumbered}

    @classmethod
    def from_json(cls, d: dict) -> Wrote:
        extra = set(d) - {"type", "kind", "result", "renumbered"}
        if extra:
            raise ValueError(f"unexpected fields {sorted(extra)} in a wrote message")
        return cls(_result_of(d["kind"], d["result"]), bool(d.get("renumbered", False)))


_WRITERS = {"RepairResult": "repair", "SalvageResult": "salvage", "ExportResult": "export"}


def _result_of(kind: str, r: dict) -> RepairResult | SalvageResult | ExportResult:
    """The result dataclass `Wrote.to_json` wrote as `kind`; its sequences as the writer holds them.
    Imported here, not above: the window's scan process reads messages and writes nothing."""
    if kind == "repair":
        from tfrview.core.output.repair import Repair, RepairResult

        return RepairResult(
            **{
                **r,
                "repaired": [Repair(**x) for x in r["repaired"]],
                "dropped": [tuple(x) for x in r["dropped"]],
            }
        )
    if kind == "salvage":
        from tfrview.core.output.salvage import SalvageResult

        return SalvageResult(**r)
    if kind == "export":
        from tfrview.core.output.export import ExportResult

        return ExportResult(**{**r, "notes": tuple(r["notes"])})
    raise ValueError(f"unknown kind of result {kind!r} in a wrote message")


@dataclass(frozen=True, slots=True)
class Rewrote:
    """What a rewrite wrote (`rewrite.run.RewriteResult.to_json`'s counts): records in, kept,
    dropped by reason (damaged, filter, tag), each shard (name, split, records, bytes)."""

    TYPE: ClassVar[str] = "rewrote"
    outdir: str
    records_in: int
    kept: int
    dropped: dict[str, int]
    shards: tuple[tuple[str, str, int, int], ...]
    changed: int = 0

    @classmethod
    def from_json(cls, d: dict) -> Rewrote:
        extra = set(d) - {"type", "outdir", "records_in", "kept", "dropped", "shards", "changed"}
        if extra:
            raise ValueError(f"unexpected fields {sorted(extra)} in a rewrote message")
        shards = tuple((str(a), str(b), int(c), int(e)) for a, b, c, e in d["shards"])
        return cls(
            str(d["outdir"]),
            int(d["records_in"]),
            int(d["kept"]),
            dict(d["dropped"]),
            shards,
            int(d.get("changed", 0)),
        )


@dataclass(frozen=True, slots=True)
class CopyGroup:
    """One group of copies the dataset step found (`analysis.duplicates`): its number (the
    `dup_group` fact), whether every member has the same pixels, and its members as (the window's
    file number, record in that file, split), the first `limits.DUPLICATE_GROUP_MEMBERS_SHOWN`,
    with a count of the rest."""

    number: int
    exact: bool
    members: tuple[tuple[int, int, str], ...]
    more: int = 0


@dataclass(frozen=True, slots=True)
class DuplicateGroups:
    """The analysis's groups of copies and near copies, for the window's Duplicates view, sent once
    after the merge (no message when the dataset step ran no duplicates step)."""

    TYPE: ClassVar[str] = "duplicate_groups"
    groups: tuple[CopyGroup, ...]
    total: int  # groups found (more than `groups` past limits.DUPLICATE_GROUPS_SHOWN)

    def to_json(self) -> dict:
        return {
            "type": self.TYPE,
            "total": self.total,
            "groups": [[g.number, g.exact, [list(m) for m in g.members], g.more] for g in self.groups],
        }

    @classmethod
    def from_json(cls, d: dict) -> DuplicateGroups:
        groups = tuple(
            CopyGroup(int(n), bool(exact), tuple((int(f), int(r), str(s)) for f, r, s in members), int(more))
            for n, exact, members, more in d["groups"]
        )
        return cls(groups, int(d["total"]))


@dataclass(frozen=True, slots=True)
class Done:
    """The job succeeded: its last message."""

    TYPE: ClassVar[str] = "done"


STOPPED = "cancelled"  # the kind of a `Failed` that says a person stopped the job


@dataclass(frozen=True, slots=True)
class Failed:
    """The job could not go on: what went wrong in one line, and the kind of error (the exception's
    class name, "internal" for a bug, "exited" for a process that died without a word)."""

    TYPE: ClassVar[str] = "failed"
    message: str
    kind: str = "error"

    @property
    def stopped(self) -> bool:
        """A person stopped the job (`errors.Cancelled`, or the window killed it): no failure to warn of."""
        return self.kind == STOPPED

    @classmethod
    def of(cls, exc: BaseException) -> Failed:
        """Our own errors and OS errors as they say it; a stop as a stop; anything else named as the
        bug it is."""
        if isinstance(exc, Cancelled):
            return cls("stopped", STOPPED)
        if isinstance(exc, (TfrviewError, OSError)):
            return cls(_one_line(str(exc)), type(exc).__name__)
        return cls(_one_line(f"{type(exc).__name__}: {exc}"), "internal")


Message = (
    Progress
    | ProblemFound
    | CauseFound
    | FileCause
    | Plot
    | Summary
    | SplitSummary
    | Matches
    | Compared
    | Note
    | Scores
    | Evaluated
    | Wrote
    | Rewrote
    | DuplicateGroups
    | Done
    | Failed
)
ENDS = (Done, Failed)  # a job's last message is one of these

_TYPES: dict[str, type] = {
    t.TYPE: t
    for t in (
        Progress,
        ProblemFound,
        CauseFound,
        FileCause,
        Plot,
        Summary,
        SplitSummary,
        Matches,
        Compared,
        Note,
        Scores,
        Evaluated,
        Wrote,
        Rewrote,
        DuplicateGroups,
        Done,
        Failed,
    )
}


def _one_line(text: str) -> str:
    return " ".join(text.split()) or "no message"


def to_json(msg: Message) -> dict[str, Any]:
    """The message as a JSON-able dict with its `type`."""
    own = getattr(msg, "to_json", None)
    if own is not None:
        return own()
    return {"type": msg.TYPE, **asdict(msg)}


def from_json(d: Any) -> Message:
    """The message a `to_json` dict describes; ValueError for anything else (an unknown type, a
    missing or unexpected field)."""
    if not isinstance(d, dict):
        raise ValueError(f"a job message is a JSON object, not {type(d).__name__}")
    cls = _TYPES.get(d.get("type"))
    if cls is None:
        raise ValueError(f"unknown job message type {d.get('type')!r}")
    own = getattr(cls, "from_json", None)
    try:
        if own is not None:
            return own(d)
        names = {f.name for f in fields(cls)}
        extra = set(d) - names - {"type"}
        if extra:
            raise ValueError(f"unexpected fields {sorted(extra)} in a {cls.TYPE} message")
        return cls(**{k: v for k, v in d.items() if k != "type"})
    except (KeyError, TypeError) as exc:
        raise ValueError(f"a malformed {cls.TYPE} message: {exc}") from exc


def encode(msg: Message) -> str:
    """One line of standard JSON (`jsontext`: a NaN or an infinity tagged), ending in a newline."""
    return jsontext.dumps(to_json(msg)) + "\n"


def decode(line: str | bytes) -> Message:
    """The message `encode` wrote on this line; ValueError for anything else."""
    return from_json(jsontext.loads(line))


def as_array(lines: str) -> str:
    """`encode`d lines as one JSON array of the messages, to be stored (a row's text must be one
    JSON value: SQLite's json functions read it); `as_lines` gives the lines back as they were. A
    line holds no raw newline (JSON escapes it), so `,` + newline only ever joins two lines."""
    return "[" + ",\n".join(lines.rstrip("\n").split("\n")) + "]" if lines else "[]"


def as_lines(array: str) -> str:
    """The lines `as_array` joined, each ending in a newline."""
    body = array[1:-1]
    return body.replace(",\n", "\n") + "\n" if body else ""
