"""The person's tags on records (issue 23): their own work, kept in the user's data directory, keyed
so they survive reopening and moving a dataset.

    from tfrview.core.tags import TagStore, TagWord
    with TagStore.open() as store:             # userdirs.data_dir()/tags.sqlite
        ft = store.file_tags(path)             # FileTags: offsets, codes (TagWord.code), notes, stale
        drop = ft.codes_at(index_offsets) == TagWord.DROP.code
        store.tags_of(file_key(path))          # {offset: Tag(word, note)}

`words` (the vocabulary), `identity` (file keys, stored CRCs), `store` (the SQLite store),
`history` (undo/redo), `jsonl` (export and import)."""

from __future__ import annotations

import numpy as np

from tfrview.core.tags.identity import FileKey, file_key, stored_crcs
from tfrview.core.tags.store import Change, FileTags, Marks, Rows, Tag, TagStore, default_path
from tfrview.core.tags.words import WORDS, TagError, TagWord, word_of, word_of_code


def rows_by_word(codes) -> dict[str, np.ndarray]:
    """The row numbers of each word in an array of codes (`TagStore.codes_over`): what the filter's
    `tag` fact takes, as `problem` takes each kind's rows."""
    codes = np.asarray(codes)
    return {str(w): np.flatnonzero(codes == w.code) for w in TagWord if (codes == w.code).any()}


__all__ = [
    "WORDS",
    "Change",
    "FileKey",
    "FileTags",
    "Marks",
    "Rows",
    "Tag",
    "TagError",
    "TagStore",
    "TagWord",
    "default_path",
    "file_key",
    "rows_by_word",
    "stored_crcs",
    "word_of",
    "word_of_code",
]
