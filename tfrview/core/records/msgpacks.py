"""msgpack payloads (issue 22): decoded strictly by the `msgpack` package, shown as a tree.

A payload is msgpack only when nothing more specific matched and the WHOLE of it is one map or
array that decodes with no byte left over: a lone integer or string would make most opaque bytes
"msgpack". Decoding is safe by construction: no ext hook, no object hook, no list hook (an ext type
stays an `ExtType` of code and bytes, a timestamp a `Timestamp`), every claimed length checked
against `limits.MSGPACK_MAX_ITEMS` and the payload's size before the decoder allocates it. What is
shown is bounded by `MSGPACK_MAX_DEPTH` and `MSGPACK_SHOWN_NODES`, each cut said with its name.
"""

from __future__ import annotations

import base64
import logging
import math
from dataclasses import dataclass

from tfrview.core.limits import MSGPACK_MAX_DEPTH, MSGPACK_MAX_ITEMS, MSGPACK_SHOWN_NODES, too_large
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

# first bytes of a map or an array: fixmap, fixarray, array 16/32, map 16/32
_CONTAINER_FIRST = frozenset(range(0x80, 0xA0)) | {0xDC, 0xDD, 0xDE, 0xDF}


def _is_array(v: object) -> bool:
    """An array: a plain tuple (an `ExtType` is a tuple too, and is no array)."""
    return type(v) is tuple


def _is_container(v: object) -> bool:
    return isinstance(v, dict) or type(v) is tuple


_IMAGE_HEADS = (b"\x89PNG", b"\x89HDF", b"\x93NUMPY")  # magic numbers that start like a container
TEXT_CHARS = 60  # a string or bytes value's text in the tree (display, not a bound on what is read)


def _elided(s: str) -> str:
    head = s[:TEXT_CHARS]
    return printable(repr(head)) + ("…" if len(head) != len(s) else "")


def could_be(data: bytes) -> bool:
    """Cheap first look: a map or array marker first, and none of the magic numbers that begin so."""
    return len(data) >= 1 and data[0] in _CONTAINER_FIRST and not data.startswith(_IMAGE_HEADS)


def unpack(data: bytes) -> object | None:
    """The payload's value when all of it is one msgpack map or array, else None (never raises).
    Arrays come back as tuples (so a map may have an array as key), maps as dicts."""
    if not could_be(data):
        return None
    import msgpack  # start-up: kept off the CLI's path

    n = len(data)
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            unicode_errors="replace",  # a str that is not UTF-8 is shown, not refused
            use_list=False,
            strict_map_key=False,
            max_str_len=n,
            max_bin_len=n,
            max_ext_len=n,
            max_array_len=min(n, MSGPACK_MAX_ITEMS),
            max_map_len=min(n // 2, MSGPACK_MAX_ITEMS),
        )
    except (ValueError, TypeError, OverflowError, RecursionError, msgpack.UnpackException) as exc:
        # truncated, extra bytes, a claim over a limit, nested past the decoder's stack, an
        # unhashable key: not (whole, well-kept) msgpack, which is the answer
        log.debug("not msgpack: %s", exc)
        return None
    return value if _is_container(value) else None


@dataclass(frozen=True, slots=True)
class MsgNode:
    """One value of the tree: where it sits (key or index), its type word, its size, its text."""

    label: str
    type: str
    count: str
    text: str
    children: tuple[MsgNode, ...] = ()


class _Budget:
    def __init__(self) -> None:
        self.left = MSGPACK_SHOWN_NODES
        self.notes: dict[str, None] = {}

    def take(self) -> bool:
        if self.left <= 0:
            self.notes[
                too_large("the msgpack value", None, MSGPACK_SHOWN_NODES, "values", "MSGPACK_SHOWN_NODES")
                + "; the rest is not shown"
            ] = None
            return False
        self.left -= 1
        return True

    def deep(self) -> None:
        self.notes[
            f"the msgpack value is nested over {MSGPACK_MAX_DEPTH} levels (limits.MSGPACK_MAX_DEPTH); "
            "deeper values are not shown"
        ] = None


def type_word(v: object) -> str:
    """msgpack's own name for a value's type."""
    import msgpack  # start-up: kept off the CLI's path

    if isinstance(v, dict):
        return "map"
    if _is_array(v):
        return "array"
    if v is None:
        return "nil"
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "float"
    if isinstance(v, str):
        return "str"
    if isinstance(v, bytes):
        return "bin"
    if isinstance(v, msgpack.Timestamp):
        return "timestamp"
    return "ext"


def _bytes_text(b: bytes) -> str:
    try:
        s = b.decode("utf-8")
        if s.isprintable():
            return _elided(s)
    except UnicodeDecodeError:  # not text: hex below
        pass
    return f"<{len(b):,} bytes: {b[:16].hex(' ')}{' …' if len(b) > 16 else ''}>"


