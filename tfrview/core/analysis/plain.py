"""The deep pass's column path for plain Examples: records whose feature layout (keys and list
types) holds nothing the record checks look inside (no boxes, image keys, masks or image sizes).

Most datasets of tiny records are such Examples, one layout for millions of them. Decoding each
into a dict of `Feature` objects and walking it in six places (schema, statistics, checks,
signature, image keys, facts) cost ~200 us a record; here a layout is judged once, and each record
only hands its protobuf lists to per-key columns, which are counted and checked by array operations
a batch at a time (limits.PLAIN_BATCH_RECORDS). Every result is the one the record-by-record path
gives (`shard._deep` runs that path for every other record, and for the first record of each
layout and set of empty keys, which puts each key in its place in every dict first).

A record leaves the column path (and takes the general one) before anything is counted from it:
a layout that is not plain, a bytes value that looks like an image, a list past the decode limits.
A batch is counted before any record of the general path, so everything happens in record order.
"""

from __future__ import annotations

from collections import Counter
from itertools import chain

import numpy as np

from tfrview.core.limits import (
    IMAGE_KEY_ODD_TRACKED,
    MAX_LIST_VALUES,
    PLAIN_BATCH_RECORDS,
    UPB_MAX_BYTES,
)
from tfrview.core.records.payload import BYTES_LIST, EXAMPLE, FLOAT_LIST, INT64_LIST, parse_clean_example
from tfrview.core.tfrecord.framing import OVERHEAD, Problem, ProblemKind

_IMAGE_FIRST = frozenset(b"\xff\x89GBIMR")  # the first byte of every format sniff_image_format knows
_SIZE_WORDS = frozenset(("width", "height", "channels", "depth"))
_FEW = 16  # KeyStats.add sums up to this many values a record in Python, longer lists with numpy


class _Plan:
    """What one layout (sorted keys, list types) needs: decided once, used for every record."""

    __slots__ = ("bytes", "keys", "labels", "types")

    def __init__(self, keys: tuple[str, ...], types: tuple[str, ...]) -> None:
        from tfrview.core.records.overlays import _LABEL_KEYS

        self.keys, self.types = keys, types
        at = {k: i for i, k in enumerate(keys)}
        self.labels = [(at[k], types[at[k]]) for k in _LABEL_KEYS if k in at]  # record_caption's order
        self.bytes = [i for i, t in enumerate(types) if t == BYTES_LIST]


def plain_layout(keys: tuple[str, ...], types: tuple[str | None, ...]) -> bool:
    """Does a record of this layout hold nothing the record checks read beyond its values' counts?
    (No boxes, no key that names an image, a mask or an image's size: `checks.look_and_check` then
    finds only NaN and infinities, and `RecordLook` is empty.)"""
    from tfrview.core.records.overlays import _roles

    if None in types:  # a Feature with no list set: left to the general path
        return False
    if any(k[:1] == "\n" for k in keys):  # an Example read as Features (payload.parse_clean_example)
        return False
    for k in keys:
        last = k.rsplit("/", 1)[-1]
        if (
            last in _SIZE_WORDS
            or last == "encoded"
            or k in ("image", "image/object/mask")
            or "segmentation" in k
        ):
            return False
    return _roles(tuple(zip(keys, types, strict=True))) is None


class _Column:
    """One key's values in a batch: the record numbers, counts and protobuf lists."""

    __slots__ = ("lens", "lists", "rows", "type")

    def __init__(self, type_: str) -> None:
        self.type = type_
        self.rows: list[int] = []
        self.lens: list[int] = []
        self.lists: list = []


