"""The dataset-level QA, run once after the merge over the fact table's columns: copies and
leakage across splits (`duplicates`), image quality relative to the dataset (`imagequality`),
label rules across the dataset (`labelrules`). Each step says up front what it reads
(`factcolumns.Step`: numeric columns, or a gatherer of what it keeps of each table); `run` reads
every file's fact table once for all of them, only the union of those columns, each table let go
before the next (`factcolumns.gathered`), and hands each step its arrays. A step gives findings at
records plus the tables a report shows (a leakage table, the thresholds a dataset's images were
judged by).

The per-record scores and hashes come from the pass (`shard.py`, stored with each file's result);
thresholds only from `rules.DatasetRules`, here: a new threshold needs no new pass.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.analysis import duplicates, evaluation, imagequality, labelrules
from tfrview.core.analysis.factcolumns import Step, gathered
from tfrview.core.analysis.rules import DatasetRules
from tfrview.core.analysis.stepcolumns import BY_STEP

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


# The steps, in order (`factcolumns.Step`s: what each reads, and its `run(analysis, rules, qa, got)
# -> list[(file_no, record, Finding)]`); a step's module never imports this one (no import cycle).
STEPS: list[Step] = [
    duplicates.STEP,  # exact and near copies, and copies across splits (leakage)
    imagequality.STEP,  # dark, bright, blurry, blank, low-information, odd aspect and size
    labelrules.STEP,  # class balance, box sizes, duplicate and overlapping boxes, splits
    evaluation.STEP,  # the OD API's detection keys against the ground truth: tp/fp/fn, likely label errors
]


def run(analysis, rules: DatasetRules) -> DatasetQA:
    """Every step over a merged, deep analysis; its findings go to `analysis.dataset_problems`."""
    qa = DatasetQA()
    steps = list(STEPS)
    got = gathered(analysis, steps)
    for i, step in enumerate(steps):
        data, got[i] = got[i], None  # what only this step read is let go once it has run
        for fi, n, finding in step.run(analysis, rules, qa, data):
            s = analysis.shards[fi]
            analysis.dataset_problems.setdefault(fi, []).append(finding.at(s.offsets[n], s.lengths[n], n))
        del data
        undeclared = set(qa.record_columns) - {n for st in steps[: i + 1] for n in BY_STEP.get(st.name, ())}
        if undeclared:  # a feature's column could take its name (facts.RESERVED is made from BY_STEP)
            raise ValueError(f"step {step.name} added {sorted(undeclared)}, not in stepcolumns.BY_STEP")
    return qa
