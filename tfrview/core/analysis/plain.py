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

Two ways feed the one counting (`_count`): `batch` parses a whole read of the file at once
(records.examplecols: no Python object a feature) and counts each run of records whose variant is
learnt; `take` hands one record's protobuf lists over at a time (records the bulk parse left: a
variant's first record, an encoding other than the canonical one).
"""

from __future__ import annotations

from itertools import chain, pairwise

import numpy as np

from tfrview.core.analysis import checks
from tfrview.core.analysis.checks import _what_it_holds
from tfrview.core.analysis.datasummary import TOP_TRACK
from tfrview.core.limits import (
    IMAGE_KEY_ODD_TRACKED,
    MAX_LIST_VALUES,
    PLAIN_BATCH_RECORDS,
    UPB_MAX_BYTES,
)
from tfrview.core.problems import Problem, ProblemKind
from tfrview.core.records import examplecols
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, INT64_LIST
from tfrview.core.records.payload import EXAMPLE, parse_clean_example
from tfrview.core.records.reading import box_roles, label_candidates, label_names, label_text
from tfrview.core.tfrecord.framing import OVERHEAD
from tfrview.core.tfrecord.sniff import sniff_image_format

_IMAGE_FIRST = frozenset(b"\xff\x89GBIMR")  # the first byte of every format sniff_image_format knows
_SIZE_WORDS = frozenset(("width", "height", "channels", "depth"))
_FEW = 16  # KeyStats.add sums up to this many values a record in Python, longer lists with numpy
BULK = True  # a read of the file parsed at once (examplecols); the tests compare it with take's way
_SEGMENT = 1 << 16  # records counted at once from a bulk parse (a bound on the arrays of a count)


class _Plan:
    """What one layout (sorted keys, list types) needs: decided once, used for every record."""

    __slots__ = ("bytes", "keys", "labels", "types")

    def __init__(self, keys: tuple[str, ...], types: tuple[str, ...], tfds=None, label_map=None) -> None:

        self.keys, self.types = keys, types
        at = {k: i for i, k in enumerate(keys)}
        # the reading's label keys for this layout, and the names each is shown with (a TFDS
        # ClassLabel's, else the label map); each record takes the first holding 1 to 8 values
        self.labels = [
            (at[k], t, label_names(k, tfds, label_map))
            for k, t in label_candidates(dict(zip(keys, types, strict=True)), tfds)
        ]
        self.bytes = [i for i, t in enumerate(types) if t == BYTES_LIST]


def plain_layout(keys: tuple[str, ...], types: tuple[str | None, ...]) -> bool:
    """Does a record of this layout hold nothing the record checks read beyond its values' counts?
    (No boxes, no key that names an image, a mask or an image's size: `checks.look_and_check` then
    finds only NaN and infinities, and `RecordLook` is empty.)"""

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
    return box_roles(tuple(zip(keys, types, strict=True))) is None


class _Group:
    """The records of one variant (a layout, and which of its lists are empty) in a batch."""

    __slots__ = ("lists", "plan", "present", "rows", "sig")

    def __init__(self, plan: _Plan, sig: int, present: tuple[tuple[str, str], ...]) -> None:
        self.plan, self.sig, self.present = plan, sig, present  # signature id, the non-empty keys
        self.rows: list[int] = []
        self.lists: list[list] = []  # each record's protobuf lists, in the layout's key order


class _Column:
    """One key's values in a batch: the record numbers, each record's count of values and all the
    values in one flat array (a list of bytes for bytes lists), in record order."""

    __slots__ = ("flat", "lens", "rows", "starts", "type")

    def __init__(self, type_: str, rows: np.ndarray, lens: np.ndarray, flat) -> None:
        self.type, self.rows, self.lens, self.flat = type_, rows, lens, flat
        self.starts = np.cumsum(lens) - lens

    def of(self, i: int):
        """The values of the column's i-th record."""
        a = int(self.starts[i])
        return self.flat[a : a + int(self.lens[i])]


