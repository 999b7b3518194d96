"""What the window asks a job process to do, as frozen dataclasses with one JSON framing.

Why: a job used to be a plain dict built in four places of the window and read by key in the job,
so a key misspelt on either side was a default silently taken, or a KeyError in the child. A
request is now a type, one per job, whose fields are every thing that job reads; the job process
decodes one and dispatches on its class. On the wire a request is one JSON object on one line on
the job's stdin, with its `job` word:

    {"job": "filter", "paths": ["a.tfrecord"], "expr": "label == 3", ...}

Never pickle (the window's bytes are never code to the child) and nothing executed: `decode`
takes exactly what `encode` wrote, and anything else (an unknown job, a field missing or unknown)
is a `ValueError`. The mirror of `procs.messages`, the other way.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, ClassVar, Literal


@dataclass(frozen=True, slots=True, kw_only=True)
class OverFiles:
    """The window's files as its stored analysis is keyed: their paths, record counts (a stored
    analysis is used only when it frames the same records), label map and chosen box keys. The
    fields every job over the analysis shares; not a request itself."""

    JOB: ClassVar[str] = ""
    paths: tuple[str, ...]
    counts: tuple[int, ...] | None = None  # None: any framing will do
    label_map: dict | None = None  # `LabelMap.to_json()`; None or {} for none
    box_specs: tuple[dict, ...] = ()  # `BoxSpec.to_json()` of the box keys the person chose
    splits: tuple[str, ...] | None = None  # each path's split, as the window has it (None: by the paths)
    # a predictions file joined to the records (issue 24: a COCO results JSON or a TFRecord of
    # predictions): the fact columns tp, fp, fn, max_fp_score come from it, not the records' own
    predictions: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AnalyzeRequest(OverFiles):
    """The analysis pass: QA problems, causes and the summary of every file."""

    JOB: ClassVar[str] = "analyze"
    files: tuple[int, ...] | None = None  # the window's number of each path (None: 0, 1, …)
    label_map_files: tuple[int, ...] | None = None  # the files a map found beside one dataset is for
    jobs: int | None = None  # worker processes (None: the default)
    rules: tuple[str, ...] = ()  # the dataset step's thresholds as `NAME=VALUE` words (analysis.rules)


@dataclass(frozen=True, slots=True, kw_only=True)
class FilterRequest(OverFiles):
    """The records whose facts match a filter expression."""

    JOB: ClassVar[str] = "filter"
    expr: str
    known_keys: tuple[str, ...] = ()
    complete: bool = False  # `known_keys` are every key there is
    problems: dict[str, list[str]] = field(default_factory=dict)  # record (as text) -> problem kinds
    rules: tuple[str, ...] = ()  # the dataset step's thresholds (`dup_group`, `leak`: as the analysis's)


@dataclass(frozen=True, slots=True, kw_only=True)
class SeriesRequest(OverFiles):
    """A plot of one feature or fact over the dataset, from its stored facts."""

    JOB: ClassVar[str] = "series"
    key: str
    histogram: bool = False  # its histogram rather than its values over the records
    split: str | None = None  # one split's records only (None: every record)
    by_split: bool = False  # each split's plot, overlaid for comparison (`{"overlay": [...]}`)


@dataclass(frozen=True, slots=True, kw_only=True)
class SelectRequest(OverFiles):
    """The records behind a clicked bar, cell or point of a plot of facts."""

    JOB: ClassVar[str] = "select"
    plot: str
    lo: tuple[float, ...]
    hi: tuple[float, ...]
    closed: bool = False  # `hi` included (the last bar)
    split: str | None = None  # the plot was of one split's records (None: every record)


@dataclass(frozen=True, slots=True, kw_only=True)
class ScoresRequest(OverFiles):
    """A score of every record from the stored facts (an image quality score: `blur`,
    `brightness`, ...), saved at `out` for the gallery's Sort by."""

    JOB: ClassVar[str] = "scores"
    key: str
    out: str  # where the job saves the scores (.npy: one float64 a record)


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareRequest(OverFiles):
    """Two splits of the window's files compared (`analysis.compare`), or split `a` of them ("":
    all of them) against the files at the paths `other`."""

    JOB: ClassVar[str] = "compare"
    a: str
    b: str = ""
    other: tuple[str, ...] = ()  # another dataset's files, folders or globs: side B
    rules: tuple[str, ...] = ()  # `--rule` words (`rules.DatasetRules.with_words`)
    jobs: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CompareSelectRequest(CompareRequest):
    """The records of one side behind a clicked bar of the Compare view's chart, as filter matches."""

    JOB: ClassVar[str] = "compare_select"
    side: Literal["a", "b"] = "a"
    key: str = ""
    derived: bool = False
    lo: float | None = None
    hi: float | None = None
    closed: bool = False
    category: str | int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EvaluateRequest(OverFiles):
    """Predictions against the ground truth (issue 24, `analysis.evaluation`) from the stored
    analysis, at (iou, score): answered by `messages.Evaluated`, its arrays saved at `out` (.npz,
    described there). `predictions`: a COCO results JSON or a TFRecord of predictions joined to the
    records (None: the records' own detection keys). `score_grid`: score thresholds at which the
    confusion matrix and per-class counts are also computed, at each IoU of `iou_grid` (empty: this
    IoU alone): sliders that move over the grid need no new job (each point costs about one
    threshold change: ~0.3 s a 100,000 images, so a window sizes the grid by its dataset)."""

    JOB: ClassVar[str] = "evaluate"
    out: str
    iou: float = 0.5
    score: float = 0.5
    rules: tuple[str, ...] = ()  # `--rule` words: the likely label errors' thresholds
    score_grid: tuple[float, ...] = ()
    iou_grid: tuple[float, ...] = ()
    # then answer each further {"iou", "score", "out"} line of stdin from what was prepared, until
    # stdin closes (the window's Evaluation view: a moved threshold costs only the matching)
    converse: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class WriteRequest:
    """Salvage or repair the window's files into a new file."""

    JOB: ClassVar[str] = "write"
    what: Literal["salvage", "repair"]
    paths: tuple[str, ...]
    out: str
    compression: str
    counts: tuple[int, ...] | None = None  # the window's framing, to say when the job's differs
    # salvage: what the new file is (`arwriter.RecordFormat`): "arrayrecord" writes through the
    # official writer with the first input's compression and `group_size:1` (`compression` unused)
    fmt: Literal["tfrecord", "arrayrecord"] = "tfrecord"


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportRequest:
    """A selection of records exported from the spans the window saved (`output.export.save_spans`)."""

    JOB: ClassVar[str] = "export"
    # records, jsonl, images, images_boxes, or a training format (`output.formats.ExportFormat`)
    what: Literal[
        "records", "jsonl", "images", "images_boxes", "coco", "yolo", "voc", "hf_parquet", "webdataset"
    ]
    paths: tuple[str, ...]
    out: str
    spans: str  # the .npz of where the records are
    compression: str = "none"
    keep_damaged: bool = False
    label_map: dict | None = None
    box_specs: tuple[dict, ...] = ()
    problems: dict[str, list[dict]] = field(default_factory=dict)  # record (as text) -> its problems (jsonl)
    force: bool = False  # a training format: replace `out` (the person said so)
    splits: tuple[str, ...] | None = None  # each path's split, as the window has it (None: by the paths)


