"""Issue 18.7: a TF-Ranking ExampleListWithContext file in the window: its kind named in the status
bar, the row summary counts the examples, the tree shows the context and each example's features."""

from __future__ import annotations

from tests.cli.test_elwc import _docs, elwc
from tests.gui.test_main_window import column, wait_view
from tfrview.core.output.writer import write_records
from tfrview.demo import _example


def test_an_example_list_shows_its_context_and_every_example(qtbot, open_window, tmp_path):
    path = tmp_path / "ranking.tfrecord"
    write_records(path, [elwc(_docs(3, q), _example(query_tokens=[f"query {q}"])) for q in range(4)])
    w = open_window([path])
    assert column(qtbot, w, "kind") == ["example list with context"] * 4
    assert (
        column(qtbot, w, "summary")[1] == "3 examples (document_tokens, relevance)  ·  context query_tokens"
    )
    w.select_record(1)
    wait_view(qtbot, w, 1)
    tops = [w.tree.topLevelItem(i) for i in range(w.tree.topLevelItemCount())]
    assert [t.text(0) for t in tops] == ["context", "examples"]
    assert tops[0].child(0).text(0) == "query_tokens" and "query 1" in tops[0].child(0).text(3)
    examples = tops[1]
    assert [examples.child(i).text(0) for i in range(examples.childCount())] == [
        "example 0",
        "example 1",
        "example 2",
    ]
    second = examples.child(1)
    assert [second.child(i).text(0) for i in range(second.childCount())] == ["document_tokens", "relevance"]
    assert "doc1_1" in second.child(0).text(3)
