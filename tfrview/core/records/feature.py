"""One feature's values and the three list types of an Example's features: what every decoder
(payload, events, schema) builds, in a module of its own so they need not import each other."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

BYTES_LIST = "bytes_list"
FLOAT_LIST = "float_list"
INT64_LIST = "int64_list"
TYPE_SHORT = {BYTES_LIST: "bytes", FLOAT_LIST: "float", INT64_LIST: "int64"}


@dataclass(frozen=True, slots=True)
class Feature:
    """One feature's values: list[bytes] for bytes_list, float32 / int64 numpy arrays otherwise.
    `total` is how many values the record holds when a limit decoded fewer (None: all decoded)."""

    type: str
    values: list[bytes] | np.ndarray
    total: int | None = None

    def __len__(self) -> int:
        return len(self.values)

    @property
    def count(self) -> int:
        return len(self.values) if self.total is None else self.total
