import math

import pytest

from tests.core.test_payload import make_example
from tfrview.core.analysis.filterexpr import And, Cmp, FilterError, Key, Lit, Not, Or, facts_for, parse


def match(expr: str, problems=(), number=0, **features) -> bool:
    """The filter on one record, by both engines (a record at a time, and the fact table's array
    operations), which must agree."""
    data = make_example(**features) if features else make_example(dummy=[0])
    from tfrview.core.analysis.filterexpr import compile_filter

    one = compile_filter(parse(expr))(facts_for(data, number, "f.tfrecord", list(problems)))
    assert vectorised(expr, data, number, problems) == one, expr
    return one


def vectorised(expr: str, data: bytes, number: int, problems) -> bool:
    import numpy as np
    import pyarrow as pa

    from tfrview.core.analysis.facts import FactsBuilder
    from tfrview.core.analysis.vfilter import match as vmatch
    from tfrview.core.records.payload import decode
    from tfrview.core.tfrecord.index import VERIFIED

    b = FactsBuilder()
    b.add(0, decode(data), None, 0)
    t = b.table("f.tfrecord", np.array([0]), np.array([len(data)]), np.array([VERIFIED], dtype=np.uint8))
    t = t.add_column(0, "n", pa.array([number], pa.int64()))
    hits, _ = vmatch(t, parse(expr), {k: np.array([0]) for k in problems})
    return bool(len(hits))


@pytest.mark.parametrize(
    "text, position, words",
    [
        ("", 0, "empty"),
        ("label ==", 8, "needs something"),
        ("label = 3", 6, "use =="),
        ('"image/x contains "cat"', 22, "unclosed"),
        ("(label == 3", 11, "missing )"),
        ("label == 3 label", 11, "unexpected 'label'"),
        ("and label", 0, "cannot start"),
        ("len(label > 3", 10, "missing )"),
        ("label == 3 $", 11, "unexpected '$'"),
    ],
)
def test_parse_errors_say_where(text, position, words):
    with pytest.raises(FilterError) as e:
        parse(text)
    assert e.value.position == position and words in e.value.message


def test_precedence_not_binds_tighter_than_and_than_or():
    assert parse("a or b and c") == Or((Key("a"), And((Key("b"), Key("c")))))
    assert parse("not a and b") == And((Not(Key("a")), Key("b")))
    assert parse("not (a or b)") == Not(Or((Key("a"), Key("b"))))
    assert parse('"x/y" contains "cat"') == Cmp("contains", Key("x/y"), Lit("cat"))
    assert parse("w >= 1.5e2") == Cmp(">=", Key("w"), Lit(150.0))


def test_comparisons_on_features():
    assert match("label == 3", label=[3])
    assert not match("label == 3", label=[4])
    assert match("label == 3", label=[1, 3])  # any value
    assert match("width < 100", width=[64])
    assert match('"image/object/class/text" contains "cat"', **{"image/object/class/text": [b"dog", b"Cat"]})
    assert match('name == "abc"', name=[b"abc"])
    assert match("score > 0.5", score=[0.75])


def test_types_never_mix():
    assert not match('label == "3"', label=[3])
    assert not match("name == 3", name=[b"3"])
    assert not match("name < 3", name=[b"1"])


def test_missing_features_and_not_equal():
    assert not match("label == 3")
    assert match("label != 3")  # a missing feature differs from everything
    assert not match("label != 3", label=[3, 4])  # some value equals
    assert match("not label", other=[1])
    assert match("label", label=[0])


def test_len_and_facts():
    assert match('len("image/object/bbox/xmin") > 5', **{"image/object/bbox/xmin": [0.1] * 6})
    assert not match("len(boxes) > 0")
    assert match("problem", problems=["bad_data_crc"])
    assert not match("problem")
    assert match('problem == "bad_data_crc"', problems=["truncated", "bad_data_crc"])
    assert match('kind == "example"', label=[1])
    assert match("record >= 10 and record < 20", number=12)


def test_nan_compares_false():
    assert not match("x > 0", x=[math.nan])
    assert not match("x == x", x=[math.nan])


def test_keys_resolve_against_the_dataset():
    import pytest

    from tfrview.core.analysis.filterexpr import FilterError, Key, parse, resolve_keys

    known = {"image/width", "image/height", "mask/width", "label"}
    assert resolve_keys(parse("height > 2"), known).left == Key("image/height")
    with pytest.raises(FilterError, match="could be image/width or mask/width"):
        resolve_keys(parse("width > 2"), known)
    with pytest.raises(FilterError, match="did you mean label") as e:
        resolve_keys(parse("x == 1 or lable == 3"), known)
    assert e.value.position == 10
    with pytest.raises(FilterError, match="quote it"):
        resolve_keys(parse("label == cat"), known)
    assert resolve_keys(parse("rare == 1"), known, complete=False).left == Key("rare")  # maybe unsampled
    with pytest.raises(FilterError, match="no record has"):
        resolve_keys(parse("rare == 1"), known, complete=True)


