"""The one error hierarchy: what the core raises on purpose is a TfrviewError, a stop is not an
error, and `one_line` gives every exception one printable line."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import tfrview.core
from tfrview.core.errors import Cancelled, ChildError, RecordRangeError, TfrviewError, one_line

# Raised and caught inside one module, never let out to the CLI or the window.
INTERNAL = {"RangeIgnored"}


def _core_exception_classes() -> dict[str, type]:
    found = {}
    for info in pkgutil.walk_packages(tfrview.core.__path__, "tfrview.core."):
        if ".proto." in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == info.name:
                found[f"{info.name}.{name}"] = value
    return found


def test_every_error_the_core_defines_derives_from_one_base():
    classes = _core_exception_classes()
    assert "tfrview.core.records.images.ImageError" in classes  # the walk reached the records
    assert "tfrview.core.analysis.filterexpr.FilterError" in classes
    outside = sorted(
        name
        for name, cls in classes.items()
        if not issubclass(cls, TfrviewError) and cls is not Cancelled and cls.__name__ not in INTERNAL
    )
    assert outside == []


def test_cancelled_is_no_error():
    assert not issubclass(Cancelled, Exception)
    with pytest.raises(Cancelled):
        try:
            raise Cancelled
        except Exception:  # what every error handler catches must not take a stop for a failure
            pytest.fail("a stop was caught as an error")
    assert one_line(Cancelled()) == "cancelled"


def test_errors_keep_the_builtin_bases_callers_caught_before():
    from tfrview.core.analysis.filterexpr import FilterError, parse
    from tfrview.core.records.images import ImageError

    assert issubclass(RecordRangeError, IndexError)
    assert issubclass(ChildError, RuntimeError)
    assert issubclass(ImageError, ValueError)
    with pytest.raises(FilterError) as caught:
        parse("size >")
    assert isinstance(caught.value, ValueError) and isinstance(caught.value, TfrviewError)
    assert "at character" in one_line(caught.value)


def test_a_record_number_out_of_range_is_a_tfrview_error(tmp_path):
    from tfrview.core.tfrecord.dataset import Dataset
    from tfrview.core.tfrecord.framing import encode_record

    path = tmp_path / "two.tfrecord"
    path.write_bytes(encode_record(b"a") + encode_record(b"b"))
    with Dataset.open([str(path)]) as ds:
        ds.frame_and_verify()
        with pytest.raises(TfrviewError, match=r"record 5 out of range \(0\.\.1\)"):
            ds.locate(5)


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (TfrviewError("bad.tfrecord: not a TFRecord"), "bad.tfrecord: not a TFRecord"),
        (
            FileNotFoundError(2, "No such file or directory", "gone.tfrecord"),
            "gone.tfrecord: No such file or directory",
        ),
        (MemoryError(), "out of memory (MemoryError); please report the input"),
        (RecursionError(), "out of stack (RecursionError); please report the input"),
        (KeyError("x"), "internal error: KeyError: 'x' (please report it)"),
        (TfrviewError("two\nlines\x1b[31m"), "two\\nlines\\x1b[31m"),
    ],
)
def test_one_line_says_any_exception_in_one_printable_line(exc, line):
    assert one_line(exc) == line


def test_a_malformed_message_and_an_unsortable_column_are_our_errors():
    """Review defects 7: `WireError` (what `schema`'s public decoding lets out) and a column the
    table cannot sort are TfrviewErrors with one line, and still the ValueErrors callers caught."""
    from tfrview.core.records.payload import WireError, top_fields
    from tfrview.core.tfrecord.index import RecordIndex
    from tfrview.core.tfrecord.order import column_key

    with pytest.raises(WireError) as caught:
        top_fields(bytes([0x08]))  # field 1, a varint that runs past the end
    assert isinstance(caught.value, TfrviewError) and isinstance(caught.value, ValueError)
    assert one_line(caught.value) == "varint runs past the end"
    with pytest.raises(TfrviewError) as caught:
        column_key([RecordIndex()], [0], "kind")
    assert isinstance(caught.value, ValueError)
    assert one_line(caught.value) == "column 'kind' is not sortable (its values are read lazily)"
