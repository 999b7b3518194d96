"""The class palette: one colour per class, the same in every record, window and export (the one
home for the colours; masks, drawings and the window's painting read it)."""

from __future__ import annotations

import hashlib

# Distinct, readable on photos (Tableau-like), one per class.
PALETTE = (
    "#e6194b",
    "#3cb44b",
    "#ffe119",
    "#4363d8",
    "#f58231",
    "#911eb4",
    "#46f0f0",
    "#f032e6",
    "#bcf60c",
    "#fabebe",
    "#008080",
    "#e6beff",
    "#9a6324",
    "#fffac8",
    "#800000",
    "#aaffc3",
)


def palette_hex(key: str) -> str:
    """The same colour for the same class in every record, window and export."""
    i = (
        int(key)
        if key.lstrip("-").isdigit()
        else int.from_bytes(hashlib.blake2s(key.encode(), digest_size=2).digest(), "little")
    )
    return PALETTE[i % len(PALETTE)]


def palette_rgb(key: str) -> tuple[int, int, int]:
    h = palette_hex(key)
    return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)


def outcome_hex(outcome: int) -> str:
    """The colour of a box's outcome when predictions are drawn beside the ground truth (one home:
    the window's painting and the drawing read it): matched green, false positive red, missed
    amber, wrong class magenta; the class is in the label, the outcome is told at a glance."""
    from tfrview.core.records.matching import BoxOutcome

    return {
        BoxOutcome.MATCHED: "#22c55e",
        BoxOutcome.FALSE_POSITIVE: "#ef4444",
        BoxOutcome.MISSED: "#f59e0b",
        BoxOutcome.WRONG_CLASS: "#d946ef",
    }.get(outcome, "#9ca3af")


def outcome_rgb(outcome: int) -> tuple[int, int, int]:
    h = outcome_hex(outcome)
    return int(h[1:3], 16), int(h[3:5], 16), int(h[5:7], 16)
