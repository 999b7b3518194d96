"""Issue 21.1: the split a path names, and the splits the person names (`--split NAME=PATH`)."""

from __future__ import annotations

import pytest

from tfrview.core.tfrecord.splits import SplitError, named_splits, split_of_files, split_of_path


@pytest.mark.parametrize(
    ("path", "split"),
    [
        ("data/train/shard-0.tfrecord", "train"),
        ("data/val/shard-0.tfrecord", "validation"),
        ("data/dev/x", "validation"),
        ("out/Split-eval/examples-00000-of-00001.gz", "validation"),
        ("train-00000-of-00016", "train"),
        ("mnist-test.tfrecord-00000-of-00001", "test"),
        ("coco/val2017.tfrecord", "validation"),
        ("val/train-0.tfrecord", "train"),  # the name is the closer word
        ("/home/test/data/x.tfrecord", ""),  # folders further out than the file's own name no split
        ("data/contest/x.tfrecord", ""),
        ("data/trainer.tfrecord", ""),
    ],
)
def test_the_split_a_path_names(path, split):
    assert split_of_path(path) == split


def test_named_splits_expand_folders_and_globs_and_win_over_paths(tmp_path):
    (tmp_path / "train").mkdir()
    a, b = tmp_path / "train" / "a.tfrecord", tmp_path / "train" / "b.tfrecord"
    for p in (a, b):
        p.write_bytes(b"")
    named = named_splits([f"holdout={tmp_path / 'train' / 'b*'}", f"val={a}"])
    assert named == [("holdout", [str(b)]), ("validation", [str(a)])]  # an alias means its split
    assert split_of_files([a, b], named) == ["validation", "holdout"]
    assert split_of_files([a, b], [("mine", [str(tmp_path / "train")])]) == ["mine", "mine"]
    assert split_of_files([a, b]) == ["train", "train"]


@pytest.mark.parametrize("word", ["train", "=x", "train=", "train=/no/such/file", "train=/no/such/*"])
def test_a_split_word_naming_nothing_is_one_line(word):
    with pytest.raises(SplitError) as exc:
        named_splits([word])
    assert "\n" not in str(exc.value) and "--split" in str(exc.value)


def _two_splits(tmp_path) -> list:
    from tfrview.core.output.writer import write_records
    from tfrview.demo import _example

    recs = [_example(label=k, text=f"t{k}").SerializeToString() for k in range(6)]
    paths = []
    for split in ("train", "val"):
        (tmp_path / split).mkdir()
        paths.append(tmp_path / split / "data-00000-of-00001")
        write_records(paths[-1], recs)
    return paths


