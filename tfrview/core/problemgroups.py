"""Which problems are "the same problem again": one rule, for the Problems panel and any report
that groups repeats (36 label-text warnings that differ only by record are one group of 36).

Two problems repeat each other when they have the same kind and the same message once the parts
that name a place are set aside: numbers (record numbers, offsets, sizes) and hexadecimal words
(CRCs). Quoted text (a class name, a key) stays, so 'cat' and 'dog' mismatches stay apart.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeVar

from tfrview.core.framing import Problem

_PLACE = re.compile(r"0x[0-9a-fA-F]+|\d+(?:[.,]\d+)*")
_MARK = "…"

T = TypeVar("T")


def template(message: str) -> str:
    """The message with the words that differ between repeats (numbers, CRCs) set to '…'."""
    return _PLACE.sub(_MARK, message)


def group_key(problem: Problem) -> tuple[str, str]:
    return str(problem.kind), template(problem.message)


def group_title(messages: Sequence[str]) -> str:
    """What a group says: its message, with '…' for each number or CRC that differs between its
    members (a shard number they share stays)."""
    first = messages[0]
    if all(m == first for m in messages):
        return first
    words = [_PLACE.findall(m) for m in messages]
    differs = [len({w[i] for w in words}) > 1 for i in range(len(words[0]))]
    spans = iter(zip(differs, _PLACE.finditer(first), strict=True))

    def word(match: re.Match) -> str:
        diff, _ = next(spans)
        return _MARK if diff else match.group()

    return _PLACE.sub(word, first)


def group(items: Iterable[T], problem_of) -> list[list[T]]:
    """Items grouped by their problem's group key, groups in the order of their first member and
    members in their given order."""
    groups: dict[tuple[str, str], list[T]] = {}
    for item in items:
        groups.setdefault(group_key(problem_of(item)), []).append(item)
    return list(groups.values())
