"""Issue 20 item 2 (review "Item by item" 2): a vocabulary's words are compared by their enum
member, never spelled by hand, so a misspelt word is a NameError, not a comparison that is always
false. An AST scan of tfrview/ for a comparison (==, !=, in, not in) with a record status, problem
kind, severity, box convention or payload kind word as a string literal."""

from __future__ import annotations

import ast
from pathlib import Path

from tfrview.core.problems import ProblemKind, Severity
from tfrview.core.records.kinds import PayloadKind
from tfrview.core.records.reading import BoxConvention
from tfrview.core.tfdv.anomalies import AnomalyKind
from tfrview.core.tfdv.files import TfdvFile
from tfrview.core.tfrecord.status import RecordStatus

ROOT = Path(__file__).resolve().parents[1] / "tfrview"
WORDS = {
    str(w)
    for enum in (RecordStatus, ProblemKind, Severity, BoxConvention, PayloadKind, AnomalyKind, TfdvFile)
    for w in enum
}
# "message" and "bytes" are also a column's and a unit's names (`col == "message"`, `unit == "bytes"`);
# "statistics" also a key of TFDS's dataset_info.json (a split's statistics, dropped by a rewrite)
WORDS -= {"message", "bytes", "statistics"}


def _spelled(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Compare):
            continue
        if isinstance(node.ops[0], (ast.In, ast.NotIn)) and isinstance(node.left, ast.Constant):
            continue  # `"error" in entry`: a key looked up, not a word compared
        for side in (node.left, *node.comparators):
            items = side.elts if isinstance(side, (ast.Tuple, ast.List, ast.Set)) else [side]
            found += [
                (node.lineno, i.value)
                for i in items
                if isinstance(i, ast.Constant) and isinstance(i.value, str) and i.value in WORDS
            ]
    return found


def test_the_scan_finds_a_word_spelled_by_hand():
    assert _spelled(ast.parse('if s != "ok" or k in ("not_tfrecord", "x"): pass')) == [
        (1, "ok"),
        (1, "not_tfrecord"),
    ]
    assert _spelled(ast.parse("if s != RecordStatus.OK: pass")) == []
    assert _spelled(ast.parse('if "error" in entry: pass')) == []  # a key, not a word


def test_no_vocabulary_word_is_compared_by_hand():
    spelled = [
        f"{p.relative_to(ROOT.parent)}:{line}: {word!r}"
        for p in sorted(ROOT.rglob("*.py"))
        for line, word in _spelled(ast.parse(p.read_text()))
    ]
    assert spelled == []