def test_any_and_all_over_lists():
    """`problem != "x"` says no problem is x; any()/all() say some / every value, on both engines."""
    dup = ["duplicate_image", "bad_box"]
    assert not match('problem != "duplicate_image"', problems=dup)  # no problem is x: false
    assert match('any(problem != "duplicate_image")', problems=dup)  # bad_box is not x
    assert not match('any(problem != "duplicate_image")', problems=["duplicate_image"])
    assert not match('any(problem != "duplicate_image")')  # no problem at all: none differs
    assert match('all(problem == "duplicate_image")', problems=["duplicate_image"])
    assert not match('all(problem == "duplicate_image")', problems=dup)
    assert match('all(problem == "duplicate_image")')  # all() of nothing holds
    assert match('any(problem == "bad_box")', problems=dup)
    assert match("any('bad_box' == problem)", problems=dup)  # the literal on either side
    assert match("all(label > 2)", label=[3, 5])
    assert not match("all(label > 2)", label=[3, 1])
    assert match("any(label > 2)", label=[3, 1])
    assert match("all(2 < label)", label=[3, 5])
    assert not match("all(2 < label)", label=[3, 2])
    assert match('all(name contains "a")', name=[b"cat", b"Bat"])
    assert not match('all(name contains "a")', name=[b"cat", b"dog"])
    assert match('all(label == "3")') and not match('all(label == "3")', label=[3])  # types never mix
    assert match("not all(label == 1) and any(label == 1)", label=[1, 2])
    assert match("any(label == record)", label=[7, 4], number=4)  # two terms of the record
    assert not match("all(label == record)", label=[7, 4], number=4)


def test_any_all_parse_and_stay_usable_as_keys():
    from tfrview.core.analysis.filterexpr import Quant

    assert parse('any(problem != "x")') == Quant("any", parse('problem != "x"'))
    assert parse("all == 3") == Cmp("==", Key("all"), Lit(3))  # a feature named all
    assert match("any == 3", any=[3])
    with pytest.raises(FilterError, match="takes a comparison"):
        parse("any(label)")
    with pytest.raises(FilterError, match="missing \\)"):
        parse("all(label == 3")


def test_any_all_over_many_records_as_arrays():
    """all()/any() per record when the fact table holds several (list offsets, problem rows)."""
    import numpy as np
    import pyarrow as pa

    from tfrview.core.analysis.facts import FactsBuilder
    from tfrview.core.analysis.vfilter import match as vmatch
    from tfrview.core.records.payload import decode
    from tfrview.core.tfrecord.index import VERIFIED

    labels = [[3, 5], [3, 1], [], [9]]
    b = FactsBuilder()
    datas = [make_example(label=v) if v else make_example(dummy=[0]) for v in labels]
    for i, d in enumerate(datas):
        b.add(i, decode(d), None, i)
    n = len(datas)
    t = b.table("f.tfrecord", np.arange(n), np.array([len(d) for d in datas]), np.full(n, VERIFIED, np.uint8))
    t = t.add_column(0, "n", pa.array(np.arange(n), pa.int64()))
    probs = {"duplicate_image": np.array([0, 1]), "bad_box": np.array([1])}
    assert vmatch(t, parse("all(label > 2)"), probs)[0].tolist() == [0, 2, 3]
    assert vmatch(t, parse("any(label < 2)"), probs)[0].tolist() == [1]
    assert vmatch(t, parse('problem != "duplicate_image"'), probs)[0].tolist() == [2, 3]
    assert vmatch(t, parse('any(problem != "duplicate_image")'), probs)[0].tolist() == [1]
    assert vmatch(t, parse('all(problem == "duplicate_image")'), probs)[0].tolist() == [0, 2, 3]


def test_any_all_between_a_list_and_a_number_of_each_record():
    """The array path (a list against record, size or len() of the same record) agrees with the
    record-at-a-time one, literal or term on either side."""
    assert match("any(label == record)", label=[7, 4], number=4)
    assert not match("all(label == record)", label=[7, 4], number=4)
    assert match("all(label < record)", label=[1, 2], number=4)
    assert match("all(record > label)", label=[1, 2], number=4)
    assert match("all(record > label)", label=[1, 5], number=4)  # over the left side: 4 > some label
    assert not match("all(label < record)", label=[1, 5], number=4)  # the list on the left: every label
    assert match("any(label != record)", label=[4, 5], number=4)
    assert not match("any(label != record)", label=[4, 4], number=4)
    assert match("all(label <= len(label))", label=[1, 2])
    assert match("all(label == record)", number=4)  # no label: all() holds
    assert not match("any(label contains record)", label=[4.0], number=4)  # contains: 4.0 is not 4
