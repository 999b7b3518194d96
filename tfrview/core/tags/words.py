"""The tag vocabulary: the words a person marks a record with. One home; compared by member."""

from __future__ import annotations

import enum

from tfrview.core.errors import TfrviewError


class TagWord(enum.StrEnum):
    """What a person decided of a record; the value is the wire word (JSON lines, the filter's
    `tag == "drop"`, the record table's column)."""

    DROP = "drop"  # leave it out of the rewritten dataset
    KEEP = "keep"  # looked at and fine, keep it whatever the filters say
    REVIEW = "review"  # look at it again (or ask someone)

    @property
    def code(self) -> int:
        """The word as a small number (1..3; 0 is no tag): the store's column and the arrays' codes."""
        return WORDS.index(self) + 1


WORDS: tuple[TagWord, ...] = tuple(TagWord)  # code k is WORDS[k - 1]


class TagError(TfrviewError):
    """A tag, a tags file or the tags store that cannot be used: one line for a person."""


def word_of(text: str) -> TagWord:
    """The word `text` names (any case); TagError naming the words there are."""
    try:
        return TagWord(str(text).strip().lower())
    except ValueError:
        raise TagError(f"no tag {text!r} (tags are {', '.join(WORDS)})") from None


def word_of_code(code: int) -> TagWord | None:
    """The word of a code (0: no tag)."""
    return WORDS[code - 1] if 0 < code <= len(WORDS) else None
