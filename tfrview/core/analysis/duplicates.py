"""Copies and near copies of images across a dataset, and leakage between its splits: the dataset
step (`datasetqa.STEPS`) over the pass's per-record hash columns (`records.imagesignals`: the
record's first image's `pixel_hash`, `phash`, `dhash`, and its colour signature `colour_top`,
`colour_bottom`).

Why an index and not every pair: a million images are 5e11 pairs. Exact copies are runs of one
sorted `pixel_hash`. Near copies (phash Hamming distance <= `rules.duplicates.near_distance`, the
dhash within `confirm_distance` and the colour signatures within `colour_distance` confirming the
pair: the grey hashes alone paired distinct scenes of one layout in other colours) come from the pigeonhole principle: the 64
bits cut in B blocks, two words d bits apart agree on at least B - d blocks, so every pair within
B - e bits shares some e blocks exactly. For each choice of e blocks (a table) the words are
sorted by those blocks and only words in one run are compared (Manku, Jain and Das Sarma's
tables). `plan` picks B and e: every pair within the most bits (up to near_distance) while the
words sorted and the candidate pairs expected stay under `limits.DUPLICATE_CANDIDATES`: every
pair within 12 bits up to ~4,000 images, within 8 at 100,000, within 4 at 1,000,000 (2.4 s on
2 cores, bench/bench_duplicates.py). Farther pairs up to near_distance are found when e blocks
still agree (a note says so when not every pair is certain). Identical phash words (a blank
frame's, thousands of times) are one word for the index. Groups are the connected pieces of the
found pairs (union-find as array operations).

The words stay numpy arrays; Python objects only for the records in a group (the findings).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from itertools import combinations, pairwise
from math import comb

import numpy as np

from tfrview.core.analysis.checks import Finding
from tfrview.core.analysis.factcolumns import Columns, Step, columns
from tfrview.core.limits import (
    DUPLICATE_CANDIDATES,
    DUPLICATE_GROUP_MEMBERS_SHOWN,
    DUPLICATE_GROUPS_SHOWN,
    DUPLICATES_TRACKED,
    too_large,
)
from tfrview.core.problems import ProblemKind
from tfrview.core.records.imagesignals import COLOUR_COLUMNS, colour_distance, hamming

log = logging.getLogger(__name__)

HASHES = ["pixel_hash", "phash", "dhash", "colour_top", "colour_bottom"]
MAX_BLOCKS = 16  # blocks of 4 bits at the narrowest


@dataclass(frozen=True)
class NearIndex:
    """How near pairs are looked for: the 64 bits cut in `blocks` blocks, words compared when they
    agree on some `exact_blocks` of them; pairs within `certain` bits are always found."""

    blocks: int
    exact_blocks: int

    @property
    def certain(self) -> int:
        return self.blocks - self.exact_blocks

    @property
    def edges(self) -> np.ndarray:
        return np.linspace(0, 64, self.blocks + 1).astype(np.int64)

    def tables(self) -> list[tuple[int, ...]]:
        return list(combinations(range(self.blocks), self.exact_blocks))

    def candidates(self, n: int) -> float:
        """The pairs expected to share some chosen blocks, for uniform words: at most this (every
        table's key as narrow as its narrowest blocks make it; no table listed)."""
        narrowest = int(np.sort(np.diff(self.edges))[: self.exact_blocks].sum())
        return comb(self.blocks, self.exact_blocks) * n * (n - 1) / 2 / 2.0**narrowest


def plan(n: int, distance: int, budget: int = DUPLICATE_CANDIDATES) -> NearIndex:
    """The index that finds every pair within the most bits (up to `distance`) while its work, the
    words sorted (one sort a table) and the candidate pairs compared, stays under the budget; the
    least work among those."""
    best: tuple[int, float, NearIndex] | None = None
    for b in range(2, MAX_BLOCKS + 1):
        for e in range(1, b):
            index = NearIndex(b, e)
            if index.certain > max(distance, 1):
                continue
            tables = comb(b, e)
            if tables * max(n, 1) > budget:
                continue
            work = tables * n + index.candidates(n)
            if work > budget:
                continue
            key = (-index.certain, work)
            if best is None or key < best[:2]:
                best = (*key, index)
    return best[2] if best is not None else NearIndex(MAX_BLOCKS, MAX_BLOCKS - 1)


def _block_values(words: np.ndarray, index: NearIndex) -> list[np.ndarray]:
    """Each block of the words as uint64 values (most significant block first)."""
    u = words.view(np.uint64)
    edges = index.edges
    out = []
    for lo, hi in pairwise(edges):
        shift = np.uint64(64 - hi)
        mask = np.uint64((1 << int(hi - lo)) - 1)
        out.append((u >> shift) & mask)
    return out


def _run_pairs(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Every pair of positions whose keys are equal, without looking at other pairs: sort, then
    pair each position with the next k of its run, k = 1, 2, ... while runs are that long."""
    order = np.argsort(key)  # any order within a run: a pair is a pair either way round
    k = key[order]
    starts = np.flatnonzero(np.r_[True, k[1:] != k[:-1]])
    lengths = np.diff(np.r_[starts, len(k)])
    big = lengths > 1
    if not big.any():
        return np.empty(0, np.int64), np.empty(0, np.int64)
    starts, lengths = starts[big], lengths[big]
    # positions in runs of two or more, and how far each is from its run's end
    pos = np.repeat(starts, lengths) + (
        np.arange(lengths.sum()) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    )
    left = np.repeat(starts + lengths, lengths) - pos - 1
    a_out, b_out = [], []
    step = 1
    while True:
        keep = left >= step  # positions fall out as their run ends
        pos, left = pos[keep], left[keep]
        if not len(pos):
            break
        a_out.append(order[pos])
        b_out.append(order[pos + step])
        step += 1
    return np.concatenate(a_out), np.concatenate(b_out)


@dataclass(frozen=True)
class Confirm:
    """What a pair of near phash words must agree on too: dhash words within `dhash_bits` bits
    and, when `colour` (n x 2: colour_top, colour_bottom) is given, colour signatures within
    `colour_steps` steps (`imagesignals.colour_distance`)."""

    dhash: np.ndarray
    dhash_bits: int
    colour: np.ndarray | None = None
    colour_steps: int = 0

    def keep(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        ok = hamming(self.dhash[a], self.dhash[b]) <= self.dhash_bits
        if self.colour is not None:
            ok &= colour_distance(self.colour[a], self.colour[b]) <= self.colour_steps
        return ok

    def of(self, rows: np.ndarray) -> Confirm:
        """The same confirmation of the words at `rows`."""
        return Confirm(
            self.dhash[rows],
            self.dhash_bits,
            None if self.colour is None else self.colour[rows],
            self.colour_steps,
        )


def near_pairs(
    phash: np.ndarray,
    dhash: np.ndarray | Confirm,
    distance: int,
    confirm: int = 64,
    index: NearIndex | None = None,
) -> tuple[np.ndarray, np.ndarray, NearIndex]:
    """Pairs (i < j) of distinct words within `distance` phash bits, confirmed: `dhash` a Confirm,
    or dhash words (aligned with `phash`) that must be within `confirm` bits."""
    check = dhash if isinstance(dhash, Confirm) else Confirm(dhash, confirm)
    n = len(phash)
    index = index or plan(n, distance)
    if n < 2:
        return np.empty(0, np.int64), np.empty(0, np.int64), index
    blocks = _block_values(phash, index)
    widths = np.diff(index.edges)
    a_all, b_all = [], []
    for chosen in index.tables():
        key = np.zeros(n, np.uint64)
        for c in chosen:
            key = (key << np.uint64(widths[c])) | blocks[c]
        if int(widths[list(chosen)].sum()) <= 32:
            key = key.astype(np.uint32)  # a narrower sort
        a, b = _run_pairs(key)
        if not len(a):
            continue
        ok = hamming(phash[a], phash[b]) <= distance
        a, b = a[ok], b[ok]
        ok = check.keep(a, b)
        a_all.append(a[ok])
        b_all.append(b[ok])
    if not a_all:
        return np.empty(0, np.int64), np.empty(0, np.int64), index
    a, b = np.concatenate(a_all), np.concatenate(b_all)
    lo, hi = np.minimum(a, b), np.maximum(a, b)
    pair = np.unique(lo.astype(np.int64) * n + hi)  # the same pair shares several block sets
    return pair // n, pair % n, index


def components(n: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Each node's group: the smallest node of its connected piece (union-find as array
    operations: hook each edge's ends to the smaller label, then jump pointers, until still)."""
    label = np.arange(n, dtype=np.int64)
    if not len(a):
        return label
    while True:
        la, lb = label[a], label[b]
        low = np.minimum(la, lb)
        before = label.copy()
        np.minimum.at(label, la, low)
        np.minimum.at(label, lb, low)
        while True:
            jumped = label[label]
            if np.array_equal(jumped, label):
                break
            label = jumped
        if np.array_equal(label, before):
            return label


@dataclass
class Grouping:
    """The groups over tracked images: `group[i]` (-1 none, else 0-based in order of first
    member), and the near index used."""

    group: np.ndarray
    index: NearIndex | None
    count: int


def group_hashes(
    pixel: np.ndarray,
    phash: np.ndarray,
    dhash: np.ndarray,
    distance: int,
    confirm: int,
    near: bool = True,
    colour: np.ndarray | None = None,
    colour_steps: int = 0,
) -> Grouping:
    """Groups of exact copies (same pixel word) and near copies (see `near_pairs`; `colour`, n x 2
    colour signatures, confirms a near pair when within `colour_steps`)."""
    check = Confirm(dhash, confirm, colour, colour_steps)
    n = len(pixel)
    edges_a, edges_b = [], []
    a, b = _run_pairs(pixel)
    edges_a.append(a)
    edges_b.append(b)
    index = None
    if near and n > 1:
        # identical phash words are one word for the index (a blank frame's word may be shared
        # by thousands): the index sees each distinct word once, and the images that share one
        # are chained in sorted order (n - 1 links at most, never every pair)
        order = np.argsort(phash)
        same = np.flatnonzero(phash[order][1:] == phash[order][:-1])
        sa, sb = order[same], order[same + 1]
        ok = check.keep(sa, sb)
        edges_a.append(sa[ok])
        edges_b.append(sb[ok])
        words, first = np.unique(phash, return_index=True)
        wa, wb, index = near_pairs(words, check.of(first), distance)
        edges_a.append(first[wa])
        edges_b.append(first[wb])
    label = components(n, np.concatenate(edges_a), np.concatenate(edges_b))
    sizes = np.bincount(label, minlength=n)
    in_group = sizes[label] > 1
    roots = np.unique(label[in_group])  # sorted: a root is its group's first member
    group = np.full(n, -1, np.int64)
    group[in_group] = np.searchsorted(roots, label[in_group])
    return Grouping(group, index, len(roots))


def _where(analysis, fi: int, n: int, split: str) -> str:
    from pathlib import PurePath

    name = PurePath(analysis.shards[fi].path).name
    return f"record {n} of {name}" + (f" ({split})" if split else "")


def step(analysis, rules, qa) -> list:
    """`judge` over the hash columns read for it alone (the dataset step reads them once for every
    step: `STEP`)."""
    return judge(analysis, rules, qa, columns(analysis, HASHES))


def judge(analysis, rules, qa, cols: Columns) -> list:
    """Findings at records, `qa.tables["leakage"]`, `qa.tables["duplicate_groups"]`, and the
    per-record `dup_group` and `leak` arrays (`qa.record_columns`, for `DatasetAnalysis.facts`),
    from the `HASHES` columns of every file."""
    said: list[str] = []  # this step's notes: in qa.notes and its own table, for the report
    valid = np.logical_and.reduce([cols.valid[c] for c in HASHES]) if len(cols) else np.zeros(0, bool)
    if not valid.any():
        said.append("No duplicates step: no record's image was hashed (no decoded images)")
        # in its own table only: the image checks say once that no image decoded (qa.notes)
        qa.tables["duplicates"] = {"images": 0, "groups": 0, "in_groups": 0, "notes": said}
        return []
    tracked = np.flatnonzero(valid)
    if len(tracked) > DUPLICATES_TRACKED:
        said.append(
            too_large(
                "the dataset's hashed images",
                len(tracked),
                DUPLICATES_TRACKED,
                "images",
                "DUPLICATES_TRACKED",
            )
            + ": the rest are not compared"
        )
        tracked = tracked[:DUPLICATES_TRACKED]
    r = rules.duplicates
    pixel = cols.values["pixel_hash"][tracked].astype(np.int64)
    ph = cols.values["phash"][tracked].astype(np.int64)
    dh = cols.values["dhash"][tracked].astype(np.int64)
    colour = np.stack([cols.values[c][tracked].astype(np.int64) for c in COLOUR_COLUMNS], axis=1)
    g = group_hashes(
        pixel, ph, dh, r.near_distance, r.confirm_distance, r.check_near, colour, r.colour_distance
    )
    if g.index is not None and g.index.certain < r.near_distance:
        said.append(
            f"Near copies of {len(tracked):,} images: pairs within {g.index.certain} bits are all found; "
            f"pairs {g.index.certain + 1}-{r.near_distance} bits apart when {g.index.exact_blocks} of the "
            f"hash's {g.index.blocks} blocks still agree (limits.DUPLICATE_CANDIDATES)"
        )
    split_code = cols.split[tracked]
    names = cols.split_names
    findings: list = []
    files, records = cols.file[tracked], cols.record[tracked]
    leak = np.zeros(len(tracked), bool)
    # ordered split pair -> [images with a copy, exact, near]
    leak_counts: dict[tuple[int, int], list[int]] = {}
    shown: list[dict] = []
    members_of = np.argsort(g.group, kind="stable")
    members_of = members_of[g.group[members_of] >= 0]
    bounds = (  # each group's first member, and the end (no group: no bounds to walk)
        np.flatnonzero(np.r_[True, np.diff(g.group[members_of]) != 0, True]) if len(members_of) else [0]
    )
    for gi in range(len(bounds) - 1):
        m = members_of[bounds[gi] : bounds[gi + 1]]  # in dataset order
        sp = split_code[m]
        for k, i in enumerate(m):
            where_i = split_code[i]
            same = m[:k][sp[:k] == where_i]
            if len(same):
                exact = same[pixel[same] == pixel[i]]
                ref = int(exact[0]) if len(exact) else int(same[0])
                fi, n = int(files[ref]), int(records[ref])
                if len(exact):
                    findings.append(
                        (
                            int(files[i]),
                            int(records[i]),
                            Finding(
                                ProblemKind.DUPLICATE_IMAGE,
                                f"the same image as {_where(analysis, fi, n, '')} (group {gi + 1})",
                            ),
                        )
                    )
                else:
                    bits = int(hamming(ph[i], ph[ref]))
                    findings.append(
                        (
                            int(files[i]),
                            int(records[i]),
                            Finding(
                                ProblemKind.NEAR_DUPLICATE_IMAGE,
                                f"a near copy of {_where(analysis, fi, n, '')}: {bits} bits differ (group {gi + 1})",
                            ),
                        )
                    )
            for other in np.unique(sp[sp != where_i]):
                there = m[sp == other]
                exact = there[pixel[there] == pixel[i]]
                ref = int(exact[0]) if len(exact) else int(there[0])
                how = "exact" if len(exact) else f"near: {int(hamming(ph[i], ph[ref]))} bits differ"
                findings.append(
                    (
                        int(files[i]),
                        int(records[i]),
                        Finding(
                            ProblemKind.SPLIT_LEAK,
                            f"in {names[where_i] or 'no split'}, a copy of "
                            f"{_where(analysis, int(files[ref]), int(records[ref]), names[other] or 'no split')}, {how}",
                        ),
                    )
                )
                leak[i] = True
                c = leak_counts.setdefault((int(where_i), int(other)), [0, 0, 0])
                c[0] += 1
                c[1 if len(exact) else 2] += 1
        if len(shown) < DUPLICATE_GROUPS_SHOWN:
            shown.append(
                {
                    "group": gi + 1,
                    "size": len(m),
                    "exact": bool((pixel[m] == pixel[m[0]]).all()),
                    "members": [
                        [int(files[i]), int(records[i]), names[split_code[i]]]
                        for i in m[:DUPLICATE_GROUP_MEMBERS_SHOWN]
                    ],
                    "more": max(0, len(m) - DUPLICATE_GROUP_MEMBERS_SHOWN),
                }
            )
    if g.count > DUPLICATE_GROUPS_SHOWN:
        said.append(
            too_large(
                "the duplicate groups", g.count, DUPLICATE_GROUPS_SHOWN, "groups", "DUPLICATE_GROUPS_SHOWN"
            )
            + ": the report lists the first (each record's dup_group column has them all)"
        )
    totals = np.bincount(split_code, minlength=len(names))
    qa.tables["leakage"] = [
        {
            "split": names[a],
            "other": names[b],
            "images": int(totals[a]),
            "with_copy": c[0],
            "exact": c[1],
            "near": c[2],
        }
        for (a, b), c in sorted(leak_counts.items())
    ]
    qa.tables["duplicate_groups"] = shown
    qa.tables["duplicates"] = {
        "images": len(tracked),
        "groups": g.count,
        "in_groups": int((g.group >= 0).sum()),
        "near_distance": r.near_distance,
        "certain_bits": g.index.certain if g.index is not None else None,
        "notes": said,
    }
    qa.notes.extend(said)
    _leave_columns(qa, cols, tracked, g.group, leak)
    return findings


def _leave_columns(qa, cols, tracked: np.ndarray, group: np.ndarray, leak: np.ndarray) -> None:
    """`dup_group` (1-based, -1 none) and `leak` a file, aligned with its fact table's rows."""
    dup = np.full(len(cols), -1, np.int64)
    dup[tracked] = np.where(group >= 0, group + 1, -1)
    lk = np.zeros(len(cols), bool)
    lk[tracked] = leak
    starts = np.flatnonzero(np.r_[True, cols.file[1:] != cols.file[:-1]])
    ends = np.r_[starts[1:], len(cols)]
    qa.record_columns["dup_group"] = {int(cols.file[s]): dup[s:e] for s, e in zip(starts, ends, strict=True)}
    qa.record_columns["leak"] = {int(cols.file[s]): lk[s:e] for s, e in zip(starts, ends, strict=True)}


STEP = Step("duplicates", judge, columns=tuple(HASHES))