def test_analyze_takes_splits_and_rules_and_the_facts_and_filters_carry_the_split(tmp_path):
    from tfrview.core import analyze
    from tfrview.core.analysis.filterexpr import compile_filter, facts_for, parse
    from tfrview.core.analysis.vfilter import match

    paths = _two_splits(tmp_path)
    a = analyze([str(p) for p in paths], deep=True, jobs=1, use_cache=False, rules={"near_distance": 3})
    assert a.splits == ["train", "validation"] and a.rules.duplicates.near_distance == 3
    facts = a.facts()
    assert facts.column("split").to_pylist() == ["train"] * 6 + ["validation"] * 6
    for expr, want in [
        ('split == "val"', list(range(6, 12))),  # an alias means its split
        ('split == "validation" and label < 2', [6, 7]),
        ('split != "train"', list(range(6, 12))),
        ('split contains "rai"', list(range(6))),
        ("split", list(range(12))),
    ]:
        hits, _ = match(facts, parse(expr))
        assert hits.tolist() == want, expr
        test = compile_filter(parse(expr))  # the record-at-a-time filter agrees
        got = [n for n in range(12) if test(facts_for(b"", n, "f", [], split=a.splits[n // 6]))]
        assert got == want or expr.endswith("< 2"), expr
    b = analyze([str(p) for p in paths], jobs=1, use_cache=False, splits={"holdout": str(paths[0])})
    assert b.splits == ["holdout", "validation"]
    c = analyze([str(p) for p in paths], jobs=1, use_cache=False, splits=["a", "b"])
    assert c.splits == ["a", "b"]
    with pytest.raises(SplitError):
        analyze([str(p) for p in paths], jobs=1, splits=["a"])


def test_a_file_in_no_split_has_none_in_the_filter(tmp_path):
    from tfrview.core.analysis.filterexpr import parse
    from tfrview.core.analysis.merge import merge
    from tfrview.core.analysis.pool import run_tasks
    from tfrview.core.analysis.shard import plan
    from tfrview.core.analysis.vfilter import match

    paths = _two_splits(tmp_path)
    a = merge(list(run_tasks(plan([str(p) for p in paths], True, None), 1)), splits=["", "test"])
    hits, _ = match(a.facts(), parse("not split"))
    assert hits.tolist() == list(range(6))


def test_the_analysis_job_sends_each_splits_summary_and_takes_the_windows_splits(tmp_path, monkeypatch):
    import io

    from tfrview.core.procs import jobs
    from tfrview.core.procs.messages import SplitSummary, Summary, decode
    from tfrview.core.procs.requests import AnalyzeRequest

    paths = _two_splits(tmp_path)
    out = io.StringIO()
    monkeypatch.setattr(jobs, "_OUT", out)  # the job's pipe to the window, as lines to read back
    req = AnalyzeRequest(
        paths=tuple(map(str, paths)),
        files=(0, 1),
        splits=("mine", "validation"),
        rules=("near_distance=4",),
        jobs=1,
    )
    jobs.job_analyze(req)
    msgs = [decode(line) for line in out.getvalue().splitlines()]
    splits = [msg for msg in msgs if isinstance(msg, SplitSummary)]
    assert [(s.split, s.files, s.summary["records"]) for s in splits] == [
        ("mine", [0], 6),
        ("validation", [1], 6),
    ]
    assert isinstance(msgs[-1], Summary) and msgs[-1].summary["records"] == 12
    out = io.StringIO()
    monkeypatch.setattr(jobs, "_OUT", out)
    jobs.job_analyze(AnalyzeRequest(paths=(str(paths[0]),), jobs=1))  # one split: no split summary
    assert not any(isinstance(decode(x), SplitSummary) for x in out.getvalue().splitlines() if x.strip())


def test_plots_of_one_split_and_of_the_splits_overlaid(tmp_path, monkeypatch):
    import io

    from tfrview.core import analyze
    from tfrview.core.analysis.plots import of_split, overlay
    from tfrview.core.procs import jobs
    from tfrview.core.procs.messages import Matches, Plot, decode
    from tfrview.core.procs.requests import SelectRequest, SeriesRequest

    paths = _two_splits(tmp_path)
    facts = analyze([str(p) for p in paths], deep=True, jobs=1).facts()
    assert of_split(facts, "validation").column("n").to_pylist() == list(range(6, 12))
    got = overlay(facts, "label", histogram=True)["overlay"]
    assert [p["split"] for p in got] == ["train", "validation"]
    assert all(abs(sum(p["histogram"]["share"]) - 1) < 1e-9 for p in got)
    assert [p["histogram"]["values"] for p in got] == [6, 6]

    def run(req) -> list:
        out = io.StringIO()
        monkeypatch.setattr(jobs, "_OUT", out)
        jobs.JOBS[type(req)](req)
        return [decode(x) for x in out.getvalue().splitlines()]

    base = dict(paths=tuple(map(str, paths)), splits=("train", "mine"))
    msgs = run(SeriesRequest(**base, key="label", by_split=True, histogram=True))
    plot = next(m for m in msgs if isinstance(m, Plot))
    assert [p["split"] for p in plot.data["overlay"]] == ["train", "mine"]  # the window's splits
    msgs = run(SeriesRequest(**base, key="label", split="mine"))
    plot = next(m for m in msgs if isinstance(m, Plot))
    assert plot.data["series"]["records"] == list(range(6, 12))
    msgs = run(SelectRequest(**base, plot="box width", lo=(0.0,), hi=(1.0,), split="mine"))
    assert next(m for m in msgs if isinstance(m, Matches)).total == 12


def test_shards_whose_names_differ_in_digits_take_each_folders_rule():
    """split_of_files reads split_of_path once a folder and name shape: the same shape in another
    folder, or a name whose digits follow a split word, is read again."""
    paths = [
        "a/train/s-00000-of-00002.tfrecord",
        "a/train/s-00001-of-00002.tfrecord",
        "a/test/s-00000-of-00002.tfrecord",
        "a/x/val2017.tfrecord",
        "a/x/val2018.tfrecord",
        "a/x/s-1.tfrecord",
        "out/Split-fold1/e-0.gz",
        "out/Split-fold2/e-0.gz",
    ]
    assert split_of_files(paths) == [split_of_path(p) for p in paths]
    assert split_of_files(paths) == [
        "train",
        "train",
        "test",
        "validation",
        "validation",
        "",
        "fold1",
        "fold2",
    ]
