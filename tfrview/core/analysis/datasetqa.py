"""The dataset-level QA, run once after the merge over the fact table's columns: copies and
leakage across splits (`duplicates`), image quality relative to the dataset (`imagequality`),
label rules across the dataset (`labelrules`). Each step reads the columns it needs as numpy
arrays (`factcolumns.columns`: only those columns, copied out of the stored tables so a file's
whole table is never held), and gives findings at records plus the tables a report shows (a leakage table, the
thresholds a dataset's images were judged by).

The per-record scores and hashes come from the pass (`shard.py`, stored with each file's result);
thresholds only from `rules.DatasetRules`, here: a new threshold needs no new pass.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.analysis import duplicates, imagequality, labelrules
from tfrview.core.analysis.rules import DatasetRules

log = logging.getLogger(__name__)


@dataclass
class DatasetQA:
    """What the dataset step found beyond findings at records: each step's tables, as plain data
    (JSON-ready), and notes said once (a dataset without images gets no image checks)."""

    tables: dict[str, object] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    # per-record columns a step adds to the merged fact table: name -> {file: array a row}
    # (`DatasetAnalysis.facts`; `duplicates`: dup_group, leak); never in the JSON
    record_columns: dict[str, dict[int, np.ndarray]] = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"tables": self.tables, "notes": self.notes}


# The steps, in order: each `step(analysis, rules, qa) -> list[(file_no, record, Finding)]`; a step
# reads its columns through `factcolumns`, never from here (no import cycle).
STEPS: list = [
    duplicates.step,  # exact and near copies, and copies across splits (leakage)
    imagequality.step,  # dark, bright, blurry, blank, low-information, odd aspect and size
    labelrules.step,  # class balance, box sizes, duplicate and overlapping boxes, splits
]


def run(analysis, rules: DatasetRules) -> DatasetQA:
    """Every step over a merged, deep analysis; its findings go to `analysis.dataset_problems`."""
    qa = DatasetQA()
    for step in STEPS:
        for fi, n, finding in step(analysis, rules, qa):
            s = analysis.shards[fi]
            analysis.dataset_problems.setdefault(fi, []).append(finding.at(s.offsets[n], s.lengths[n], n))
    return qa