def scalar_text(v: object) -> str:
    """A scalar as one safe line."""
    if isinstance(v, str):
        return _elided(v)
    if isinstance(v, bytes):
        return _bytes_text(v)
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    code = getattr(v, "code", None)
    if code is not None:  # ExtType: an application's type, shown as its code and bytes, never run
        return f"type {code}: {_bytes_text(v.data)}"
    return printable(str(v))  # a Timestamp


def _key_text(k: object) -> str:
    if isinstance(k, str):
        return printable(k)
    if k is None:
        return "nil"
    return "[array key]" if _is_array(k) else scalar_text(k)


def _count(v: object) -> str:
    if _is_container(v) or isinstance(v, (str, bytes)):
        return f"{len(v):,}"
    return ""


def _node(label: str, v: object, depth: int, budget: _Budget) -> MsgNode:
    if not _is_container(v):
        return MsgNode(label, type_word(v), _count(v), scalar_text(v))
    if depth >= MSGPACK_MAX_DEPTH:
        budget.deep()
        return MsgNode(label, type_word(v), _count(v), "… (deeper than limits.MSGPACK_MAX_DEPTH)")
    items = v.items() if isinstance(v, dict) else ((f"[{i}]", x) for i, x in enumerate(v))
    children = []
    for k, x in items:
        if not budget.take():
            children.append(MsgNode("…", "", "", f"{len(v) - len(children):,} more not shown"))
            break
        children.append(_node(_key_text(k) if isinstance(v, dict) else k, x, depth + 1, budget))
    return MsgNode(label, type_word(v), _count(v), "", tuple(children))


def tree(value: object) -> tuple[MsgNode, tuple[str, ...]]:
    """The value as nodes for the window and `dump`, within the limits, and what they cut."""
    budget = _Budget()
    root = _node("msgpack", value, 0, budget)
    return root, tuple(budget.notes)


def cut_notes(value: object) -> tuple[str, ...]:
    """What the limits cut of the value's tree (`tree(value)[1]`), by the same walk counting only:
    a decoded payload says its cuts without building the tree (the window and `dump` build it when
    they show it)."""
    budget = _Budget()

    def walk(v: object, depth: int) -> None:
        if depth >= MSGPACK_MAX_DEPTH:
            budget.deep()
            return
        for x in v.values() if isinstance(v, dict) else v:
            if not budget.take():
                return
            if _is_container(x):
                walk(x, depth + 1)

    if _is_container(value):
        walk(value, 0)
    return tuple(budget.notes)


def text_lines(value: object, indent: str = "") -> list[str]:
    """`dump`'s text: one line a value, children indented under their map or array (what the
    limits cut is in the payload's own `limits`, said once by its caller)."""
    root, _ = tree(value)
    lines: list[str] = []

    def walk(n: MsgNode, pad: str) -> None:
        size = f"[{n.count}]" if n.count else ""
        lines.append(f"{pad}{n.label}: {n.type}{size}" + (f" {n.text}" if n.text else ""))
        for c in n.children:
            walk(c, pad + "  ")

    for c in root.children:
        walk(c, indent)
    return lines


def to_json(value: object) -> tuple[object, tuple[str, ...]]:
    """The value as JSON within the same limits: a map with text keys an object, any other map a
    list of [key, value] pairs, bin as text or {"base64"}, ext as {"ext", "data"}, NaN and the
    infinities as strings (JSON has none); and what the limits cut."""
    budget = _Budget()

    def conv(v: object, depth: int) -> object:
        if _is_container(v):
            if depth >= MSGPACK_MAX_DEPTH:
                budget.deep()
                return None
            out: list = []
            is_map = isinstance(v, dict)
            for item in v.items() if is_map else v:
                if not budget.take():
                    break
                out.append(
                    [conv(item[0], depth + 1), conv(item[1], depth + 1)] if is_map else conv(item, depth + 1)
                )
            if isinstance(v, dict) and all(isinstance(k, str) for k in v):
                return {k: x for k, x in out}
            return out
        if isinstance(v, float) and not math.isfinite(v):
            return str(v)
        if isinstance(v, (str, int, float, bool)) or v is None:
            return v
        if isinstance(v, bytes):
            return _json_bin(v)
        code = getattr(v, "code", None)
        if code is not None:
            return {"ext": code, "data": _json_bin(v.data)}
        return {"timestamp": str(v)}

    return conv(value, 0), tuple(budget.notes)


def _json_bin(b: bytes) -> object:
    try:
        s = b.decode("utf-8")
        if s.isprintable():
            return s
    except UnicodeDecodeError:  # base64 below
        pass
    return {"base64": base64.b64encode(b).decode("ascii")}


def row_text(value: object) -> str:
    """The record table's line: the container, its size and its first keys or values."""
    if isinstance(value, dict):
        shown = ", ".join(_key_text(k) for k in list(value)[:4])
    else:
        shown = ", ".join(type_word(x) if _is_container(x) else scalar_text(x) for x in value[:4])
    more = " …" if len(value) > 4 else ""
    return f"msgpack {type_word(value)} of {len(value):,}: {shown}{more}"
