"""Issue 23: the filter's `tag` fact, joined from the person's tag store when the filter runs (never
stored with the facts): `tag == "drop"` selects exactly the tagged rows, by the record-by-record
filter and by the stored fact tables alike."""

from __future__ import annotations

import numpy as np
import pytest

from tests.helpers import framed, payloads
from tfrview.core.analysis import analyze
from tfrview.core.analysis.filterexpr import Fact, Not, compile_filter, facts_for, parse
from tfrview.core.tags import Marks, TagStore, TagWord, file_key, stored_crcs
from tfrview.core.tfrecord.source import open_source


def _tag(path: str, records: list[int], base: int, word: TagWord) -> None:
    _, offs = framed(payloads(40, base))
    o = np.array([offs[r] for r in records], np.int64)
    n = np.array([offs[r + 1] - offs[r] - 16 for r in records], np.int64)
    with open_source(path) as src, TagStore.open() as store:
        store.tag([Marks(file_key(path), path, o, n, stored_crcs(src.read, o, n))], word)


def test_tag_is_a_fact_of_the_filter():
    assert parse("not tag") == Not(Fact("tag"))
    test = compile_filter(parse('tag == "drop" and record < 5'))
    assert test(facts_for(b"", 3, "f", [], tag="drop")) and not test(facts_for(b"", 3, "f", [], tag="keep"))
    assert compile_filter(parse("not tag"))(facts_for(b"", 3, "f", []))


@pytest.mark.parametrize(
    ("expr", "want"),
    [
        ('tag == "drop"', [3, 7, 42]),
        ('tag == "review" and record >= 40', [45]),
        ('tag != "drop" and tag', [45]),
        ("not tag", [n for n in range(80) if n not in (3, 7, 42, 45)]),
    ],
)
def test_the_filter_on_tag_selects_exactly_the_tagged_rows(tmp_path, monkeypatch, expr, want):
    from tfrview.core.procs import jobs
    from tfrview.core.procs.requests import FilterRequest

    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    paths = []
    for i, base in enumerate((20, 30)):
        p = tmp_path / f"f{i}.tfrecord"
        p.write_bytes(framed(payloads(40, base))[0])
        paths.append(str(p))
    _tag(paths[0], [3, 7], 20, TagWord.DROP)
    _tag(paths[1], [2], 30, TagWord.DROP)
    _tag(paths[1], [5], 30, TagWord.REVIEW)
    request = FilterRequest(expr=expr, paths=tuple(paths), problems={}, counts=(40, 40))

    def run_job() -> list[int]:
        got = []
        monkeypatch.setattr(jobs, "_emit", lambda msg: got.extend(getattr(msg, "matches", ())))
        jobs.job_filter(request)
        return got

    assert run_job() == want  # nothing stored: record by record
    analyze(paths, deep=True, jobs=1)
    import tfrview.core.analysis.filterexpr as fx

    monkeypatch.setattr(fx, "compile_filter", lambda node: pytest.fail("read the records"))
    assert run_job() == want  # the stored facts, with the tags joined
