"""Class ids and names remapped consistently (`--map-classes`): one table from every old class to
its new id and name, built from the label map and the (id, name) pairs the records hold together,
applied to every class key the one reading found (the box spec's class id and text keys, the record
label and its text sibling), and written as the new label map.

The rule: an id pair maps an id (and the class takes the name of the class it joins, if that class
is known); a name pair renames (classes that end with one name are one class: the id of the class
that had that name already, else the smallest of theirs). Ids and names the data holds but no pair
names stay as they are."""

from __future__ import annotations

from dataclasses import dataclass

from tfrview.core.rewrite.options import ClassMap, RewriteError
from tfrview.core.termtext import printable


@dataclass(frozen=True)
class Remap:
    """Old id -> new id, old name -> new name, and the new label map (id -> name)."""

    ids: dict[int, int]
    names: dict[str, str]
    label_map: dict[int, str]

    def new_id(self, i: int) -> int:
        return self.ids.get(i, i)

    def new_name(self, t: str) -> str:
        return self.names.get(t, t)


def build_remap(cmap: ClassMap, known: dict[int, str], ids_seen: set[int], names_seen: set[str]) -> Remap:
    """`known`: id -> name (the label map, then the pairs the records hold). A pair naming a class
    the data and the label map do not hold is a one-line error (a typo would silently do nothing)."""
    id_map, name_map = cmap.id_map, cmap.name_map
    all_ids = set(known) | ids_seen
    all_names = set(known.values()) | names_seen
    for old in id_map:
        if old not in all_ids:
            raise RewriteError(f"--map-classes: class id {old} is in no record and no label map")
    for old in name_map:
        if old not in all_names:
            raise RewriteError(f"--map-classes: class {printable(old)!r} is in no record and no label map")
    # each known class: its id mapped, then its name (the name of the class it joins when an id pair
    # moves it onto a known id), then classes of one final name joined under one id
    moved: dict[int, tuple[int, str]] = {}
    for i in sorted(all_ids):
        name = known.get(i, "")
        ni = id_map.get(i, i)
        if i in id_map and ni in known and ni not in id_map:
            name = known[ni]
        moved[i] = (ni, name_map.get(name, name) if name else "")
    by_name: dict[str, list[int]] = {}
    for i, (_, nn) in moved.items():
        if nn:
            by_name.setdefault(nn, []).append(i)
    ids: dict[int, int] = {}
    for nn, olds in by_name.items():
        had = [o for o in olds if known.get(o) == nn]
        target = moved[had[0]][0] if had else min(moved[o][0] for o in olds)
        for o in olds:
            ids[o] = target
    for i, (ni, _) in moved.items():
        ids.setdefault(i, ni)
    names = {**{n: name_map.get(n, n) for n in all_names}}
    for i, (_, nn) in moved.items():  # an id moved onto a known class: its old name becomes that name
        old = known.get(i)
        if old and nn and old != nn and i in id_map:
            names[old] = nn
    label_map: dict[int, str] = {}
    for i, (_, nn) in sorted(moved.items()):
        if nn:
            label_map.setdefault(ids[i], nn)
    return Remap(
        {k: v for k, v in ids.items() if k != v}, {k: v for k, v in names.items() if k != v}, label_map
    )


def label_map_text(label_map: dict[int, str]) -> str:
    """A StringIntLabelMap in text format (what the Object Detection API and `labelmap.py` read)."""

    def quoted(s: str) -> str:
        return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'

    return "".join(
        f"item {{\n  id: {i}\n  name: {quoted(n)}\n  display_name: {quoted(n)}\n}}\n"
        for i, n in sorted(label_map.items())
    )


def rewrite_example(data: bytes, keys: tuple[str, ...], remap: Remap) -> bytes | None:
    """The record with its class keys remapped, serialised again (deterministically), or None when
    nothing in it changes (the caller then copies its bytes as they are) or it is no Example."""
    from tfrview.core.records.payload import parse_clean_example

    ex = parse_clean_example(data, check_keys=False)
    if ex is None:
        return None
    changed = False
    feats = ex.features.feature
    for k in keys:
        if k not in feats:
            continue
        f = feats[k]
        kind = f.WhichOneof("kind")
        if kind == "int64_list" and remap.ids:
            vals = list(f.int64_list.value)
            new = [remap.ids.get(v, v) for v in vals]
            if new != vals:
                f.int64_list.value[:] = new
                changed = True
        elif kind == "bytes_list" and remap.names:
            vals = list(f.bytes_list.value)
            new = [_renamed(v, remap) for v in vals]
            if new != vals:
                f.bytes_list.value[:] = new
                changed = True
    return ex.SerializeToString(deterministic=True) if changed else None


def _renamed(v: bytes, remap: Remap) -> bytes:
    try:
        t = v.decode("utf-8")
    except UnicodeDecodeError:
        return v
    n = remap.names.get(t)
    return v if n is None else n.encode("utf-8")
