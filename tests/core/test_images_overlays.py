import io

import numpy as np
import pytest
from PIL import Image

from tests.core.test_payload import make_example
from tfrview.core.records.images import ImageError, decode_image, find_images, sniff_image_format
from tfrview.core.records.labelmap import parse_label_map
from tfrview.core.records.overlays import BoxSpec, compute_overlay
from tfrview.core.records.payload import decode
from tfrview.core.records.proto import tensor_pb2
from tfrview.core.records.reading import read_features


def feats(**kw):
    return decode(make_example(**kw)).features


def png(arr) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(arr).save(buf, "PNG")
    return buf.getvalue()


def test_encoded_image_found_under_any_key():
    f = feats(weird_name=[png(np.zeros((4, 6, 3), np.uint8))], label=[1])
    refs = find_images(f)
    assert [(r.key, r.storage, r.detail) for r in refs] == [("weird_name", "encoded", "PNG")]
    img = decode_image(f, refs[0])
    assert img.pixels.shape == (4, 6, 3) and img.source_size == (6, 4)


def test_16bit_and_gray_and_rgba():
    a16 = (np.arange(12, dtype=np.uint16).reshape(3, 4) * 5000).astype(np.uint16)
    im = decode_image(feats(img=[png(a16)]), find_images(feats(img=[png(a16)]))[0])
    assert im.pixels.dtype == np.uint8 and im.pixels.shape == (3, 4)
    assert any("scaled" in n or "stretched" in n for n in im.notes)
    rgba = np.zeros((2, 2, 4), np.uint8)
    f = feats(img=[png(rgba)])
    assert decode_image(f, find_images(f)[0]).pixels.shape == (2, 2, 4)


def test_raw_pixels_sized_by_sibling_features():
    arr = np.arange(5 * 7 * 3, dtype=np.uint8).reshape(5, 7, 3)
    f = feats(image_raw=[arr.tobytes()], height=[5], width=[7], depth=[3])
    refs = find_images(f)
    assert refs[0].storage == "raw" and refs[0].detail == "uint8 5x7x3"
    assert np.array_equal(decode_image(f, refs[0]).pixels, arr)


def test_serialized_tensor_image():
    arr = np.random.default_rng(0).integers(0, 255, (6, 5, 3), dtype=np.uint8)
    t = tensor_pb2.TensorProto(dtype=tensor_pb2.DT_UINT8, tensor_content=arr.tobytes())
    for s in arr.shape:
        t.tensor_shape.dim.add().size = s
    f = feats(image=[t.SerializeToString()])
    refs = find_images(f)
    assert refs[0].storage == "tensor"
    assert np.array_equal(decode_image(f, refs[0]).pixels, arr)


def test_square_float_list_is_an_image():
    f = feats(pixels=[float(i) / 784 for i in range(784)])
    refs = find_images(f)
    assert refs[0].detail == "float32 28x28"
    assert decode_image(f, refs[0]).pixels.shape == (28, 28)


def test_undecodable_image_raises_one_line():
    good = png(np.zeros((8, 8, 3), np.uint8))
    f = feats(image=[good[:30]])
    with pytest.raises(ImageError) as e:
        decode_image(f, find_images(f)[0])
    assert "\n" not in str(e.value)


def test_decompression_bomb_is_refused_fast():
    # A PNG header claiming 50,000 x 50,000 pixels: refused before any pixel is decoded.
    import struct
    import zlib

    def chunk(kind: bytes, body: bytes) -> bytes:
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))

    ihdr = struct.pack(">IIBBBBB", 50_000, 50_000, 8, 2, 0, 0, 0)
    png_bytes = (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(b"")) + chunk(b"IEND", b"")
    )
    f = feats(image=[png_bytes])
    with pytest.raises(ImageError, match="decompression bomb"):
        decode_image(f, find_images(f)[0])


def test_exif_orientation_applied_and_said():
    im = Image.new("RGB", (40, 20), (255, 0, 0))
    exif = Image.Exif()
    exif[0x0112] = 6
    buf = io.BytesIO()
    im.save(buf, "JPEG", exif=exif.tobytes())
    f = feats(image=[buf.getvalue()])
    img = decode_image(f, find_images(f)[0])
    assert img.pixels.shape[:2] == (40, 20)  # rotated: 20 wide, 40 high
    assert any("EXIF orientation 6" in n for n in img.notes)


