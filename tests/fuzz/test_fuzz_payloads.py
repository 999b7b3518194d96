"""Fuzzing what is inside a record: deep nesting, huge lists, huge varints, keys that are not UTF-8
or hold escape sequences, image bombs. Decoding, text, JSON, the QA checks, summaries and images
never raise, stay within the limits and keep every message on one line."""

from __future__ import annotations

import json
import time

from hypothesis import given

from tests.fuzz.strategies import FUZZ, hostile_payloads
from tfrview.core.analysis.checks import check_record
from tfrview.core.limits import MAX_FEATURES, MAX_LIST_VALUES, MAX_STEPS
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.records.images import ImageError, decode_image, find_images
from tfrview.core.records.payload import decode, payload_json
from tfrview.core.records.rowtext import row_text
from tfrview.core.records.textfmt import format_payload


@FUZZ
@given(hostile_payloads)
def test_hostile_payloads_are_decoded_within_the_limits(data):
    t0 = time.monotonic()
    p = decode(data)
    assert len(p.features) <= MAX_FEATURES and len(p.feature_lists) <= MAX_FEATURES
    assert all(len(f.values) <= MAX_LIST_VALUES for f in p.features.values())
    assert all(len(steps) <= MAX_STEPS for steps in p.feature_lists.values())
    assert all(note.isprintable() for note in p.limits)
    json.loads(json.dumps(payload_json(p)))  # always valid JSON, whatever the bytes
    for line in format_payload(p).splitlines():
        assert "\x1b" not in line and "\r" not in line, line
    kind, summary = row_text(data)
    assert "\n" not in summary and "\x1b" not in summary
    for f in check_record(p, (0, 0), None, None, None):
        msg = Problem(f.kind, 0, None, 0, f.message).message
        assert msg.isprintable(), msg
        assert "object at 0x" not in msg  # no Python internals in messages
    for ref in find_images(p.features)[:3]:
        try:
            img = decode_image(p.features, ref, max_side=128)
            assert max(img.width, img.height) <= 128
        except ImageError as exc:
            assert "\n" not in str(exc) and "object at 0x" not in str(exc)
    assert time.monotonic() - t0 < 20


def test_limits_hit_are_said_not_silent():
    from tests.fuzz import hostile as H

    p = decode(H.example({"x": H.int64_feature_packed(MAX_LIST_VALUES + 5)}))
    f = p.features["x"]
    assert len(f.values) == MAX_LIST_VALUES and f.total == MAX_LIST_VALUES + 5
    assert any("over the limit" in n for n in p.limits)
    assert check_record(p, (0, 0), None, None, None)[0].kind == ProblemKind.LIMIT_EXCEEDED
    p = decode(H.many_steps(MAX_STEPS + 1))
    assert len(p.feature_lists["frames"]) == MAX_STEPS and p.limits
    p = decode(H.nested(200, 5))
    assert p.kind == "protobuf" and any("nesting" in n for n in p.limits)