class PlainExamples:
    """Takes plain Examples off the general path of one part's deep pass and counts them into the
    same schema, summary, checks, signatures, image keys and facts (see the module's docstring)."""

    def __init__(
        self,
        schema,
        summary,
        facts,
        image_keys,
        sig_of: np.ndarray,
        first: int,
        problems: list,
        class_ids: set,
        class_ids_tracked: int,
        label_map,
        offsets: np.ndarray,
        lengths: np.ndarray,
        tfds=None,  # tfds.features.Features: a TFDS dataset's record-level ClassLabels and their names
    ) -> None:
        self.schema, self.summary, self.facts, self.image_keys = schema, summary, facts, image_keys
        self.sig_of, self.first, self.problems = sig_of, first, problems  # sig_of[0] is record `first`
        self.ids, self.ids_tracked = class_ids, class_ids_tracked
        self.label_map = label_map
        self.tfds = tfds
        self.offsets, self.lengths = offsets, lengths
        self._plans: dict[tuple, _Plan | None] = {}
        self._groups: dict[tuple, _Group | None] = {}  # (layout, empty lists or None) -> its group
        self._learning: tuple | None = None  # the variant whose first record the general path reads now
        self._active: list[_Group] = []  # the groups of this batch, as they came
        self._types: dict[str, str] = {}  # each key's list type in this batch
        self._size = 0
        self._captions: list[str] = []

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
            plan = self._plans[layout] = (
                _Plan(keys, types, self.tfds, self.label_map) if plain_layout(keys, types) else None
            )
        if plan is None:
            return False
        lists = [getattr(f, t).value for f, t in zip(feats, types)]  # noqa: B905 (equal lengths)
        if len(data) > MAX_LIST_VALUES and max(map(len, lists), default=0) > MAX_LIST_VALUES:
            return False  # a list cut by the decode limit: said by the general path
        for i in plan.bytes:
            for b in lists[i][:64]:
                if len(b) >= 8 and b[0] in _IMAGE_FIRST and _is_image(b):
                    return False  # an image: checked, hashed and counted by the general path
        variant = (layout, None) if all(lists) else (layout, tuple([not v for v in lists]))
        group = self._groups.get(variant, False)
        if group is False:
            self._learning = variant
            return False
        if group is None:
            return False
        if not group.rows:  # the group's first record in this batch
            bt = self._types
            if any(bt.get(k, t) != t for k, t in zip(keys, types)):  # noqa: B905
                self.flush()  # a key of another type than in this batch: counted apart
                bt = self._types
            bt.update(zip(keys, types))  # noqa: B905
            self._active.append(group)
        group.rows.append(n)
        group.lists.append(lists)
        for i, t, names in plan.labels:  # RecordReading.label_key: the first label key of 1 to 8 values wins
            v = lists[i]
            if not 0 < len(v) <= 8:
                continue
            self._captions.append(label_text(t, v, names))
            if t == INT64_LIST and len(self.ids) < self.ids_tracked:  # dataset_class_ids' record label
                self.ids.update(v)
            break
        self._size += 1
        if self._size >= PLAIN_BATCH_RECORDS:
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
        tracked = (
            all(k in self.schema.types for k, _ in present)
            and all(k in self.summary.keys for k in keys)
            and all(k in self.facts._keys for k in keys)
        )
        # a key past a limit (TRACKED_KEYS, FACT_KEYS) is counted as other keys: the general path's
        self._groups[v] = _Group(self._plans[v[0]], signature_id, present) if tracked else None

    # --- a read of the file at once -----------------------------------------------------------------

    def batch(self, buf, numbers: np.ndarray, starts: np.ndarray, ends: np.ndarray, one) -> None:
        """Records numbers[i] at buf[starts[i]:ends[i]] (one read of the file), in record order: each
        run of Examples whose variant is learnt, parsed in bulk (examplecols.parse) and counted here;
        every other record handed to `one(n, data)` (`take`, or the general path and `learnt`), as
        a record at a time. The same rules as `take`: a record it would leave is left."""
        if not BULK or type(buf) is not bytes or len(numbers) < 2:
            for n, a, z in zip(numbers.tolist(), starts.tolist(), ends.tolist(), strict=True):
                one(n, buf[a:z])
            return
        parsed = examplecols.parse(buf, starts, ends)
        known = np.array([self._ready(v) for v in parsed.variants] + [False], bool)  # [-1]: not parsed
        fit = parsed.ok & self._fit(parsed)
        ready = fit & known[parsed.variant]
        total = len(numbers)
        todo, t, pos = np.flatnonzero(~ready), 0, 0
        while pos < total:
            q = int(todo[t]) if t < len(todo) else total
            if q > pos:
                self._run(parsed, numbers, pos, q)
            if q == total:
                break
            one(int(numbers[q]), buf[int(starts[q]) : int(ends[q])])
            v = int(parsed.variant[q])
            if v >= 0 and not known[v] and self._ready(parsed.variants[v]):  # learnt from record q
                known[v] = True
                ready[q + 1 :] |= fit[q + 1 :] & (parsed.variant[q + 1 :] == v)
                todo, t = np.flatnonzero(~ready[q + 1 :]) + q + 1, -1
            t += 1
            pos = q + 1

    def _ready(self, variant) -> bool:
        return isinstance(self._groups.get(variant), _Group)

    @staticmethod
    def _fit(parsed) -> np.ndarray:
        """Records `take` would count: no bytes value among a list's first 64 that is an image, no
        list past the decode limit (MAX_LIST_VALUES)."""
        fit = np.ones(len(parsed.ok), bool)
        lo, hi = parsed.byte_lo, parsed.byte_hi
        first = np.frombuffer(parsed.buf, np.uint8)[np.minimum(lo, max(len(parsed.buf) - 1, 0))]
        maybe = np.flatnonzero((parsed.byte_at < 64) & (hi - lo >= 8) & np.isin(first, _IMAGE_FIRST_CODES))
        buf = parsed.buf
        for i in maybe.tolist():
            if _is_image(buf[int(lo[i]) : int(hi[i])]):
                fit[parsed.byte_rec[i]] = False
        fit[parsed.e_rec[parsed.e_count > MAX_LIST_VALUES]] = False
        return fit

    def _run(self, parsed, numbers: np.ndarray, lo: int, hi: int) -> None:
        """Count records lo..hi-1 of a bulk parse, all of learnt variants, in segments whose keys
        keep one list type each (as `take` flushes a batch before a key's other type)."""
        self.flush()  # records `take` counted before these
        vs = parsed.variant[lo:hi]
        kinds: dict[str, str] = {}
        cuts = [0]
        present = np.unique(vs).tolist()
        if not _consistent([parsed.variants[v][0] for v in present], kinds):
            kinds = {}
            for at in [0, *(np.flatnonzero(np.diff(vs)) + 1).tolist()]:  # each run of one variant
                if not _consistent([parsed.variants[int(vs[at])][0]], kinds):
                    cuts.append(at)
                    kinds = {}
                    _consistent([parsed.variants[int(vs[at])][0]], kinds)
        cuts.append(hi - lo)
        for a, z in pairwise(cuts):
            for x in range(a, z, _SEGMENT):
                self._count_bulk(parsed, numbers, lo + x, lo + min(z, x + _SEGMENT))

    def _count_bulk(self, parsed, numbers: np.ndarray, lo: int, hi: int) -> None:
        vs = parsed.variant[lo:hi]
        rows = np.asarray(numbers[lo:hi], np.int64)
        ids, inv = np.unique(vs, return_inverse=True)
        inv = inv.reshape(-1)
        per_group = [(self._groups[parsed.variants[u]], rows[inv == j]) for j, u in enumerate(ids.tolist())]
        e0, e1 = int(parsed.ent_lo[lo]), int(parsed.ent_hi[hi - 1])
        ek = parsed.e_key[e0:e1]
        order = np.argsort(ek, kind="stable")
        columns = {}
        for ents in np.split(order, np.flatnonzero(np.diff(ek[order])) + 1):
            if not len(ents):
                continue
            ents = ents + e0
            kind = int(parsed.e_kind[ents[0]])
            lens = parsed.e_count[ents]
            at = examplecols.ranges(parsed.e_start[ents], lens)
            if kind == examplecols.BYTES:
                buf = parsed.buf
                flat = [
                    buf[a:z]
                    for a, z in zip(parsed.byte_lo[at].tolist(), parsed.byte_hi[at].tolist(), strict=True)
                ]
            else:
                flat = (parsed.floats if kind == examplecols.FLOAT else parsed.ints)[at]
            key = parsed.keys[int(parsed.e_key[ents[0]])]
            columns[key] = _Column(
                examplecols.KINDS[kind], numbers[parsed.e_rec[ents]].astype(np.int64), lens, flat
            )
        self._count(per_group, columns, self._labels(parsed, lo, hi, ids, inv))

    def _labels(self, parsed, lo: int, hi: int, ids: np.ndarray, inv: np.ndarray) -> list[str]:
        """`take`'s record labels of records lo..hi-1: their captions in record order, and the class
        ids of int labels added to `ids` as `take` adds them."""
        caption = np.full(hi - lo, None, object)
        singles: list[tuple[np.ndarray, np.ndarray]] = []  # (records, each one's one id)
        lists: list[tuple[int, list]] = []  # (record, its ids) of int labels of several values
        for j, u in enumerate(ids.tolist()):
            labels = self._plans[parsed.variants[u][0]].labels
            if not labels:
                continue
            sel = np.flatnonzero(inv == j)
            base = parsed.ent_lo[lo + sel]
            which = np.full(len(sel), -1)
            for li, (i, _, _) in enumerate(labels):  # the first label key of 1 to 8 values wins
                c = parsed.e_count[base + i]
                which[(which < 0) & (c > 0) & (c <= 8)] = li
            for li, (i, t, names) in enumerate(labels):
                at = sel[which == li]
                if not len(at):
                    continue
                ents = parsed.ent_lo[lo + at] + i
                if t == INT64_LIST and (parsed.e_count[ents] == 1).all():  # one id each: a text an id
                    vals = parsed.ints[parsed.e_start[ents]]
                    uniq, back = np.unique(vals, return_inverse=True)
                    texts = [label_text(t, [v], names) for v in uniq.tolist()]
                    caption[at] = np.array(texts, object)[back.reshape(-1)]
                    singles.append((at, vals))
                    continue
                for r, ent in zip(at.tolist(), ents.tolist(), strict=True):
                    v = parsed.values(ent)
                    caption[r] = label_text(t, v, names)
                    if t == INT64_LIST:
                        lists.append((r, v))
        ids_ = self.ids
        if len(ids_) < self.ids_tracked and (singles or lists):
            total = sum(len(v) for _, v in singles) + sum(len(v) for _, v in lists)
            if len(ids_) + total < self.ids_tracked:  # under the bound before every record: all
                for _, vals in singles:
                    ids_.update(np.unique(vals).tolist())
                for _, v in lists:
                    ids_.update(v)
            else:  # a record at a time, in record order, while under the bound (as take)
                each = lists + [(r, [v]) for at, vals in singles for r, v in zip(at.tolist(), vals.tolist())]  # noqa: B905
                for _, v in sorted(each, key=lambda x: x[0]):
                    if len(ids_) < self.ids_tracked:
                        ids_.update(v)
        return [c for c in caption.tolist() if c is not None]

    # --- a batch ----------------------------------------------------------------------------------

    def flush(self) -> None:
        """Count the records `take` took into the schema, summary, checks, signatures, image keys
        and facts."""
        if not self._size:
            return
        per_group = []
        parts: dict[str, list] = {}  # key -> (rows, lists) of each group holding it
        for g in self._active:
            rows = np.asarray(g.rows, dtype=np.int64)
            per_group.append((g, rows))
            for k, lists in zip(g.plan.keys, zip(*g.lists)):  # noqa: B905 (one list a key)
                parts.setdefault(k, []).append((rows, lists))
            g.rows, g.lists = [], []
        columns = {}
        for k, got in parts.items():
            if len(got) == 1:
                rows, lists = got[0][0], list(got[0][1])
            else:  # several groups hold the key: their records in record order
                rows = np.concatenate([r for r, _ in got])
                both = [x for _, ls in got for x in ls]
                order = np.argsort(rows, kind="stable")
                rows, lists = rows[order], [both[i] for i in order.tolist()]
            t = self._types[k]
            lens = np.fromiter(map(len, lists), np.int64, len(lists))
            columns[k] = _Column(t, rows, lens, self._flat(t, lists, int(lens.sum())))
        captions, self._captions = self._captions, []
        self._count(per_group, columns, captions)
        self._active, self._types, self._size = [], {}, 0

    def _count(self, per_group: list, columns: dict, captions: list) -> None:
        """Count a batch: `per_group` each variant's group and its records, `columns` each key's
        values in record order, `captions` the record labels in record order. The one counting of
        both ways into this path (`take` a record at a time, `batch` a read of the file at once)."""
        schema, summary = self.schema, self.summary
        m = sum(len(rows) for _, rows in per_group)
        schema.records += m
        schema.kinds[EXAMPLE] += m
        summary.records += m
        summary.kinds[EXAMPLE] += m
        for g, rows in per_group:
            count = len(rows)
            for k, t in g.present:
                schema.presence[k] += count
                schema.types[k][t] += count
            self.sig_of[rows - self.first] = g.sig
        if captions:
            summary.record_labels.update(captions)
        findings: list[tuple[int, str, Problem]] = []
        firsts = []
        for k, c in columns.items():
            self._stats(k, c)
            if c.type == FLOAT_LIST:
                findings += self._nan_findings(k, c.rows, c.lens, c.flat)
            if c.type == BYTES_LIST:
                single = np.flatnonzero(c.lens == 1)
                if len(single):
                    firsts.append((int(c.rows[single[0]]), k, c, single))
            self.facts.add_block(k, c.type, c.rows, c.lens, c.flat)
        for _, k, c, single in sorted(firsts, key=lambda x: (x[0], x[1])):  # as each key first came
            self._image_keys(k, c, single)
        findings.sort(key=lambda x: (x[0], x[1]))
        self.problems.extend(p for _, _, p in findings)
        self.facts.add_plain_rows(np.sort(np.concatenate([rows for _, rows in per_group])))

    @staticmethod
    def _flat(type_: str, lists: list, total: int):
        if type_ == BYTES_LIST:
            return list(chain.from_iterable(lists))
        return np.fromiter(chain.from_iterable(lists), np.float32 if type_ == FLOAT_LIST else np.int64, total)

    def _stats(self, k: str, c: _Column) -> None:
        """datasummary.KeyStats.add of every record of the batch, in record order."""
        st = self.summary.keys[k]
        lens, flat = c.lens, c.flat
        m = len(lens)
        hi = int(lens.max())
        if (
            c.type != BYTES_LIST and hi > _FEW
        ):  # KeyStats sums such lists with numpy: record by record, as it does
            for i in range(m):
                st.add(c.type, c.of(i))
            return
        st.types[c.type] += m
        st.present += m
        lo = int(lens.min())
        st.per_record_min = lo if st.per_record_min is None else min(st.per_record_min, lo)
        st.per_record_max = max(st.per_record_max, hi)
        if c.type == BYTES_LIST:
            texts = []
            # each record's first 16 values (every value when no list holds more)
            for b in flat if hi <= 16 else [b for i in range(m) for b in c.of(i)[:16]]:
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

        ik = self.image_keys
        if k not in ik.seen and len(ik.seen) >= checks.TRACKED_KEYS:
            return
        ik.seen[k] += len(single)
        odd = ik.odd.setdefault(k, [])
        for i in single[: max(0, IMAGE_KEY_ODD_TRACKED - len(odd))].tolist():
            b = c.flat[int(c.starts[i])]
            odd.append((int(c.rows[i]), *(("is empty (0 bytes)", "") if not b else _what_it_holds(b))))


_IMAGE_FIRST_CODES = np.array(sorted(_IMAGE_FIRST), np.uint8)


def _consistent(layouts: list, kinds: dict[str, str]) -> bool:
    """Do these layouts give each key one list type (and the one in `kinds`)? `kinds` learns theirs."""
    for keys, types in layouts:
        for k, t in zip(keys, types, strict=True):
            if kinds.setdefault(k, t) != t:
                return False
    return True


def _is_image(b: bytes) -> bool:

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

    if not values:
        return
    top = st.top
    if not st.top_full and len(top) + len(set(values).difference(top)) < TOP_TRACK:
        top.update(values)
        return
    for v in values:
        st._count(v)
