"""The schema and label distribution of a whole dataset, accumulated record by record.

Per feature key: types seen, presence, values per record (min/max), numeric min/max/mean and NaN
count, and the most frequent values (short text and integers). Classes: the boxes' class names, else
the record-level label. At most limits.TRACKED_KEYS keys (and as many feature lists) are followed,
the first seen; features of further keys are counted in `other_keys`, never given statistics.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from tfrview.core.limits import MAX_BOXES_DRAWN, TOP_TRACK, TRACKED_KEYS
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST
from tfrview.core.records.kinds import FEATURE_KINDS
from tfrview.core.records.payload import Payload
from tfrview.core.records.reading import ReadingContext, RecordReading, class_name, read_record


@dataclass
class KeyStats:
    types: Counter = field(default_factory=Counter)
    present: int = 0
    per_record_min: int | None = None
    per_record_max: int = 0
    num_min: float = math.inf
    num_max: float = -math.inf
    num_sum: float = 0.0
    num_count: int = 0
    nan: int = 0
    top: Counter = field(default_factory=Counter)
    top_full: bool = False

    def count(self, type_: str, n: int) -> None:
        """The feature is present in one more record, with n values (or n steps, for a feature list)."""
        self.types[type_] += 1
        self.present += 1
        self.per_record_min = n if self.per_record_min is None else min(self.per_record_min, n)
        self.per_record_max = max(self.per_record_max, n)

    def add(self, type_: str, values) -> None:
        n = len(values)
        self.count(type_, n)
        if type_ == BYTES_LIST:
            for v in values[:16]:
                if len(v) <= 64:
                    try:  # not contextlib.suppress: an object a value, in the hottest loop of the checks
                        text = v.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    self._count(text)
            return
        if n == 1:  # most often of all (a scalar each step, a label): no list, no min() of one
            v = float(values[0])
            if math.isfinite(v):
                self.num_min = v if v < self.num_min else self.num_min
                self.num_max = v if v > self.num_max else self.num_max
                self.num_sum += v
                self.num_count += 1
            else:
                self.nan += 1
        elif n <= 16:  # most features hold a few values: plain Python beats numpy's per-call cost
            vals = [float(v) for v in values]
            finite = [v for v in vals if math.isfinite(v)]
            self.nan += n - len(finite)
            if finite:
                self.num_min = min(self.num_min, *finite)
                self.num_max = max(self.num_max, *finite)
                self.num_sum += sum(finite)
                self.num_count += len(finite)
        elif n:
            a = np.asarray(values, dtype=np.float64)
            finite = np.isfinite(a)
            self.nan += int(n - np.count_nonzero(finite))
            if finite.any():
                f = a[finite]
                self.num_min = min(self.num_min, float(f.min()))
                self.num_max = max(self.num_max, float(f.max()))
                self.num_sum += float(f.sum())
                self.num_count += int(f.size)
        if n and type_ != FLOAT_LIST:
            for v in values[:16]:
                self._count(int(v))

    def merge(self, o: KeyStats) -> None:
        """Add another file's counts (summaries of shards merge in any order; the most frequent
        values stay bounded by TOP_TRACK)."""
        self.types.update(o.types)
        self.present += o.present
        if o.per_record_min is not None:
            self.per_record_min = (
                o.per_record_min
                if self.per_record_min is None
                else min(self.per_record_min, o.per_record_min)
            )
        self.per_record_max = max(self.per_record_max, o.per_record_max)
        self.num_min = min(self.num_min, o.num_min)
        self.num_max = max(self.num_max, o.num_max)
        self.num_sum += o.num_sum
        self.num_count += o.num_count
        self.nan += o.nan
        self.top.update(o.top)
        if len(self.top) > TOP_TRACK:
            self.top = Counter(dict(self.top.most_common(TOP_TRACK)))
        self.top_full = self.top_full or o.top_full or len(self.top) >= TOP_TRACK

    def _count(self, v) -> None:
        if v in self.top or not self.top_full:
            self.top[v] += 1
            if len(self.top) >= TOP_TRACK:
                self.top_full = True

    def to_json(self, records: int) -> dict:
        d = {
            "types": dict(self.types),
            "present": self.present,
            "presence": self.present / records if records else 0.0,
            "values_per_record": [self.per_record_min or 0, self.per_record_max],
            "nan": self.nan,
            "top": [[v, c] for v, c in self.top.most_common(5)],
        }
        if self.num_count:
            d["min"] = self.num_min
            d["max"] = self.num_max
            d["mean"] = self.num_sum / self.num_count
        return d


@dataclass
class DatasetSummary:
    records: int = 0
    kinds: Counter = field(default_factory=Counter)
    keys: dict[str, KeyStats] = field(default_factory=dict)
    lists: dict[str, KeyStats] = field(default_factory=dict)  # SequenceExample feature lists: presence, steps
    box_classes: Counter = field(default_factory=Counter)
    record_labels: Counter = field(default_factory=Counter)
    # box class name -> the key its boxes are coloured by (their id)
    class_keys: dict = field(default_factory=dict)
    other_keys: int = 0  # features (and feature lists) of keys past TRACKED_KEYS: counted, no statistics
    # the key the boxes' class names come from (the first file's, first record's)
    class_text_key: str | None = None
    # the key of the boxes' class ids: a bar of the classes chart filters by it
    class_id_key: str | None = None
    # the box keys the readings found (the first record with boxes): what the data holds, so the Plot
    # panel offers box plots for every convention the reading knows (OD API, COCO, TFDS, pixel corners)
    box_keys: list[str] | None = None

    def add(
        self, p: Payload, label_map: dict[int, str] | None = None, reading: RecordReading | None = None
    ) -> None:
        """Count one record (`reading`: its reading, when the caller has it; else read here)."""
        self.records += 1
        self.kinds[p.kind] += 1
        if p.kind not in FEATURE_KINDS:  # an event's tags: statistics over steps
            return
        keys = self.keys
        for k, f in p.features.items():
            st = keys.get(k)
            if st is None:  # not setdefault: it would build a KeyStats for every feature of every record
                if len(keys) >= TRACKED_KEYS:
                    self.other_keys += 1
                    continue
                st = keys[k] = KeyStats()
            st.add(f.type, f.values)
        for k, fl in p.feature_lists.items():
            st = self.lists.get(k)
            if st is None:
                if len(self.lists) >= TRACKED_KEYS:
                    self.other_keys += 1
                    continue
                st = self.lists[k] = KeyStats()
            st.count(fl[0].type if fl else BYTES_LIST, len(fl))
        r = reading if reading is not None else read_record(p, ReadingContext(label_map))
        spec = r.spec
        if spec is not None and self.box_keys is None and r.box_count:
            self.box_keys = list(spec.keys)
        if spec is not None and (spec.class_text or spec.class_id):
            if self.class_text_key is None and spec.class_text in p.features:
                self.class_text_key = spec.class_text
            if self.class_id_key is None and spec.class_id in p.features:
                self.class_id_key = spec.class_id
            # counted by array operations: a record of a million boxes builds an object a class, not a box
            ids = r.class_ids if spec.class_id in p.features else None
            texts = r.class_texts
            if spec.class_text and spec.class_text in p.features:
                self.box_classes.update(r.class_counts)
                if ids is not None and len(ids) == len(texts):  # as Box.color_key
                    for k in range(min(len(ids), MAX_BOXES_DRAWN)):  # the first boxes name the classes' keys
                        if len(self.class_keys) >= len(self.box_classes):
                            break
                        self.class_keys.setdefault(texts[k].decode("utf-8", "replace"), str(int(ids[k])))
            elif ids is not None and len(ids):
                uniq, counts = np.unique(ids, return_counts=True)
                for i, n in zip(uniq.tolist(), counts.tolist(), strict=True):
                    name = class_name(i, r.label_map)  # the reading's one fallback: label map, else "id N"
                    self.box_classes[name] += n
                    self.class_keys.setdefault(name, str(i))
        text = r.label_text  # the label's values as data, not the caption split back
        if text is not None:
            self.record_labels[text] += 1

    def merge(self, o: DatasetSummary) -> None:
        self.records += o.records
        self.kinds.update(o.kinds)
        self.other_keys += o.other_keys
        for mine, theirs in ((self.keys, o.keys), (self.lists, o.lists)):
            for k, st in theirs.items():
                if k not in mine and len(mine) >= TRACKED_KEYS:  # the first keys of the first files are kept
                    self.other_keys += st.present
                    continue
                mine.setdefault(k, KeyStats()).merge(st)  # never shares (and later changes) another's
        self.box_classes.update(o.box_classes)
        self.record_labels.update(o.record_labels)
        for name, key in o.class_keys.items():
            self.class_keys.setdefault(name, key)
        self.class_text_key = self.class_text_key or o.class_text_key
        self.class_id_key = self.class_id_key or o.class_id_key
        self.box_keys = self.box_keys or o.box_keys

    @property
    def classes(self) -> tuple[str, Counter]:
        """What to chart: the boxes' classes if there are any, else the record labels."""
        if self.box_classes:
            return "objects per class", self.box_classes
        return "records per label", self.record_labels

    def to_json(self) -> dict:
        title, counts = self.classes
        counted = "objects" if self.box_classes else "records"  # what a bar counts, as data
        return {
            "records": self.records,
            "kinds": dict(self.kinds),
            "keys": {k: s.to_json(self.records) for k, s in sorted(self.keys.items())},
            "other_keys": self.other_keys,
            "boxes": {"keys": list(self.box_keys)} if self.box_keys else None,
            "classes": {
                "title": title,
                "counted": counted,
                "counts": [[k, v] for k, v in counts.most_common()],
                "colour_keys": dict(self.class_keys) if self.box_classes else {},
                # what a bar filters by, carried with it (never read back from its name)
                "text_key": self.class_text_key if self.box_classes else None,
                "id_key": self.class_id_key if self.box_classes else None,
                "ids": {k: int(v) for k, v in self.class_keys.items()} if self.box_classes else {},
            },
        }
