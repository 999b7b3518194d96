"""Typed job messages (procs.messages): each kind survives its one-line JSON framing whole, anything
else is refused, and a job process ends with exactly one `Done` or `Failed` (never silence)."""

from __future__ import annotations

import json
import sys

import pytest

from tests.helpers import framed, payloads
from tfrview.core.errors import SourceError
from tfrview.core.output.export import ExportResult
from tfrview.core.output.repair import Repair, RepairResult
from tfrview.core.output.salvage import SalvageResult
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.procs import launch
from tfrview.core.procs import messages as m
from tfrview.core.procs.requests import FilterRequest, Request, SeriesRequest


def _every_kind() -> list:
    p = Problem(ProblemKind.BAD_DATA_CRC, 120, 40, 3, "data CRC mismatch", cause="one flipped bit")
    return [
        m.Progress("analysis", 2, 7),
        m.ProblemFound(4, p),
        m.CauseFound(1, "bad_data_crc", 120, "one flipped bit"),
        m.FileCause(0, "a line-ending conversion"),
        m.Plot({"series": {"key": "loss", "x": [0, 1], "y": [0.5, 0.25]}}),
        m.Summary({"records": 10}, False, 2, 2, 1700000000.5),
        m.Matches([1, 5, 9], 10, 40),
        m.Note("the stored facts keep a only in part"),
        m.Wrote(
            RepairResult(
                3, [Repair(2, "one flipped bit"), Repair(None, "CR put back", 80)], [(5, "no proof")]
            ),
            True,
        ),
        m.Wrote(SalvageResult(3, 1, 0, 2)),
        m.Wrote(ExportResult(4, 1, ("record 2: no image",))),
        m.DuplicateGroups((m.CopyGroup(3, False, ((0, 17, "train"), (2, 4, "validation")), 5),), 40),
        m.SplitSummary("validation", {"records": 4}, [2, 3]),
        m.Scores("blur", "/tmp/blur.npy", 40, 38),
        m.Evaluated(
            "/tmp/e.npz",
            0.5,
            0.5,
            ["cat"],
            [[1, 0], [2, 0]],
            [{"class": "cat", "ap": None}],
            0.25,
            None,
            3,
            1,
            3,
            "record",
            ["r.json: 3 of 3 predictions joined"],
            ["a note"],
            2,
        ),
        m.Done(),
        m.Failed("cannot write /x: permission denied", "OutputError"),
    ]


def test_every_message_survives_its_framing():
    for msg in _every_kind():
        line = m.encode(msg)
        assert line.endswith("\n") and "\n" not in line[:-1]
        assert m.decode(line) == msg, msg
    assert m.decode(m.encode(m.Plot({"series": {"key": "loss"}}))).series_key == "loss"
    repaired = m.decode(m.encode(_every_kind()[8])).result  # as the window reads it: no rebuilding
    assert repaired.repaired[1].where == "the record at byte 80" and repaired.dropped == [(5, "no proof")]


@pytest.mark.parametrize(
    "line",
    [
        '{"progress": ["analysis", 1, 2]}',  # the old untyped dict
        '{"type": "launch_missiles"}',
        '{"type": "progress", "phase": "a", "done": 1}',  # a field missing
        '{"type": "done", "extra": 1}',  # a field no message has
        '{"type": "wrote", "kind": "launch", "result": {}}',  # a result no writer returns
        '{"type": "wrote", "kind": "salvage", "result": {"written": 1}}',  # its fields missing
        "[1, 2]",
        "not json",
    ],
)
def test_anything_else_is_refused(line):
    with pytest.raises(ValueError):
        m.decode(line)


def test_failed_says_one_line_and_the_kind_of_error():
    assert m.Failed.of(SourceError("gone: no such file")) == m.Failed("gone: no such file", "SourceError")
    bug = m.Failed.of(KeyError("x\ny"))
    assert bug.kind == "internal" and bug.message == "KeyError: 'x\\ny'"
    assert m.Failed.of(OSError("a\nb")).message == "a b"


