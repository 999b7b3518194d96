"""A SequenceExample's image frames (a video clip, MediaPipe's MediaSequence): the steps of a
feature list that hold encoded images, and each frame's own features (its boxes and labels are
the same step of the other feature lists), so that the image, box and mask code reads a frame as
it reads an Example. A TFDS dataset's steps (RLDS) are frames too: an Example whose features.json
declares an Image once a step (`step_image_keys`, `step_features`)."""

from __future__ import annotations

from collections.abc import Mapping

from tfrview.core.limits import MAX_FRAMES
from tfrview.core.records.feature import BYTES_LIST, Feature
from tfrview.core.records.payload import Payload
from tfrview.core.tfds.features import BBoxFeature, ClassLabel, Features, Text, Video
from tfrview.core.tfds.features import Image as TfdsImage
from tfrview.core.tfds.features import Tensor as TfdsTensor
from tfrview.core.tfrecord.sniff import sniff_image_format


def frame_keys(p: Payload) -> list[str]:
    """Feature lists whose first step holds an encoded image."""
    out = []
    for key, steps in p.feature_lists.items():
        if steps and steps[0].type == BYTES_LIST and len(steps[0].values):
            b = steps[0].values[0]
            if isinstance(b, bytes) and sniff_image_format(b):
                out.append(key)
    return out


def with_frames(p: Payload) -> dict[str, Feature]:
    """The context features and, for each frame list, one bytes feature of its frames (the first
    value of each of its first MAX_FRAMES steps): frame t is image t of that key."""
    feats = dict(p.features)
    for key in frame_keys(p):
        frames = [
            s.values[0] if s.type == BYTES_LIST and len(s.values) else b""
            for s in p.feature_lists[key][:MAX_FRAMES]
        ]
        feats[key] = Feature(BYTES_LIST, frames)
    return feats


def frame_features(p: Payload, t: int) -> dict[str, Feature]:
    """What frame t is made of: the context, and step t of every feature list that has one."""
    feats = dict(p.features)
    for key, steps in p.feature_lists.items():
        if t < len(steps):
            feats[key] = steps[t]
    return feats


# --- a TFDS dataset's steps (RLDS: `steps` a tfds Dataset) -----------------------------------------


def step_image_keys(features: Mapping[str, Feature], tfds: Features | None) -> list[str]:
    """Keys a TFDS dataset's features.json declares as an Image repeated once a step or an item of a
    sequence (RLDS `steps/observation/image`), or as a Video (a list of encoded frames), that the
    record holds with more than one value: its frames, shown as a filmstrip as a SequenceExample's are."""
    if tfds is None:
        return []
    out = []
    for k, f in features.items():
        d = tfds.lookup(k)
        one_a_step = d is not None and (
            (len(d.sequences) == 1 and isinstance(d.spec, TfdsImage))
            or (not d.sequences and isinstance(d.spec, Video))  # a Video: its frames, one encoded image each
        )
        if one_a_step and f.type == BYTES_LIST and len(f.values) > 1:
            out.append(k)
    return out


def step_features(features: Mapping[str, Feature], tfds: Features, t: int) -> dict[str, Feature]:
    """What step (or item) t of a TFDS record is made of: every key outside a sequence as it is, and
    the t-th item's values of each key in one sequence whose item size its spec fixes (an Image, a
    text, a ClassLabel: one value; a BBoxFeature: four; a Tensor: its shape's product), so the
    image, box and mask code reads a step as it reads an Example."""
    out: dict[str, Feature] = {}
    for k, f in features.items():
        d = tfds.lookup(k)
        if d is None or not d.sequences:
            out[k] = f
            continue
        if len(d.sequences) != 1:
            continue  # a sequence of sequences: its items are ragged, no step t to cut out
        size = item_size(d.spec)
        if size is None or (t + 1) * size > len(f.values):
            continue
        out[k] = Feature(f.type, f.values[t * size : (t + 1) * size])
    return out


def item_size(spec) -> int | None:
    """How many values one item of a sequence of this spec takes in a record (None: not fixed)."""
    if isinstance(spec, TfdsTensor):
        if spec.encoding not in ("", "none"):
            return 1
        if any(d is None for d in spec.shape):
            return None
        n = 1
        for d in spec.shape:
            n *= d
        return n
    if isinstance(spec, BBoxFeature):
        return 4
    if isinstance(spec, ClassLabel | TfdsImage | Text):
        return 1
    return None
