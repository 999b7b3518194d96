"""Which problems repeat each other: the one rule the Problems panel (and reports) group by."""

from tfrview.core.analysis.problemgroups import Repeats
from tfrview.core.problems import Problem, ProblemKind


def _p(kind, msg):
    return Problem(kind, 0, None, None, msg)


def test_repeats_differ_only_by_places_and_crcs():
    a = _p(ProblemKind.BAD_DATA_CRC, "data CRC mismatch in record 4 (stored 0x1a2b, computed 0x99ff)")
    b = _p(ProblemKind.BAD_DATA_CRC, "data CRC mismatch in record 1,204 (stored 0x0001, computed 0x0002)")
    r = Repeats()
    assert r.add(a) == r.add(b)
    assert r.title(0) == "data CRC mismatch in record … (stored …, computed …)"


def test_quoted_text_and_kind_keep_groups_apart():
    cat = _p(ProblemKind.LABEL_TEXT_MISMATCH, "class text 'cat' but the label map names 'dog'")
    dog = _p(ProblemKind.LABEL_TEXT_MISMATCH, "class text 'dog' but the label map names 'cat'")
    other = _p(ProblemKind.BAD_DATA_CRC, cat.message)
    r = Repeats()
    assert len({r.add(cat), r.add(dog), r.add(other)}) == 3


def test_the_title_keeps_what_every_member_shares():
    msgs = [
        "same image as record 3 of shard-00002-of-00016",
        "same image as record 81 of shard-00002-of-00016",
    ]
    r = Repeats()
    gid = r.add(_p(ProblemKind.DUPLICATE_IMAGE, msgs[0]))
    assert r.title(gid) == msgs[0]  # one member: its message
    r.add(_p(ProblemKind.DUPLICATE_IMAGE, msgs[1]))
    assert r.title(gid) == "same image as record … of shard-00002-of-00016"


def test_groups_are_numbered_in_the_order_of_their_first_member():
    ps = [
        _p(ProblemKind.BAD_DATA_CRC, "crc 1"),
        _p(ProblemKind.TRUNCATED, "cut 9"),
        _p(ProblemKind.BAD_DATA_CRC, "crc 2"),
    ]
    r = Repeats()
    assert [r.add(p) for p in ps] == [0, 1, 0]
    assert r.keys == [("bad_data_crc", "crc …"), ("truncated", "cut …")]
