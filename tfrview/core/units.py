"""Sizes in words, for every message (limits, reports, the window)."""

from __future__ import annotations


def human_bytes(n: int | None) -> str:
    """1234567 -> '1.2 MB' (decimal units, as file managers show sizes)."""
    if n is None:
        return "?"
    x = float(n)
    for unit in ("B", "KB", "MB", "GB", "TB"):
        if x < 1000 or unit == "TB":
            return f"{int(x)} {unit}" if unit == "B" else f"{x:.1f} {unit}"
        x /= 1000
    return f"{n} B"
