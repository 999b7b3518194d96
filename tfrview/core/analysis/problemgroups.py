"""Which problems are "the same problem again": one rule, for the Problems panel and any report
that groups repeats (36 label-text warnings that differ only by record are one group of 36).

Two findings about a feature repeat each other when they have the same kind and feature, whatever
their messages say (the data they quote, varying bytes or sizes, lives in their `detail`: 8,000
records whose image holds noise are one group, not 8,000). Other problems repeat each other when
they have the same kind and the same message once the parts that name a place are set aside:
numbers (record numbers, offsets, sizes) and hexadecimal words (CRCs).
"""

from __future__ import annotations

import re

from tfrview.core.problems import Problem

_PLACE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:[.,]\d+)*")
_MARK = "…"


class Repeats:
    """Groups problems as they come, in O(1) each: the number of each one's group, and each
    group's title, with '…' for each number or CRC that differs between its members (a shard
    number they all share stays)."""

    def __init__(self) -> None:
        self._ids: dict[tuple[str, str], int] = {}
        self.keys: list[tuple[str, str]] = []
        self._first: list[str] = []
        self._masked: list[str] = []
        self._mixed: set[int] = set()  # groups of one feature whose messages differ in words
        self._words: list[list[str]] = []
        self._differs: list[list[bool]] = []

    def add(self, problem: Problem) -> int:
        words = _PLACE.findall(problem.message)
        masked = _PLACE.sub(_MARK, problem.message)
        key = (str(problem.kind), f"\0{problem.feature}" if problem.feature else masked)
        gid = self._ids.get(key)
        if gid is None:
            gid = self._ids[key] = len(self.keys)
            self.keys.append(key)
            self._first.append(problem.message)
            self._masked.append(masked)
            self._words.append(words)
            self._differs.append([False] * len(words))
            return gid
        if masked != self._masked[gid]:
            self._mixed.add(gid)
        differs = self._differs[gid]
        for i, (a, b) in enumerate(zip(self._words[gid], words, strict=False)):
            if a != b:
                differs[i] = True
        return gid

    def title(self, gid: int) -> str:
        spans = iter(self._differs[gid])
        first = _PLACE.sub(lambda m: _MARK if next(spans, True) else m.group(), self._first[gid])
        return f"{first} (and findings worded otherwise)" if gid in self._mixed else first