@dataclass(frozen=True, slots=True, kw_only=True)
class RewriteRequest:
    """A new dataset written from the window's files (`core.rewrite`): the person's words as the
    CLI takes them (parsed in the job, each mistake its one-line `Failed`)."""

    JOB: ClassVar[str] = "rewrite"
    paths: tuple[str, ...]
    out: str
    where: str = ""
    drop_records: tuple[tuple[str, int], ...] = ()  # (path, offset) of records to leave out
    drop_tags: tuple[str, ...] = ()  # records the person tagged so are left out ("drop")
    keep_tags: tuple[str, ...] = ()  # only records the person tagged so are written ("keep")
    map_classes: str = ""
    label_map: dict | None = None  # `LabelMap.to_json()` of the window's label map
    shards: int = 0  # 0: by shard_size
    shard_size: str = ""  # "" : the default size
    split: str = ""  # "train=0.8,val=0.2"; "": the inputs' splits
    group_by: str = ""
    shuffle: bool = False
    seed: int = 0
    compression: str = "none"
    index: bool = False
    force: bool = False

    def __post_init__(self) -> None:  # JSON gives each (path, offset) back as a list
        object.__setattr__(self, "drop_records", tuple((str(p), int(o)) for p, o in self.drop_records))
        object.__setattr__(self, "drop_tags", tuple(self.drop_tags))
        object.__setattr__(self, "keep_tags", tuple(self.keep_tags))


Request = (
    AnalyzeRequest
    | FilterRequest
    | SeriesRequest
    | SelectRequest
    | ScoresRequest
    | CompareRequest
    | CompareSelectRequest
    | EvaluateRequest
    | WriteRequest
    | ExportRequest
    | RewriteRequest
)

_JOBS: dict[str, type] = {
    t.JOB: t
    for t in (
        AnalyzeRequest,
        FilterRequest,
        SeriesRequest,
        SelectRequest,
        ScoresRequest,
        CompareRequest,
        CompareSelectRequest,
        EvaluateRequest,
        WriteRequest,
        ExportRequest,
        RewriteRequest,
    )
}


def to_json(request: Request) -> dict[str, Any]:
    """The request as a JSON-able dict with its `job` word."""
    return {"job": request.JOB, **asdict(request)}


def from_json(d: Any) -> Request:
    """The request a `to_json` dict describes; ValueError for anything else (an unknown job, a
    missing or unexpected field). JSON's lists become the tuples the fields hold."""
    if not isinstance(d, dict):
        raise ValueError(f"a job request is a JSON object, not {type(d).__name__}")
    cls = _JOBS.get(d.get("job"))
    if cls is None:
        raise ValueError(f"unknown job {d.get('job')!r}")
    known = {f.name: f for f in fields(cls)}
    extra = set(d) - set(known) - {"job"}
    if extra:
        raise ValueError(f"unexpected fields {sorted(extra)} for the {cls.JOB} job")
    kw = {}
    for k, v in d.items():
        if k == "job":
            continue
        kw[k] = tuple(v) if isinstance(v, list) and str(known[k].type).startswith("tuple") else v
    try:
        return cls(**kw)
    except TypeError as exc:  # a required field missing
        raise ValueError(f"a malformed request for the {cls.JOB} job: {exc}") from exc


def encode(request: Request) -> str:
    """One line of JSON (the whole of a job process's stdin)."""
    return json.dumps(to_json(request))


def decode(text: str | bytes) -> Request:
    """The request `encode` wrote; ValueError for anything else."""
    return from_json(json.loads(text))