class PlainExamples:
    """Takes plain Examples off the general path of one part's deep pass and counts them into the
    same schema, summary, checks, signatures, image keys and facts (see the module's docstring)."""

    def __init__(self, schema, summary, facts, image_keys, sig_of: np.ndarray, problems: list, class_ids: set,
                 class_ids_tracked: int, label_map, offsets: np.ndarray, lengths: np.ndarray) -> None:  # fmt: skip
        self.schema, self.summary, self.facts, self.image_keys = schema, summary, facts, image_keys
        self.sig_of, self.problems, self.ids, self.ids_tracked = (
            sig_of,
            problems,
            class_ids,
            class_ids_tracked,
        )
        self.label_map = label_map
        self.offsets, self.lengths = offsets, lengths
        self._plans: dict[tuple, _Plan | None] = {}
        self._variants: dict[
            tuple, tuple[int, tuple[tuple[str, str], ...]]
        ] = {}  # -> signature id, non-empty keys
        self._learning: tuple | None = None  # the variant whose first record the general path reads now
        self._cols: dict[str, _Column] = {}
        self._rows: list[int] = []
        self._sigs: list[int] = []  # each record's signature id (its variant's)
        self._counts: Counter = Counter()  # variant -> records in the batch
        self._captions: list[str] = []
        self.taken = 0  # records counted here (for tests and the profile)

    # --- per record -----------------------------------------------------------------------------

    def take(self, n: int, data: bytes) -> bool:
        """Count record n here (True), or leave it to the general path (False: nothing counted; the
        caller flushes the batch before it counts the record)."""
        if type(data) is not bytes or not data or data[0] != 0x0A or len(data) > UPB_MAX_BYTES:
            return False
        ex = parse_clean_example(data, check_keys=False)  # the keys are checked once a layout
        if ex is None:
            return False
        fmap = ex.features.feature
        keys = tuple(sorted(fmap))  # not .items(): a Python generator over the map
        feats = [fmap[k] for k in keys]
        types = tuple([f.WhichOneof("kind") for f in feats])
        layout = (keys, types)
        plan = self._plans.get(layout, False)
        if plan is False:
            plan = self._plans[layout] = _Plan(keys, types) if plain_layout(keys, types) else None
        if plan is None:
            return False
        lists = [getattr(f, t).value for f, t in zip(feats, types)]  # noqa: B905 (equal lengths)
        lens = [len(v) for v in lists]
        if len(data) > MAX_LIST_VALUES and max(lens, default=0) > MAX_LIST_VALUES:
            return False  # a list cut by the decode limit: said by the general path
        for i in plan.bytes:
            for b in lists[i][:64]:
                if len(b) >= 8 and b[0] in _IMAGE_FIRST and _is_image(b):
                    return False  # an image: checked, hashed and counted by the general path
        variant = (layout, None if all(lens) else tuple(x == 0 for x in lens))
        known = self._variants.get(variant, False)
        if known is False:
            self._learning = variant
            return False
        if known is None:
            return False
        cols = self._cols
        for k, t in zip(keys, types, strict=True):
            c = cols.get(k)
            if c is not None and c.type != t:  # a key of another type in this batch: counted apart
                self.flush()
                cols = self._cols
                break
        for k, t, v, m in zip(keys, types, lists, lens, strict=True):
            c = cols.get(k)
            if c is None:
                c = cols[k] = _Column(t)
            c.rows.append(n)
            c.lens.append(m)
            c.lists.append(v)
        self._rows.append(n)
        self._sigs.append(known[0])
        self._counts[variant] += 1
        for i, t in plan.labels:  # record_caption and labelmap.class_ids, for this layout's label keys
            v = lists[i]
            if not 0 < len(v) <= 8:
                continue
            if t == BYTES_LIST:
                self._captions.append(", ".join(b.decode("utf-8", "replace") for b in v))
                break
            if t == INT64_LIST:
                lm = self.label_map
                self._captions.append(", ".join(f"{int(x)} ({lm[int(x)]})" if lm and lm.get(int(x)) else str(int(x))
                                                for x in v))  # fmt: skip
                break
        for i, t in plan.labels:
            v = lists[i]
            if t == INT64_LIST and 0 < len(v) <= 8:
                if len(self.ids) < self.ids_tracked:
                    self.ids.update(int(x) for x in v)
                break
        self.taken += 1
        if len(self._rows) >= PLAIN_BATCH_RECORDS:
            self.flush()
        return True

    def learnt(self, n: int, signature_id: int) -> None:
        """The general path has read record n, the first of its variant: later ones come here."""
        v = self._learning
        self._learning = None
        if v is None or signature_id < 0:
            return
        (keys, types), empty = v[0], v[1] or (False,) * len(v[0][0])
        present = tuple((k, t) for k, t, e in zip(keys, types, empty, strict=True) if not e)
        tracked = (all(k in self.schema.types for k, _ in present) and all(k in self.summary.keys for k in keys)
                   and all(k in self.facts._keys for k in keys))  # fmt: skip
        # a key past a limit (TRACKED_KEYS, FACT_KEYS) is counted as other keys: the general path's
        self._variants[v] = (signature_id, present) if tracked else None

    # --- a batch ----------------------------------------------------------------------------------

    def flush(self) -> None:
        """Count the batch into the schema, summary, checks, signatures, image keys and facts."""
        if not self._rows:
            return
        rows = np.asarray(self._rows, dtype=np.int64)
        schema, summary = self.schema, self.summary
        m = len(rows)
        schema.records += m
        schema.kinds[EXAMPLE] += m
        summary.records += m
        summary.kinds[EXAMPLE] += m
        for v, count in self._counts.items():
            _, present = self._variants[v]
            for k, t in present:
                schema.presence[k] += count
                schema.types[k][t] += count
        self.sig_of[rows] = np.asarray(self._sigs, dtype=np.int32)
        if self._captions:
            summary.record_labels.update(self._captions)
        findings: list[tuple[int, str, Problem]] = []
        firsts = []
        for k, c in self._cols.items():
            c_rows = np.asarray(c.rows, dtype=np.int64)
            lens = np.asarray(c.lens, dtype=np.int64)
            flat = self._flat(c, int(lens.sum()))
            self._stats(k, c, lens, flat)
            if c.type == FLOAT_LIST:
                findings += self._nan_findings(k, c_rows, lens, flat)
            if c.type == BYTES_LIST:
                single = np.flatnonzero(lens == 1)
                if len(single):
                    firsts.append((int(c_rows[single[0]]), k, c, single))
            self.facts.add_block(k, c.type, c_rows, lens, flat)
        for _, k, c, single in sorted(firsts, key=lambda x: (x[0], x[1])):  # as each key first came
            self._image_keys(k, c, single)
        findings.sort(key=lambda x: (x[0], x[1]))
        self.problems.extend(p for _, _, p in findings)
        self.facts.add_plain_rows(rows)
        self._cols, self._rows, self._sigs, self._counts, self._captions = {}, [], [], Counter(), []

    @staticmethod
    def _flat(c: _Column, total: int):
        if c.type == BYTES_LIST:
            return list(chain.from_iterable(c.lists))
        return np.fromiter(
            chain.from_iterable(c.lists), np.float32 if c.type == FLOAT_LIST else np.int64, total
        )

    def _stats(self, k: str, c: _Column, lens: np.ndarray, flat) -> None:
        """datasummary.KeyStats.add of every record of the batch, in record order."""
        st = self.summary.keys[k]
        m = len(lens)
        hi = int(lens.max())
        if (
            c.type != BYTES_LIST and hi > _FEW
        ):  # KeyStats sums such lists with numpy: record by record, as it does
            for v in c.lists:
                st.add(c.type, np.fromiter(v, np.float32 if c.type == FLOAT_LIST else np.int64, len(v)))
            return
        st.types[c.type] += m
        st.present += m
        lo = int(lens.min())
        st.per_record_min = lo if st.per_record_min is None else min(st.per_record_min, lo)
        st.per_record_max = max(st.per_record_max, hi)
        if c.type == BYTES_LIST:
            texts = []
            for v in c.lists:
                for b in v[:16]:
                    if len(b) <= 64:
                        try:  # noqa: SIM105 (not contextlib.suppress: an object a value, as in KeyStats.add)
                            texts.append(b.decode("utf-8"))
                        except UnicodeDecodeError:
                            pass
            _count_all(st, texts)
            return
        vals = flat.astype(np.float64)
        finite = np.isfinite(vals)
        st.nan += int(len(vals) - np.count_nonzero(finite))
        if finite.any():
            starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
            col = np.arange(len(vals)) - np.repeat(starts, lens)
            grid = np.zeros((m, hi + 1))
            grid[np.repeat(np.arange(m), lens), col + 1] = np.where(finite, vals, 0.0)
            sums = np.add.accumulate(grid, axis=1)[:, -1]  # each record's sum(finite), left to right
            st.num_sum = float(np.add.accumulate(np.concatenate([[st.num_sum], sums]))[-1])
            st.num_count += int(np.count_nonzero(finite))
            good = vals[finite]
            st.num_min = _first_extreme(st.num_min, good, np.min)
            st.num_max = _first_extreme(st.num_max, good, np.max)
        if c.type != FLOAT_LIST:
            _count_all(st, flat.tolist())  # every list holds at most _FEW (16) values: all of them

    def _nan_findings(self, k: str, rows: np.ndarray, lens: np.ndarray, flat: np.ndarray) -> list:
        bad_at = np.flatnonzero(~np.isfinite(flat))
        if not len(bad_at):
            return []
        owner = np.repeat(np.arange(len(rows)), lens)[bad_at]
        which, bad = np.unique(owner, return_counts=True)
        out = []
        for i, b in zip(which.tolist(), bad.tolist(), strict=True):
            n = int(rows[i])
            msg = f"{k} has {b} NaN or infinite value(s) of {int(lens[i])}"
            p = Problem(
                ProblemKind.NAN_OR_INF,
                int(self.offsets[n]),
                int(self.lengths[n]) + OVERHEAD,
                n,
                msg,
                "",
                k,
                "",
            )
            out.append((n, k, p))
        return out

    def _image_keys(self, k: str, c: _Column, single: np.ndarray) -> None:
        """checks.ImageKeys.add for a key's single bytes values (none of them an image)."""
        from tfrview.core.analysis import checks
        from tfrview.core.analysis.checks import _what_it_holds

        ik = self.image_keys
        if k not in ik.seen and len(ik.seen) >= checks.TRACKED_KEYS:
            return
        ik.seen[k] += len(single)
        odd = ik.odd.setdefault(k, [])
        for i in single[: max(0, IMAGE_KEY_ODD_TRACKED - len(odd))].tolist():
            b = c.lists[i][0]
            odd.append((c.rows[i], *(("is empty (0 bytes)", "") if not b else _what_it_holds(b))))


def _is_image(b: bytes) -> bool:
    from tfrview.core.tfrecord.sniff import sniff_image_format

    return sniff_image_format(b) is not None


def _first_extreme(old: float, vals: np.ndarray, pick) -> float:
    """min() or max() of old and vals as Python's builtin gives it: the first of equal extremes
    (so the sign of a zero is the one met first)."""
    both = np.concatenate([[old], vals])
    at = np.flatnonzero(both == pick(both))
    return float(both[int(at[0])]) if len(at) else old


def _count_all(st, values: list) -> None:
    """KeyStats._count of each value in order: Counter.update when the distinct values stay under
    TOP_TRACK (it keeps the same first-seen order), else one by one."""
    from tfrview.core.analysis.datasummary import TOP_TRACK

    if not values:
        return
    top = st.top
    if not st.top_full and len(top) + len(set(values).difference(top)) < TOP_TRACK:
        top.update(values)
        return
    for v in values:
        st._count(v)