def _run_child(request: Request) -> list:
    """Runs a job process on `request` and returns its messages."""
    proc = launch.spawn(request)
    out = list(launch.read_lines(proc))
    proc.wait()
    return out


def test_a_job_ends_with_done_after_its_results(tmp_path):
    path = tmp_path / "s.tfrecord"
    path.write_bytes(framed(payloads(30))[0])
    out = _run_child(FilterRequest(expr="record < 3", paths=(str(path),), counts=(30,)))
    assert out[-1] == m.Done() and not any(isinstance(x, m.Failed) for x in out)
    assert [n for x in out if isinstance(x, m.Matches) for n in x.matches] == [0, 1, 2]


def test_a_job_that_fails_says_so_once_and_logs_it(tmp_path):
    """A plot job over data with no stored analysis: one `Failed` with its kind, no `Done` after it,
    and the child's log line on its stderr."""
    path = tmp_path / "s.tfrecord"
    path.write_bytes(framed(payloads(5))[0])
    proc = launch.spawn(SeriesRequest(key="size", paths=(str(path),), counts=(5,)))
    out = list(launch.read_lines(proc))
    assert out == [m.Failed("the analysis is not stored yet: plots come from it", "NotStored")]
    proc.error_file.seek(0)
    assert "the analysis is not stored yet" in proc.error_file.read()


def test_a_child_that_dies_without_a_word_is_a_failed_message(tmp_path):
    """A process that exits with no `Done` or `Failed` (killed by the OS, a crash in C) reaches the
    reader as `Failed` of kind "exited" with the tail of its stderr."""
    import subprocess
    import tempfile

    with tempfile.TemporaryFile("w+") as err:
        code = 'import sys; print(\'{"type": "progress", "phase": "a", "done": 1, "total": 2}\'); '
        code += "sys.stderr.write('segmentation fault, more or less\\n'); sys.exit(3)"
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=err, text=True)
        proc.error_file = err
        out = list(launch.read_lines(proc))
    assert out[0] == m.Progress("a", 1, 2)
    assert out[1] == m.Failed("job exited with code 3: segmentation fault, more or less", "exited")


def test_a_line_that_is_no_message_is_logged_and_passed_over(caplog):
    import subprocess

    lines = ["warning from some library", json.dumps({"type": "done"})]
    code = f"print({chr(10).join(lines)!r})"
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    with caplog.at_level("WARNING", logger="tfrview.core.procs.jobs"):
        out = list(launch.read_lines(proc))
    proc.wait()
    assert out == [m.Done()]
    assert "warning from some library" in caplog.text


def _examples(tmp_path, n: int = 20):
    from tfrview.core.records.proto import example_pb2

    out = []
    for i in range(n):
        ex = example_pb2.Example()
        ex.features.feature["loss"].float_list.value.append(1.0 / (i + 1))
        out.append(ex.SerializeToString())
    path = tmp_path / "e.tfrecord"
    path.write_bytes(framed(out)[0])
    return path


def test_a_plot_job_sends_its_plot_or_fails_saying_why(tmp_path, monkeypatch):
    """Over a stored analysis: a key it holds is one Plot then Done; a key it does not is one
    Failed (NoPlot) with the facts' words (a {"error"} plot dict went unseen by the typed window)."""
    from tfrview.core.analysis import analyze

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))  # the job process inherits it
    path = _examples(tmp_path)
    analyze([str(path)], deep=True, jobs=1)
    out = _run_child(SeriesRequest(paths=(str(path),), counts=(20,), key="loss"))
    assert [type(x) for x in out] == [m.Plot, m.Done] and out[0].series_key == "loss"
    assert out[0].data["series"]["y"][:2] == [1.0, 0.5]
    out = _run_child(SeriesRequest(paths=(str(path),), counts=(20,), key="nothing_here"))
    assert out == [m.Failed("no feature 'nothing_here' in the stored facts", "NoPlot")]
