import math

from tests.core.test_payload import make_example
from tfrview.core.analysis.datasummary import DatasetSummary
from tfrview.core.records.payload import decode


def test_schema_and_class_distribution():
    s = DatasetSummary()
    for i in range(10):
        feats = {"label": [i % 3], "score": [0.5 * i], "name": [b"n%d" % (i % 2)]}
        if i == 4:
            feats["score"] = [math.nan]
        if i != 7:
            feats["extra"] = [1, 2, 3]
        s.add(decode(make_example(**feats)), {0: "zero"})
    s.add(decode(b"not an example"))
    d = s.to_json()
    assert d["records"] == 11 and d["kinds"] == {"example": 10, "bytes": 1}
    assert d["keys"]["extra"]["present"] == 9 and d["keys"]["extra"]["values_per_record"] == [3, 3]
    score = d["keys"]["score"]
    assert score["nan"] == 1 and score["min"] == 0.0 and score["max"] == 4.5
    assert d["keys"]["name"]["top"] == [["n0", 5], ["n1", 5]]
    assert d["keys"]["label"]["top"][0] == [0, 4]
    assert d["classes"]["title"] == "records per label"
    assert d["classes"]["counts"][0] == ["0 (zero)", 4]


def test_box_classes_win_over_record_labels():
    s = DatasetSummary()
    ex = make_example(
        **{
            "image/object/bbox/xmin": [0.1, 0.2],
            "image/object/bbox/ymin": [0.1, 0.2],
            "image/object/bbox/xmax": [0.3, 0.4],
            "image/object/bbox/ymax": [0.3, 0.4],
            "image/object/class/text": [b"cat", b"dog"],
            "label": [1],
        }
    )
    s.add(decode(ex))
    s.add(decode(ex))
    title, counts = s.classes
    assert title == "objects per class" and counts == {"cat": 2, "dog": 2}


def test_class_bars_take_the_colour_their_boxes_have():
    """A box is coloured by its class id (Box.color_key); the class balance names the class, so it
    says which id each name's boxes have."""
    from tfrview.core.records.overlays import compute_overlay
    from tfrview.core.records.palette import palette_hex

    s = DatasetSummary()
    ex = make_example(
        **{
            "image/object/bbox/xmin": [0.1, 0.2],
            "image/object/bbox/ymin": [0.1, 0.2],
            "image/object/bbox/xmax": [0.3, 0.4],
            "image/object/bbox/ymax": [0.3, 0.4],
            "image/object/class/text": [b"cat", b"dog"],
            "image/object/class/label": [3, 8],
        }
    )
    s.add(decode(ex))
    keys = s.to_json()["classes"]["colour_keys"]
    assert keys == {"cat": "3", "dog": "8"}
    boxes = compute_overlay(decode(ex).features, 100, 100).boxes
    assert [palette_hex(keys[b.name]) for b in boxes] == [palette_hex(b.color_key) for b in boxes]
    only_text = DatasetSummary()
    only_text.add(
        decode(
            make_example(
                **{
                    "image/object/bbox/xmin": [0.1],
                    "image/object/bbox/ymin": [0.1],
                    "image/object/bbox/xmax": [0.3],
                    "image/object/bbox/ymax": [0.3],
                    "image/object/class/text": [b"cat"],
                }
            )
        )
    )
    assert only_text.to_json()["classes"]["colour_keys"] == {}  # coloured by name, as its boxes are
