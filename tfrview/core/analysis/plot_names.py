"""The plots a dataset offers, by name, and the scalar an event file opens on: what the window's Plot
panel needs before any plot is made, without the plotting itself (numpy and pyarrow, ~0.15 s of
the window's start-up: `plots.py` makes them in a job process).
"""

from __future__ import annotations

BOX_MEASURES = ("box width", "box height", "box area", "box aspect (w/h)")  # histograms of the boxes
BOX_CENTRES = "box centres (heat map)"
IMAGE_SIZES = "image sizes (scatter)"
PLOTS = (*BOX_MEASURES, BOX_CENTRES, IMAGE_SIZES)  # plots of facts that are not a feature of their own
# the image quality scores (fact columns of records.imagesignals, named here without loading numpy):
# `plots.plot` draws each as a histogram or over the records, as a numeric feature, and the filter
# reads them by the same names (a clicked bar's `brightness >= 12 and brightness < 17`)
IMAGE_SCORES = ("brightness", "contrast", "blur", "entropy", "blank", "aspect", "pixels")


def scalar_to_show(summary: dict) -> str | None:
    """The scalar a TensorBoard event file opens on (what people open one to see): its first
    top-level numeric tag other than `step`; None for other data."""
    if not summary.get("kinds", {}).get("event"):
        return None
    feats = summary.get("keys", {})
    return first_scalar(k for k, v in feats.items() if set(v.get("types", ())) & {"float_list", "int64_list"})


def first_scalar(keys) -> str | None:
    """The rule `scalar_to_show` applies: the first top-level numeric tag other than `step`."""
    return next((k for k in sorted(keys) if k != "step" and "/" not in k), None)
