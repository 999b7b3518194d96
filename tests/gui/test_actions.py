"""The window's actions come in typed groups (gui/actions.py): every menu entry is one of them, no
two share a shortcut, and a group's action does what its name says."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from tests.helpers import framed, payloads


def test_menus_are_built_from_the_typed_groups(qtbot, open_window, tmp_path):
    path = tmp_path / "a.tfrecord"
    path.write_bytes(framed(payloads(5))[0])
    w = open_window([path])
    a = w.action_groups
    menus = {m.title(): m for m in (act.menu() for act in w.menuBar().actions())}
    file_entries = [x for x in menus["&File"].actions() if not x.isSeparator() and x.menu() is None]
    assert file_entries == [
        a.file.open,
        a.file.open_dir,
        a.file.reload,
        a.file.label_map,
        a.file.schema,
        a.file.predictions,
        a.export.save_image,
        a.export.salvage,
        a.export.repair,
        a.file.rewrite,
        a.file.close,
        a.file.quit,
    ]
    exports = next(x.menu() for x in menus["&File"].actions() if x.menu() and x.text() == "&Export Selection")
    assert exports.actions() == list(a.export.selection)
    assert [x for x in menus["&Go"].actions() if not x.isSeparator()][:4] == [
        a.navigate.goto,
        a.navigate.filter,
        a.navigate.next_problem,
        a.navigate.prev_problem,
    ]
    assert menus["&Help"].actions() == [a.about]
    by_name = w.actions_by_name
    assert len(by_name) == 48 and by_name["repair"] is a.export.repair and by_name["about"] is a.about
    assert by_name["export_coco"] is a.export.formats[1]  # the training formats, after a separator
    keys = [x.shortcut().toString() for x in by_name.values() if not x.shortcut().isEmpty()]
    assert len(keys) == len(set(keys)) and {"F8", "Shift+F8", "Esc", "Ctrl+G", "B", "L"} <= set(keys)
    assert {"D", "K", "R", "N", "Backspace", "Ctrl+Z", "Ctrl+Shift+Z"} <= set(keys)  # the tags (issue 23)
    every = [k.toString() for x in by_name.values() for k in x.shortcuts()]  # second shortcuts too
    assert len(every) == len(set(every)) and a.navigate.filter.shortcuts()[1].toString() == "/"
    tag_menu = next(x.menu() for x in menus["&Edit"].actions() if x.menu() and x.text() == "&Tag")
    assert [x for x in tag_menu.actions() if not x.isSeparator() and x.menu() is None] == list(
        a.tags.on_selection
    )
    with pytest.raises(FrozenInstanceError):
        a.view.boxes = a.view.labels  # a group is fixed once built


def test_a_group_action_does_what_it_says(qtbot, open_window, tmp_path):
    path = tmp_path / "a.tfrecord"
    path.write_bytes(framed(payloads(5))[0])
    w = open_window([path])
    view = w.image_panel.view
    assert view.show_boxes and view.show_labels
    w.action_groups.view.boxes.trigger()
    w.action_groups.view.labels.trigger()
    assert not view.show_boxes and not view.show_labels
    assert w.cancel_button.defaultAction() in (
        w.action_groups.analysis.stop_scan,
        w.action_groups.analysis.resume,
    )