def test_sniff_formats():
    assert sniff_image_format(b"\xff\xd8\xff\xe0" + bytes(10)) == "JPEG"
    assert sniff_image_format(b"RIFF\x00\x00\x00\x00WEBPVP8 ") == "WEBP"
    assert sniff_image_format(b"BM" + bytes(4)) is None
    assert sniff_image_format(b"hello world") is None


def od(**extra):
    base = {
        "image/object/bbox/xmin": [0.1, 0.5],
        "image/object/bbox/ymin": [0.2, 0.5],
        "image/object/bbox/xmax": [0.3, 1.0],
        "image/object/bbox/ymax": [0.4, 0.75],
    }
    base.update(extra)
    return feats(**base)


def test_od_api_boxes_to_pixels_with_names():
    f = od(**{"image/object/class/text": [b"cat", b"dog"], "image/object/class/label": [1, 2]})
    ov = compute_overlay(f, 200, 100)
    assert ov.spec.convention == "od_normalized"
    assert [(b.x0, b.y0, b.x1, b.y1) for b in ov.boxes] == [
        pytest.approx((20, 20, 60, 40)),
        pytest.approx((100, 50, 200, 75)),
    ]
    assert [b.label for b in ov.boxes] == ["cat", "dog"]


def test_class_ids_named_through_label_map():
    lm = parse_label_map("item { id: 1 name: 'cat' }\nitem { id: 2 name: 'x' display_name: 'dog' }")
    assert lm == {1: "cat", 2: "dog"}
    ov = compute_overlay(od(**{"image/object/class/label": [2, 1]}), 10, 10, lm)
    assert [b.label for b in ov.boxes] == ["dog", "cat"]


def test_pixel_corners_and_coco_and_tfds():
    f = feats(xmin=[10.0], ymin=[20.0], xmax=[30.0], ymax=[60.0])
    ov = compute_overlay(f, 100, 100)
    assert ov.spec.convention == "pixel_corners" and (ov.boxes[0].x1, ov.boxes[0].y1) == (30, 60)
    ov = compute_overlay(feats(bbox=[10.0, 20.0, 5.0, 8.0], category_id=[3]), 100, 100)
    assert ov.spec.convention == "coco_xywh"
    assert (ov.boxes[0].x0, ov.boxes[0].y0, ov.boxes[0].x1, ov.boxes[0].y1) == (10, 20, 15, 28)
    assert ov.caption == "category_id: 3"
    ov = compute_overlay(feats(**{"objects/bbox": [0.1, 0.2, 0.5, 0.6]}), 100, 50)
    assert ov.spec.convention == "tfds_yxyx"
    b = ov.boxes[0]
    assert (b.x0, b.y0, b.x1, b.y1) == pytest.approx((20, 5, 60, 25))


def test_mismatched_lists_are_noted_not_fatal():
    f = od(**{"image/object/bbox/xmax": [0.3], "image/object/class/text": [b"a", b"b", b"c"]})
    ov = compute_overlay(f, 10, 10)
    assert len(ov.boxes) == 1
    assert any("different lengths" in n for n in ov.notes)


def test_explicit_spec_overrides_detection():
    f = feats(a=[1.0], b=[2.0], c=[5.0], d=[6.0])
    assert read_features(f).spec is None
    ov = compute_overlay(f, 10, 10, spec=BoxSpec("pixel_corners", ("a", "b", "c", "d")))
    assert (ov.boxes[0].x0, ov.boxes[0].y1) == (1, 6)


def test_record_caption_uses_label_map():
    f = feats(label=[2])
    assert compute_overlay(f, 1, 1, {2: "dog"}).caption == "label: 2 (dog)"


def test_label_map_fits_only_data_whose_ids_it_names():
    from tfrview.core.records.labelmap import class_ids, label_map_fits

    assert class_ids(od(**{"image/object/class/label": [1, 2]})) == [1, 2]
    assert class_ids(feats(label=[7])) == [7]
    assert class_ids(feats(x=[1.0])) == []
    assert label_map_fits({1, 2}, {1: "a", 2: "b", 3: "c"})
    assert not label_map_fits({0, 2}, {1: "raccoon"})
    assert not label_map_fits(set(), {1: "raccoon"})  # nothing to name
