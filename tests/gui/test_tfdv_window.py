"""Issue 23 part 4: a TFDV file opens in the window as a read-only table (the open path decides by
its name or content), a TFX root as a dataset with its splits."""

from __future__ import annotations

from google.protobuf import text_format
from PySide6.QtCore import Qt

from tfrview.core.tfdv.proto import schema_pb2
from tfrview.core.tfdv.proto import statistics_pb2 as st
from tfrview.gui.app import Windows


def _stats(path):
    s = st.DatasetFeatureStatisticsList()
    ds = s.datasets.add(name="train", num_examples=5)
    f = ds.features.add(name="label", type=st.FeatureNameStatistics.INT)
    f.num_stats.common_stats.num_non_missing = 5
    f.num_stats.mean, f.num_stats.max = 1.5, 3
    path.write_bytes(s.SerializeToString())
    return path


def test_feature_stats_and_a_schema_open_as_tables(qtbot, tmp_path):
    wins = Windows()
    w = wins.open_dataset([str(_stats(tmp_path / "FeatureStats.pb"))])
    qtbot.addWidget(w)
    m = w.view.model()
    assert (m.rowCount(), m.headerData(1, Qt.Orientation.Horizontal)) == (1, "feature")
    cells = [m.data(m.index(0, c)) for c in range(m.columnCount())]
    assert cells[:4] == ["train", "label", "INT", "5"] and "1.5" in cells
    assert "TFDV statistics" in w.windowTitle()
    schema = schema_pb2.Schema()
    schema.feature.add(name="colour", type=schema_pb2.BYTES, domain="colour")
    schema.string_domain.add(name="colour", value=["red", "blue"])
    path = tmp_path / "my_schema_v2.pbtxt"  # no TFX name: its first field says it is a schema
    path.write_text(text_format.MessageToString(schema))
    w2 = wins.open_dataset([str(path)])
    qtbot.addWidget(w2)
    m2 = w2.view.model()
    assert [m2.data(m2.index(0, c)) for c in range(m2.columnCount())] == [
        "colour",
        "BYTES",
        "",
        "",
        "2 strings: red, blue",
    ]
