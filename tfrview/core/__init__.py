"""tfrview's engine, a library without Qt. The names below are its public face; the folders are
private homes by concern:

    tfrecord/  bytes -> framed records: the format, sources, the index, reports, datasets, diagnosis
    records/   what is inside one record: payloads, images, boxes and their conventions, label
               maps, drawing, one-line summaries
    analysis/  questions over many records: the one pass, QA checks, statistics, the filter
               language, problem groups, per-file health
    output/    everything tfrview writes: atomic new files, the writer, salvage, exports, index files
    procs/     worker processes (the window's jobs, the scan process)

    from tfrview.core import Dataset, analyze, decode
    with Dataset.open(["train-*.tfrecord"]) as ds: ...

Names load on first use (PEP 562), so `import tfrview.core` costs nothing until one is used.
"""

from __future__ import annotations

import importlib

_HOMES = {
    "TfrviewError": "tfrview.core.errors",
    "SourceError": "tfrview.core.errors",
    "Cancelled": "tfrview.core.errors",
    "one_line": "tfrview.core.errors",
    "Severity": "tfrview.core.problems",
    "Problem": "tfrview.core.problems",
    "ProblemKind": "tfrview.core.problems",
    "encode_record": "tfrview.core.tfrecord.framing",
    "open_source": "tfrview.core.tfrecord.source",
    "Source": "tfrview.core.tfrecord.source",
    "scan": "tfrview.core.tfrecord.index",
    "verify": "tfrview.core.tfrecord.index",
    "RecordIndex": "tfrview.core.tfrecord.index",
    "index_and_verify": "tfrview.core.tfrecord.report",
    "FileReport": "tfrview.core.tfrecord.report",
    "Dataset": "tfrview.core.tfrecord.dataset",
    "decode": "tfrview.core.records.payload",
    "Payload": "tfrview.core.records.payload",
    "LabelMap": "tfrview.core.records.labelmap",
    "load_label_map": "tfrview.core.records.labelmap",
    "analyze": "tfrview.core.analysis",
    "analyze_shard": "tfrview.core.analysis",
    "ShardTask": "tfrview.core.analysis",
    "ShardResult": "tfrview.core.analysis",
    "merge": "tfrview.core.analysis.merge",
    "DatasetAnalysis": "tfrview.core.analysis",
    "DatasetRules": "tfrview.core.analysis.rules",
    "RuleError": "tfrview.core.analysis.rules",
    "split_of_path": "tfrview.core.tfrecord.splits",
    "split_of_files": "tfrview.core.tfrecord.splits",
    "SplitError": "tfrview.core.tfrecord.splits",
    "write_records": "tfrview.core.output.writer",
    "salvage": "tfrview.core.output.salvage",
}

__all__ = sorted(_HOMES)


def __getattr__(name: str):
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'tfrview.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
