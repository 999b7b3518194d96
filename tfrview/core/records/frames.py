"""A SequenceExample's image frames (a video clip, MediaPipe's MediaSequence): the steps of a
feature list that hold encoded images, and each frame's own features (its boxes and labels are
the same step of the other feature lists), so that the image, box and mask code reads a frame as
it reads an Example."""

from __future__ import annotations

from tfrview.core.limits import MAX_FRAMES
from tfrview.core.records.feature import BYTES_LIST, Feature
from tfrview.core.records.payload import Payload
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
