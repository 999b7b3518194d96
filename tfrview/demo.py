"""The built-in demo dataset: two shards that show a newcomer every feature in the first minute.

Shard 0: Object Detection API Examples with drawn JPEG/PNG images, normalized boxes, class text and
ids (and one photo with EXIF orientation). Shard 1: raw pixel arrays, serialized tensors, a
784-float digit, a SequenceExample, a video clip (a SequenceExample of frames with boxes), a non-Example protobuf, opaque bytes, an image that does not
decode, a box outside its image, and damage: a bad data CRC, garbage between records, a truncated
tail. Written with the project's own writer into the user's cache directory.
"""

from __future__ import annotations

import io
import math
import random
from pathlib import Path

import numpy as np

from tfrview.core.output.atomic import atomic_write_bytes
from tfrview.core.records.proto import example_pb2, tensor_pb2
from tfrview.core.tfrecord.framing import encode_record
from tfrview.core.userdirs import cache_dir as user_cache

VERSION = 4
CLASSES = {1: "circle", 2: "square", 3: "triangle", 4: "star"}
LABEL_MAP = "".join(f"item {{\n  id: {i}\n  name: '{n}'\n}}\n" for i, n in CLASSES.items())


def cache_dir() -> Path:

    return user_cache() / f"demo-v{VERSION}"


def _example(**feats) -> example_pb2.Example:
    ex = example_pb2.Example()
    for k, v in feats.items():
        f = ex.features.feature[k]
        vals = v if isinstance(v, list | tuple) else [v]
        if vals and isinstance(vals[0], bytes | str):
            f.bytes_list.value.extend(x.encode() if isinstance(x, str) else x for x in vals)
        elif vals and isinstance(vals[0], float):
            f.float_list.value.extend(vals)
        else:
            f.int64_list.value.extend(int(x) for x in vals)
    return ex


