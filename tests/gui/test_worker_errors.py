"""A background worker says what went wrong in the core's one line (`errors.one_line`), and a stop
on request (`Cancelled`) is no error."""

from __future__ import annotations

import pytest

from tfrview.core.errors import Cancelled, SourceError
from tfrview.gui.workers.base import Worker


class _Raises(Worker):
    def __init__(self, exc: BaseException) -> None:
        super().__init__()
        self.exc = exc

    def work(self) -> None:
        raise self.exc


@pytest.mark.parametrize(
    ("exc", "said"),
    [
        (
            SourceError("x.tfrecord: cannot read (Input/output error)"),
            ["x.tfrecord: cannot read (Input/output error)"],
        ),
        (
            PermissionError(13, "Permission denied", "/data/x.tfrecord"),
            ["/data/x.tfrecord: Permission denied"],
        ),
        (KeyError("k"), ["internal error: KeyError: 'k' (please report it)"]),
        (Cancelled(), []),
    ],
)
def test_a_worker_says_its_error_in_one_line_and_a_stop_not_at_all(qtbot, exc, said):
    w = _Raises(exc)
    errors: list[str] = []
    w.error.connect(errors.append)
    with qtbot.waitSignal(w.done, timeout=5000):
        w.start()
    w.wait(5000)
    assert errors == said
