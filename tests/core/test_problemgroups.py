"""Which problems repeat each other: the one rule the Problems panel (and reports) group by."""

from tfrview.core.analysis.problemgroups import group, group_key, group_title, template
from tfrview.core.tfrecord.framing import Problem, ProblemKind


def _p(kind, msg):
    return Problem(kind, 0, None, None, msg)


def test_repeats_differ_only_by_places_and_crcs():
    a = _p(ProblemKind.BAD_DATA_CRC, "data CRC mismatch in record 4 (stored 0x1a2b, computed 0x99ff)")
    b = _p(ProblemKind.BAD_DATA_CRC, "data CRC mismatch in record 1,204 (stored 0x0001, computed 0x0002)")
    assert group_key(a) == group_key(b)
    assert template(a.message) == "data CRC mismatch in record … (stored …, computed …)"


def test_quoted_text_and_kind_keep_groups_apart():
    cat = _p(ProblemKind.LABEL_TEXT_MISMATCH, "class text 'cat' but the label map names 'dog'")
    dog = _p(ProblemKind.LABEL_TEXT_MISMATCH, "class text 'dog' but the label map names 'cat'")
    assert group_key(cat) != group_key(dog)
    other = _p(ProblemKind.BAD_DATA_CRC, cat.message)
    assert group_key(cat) != group_key(other)


def test_the_title_keeps_what_every_member_shares():
    msgs = [
        "same image as record 3 of shard-00002-of-00016",
        "same image as record 81 of shard-00002-of-00016",
    ]
    assert group_title(msgs) == "same image as record … of shard-00002-of-00016"
    assert group_title(msgs[:1]) == msgs[0]


def test_groups_keep_the_order_of_their_first_member():
    ps = [
        _p(ProblemKind.BAD_DATA_CRC, "crc 1"),
        _p(ProblemKind.TRUNCATED, "cut 9"),
        _p(ProblemKind.BAD_DATA_CRC, "crc 2"),
    ]
    assert group(ps, lambda p: p) == [[ps[0], ps[2]], [ps[1]]]