def _draw_scene(rnd: random.Random, w: int, h: int, title: str):
    from PIL import Image, ImageDraw  # heavy: PIL on first use only

    c0 = [rnd.randint(20, 120) for _ in range(3)]
    c1 = [rnd.randint(100, 230) for _ in range(3)]
    grad = np.linspace(0, 1, h)[:, None, None]
    bg = (np.array(c0)[None, None, :] * (1 - grad) + np.array(c1)[None, None, :] * grad).astype(np.uint8)
    im = Image.fromarray(np.repeat(bg, w, axis=1))
    d = ImageDraw.Draw(im)
    objs = []
    for _ in range(rnd.randint(1, 3)):
        cls = rnd.randint(1, 4)
        s = rnd.randint(min(w, h) // 6, min(w, h) // 3)
        x = rnd.randint(4, w - s - 4)
        y = rnd.randint(24, h - s - 4)
        color = tuple(rnd.randint(150, 255) for _ in range(3))
        if cls == 1:
            d.ellipse([x, y, x + s, y + s], fill=color, outline=(0, 0, 0), width=2)
        elif cls == 2:
            d.rectangle([x, y, x + s, y + s], fill=color, outline=(0, 0, 0), width=2)
        elif cls == 3:
            d.polygon([(x + s / 2, y), (x, y + s), (x + s, y + s)], fill=color, outline=(0, 0, 0))
        else:
            pts = []
            for k in range(10):
                r = s / 2 if k % 2 == 0 else s / 5
                a = math.pi / 2 + k * math.pi / 5
                pts.append((x + s / 2 + r * math.cos(a), y + s / 2 - r * math.sin(a)))
            d.polygon(pts, fill=color, outline=(0, 0, 0))
        objs.append((cls, x, y, x + s, y + s))
    d.text((6, 4), title, fill=(255, 255, 255))
    return im, objs


def _encode(im, fmt: str, exif=None) -> bytes:
    buf = io.BytesIO()
    if fmt == "JPEG":
        im.convert("RGB").save(buf, "JPEG", quality=85, **({"exif": exif} if exif else {}))
    else:
        im.save(buf, fmt)
    return buf.getvalue()


def _od_example(rnd: random.Random, i: int) -> bytes:
    w, h = rnd.choice([(320, 240), (400, 300), (240, 320), (480, 270)])
    fmt = "PNG" if i % 5 == 4 else "JPEG"
    im, objs = _draw_scene(rnd, w, h, f"demo #{i}")
    data = _encode(im, fmt)
    return _example(
        **{
            "image/encoded": data,
            "image/format": fmt.lower().replace("jpeg", "jpg"),
            "image/filename": f"demo-{i:03d}.{fmt.lower()}",
            "image/source_id": str(i),
            "image/height": h,
            "image/width": w,
            "image/object/bbox/xmin": [o[1] / w for o in objs],
            "image/object/bbox/ymin": [o[2] / h for o in objs],
            "image/object/bbox/xmax": [o[3] / w for o in objs],
            "image/object/bbox/ymax": [o[4] / h for o in objs],
            "image/object/class/text": [CLASSES[o[0]] for o in objs],
            "image/object/class/label": [o[0] for o in objs],
        }
    ).SerializeToString()


def _exif_example(rnd: random.Random) -> bytes:
    """A photo stored sideways with EXIF orientation 6: viewers must rotate it to look right."""
    from PIL import Image  # heavy: PIL on first use only

    im, objs = _draw_scene(rnd, 320, 240, "EXIF rotated")
    stored = im.transpose(Image.Transpose.ROTATE_90)  # 240x320 on disk
    exif = Image.Exif()
    exif[0x0112] = 6
    data = _encode(stored, "JPEG", exif=exif.tobytes())
    return _example(
        **{
            "image/encoded": data,
            "image/format": "jpg",
            "image/filename": "exif-rotated.jpg",
            "image/height": 240,
            "image/width": 320,
            "image/object/bbox/xmin": [o[1] / 320 for o in objs],
            "image/object/bbox/ymin": [o[2] / 240 for o in objs],
            "image/object/bbox/xmax": [o[3] / 320 for o in objs],
            "image/object/bbox/ymax": [o[4] / 240 for o in objs],
            "image/object/class/text": [CLASSES[o[0]] for o in objs],
            "image/object/class/label": [o[0] for o in objs],
        }
    ).SerializeToString()


def _shard1(rnd: random.Random) -> list[bytes]:
    out: list[bytes] = []
    for _i in range(4):  # raw pixels + height/width/depth, a classification label
        im, objs = _draw_scene(rnd, 64, 48, "")
        arr = np.asarray(im.convert("RGB"))
        out.append(
            _example(
                image_raw=arr.tobytes(), height=48, width=64, depth=3, label=objs[0][0]
            ).SerializeToString()
        )
    for dtype in ("uint8", "float32"):  # tf.io.serialize_tensor payloads
        im, objs = _draw_scene(rnd, 56, 56, "")
        arr = np.asarray(im.convert("RGB"))
        t = tensor_pb2.TensorProto()
        if dtype == "uint8":
            t.dtype = tensor_pb2.DT_UINT8
            t.tensor_content = arr.tobytes()
        else:
            t.dtype = tensor_pb2.DT_FLOAT
            t.tensor_content = (arr.astype("<f4") / 255).tobytes()
        for s in arr.shape:
            t.tensor_shape.dim.add().size = s
        out.append(_example(image_tensor=t.SerializeToString(), label=objs[0][0]).SerializeToString())
    for digit in (3, 7):  # MNIST-like 784 floats
        from PIL import Image, ImageDraw  # heavy: PIL on first use only

        im = Image.new("L", (28, 28))
        ImageDraw.Draw(im).text((9, 7), str(digit), fill=255)
        px = (np.asarray(im, dtype=np.float32) / 255).ravel().tolist()
        out.append(_example(pixels=px, digit=digit).SerializeToString())
    se = example_pb2.SequenceExample()
    se.context.feature["video/id"].bytes_list.value.append(b"clip-0001")
    se.context.feature["video/frames"].int64_list.value.append(5)
    for t in range(5):
        se.feature_lists.feature_list["frame/label"].feature.add().int64_list.value.append(t % 3)
        se.feature_lists.feature_list["frame/score"].feature.add().float_list.value.extend([0.1 * t, 0.5])
    out.append(se.SerializeToString())
    tp = tensor_pb2.TensorProto(dtype=tensor_pb2.DT_INT64, int64_val=[1, 2, 3])
    tp.tensor_shape.dim.add().size = 3
    out.append(tp.SerializeToString())  # a protobuf that is not an Example
    out.append(b"plain text, not a protobuf: someone wrote strings into this shard")
    im, _ = _draw_scene(rnd, 160, 120, "broken")
    broken = _encode(im, "JPEG")
    out.append(
        _example(
            **{
                "image/encoded": broken[: len(broken) // 3],
                "image/format": "jpg",
                "image/height": 120,
                "image/width": 160,
            }
        ).SerializeToString()
    )
    im, _ = _draw_scene(rnd, 200, 150, "box outside")
    out.append(
        _example(
            **{
                "image/encoded": _encode(im, "JPEG"),
                "image/height": 150,
                "image/width": 200,
                "image/object/bbox/xmin": [0.6],
                "image/object/bbox/ymin": [0.5],
                "image/object/bbox/xmax": [1.3],
                "image/object/bbox/ymax": [0.9],
                "image/object/class/text": ["square"],
                "image/object/class/label": [2],
            }
        ).SerializeToString()
    )
    out.append(_clip(rnd))
    return out


def _clip(rnd: random.Random, frames: int = 8) -> bytes:
    """A SequenceExample clip as MediaPipe's MediaSequence writes one: a JPEG per frame, and each
    frame's boxes and labels in the same step of the region/* feature lists (a ball rolling by)."""
    from PIL import Image, ImageDraw  # heavy: PIL on first use only

    se = example_pb2.SequenceExample()
    se.context.feature["clip/media_id"].bytes_list.value.append(b"ball-rolling")
    se.context.feature["image/format"].bytes_list.value.append(b"JPEG")
    fl = se.feature_lists.feature_list
    w, h, r = 160, 120, 14
    for t in range(frames):
        im = Image.new("RGB", (w, h), (70, 110, 160))
        d = ImageDraw.Draw(im)
        d.rectangle([0, 90, w, h], fill=(80, 140, 70))
        cx, cy = 20 + t * (w - 40) / (frames - 1), 90 - r - abs(math.sin(t * 0.9)) * 40
        d.ellipse([cx - r, cy - r, cx + r, cy + r], fill=(230, 200, 40), outline=(40, 40, 40))
        fl["image/encoded"].feature.add().bytes_list.value.append(_encode(im, "JPEG"))
        box = [(cx - r) / w, (cy - r) / h, (cx + r) / w, (cy + r) / h]
        for key, v in zip(("xmin", "ymin", "xmax", "ymax"), box, strict=True):
            fl[f"region/bbox/{key}"].feature.add().float_list.value.append(v)
        fl["region/label/string"].feature.add().bytes_list.value.append(b"ball")
        fl["region/timestamp"].feature.add().int64_list.value.append(t * 33_333)
    return se.SerializeToString()


def build_demo(directory: Path | None = None) -> list[Path]:
    """Write the demo shards and label map (once) and return the shard paths."""
    d = directory or cache_dir()
    paths = [d / "demo-00000-of-00002.tfrecord", d / "demo-00001-of-00002.tfrecord"]
    if all(p.exists() for p in paths):
        return paths
    d.mkdir(parents=True, exist_ok=True)
    rnd = random.Random(42)
    shard0 = [_od_example(rnd, i) for i in range(24)]
    shard0.insert(5, _exif_example(rnd))
    recs1 = [encode_record(p) for p in _shard1(rnd)]
    bad = bytearray(recs1[1])
    bad[20] ^= 0xFF  # a flipped data byte: bad data CRC
    recs1[1] = bytes(bad)
    blob = b"".join(recs1[:6]) + b"\xde\xad\xbe\xef" * 16 + b"".join(recs1[6:])  # garbage between records
    blob += encode_record(b"this record was cut off by a crash" * 4)[
        :14
    ]  # truncated in its header's reach: no row
    atomic_write_bytes(d / "demo_label_map.pbtxt", LABEL_MAP.encode())
    atomic_write_bytes(paths[0], b"".join(encode_record(p) for p in shard0))
    atomic_write_bytes(paths[1], blob)
    return paths
