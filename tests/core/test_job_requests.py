"""Typed job requests (procs.requests): each kind survives its one-line JSON framing whole, anything
else is refused with a clear word, and a job process given a line that is no request answers with
one `Failed` (never a traceback, never silence)."""

from __future__ import annotations

import json
import re

import pytest

from tfrview.core import childproc
from tfrview.core.procs import jobs, launch
from tfrview.core.procs import messages as m
from tfrview.core.procs import requests as rq


def _every_kind() -> list[rq.Request]:
    over = {
        "paths": ("a.tfrecord", "b.tfrecord"),
        "counts": (10, 20),
        "label_map": {"1": "cat"},
        "box_specs": ({"convention": "coco_xywh", "keys": ["bbox"]},),
    }
    return [
        rq.AnalyzeRequest(**over, files=(0, 2), label_map_files=(2,), jobs=3),
        rq.AnalyzeRequest(paths=("a.tfrecord",)),  # every default
        rq.FilterRequest(
            **over,
            expr="label == 3",
            known_keys=("label", "x"),
            complete=True,
            problems={"4": ["bad_data_crc"]},
        ),
        rq.SeriesRequest(**over, key="loss", histogram=True),
        rq.SelectRequest(**over, plot="image sizes (scatter)", lo=(8.0, 8.0), hi=(9.0, 9.5), closed=True),
        rq.ScoresRequest(**over, key="blur", out="/tmp/blur.npy"),
        rq.CompareRequest(
            **over, a="train", b="validation", other=("x/",), rules=("infinity_norm=0.2",), jobs=2
        ),
        rq.CompareSelectRequest(**over, a="train", side="b", key="label", derived=True, lo=0.5, hi=1.5),
        rq.EvaluateRequest(
            **over,
            out="/tmp/e.npz",
            iou=0.75,
            score=0.3,
            predictions="r.json",
            rules=("near_iou=0.2",),
            score_grid=(0.1, 0.5),
        ),
        rq.WriteRequest(
            what="repair", paths=("a.tfrecord",), out="/tmp/o.tfrecord", compression="gzip", counts=(4,)
        ),
        rq.WriteRequest(
            what="salvage", paths=("a.array_record",), out="/tmp/o.ar", compression="none", fmt="arrayrecord"
        ),
        rq.ExportRequest(
            what="jsonl",
            paths=("a.tfrecord",),
            out="/tmp/o.jsonl",
            spans="/tmp/s.npz",
            keep_damaged=True,
            problems={"3": [{"kind": "bad_data_crc", "message": "data CRC mismatch"}]},
        ),
        rq.RewriteRequest(
            paths=("a/",),
            out="/tmp/out",
            where="boxes > 0",
            drop_records=(("/d/a.tfrecord", 120),),
            map_classes="3=1",
            split="train=0.8,val=0.2",
            group_by="source_id",
            shuffle=True,
            seed=4,
        ),
    ]


def test_every_job_has_a_request():
    assert {t.JOB for t in jobs.JOBS} == {
        "analyze",
        "filter",
        "series",
        "select",
        "scores",
        "compare",
        "compare_select",
        "evaluate",
        "write",
        "export",
        "rewrite",
    }
    assert {type(r) for r in _every_kind()} == set(jobs.JOBS)


@pytest.mark.parametrize("request_", _every_kind(), ids=lambda r: r.JOB)
def test_every_request_survives_its_framing(request_):
    d = rq.to_json(request_)
    assert d["job"] == request_.JOB
    assert rq.from_json(json.loads(json.dumps(d))) == request_
    line = rq.encode(request_)
    assert "\n" not in line
    got = rq.decode(line)
    assert got == request_ and type(got) is type(request_)
    assert isinstance(got.paths, tuple)  # JSON's lists come back as the tuples the fields hold


@pytest.mark.parametrize(
    ("d", "words"),
    [
        ({"job": "launch_missiles", "paths": []}, "unknown job 'launch_missiles'"),
        ({"paths": ["a"]}, "unknown job None"),
        (
            {"job": "series", "paths": ["a"], "key": "x", "mode": "over"},
            "unexpected fields ['mode'] for the series job",
        ),
        (
            {"job": "filter", "paths": ["a"]},
            "a malformed request for the filter job",
        ),  # its expression missing
        ([1, 2], "a job request is a JSON object, not list"),
    ],
)
def test_anything_else_is_refused_saying_what(d, words):
    with pytest.raises(ValueError, match=r"^" + re.escape(words)):
        rq.from_json(d)


def test_a_missing_field_is_named():
    with pytest.raises(ValueError) as got:
        rq.from_json({"job": "select", "paths": ["a"], "plot": "p", "lo": [1]})
    assert "'hi'" in str(got.value)


def test_text_that_is_no_json_is_a_value_error():
    with pytest.raises(ValueError):
        rq.decode("not json")


def _child_given(line: str) -> tuple[list, int, str]:
    proc = childproc.spawn("tfrview.core.procs.jobs", stdin_text=line, text=True, keep_stderr=True)
    out = list(launch.read_lines(proc))
    code = proc.wait()
    proc.error_file.seek(0)
    return out, code, proc.error_file.read()


@pytest.mark.parametrize(
    ("line", "why"),
    [
        ('{"job": "launch_missiles", "paths": []}', "unknown job 'launch_missiles'"),
        ('{"job": "analyze", "paths": ["a"], "spec": 1}', "unexpected fields ['spec'] for the analyze job"),
        ("{not json", "Expecting property name enclosed in double quotes"),
    ],
)
def test_a_child_given_a_bad_request_answers_one_failed(line, why):
    """Not run, not a traceback: one `Failed` of kind BadRequest saying why, and its log line."""
    out, code, err = _child_given(line)
    assert len(out) == 1 and isinstance(out[0], m.Failed), out
    assert out[0].kind == "BadRequest" and "\n" not in out[0].message
    assert out[0].message.startswith("the job process could not read its request: ")
    assert why in out[0].message
    assert code == 1
    assert "Traceback" not in err and "could not read its request" in err
