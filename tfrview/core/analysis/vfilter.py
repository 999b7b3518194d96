"""The filter language over a fact table, as array operations: 1,000,000 records in tens of ms.

Same meaning as `filterexpr.compile_filter` over one record at a time (its tests hold for both): a
feature with several values matches when any value does; `!=` means no value equals; values of
different types never match (3 is not "3"); `contains` on text ignores case; a feature alone means
the record has it; `any(cmp)` / `all(cmp)` hold when some / every value of the list side does
(all() of no value is true). The facts hold each list's first limits.FACT_VALUES values and text up to
limits.FACT_BYTES bytes: `Matcher.blind` names the keys where that may hide a match.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tfrview.core.analysis.facts import SIGNALS, STEP_COLUMNS, column_of, len_column_of
from tfrview.core.analysis.filterexpr import (
    And,
    Cmp,
    Fact,
    Key,
    Len,
    Lit,
    Not,
    Or,
    Quant,
    _cmp1,
    quantified,
    quantified_side,
)


@dataclass(frozen=True)
class _Vals:
    """Every value of a term, and which record row each belongs to: `rows[i]` for values[i], or
    (a list column) `offsets`, row r holding values[offsets[r]:offsets[r + 1]]. Offsets spare a
    10,000,000-entry row array when only the few matching values need their row."""

    rows: np.ndarray | None
    values: object  # numpy numbers (native type), pyarrow string / binary array, or numpy bool
    type: str  # num, str, bytes, bool
    offsets: np.ndarray | None = None

    def rows_of(self, hit: np.ndarray) -> np.ndarray:
        idx = np.flatnonzero(hit)
        if self.offsets is not None:
            return np.searchsorted(self.offsets, idx, side="right") - 1
        return self.rows[idx]

    def all_rows(self) -> np.ndarray:
        if self.offsets is not None:
            return np.repeat(np.arange(len(self.offsets) - 1), np.diff(self.offsets))
        return self.rows


class Matcher:
    """A parsed filter (after `resolve_keys`) evaluated over a fact table with `problems`: the sorted
    dataset row numbers of each problem kind (row = position in the table), and `tags`: the rows of
    each tag word (`tags.rows_by_word`; joined when the filter runs, never stored with the facts)."""

    def __init__(
        self,
        table: pa.Table,
        problems: dict[str, np.ndarray] | None = None,
        tags: dict[str, np.ndarray] | None = None,
    ) -> None:
        self.t = table
        self.n = table.num_rows
        self.problems = problems or {}
        self.tags = tags or {}
        self.blind: set[str] = set()

    def mask(self, node) -> np.ndarray:
        if isinstance(node, And):
            m = np.ones(self.n, dtype=bool)
            for x in node.items:
                m &= self.mask(x)
            return m
        if isinstance(node, Or):
            m = np.zeros(self.n, dtype=bool)
            for x in node.items:
                m |= self.mask(x)
            return m
        if isinstance(node, Not):
            return ~self.mask(node.inner)
        if isinstance(node, Cmp):
            if node.op == "!=":
                return ~self._compare("==", node.left, node.right)
            return self._compare(node.op, node.left, node.right)
        if isinstance(node, Quant):
            return self._quant(node)
        if isinstance(node, Lit):
            return np.full(self.n, bool(node.value))
        if isinstance(node, Fact) and node.name in ("tag", "problem"):  # has one: its rows, as they are
            m = np.zeros(self.n, dtype=bool)
            for rows in (self.tags if node.name == "tag" else self.problems).values():
                m[np.asarray(rows, np.int64)] = True
            return m
        v = self.values(node)
        if v.offsets is not None:
            return np.diff(v.offsets) > 0
        m = np.zeros(self.n, dtype=bool)
        m[v.rows] = True
        return m

    # --- terms -----------------------------------------------------------------------------------

    def values(self, node) -> _Vals:
        if isinstance(node, Lit):
            raise TypeError("literals are compared, not listed")
        if isinstance(node, Fact):
            return self._fact(node.name)
        if isinstance(node, Len):
            return self._len(node.key)
        if isinstance(node, Key):
            return self._key(node.name)
        m = self.mask(node)  # a nested expression used as a value: its truth
        return _Vals(np.arange(self.n), m, "bool")

    def _fact(self, name: str) -> _Vals:
        rows = np.arange(self.n)
        if name == "record":
            return _Vals(rows, self.t.column("n").to_numpy(), "num")
        if name == "size":
            return _Vals(rows, self.t.column("size").to_numpy().astype(np.int64), "num")
        if name in ("kind", "file", "split"):
            col = pc.cast(self._raw(name), pa.string())
            valid = col.is_valid().to_numpy(zero_copy_only=False)
            if name == "split":  # "" is no split: nothing to compare, as a missing feature
                valid &= pc.not_equal(col, "").fill_null(False).to_numpy(zero_copy_only=False)
            return _Vals(rows[valid], col.filter(pa.array(valid)), "str")
        # problem: one value per problem kind a record has; tag: a record's one word. The words
        # made as a dictionary's codes and cast to text in Arrow: no Python string a row
        by_word = self.tags if name == "tag" else self.problems
        parts = [(r, k) for k, r in by_word.items() if len(r)]
        if not parts:
            return _Vals(np.empty(0, np.int64), pa.array([], pa.string()), "str")
        r = np.concatenate([np.asarray(p[0], np.int64) for p in parts])
        codes = np.repeat(np.arange(len(parts), dtype=np.int32), [len(p[0]) for p in parts])
        words = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array([str(p[1]) for p in parts]))
        return _Vals(r, words.cast(pa.string()), "str")

    def _on_dictionary(self, op: str, name: str, value) -> np.ndarray | None:
        """A text fact stored as a dictionary (`split`, `kind`, `file`: a few words over a million
        rows) compared with a literal: each word once, then the rows by their codes (~10 ms, not
        the second a million strings cost). None when the column is not one."""
        if name not in ("kind", "file", "split"):
            return None
        col = self._raw(name)
        if col is None or not pa.types.is_dictionary(col.type):
            return None
        words = pc.cast(col.dictionary, pa.string())
        hit = _against(op, _Vals(np.arange(len(words)), words, "str"), value)
        if hit is None:
            return np.zeros(self.n, dtype=bool)
        ok = np.zeros(len(words) + 1, dtype=bool)  # the last: a null row
        ok[np.flatnonzero(hit)] = True
        if name == "split":  # "" is no split: it matches nothing, as a missing feature
            ok[: len(words)] &= np.asarray(words.to_pylist(), dtype=object) != ""
        codes = col.indices.fill_null(len(words)).to_numpy(zero_copy_only=False).astype(np.int64)
        return ok[codes]

    def _column(self, key: str):
        """The column of a feature key (None if no record has it); a word no feature is called that
        names an image signal (`blur`, `brightness`: records.imagesignals) or a column of the
        dataset step (`leak`, `tp`: stepcolumns.NAMES) is that column."""
        col = self._raw(column_of(key))
        if col is None and (key in SIGNALS or key in STEP_COLUMNS):
            return self._raw(key)
        return col

    def _raw(self, name: str):
        if name not in self.t.column_names:
            return None
        col = self.t.column(name)
        return col.chunk(0) if col.num_chunks == 1 else col.combine_chunks()  # combining copies

    def _key(self, key: str) -> _Vals:
        col = self._column(key)
        if col is None:
            return _Vals(np.empty(0, np.int64), np.empty(0), "num")
        if pa.types.is_list(col.type):
            offsets = col.offsets.to_numpy()
            if (
                col.null_count
                and (np.diff(offsets)[~col.is_valid().to_numpy(zero_copy_only=False)] > 0).any()
            ):
                # null lists that still span values (Arrow allows it; our tables never write them)
                rows = pc.list_parent_indices(col).to_numpy()
                return _typed(rows, pc.list_flatten(col), key, self.blind)
            offsets = offsets - offsets[0]
            flat = col.values.slice(int(col.offsets[0].as_py()), int(offsets[-1]))
            lens = self._raw(len_column_of(key))
            if lens is not None and pc.any(pc.greater(lens.fill_null(0), pa.array(np.diff(offsets)))).as_py():
                self.blind.add(key)
            return _typed(None, flat, key, self.blind, offsets)
        valid = col.is_valid().to_numpy(zero_copy_only=False)
        return _typed(np.flatnonzero(valid), col.filter(pa.array(valid)), key, self.blind)

    def _len(self, key: str) -> _Vals:
        rows = np.arange(self.n)
        col = self._column(key)
        if col is None:
            return _Vals(rows, np.zeros(self.n), "num")
        if pa.types.is_list(col.type):
            lens = self._raw(len_column_of(key))
            counts = (lens if lens is not None else pc.list_value_length(col)).fill_null(0)
            return _Vals(rows, counts.to_numpy(), "num")
        return _Vals(rows, col.is_valid().to_numpy(zero_copy_only=False).astype(np.int64), "num")

    # --- comparing -------------------------------------------------------------------------------

    def _compare(self, op: str, left, right) -> np.ndarray:
        if isinstance(left, Lit) and isinstance(right, Lit):
            return np.full(self.n, _cmp1(op, left.value, right.value))
        if isinstance(left, Lit):  # 3 < width is width > 3
            flipped = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
            if op == "contains":  # "cat" contains word: the text holds the value
                return self._pairs(op, _lit_vals(left.value, self.n), self.values(right))
            left, right, op = right, left, flipped
        if isinstance(left, Fact) and isinstance(right, Lit):
            fast = self._on_dictionary(op, left.name, right.value)
            if fast is not None:
                return fast
            if left.name in ("tag", "problem") and op == "==":  # a word's rows, as they are
                m = np.zeros(self.n, dtype=bool)
                rows = (self.tags if left.name == "tag" else self.problems).get(right.value)
                if isinstance(right.value, str) and rows is not None:
                    m[np.asarray(rows, np.int64)] = True
                return m
        a = self.values(left)
        m = np.zeros(self.n, dtype=bool)
        if isinstance(right, Lit):
            hit = _against(op, a, right.value)
            if hit is not None:
                m[a.rows_of(hit)] = True
            return m
        return self._pairs(op, a, self.values(right))

    def _quant(self, node: Quant) -> np.ndarray:
        """any()/all() of a comparison: per value of the list side, then per record."""
        c, op = node.cmp, node.cmp.op
        over_left = quantified_side(c)
        term, other = (c.left, c.right) if over_left else (c.right, c.left)
        flipped = op if over_left else {"<": ">", ">": "<", "<=": ">=", ">=": "<="}.get(op, op)
        if isinstance(other, Lit) and not isinstance(term, Lit) and (over_left or op != "contains"):
            vals = self.values(term)
            hit = _against("==" if op == "!=" else flipped, vals, other.value)
            hit = np.zeros(len(vals.values), dtype=bool) if hit is None else np.asarray(hit, dtype=bool)
        else:
            vals, hit = self._against_row(term, other, "==" if op == "!=" else flipped)
            if hit is None:
                return self._quant_rows(node, over_left)
        if op == "!=":
            hit = ~hit
        if node.kind == "any":
            m = np.zeros(self.n, dtype=bool)
            m[vals.rows_of(hit)] = True
        else:  # every value holds: no value fails (a record with none holds)
            m = np.ones(self.n, dtype=bool)
            m[vals.rows_of(~hit)] = False
        return m

    def _against_row(self, term, other, op: str) -> tuple[_Vals, np.ndarray | None]:
        """Each number of `term` against its record's one number of `other` (record, size, len(),
        a numeric feature every record holds once), as arrays; None when the terms are otherwise."""
        a = self.values(term)
        if isinstance(other, Lit) or a.type != "num" or op == "contains":  # contains: 3 is not 3.0
            return a, None
        b = self.values(other)
        if (
            b.type != "num"
            or b.offsets is not None
            or len(b.rows) != self.n
            or (b.rows != np.arange(self.n)).any()
        ):
            return a, None
        theirs = np.asarray(b.values)[a.all_rows()]
        fn = {"==": np.equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[op]
        return a, fn(np.asarray(a.values), theirs)

    def _quant_rows(self, node: Quant, over_left: bool) -> np.ndarray:
        """any()/all() between two terms of records (or a literal that contains): record by record."""

        def by_row(t) -> dict[int, list]:
            v = _lit_vals(t.value, self.n) if isinstance(t, Lit) else self.values(t)
            out: dict[int, list] = {}
            for r, x in zip(v.all_rows().tolist(), _py(v), strict=True):
                out.setdefault(r, []).append(x)
            return out

        left, right = by_row(node.cmp.left), by_row(node.cmp.right)
        return np.fromiter(
            (
                quantified(node.kind, node.cmp.op, left.get(r, []), right.get(r, []), over_left)
                for r in range(self.n)
            ),
            dtype=bool,
            count=self.n,
        )

    def _pairs(self, op: str, a: _Vals, b: _Vals) -> np.ndarray:
        """Two terms of records: every value of one against every value of the other, per record."""

        m = np.zeros(self.n, dtype=bool)
        if a.type != b.type:
            return m  # values of different types never match
        av, bv = _py(a), _py(b)
        by_row: dict[int, list] = {}
        for r, v in zip(b.all_rows().tolist(), bv, strict=True):
            by_row.setdefault(r, []).append(v)
        for r, v in zip(a.all_rows().tolist(), av, strict=True):
            if not m[r] and any(_cmp1(op, v, w) for w in by_row.get(r, ())):
                m[r] = True
        return m


def _lit_vals(value, n: int) -> _Vals:
    rows = np.arange(n)
    if isinstance(value, bool):
        return _Vals(rows, np.full(n, value), "bool")
    if isinstance(value, int | float):
        return _Vals(rows, np.full(n, value), "num")
    return _Vals(rows, pa.array([value] * n, pa.string()), "str")


def _typed(
    rows: np.ndarray | None, flat: pa.Array, key: str, blind: set[str], offsets: np.ndarray | None = None
) -> _Vals:
    t = flat.type
    if pa.types.is_dictionary(t):
        flat = pc.cast(flat, t.value_type)
        t = flat.type
    if pa.types.is_integer(t) or pa.types.is_floating(t):
        return _Vals(rows, flat.to_numpy(zero_copy_only=False), "num", offsets)
    if pa.types.is_boolean(t):
        return _Vals(rows, flat.to_numpy(zero_copy_only=False), "bool", offsets)
    if flat.null_count:  # text too long to keep: may hide a match (null values match nothing)
        blind.add(key)
    kind = "str" if pa.types.is_string(t) or pa.types.is_large_string(t) else "bytes"
    return _Vals(rows, flat, kind, offsets)


def _against(op: str, a: _Vals, lit) -> np.ndarray | None:
    """Which of a term's values compare true with a literal (None: none can)."""
    if isinstance(lit, bool):
        if a.type != "bool" or op != "==":
            return None
        return np.asarray(a.values) == lit
    if isinstance(lit, int | float):
        if a.type != "num":
            return None
        v = np.asarray(a.values)
        if op == "contains":
            return v == lit
        return {"==": np.equal, "<": np.less, "<=": np.less_equal, ">": np.greater, ">=": np.greater_equal}[
            op
        ](v, lit)
    if a.type != "str":
        return None
    arr = a.values
    if op == "contains":  # ignoring case costs 3x: only when the text has a case
        got = pc.match_substring(arr, lit, ignore_case=lit.lower() != lit.upper())
    else:
        fn = {"==": pc.equal, "<": pc.less, "<=": pc.less_equal, ">": pc.greater, ">=": pc.greater_equal}[op]
        got = fn(arr, pa.scalar(lit, pa.string()))
    return got.fill_null(False).to_numpy(zero_copy_only=False)


def _py(v: _Vals) -> list:
    if isinstance(v.values, pa.Array):
        return v.values.to_pylist()
    vals = np.asarray(v.values)
    return vals.tolist()


def match(
    table: pa.Table,
    node,
    problems: dict[str, np.ndarray] | None = None,
    tags: dict[str, np.ndarray] | None = None,
) -> tuple[np.ndarray, set[str]]:
    """Dataset record numbers (column `n`) that match, and the keys the facts may not fully hold."""
    m = Matcher(table, problems, tags)
    mask = m.mask(node)
    return table.column("n").to_numpy()[mask], m.blind
