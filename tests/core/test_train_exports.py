"""Exports to COCO, YOLO, VOC, HF Parquet and WebDataset, and the COCO re-import: each output
checked against its documented form and against the records' own boxes."""

import io
import json
import tarfile
from xml.etree import ElementTree as ET

import numpy as np
import pytest
from PIL import Image

from tests.exportdata import NAMES, boxes_of, example, jpeg, od_record, write_od
from tfrview.core.errors import Cancelled, TfrviewError
from tfrview.core.output.annotated import NoImagesError
from tfrview.core.output.coco_import import CocoError, JoinBy, import_coco
from tfrview.core.output.formats import ExportFormat, dataset_items, export_annotated
from tfrview.core.output.writer import write_records
from tfrview.core.records.payload import decode
from tfrview.core.records.reading import read_record
from tfrview.core.tfrecord.dataset import Dataset
from tfrview.core.tfrecord.report import verify_source
from tfrview.core.tfrecord.source import open_source

W, H = 64, 48


def items_of(path, where=None):
    ds = Dataset.open([str(path)])
    ds.frame_and_verify()
    return ds, dataset_items(ds, range(ds.count), where=where)


def export(fmt, src, out, **kw):
    ds, items = items_of(src, kw.pop("where", None))
    with ds:
        return export_annotated(fmt, items, out, label_map=kw.pop("label_map", NAMES), inputs=[src], **kw)


def pixel_xywh(i):
    b, ids = boxes_of(i)
    px = b * [W, H, W, H]
    return np.stack([px[:, 0], px[:, 1], px[:, 2] - px[:, 0], px[:, 3] - px[:, 1]], axis=1), ids


@pytest.fixture
def od(tmp_path):
    return write_od(tmp_path / "train-00000-of-00001.tfrecord", 10)


def test_coco_loads_in_pycocotools_with_the_records_boxes(tmp_path, od):
    coco_mod = pytest.importorskip("pycocotools.coco", reason="pycocotools not installed (test extra)")
    res = export(ExportFormat.COCO, od, tmp_path / "coco")
    assert res.written == 10 and res.skipped == 0
    ann = tmp_path / "coco" / "annotations" / "instances_train.json"
    c = coco_mod.COCO(str(ann))
    assert {x["id"]: x["name"] for x in c.loadCats(c.getCatIds())} == NAMES  # ids kept, names of the map
    assert sorted(c.getImgIds()) == list(range(10))  # image_id: the record number
    for i in range(10):
        img = c.loadImgs(i)[0]
        assert (img["file_name"], img["width"], img["height"]) == (f"img_{i:03d}.jpg", W, H)
        assert img["source_id"] == f"src-{i}"
        assert (tmp_path / "coco" / "images" / "train" / img["file_name"]).read_bytes() == jpeg(W, H, i)
        anns = c.loadAnns(c.getAnnIds(imgIds=[i]))
        want, ids = pixel_xywh(i)
        got = np.array([a["bbox"] for a in anns]).reshape(-1, 4)
        assert np.allclose(got, want, atol=1e-6)
        assert [a["category_id"] for a in anns] == ids
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_boxes_in_any_convention_become_the_same_pixels(tmp_path):
    """TFDS [ymin, xmin, ymax, xmax] and pixel corners read by the one reading, written as COCO's xywh."""
    b, ids = boxes_of(3)
    px = b * [W, H, W, H]
    tfds = example(
        {
            "image": jpeg(W, H, 3),
            "objects/bbox": b[:, [1, 0, 3, 2]].reshape(-1).tolist(),
            "objects/label": ids,
        }
    )
    pixel = example(
        {
            "image/encoded": jpeg(W, H, 3),
            "bbox/xmin": px[:, 0].tolist(),
            "bbox/ymin": px[:, 1].tolist(),
            "bbox/xmax": px[:, 2].tolist(),
            "bbox/ymax": px[:, 3].tolist(),
            "class/label": ids,
        }
    )
    src = tmp_path / "mixed.tfrecord"
    write_records(src, [tfds, pixel])
    export(ExportFormat.COCO, src, tmp_path / "c")
    doc = json.loads((tmp_path / "c" / "annotations" / "instances_all.json").read_text())
    want, _ = pixel_xywh(3)
    for n in (0, 1):
        got = np.array([a["bbox"] for a in doc["annotations"] if a["image_id"] == n])
        assert np.allclose(got, want, atol=1e-4), n  # float32 pixels in the second record
        assert [a["category_id"] for a in doc["annotations"] if a["image_id"] == n] == ids


def test_raw_pixels_are_written_as_png(tmp_path):
    rng = np.random.default_rng(0)
    px = rng.integers(0, 255, (8, 12, 3), dtype=np.uint8)
    src = tmp_path / "raw.tfrecord"
    write_records(
        src, [example({"image/raw": px.tobytes(), "image/height": 8, "image/width": 12, "image/channels": 3})]
    )
    export(ExportFormat.VOC, src, tmp_path / "voc")
    (png,) = (tmp_path / "voc" / "JPEGImages").iterdir()
    assert png.name == "r000000000.png"
    assert np.array_equal(np.asarray(Image.open(png)), px)


def test_yolo_layout_and_data_yaml(tmp_path, od):
    yaml = pytest.importorskip("yaml", reason="pyyaml not installed")
    export(ExportFormat.YOLO, od, tmp_path / "yolo")
    root = tmp_path / "yolo"
    data = yaml.safe_load((root / "data.yaml").read_text())
    assert data["path"] == str(root.absolute())
    assert (data["train"], data["val"]) == ("images/train", "images/train")
    assert data["names"] == {0: "cat", 1: "dog", 2: "bird"} and data["nc"] == 3  # ids 1..3 as indices 0..2
    assert sorted(p.name for p in (root / "images" / "train").iterdir()) == [
        f"img_{i:03d}.jpg" for i in range(10)
    ]
    for i in range(10):
        rows = (root / "labels" / "train" / f"img_{i:03d}.txt").read_text().split("\n")[:-1]
        b, ids = boxes_of(i)
        assert len(rows) == len(ids)
        for row, box, cid in zip(rows, b, ids, strict=True):
            c, cx, cy, w, h = row.split(" ")
            assert int(c) == cid - 1
            want = [(box[0] + box[2]) / 2, (box[1] + box[3]) / 2, box[2] - box[0], box[3] - box[1]]
            assert np.allclose([float(cx), float(cy), float(w), float(h)], want, atol=1e-6)


def test_voc_xml_parses_with_the_boxes(tmp_path, od):
    export(ExportFormat.VOC, od, tmp_path / "voc")
    root = tmp_path / "voc"
    assert (root / "ImageSets" / "Main" / "train.txt").read_text().split() == [
        f"img_{i:03d}" for i in range(10)
    ]
    x = ET.parse(root / "Annotations" / "img_003.xml").getroot()
    assert x.findtext("filename") == "img_003.jpg"
    assert (x.findtext("size/width"), x.findtext("size/height"), x.findtext("size/depth")) == (
        "64",
        "48",
        "3",
    )
    objs = x.findall("object")
    b, ids = boxes_of(3)
    assert [o.findtext("name") for o in objs] == [NAMES[c] for c in ids]
    got = [[float(o.findtext(f"bndbox/{t}")) for t in ("xmin", "ymin", "xmax", "ymax")] for o in objs]
    assert np.allclose(got, b * [W, H, W, H], atol=1e-5)


def test_hf_parquet_schema_names_images_and_classes(tmp_path, od):
    import pyarrow.parquet as pq

    out = tmp_path / "train.parquet"
    export(ExportFormat.HF_PARQUET, od, out)
    schema = pq.read_schema(out)
    feats = json.loads(schema.metadata[b"huggingface"])["info"]["features"]
    assert feats["image"] == {"_type": "Image"}
    assert feats["objects"]["category"]["feature"] == {
        "names": ["id 0", "cat", "dog", "bird"],
        "_type": "ClassLabel",
    }
    assert schema.field("image").type.names == ["bytes", "path"]
    t = pq.read_table(out)
    assert t.num_rows == 10
    row = t.slice(3, 1).to_pylist()[0]
    assert row["image"] == {"bytes": jpeg(W, H, 3), "path": "img_003.jpg"}
    want, ids = pixel_xywh(3)
    assert np.allclose(row["objects"]["bbox"], want, atol=1e-4) and row["objects"]["category"] == ids


@pytest.mark.slow  # importing `datasets` alone takes ~3 s
def test_hf_parquet_loads_in_datasets_with_images_and_names(tmp_path, od):
    datasets = pytest.importorskip("datasets", reason="datasets not installed (test extra)")
    out = tmp_path / "train.parquet"
    export(ExportFormat.HF_PARQUET, od, out)
    d = datasets.load_dataset("parquet", data_files=str(out), split="train", cache_dir=str(tmp_path / "hf"))
    assert d.features["objects"]["category"].feature.names[1:] == ["cat", "dog", "bird"]
    assert d[3]["image"].size == (W, H)


def test_webdataset_shards_members_and_contents(tmp_path, od):
    res = export(ExportFormat.WEBDATASET, od, tmp_path / "wds", shard_size=4)
    assert res.written == 10
    shards = sorted(p.name for p in (tmp_path / "wds").glob("*.tar"))
    assert shards == ["train-000000.tar", "train-000001.tar", "train-000002.tar"]
    with tarfile.open(tmp_path / "wds" / "train-000000.tar") as tar:
        names = tar.getnames()
        assert names[:2] == ["r000000000.jpg", "r000000000.json"] and len(names) == 8
        doc = json.loads(tar.extractfile("r000000003.json").read())
        assert tar.extractfile("r000000003.jpg").read() == jpeg(W, H, 3)
    want, ids = pixel_xywh(3)
    assert np.allclose(doc["bbox"], want, atol=1e-6) and doc["category"] == ids
    assert doc["category_name"] == [NAMES[c] for c in ids] and doc["source_id"] == "src-3"
    wds = pytest.importorskip("webdataset", reason="webdataset not installed (test extra)")
    got = list(wds.WebDataset(str(tmp_path / "wds" / "train-000000.tar"), shardshuffle=False))
    assert [s["__key__"] for s in got] == [f"r{i:09d}" for i in range(4)]
    assert json.loads(got[3]["json"])["bbox"] == doc["bbox"]


def test_where_filters_and_damaged_records_are_counted(tmp_path, od):
    from tests.helpers import framed

    data = od.read_bytes()
    # record 1's data corrupted: its CRC fails
    _, offs = framed([od_record(i) for i in range(10)])
    b = bytearray(data)
    b[offs[1] + 40] ^= 0xFF
    bad = tmp_path / "bad.tfrecord"
    bad.write_bytes(bytes(b))
    res = export(ExportFormat.COCO, bad, tmp_path / "c")
    assert (res.written, res.skipped) == (9, 1) and "damaged" in res.notes[0]
    res = export(ExportFormat.COCO, od, tmp_path / "c2", where=lambda payload, n, file, split: n % 2 == 0)
    assert res.written == 5


def test_one_line_errors_and_nothing_written(tmp_path, od):
    out = tmp_path / "out"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    with pytest.raises(TfrviewError, match="exists"):
        export(ExportFormat.YOLO, od, out)
    assert [p.name for p in out.iterdir()] == ["keep.txt"]
    with pytest.raises(TfrviewError, match="inside the input folder"):
        ds, items = items_of(od)
        with ds:
            export_annotated(ExportFormat.COCO, items, tmp_path / "sub", inputs=[tmp_path])
    plain = tmp_path / "plain.tfrecord"
    write_records(plain, [example({"label": 3, "text": "no image"})] * 3)
    with pytest.raises(NoImagesError, match="no record with an image"):
        export(ExportFormat.WEBDATASET, plain, tmp_path / "w")
    assert not (tmp_path / "w").exists()
    with pytest.raises(Cancelled):
        export(ExportFormat.HF_PARQUET, od, tmp_path / "x.parquet", progress=lambda n: n < 5)
    res = export(ExportFormat.YOLO, od, out, force=True)  # --force replaces the folder whole
    assert res.written == 10 and not (out / "keep.txt").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "out",
        "plain.tfrecord",
        "train-00000-of-00001.tfrecord",
    ]


@pytest.mark.parametrize("join", [JoinBy.FILENAME, JoinBy.SOURCE_ID])
def test_coco_round_trip_is_value_identical(tmp_path, od, join):
    export(ExportFormat.COCO, od, tmp_path / "coco")
    ann = tmp_path / "coco" / "annotations" / "instances_train.json"
    ds, items = items_of(od)
    with ds:
        rep = import_coco(ann, items, tmp_path / "back.tfrecord", join=join, label_map=NAMES, inputs=[od])
    assert (rep.matched, rep.unmatched_records, rep.unmatched_images) == (10, 0, 0)
    with open_source(tmp_path / "back.tfrecord") as src:  # our own reader: every record intact
        idx, vrep = verify_source(src)
        assert vrep.ok and idx.count == 10
    ds, items = items_of(tmp_path / "back.tfrecord")
    with ds:
        for n in range(ds.count):
            r = read_record(decode(ds.read(n)))
            b, ids = boxes_of(n)
            assert np.allclose(r.boxes.reshape(-1, 4), b, atol=1e-6)
            assert r.class_ids.tolist() == ids and [r.box_name(i) for i in range(len(ids))] == [
                NAMES[c] for c in ids
            ]


def test_reimport_replaces_boxes_and_reports_what_did_not_match(tmp_path, od):
    export(ExportFormat.COCO, od, tmp_path / "coco")
    ann = tmp_path / "coco" / "annotations" / "instances_train.json"
    doc = json.loads(ann.read_text())
    doc["images"] = [im for im in doc["images"] if im["id"] != 7]  # record 7 not annotated
    doc["images"].append({"id": 99, "file_name": "elsewhere.jpg", "width": W, "height": H})
    doc["annotations"] = [a for a in doc["annotations"] if a["image_id"] != 2]  # record 2: boxes removed
    doc["annotations"].append(
        {"id": 500, "image_id": 2, "category_id": 4, "bbox": [8, 12, 16, 24], "iscrowd": 0}
    )
    doc["categories"].append({"id": 4, "name": "fish"})
    doc["categories"][0]["name"] = "kitten"
    fixed = tmp_path / "cvat.json"
    fixed.write_text(json.dumps(doc))
    ds, items = items_of(od)
    with ds:
        rep = import_coco(
            fixed,
            items,
            tmp_path / "back.tfrecord",
            label_map=NAMES,
            inputs=[od],
            report_path=tmp_path / "r.json",
        )
    saved = json.loads((tmp_path / "r.json").read_text())
    assert saved["matched"] == rep.matched == 9
    assert saved["in_dataset_not_file"] == [7] and saved["in_file_not_dataset"] == ["elsewhere.jpg"]
    assert saved["category_mismatches"] == ["1: kitten", "4: fish"]
    ds, _ = items_of(tmp_path / "back.tfrecord")
    with ds:
        assert ds.count == 10
        r = read_record(decode(ds.read(2)))
        assert np.allclose(r.boxes, [[8 / W, 12 / H, 24 / W, 36 / H]], atol=1e-6)
        assert r.class_ids.tolist() == [4] and r.box_name(0) == "fish"
        assert ds.read(7) == od_record(7)  # not annotated: copied as it was
    nothing = tmp_path / "none.json"
    nothing.write_text(json.dumps({"images": [{"id": 1, "file_name": "x.jpg"}], "annotations": []}))
    ds, items = items_of(od)
    with ds, pytest.raises(CocoError, match="no image matched"):
        import_coco(nothing, items, tmp_path / "n.tfrecord", inputs=[od])
    assert not (tmp_path / "n.tfrecord").exists()
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(CocoError, match="not JSON"):
        import_coco(tmp_path / "bad.json", iter(()), tmp_path / "m.tfrecord")


def test_a_record_without_a_file_name_joins_by_its_key(tmp_path):
    src = write_od(tmp_path / "nameless.tfrecord", 3, filename=False)
    export(ExportFormat.COCO, src, tmp_path / "coco")
    ann = tmp_path / "coco" / "annotations" / "instances_all.json"
    assert [i["file_name"] for i in json.loads(ann.read_text())["images"]] == [
        f"r{i:09d}.jpg" for i in range(3)
    ]
    ds, items = items_of(src)
    with ds:
        assert import_coco(ann, items, tmp_path / "b.tfrecord", inputs=[src]).matched == 3


def test_pil_reads_every_exported_image(tmp_path, od):
    export(ExportFormat.COCO, od, tmp_path / "c")
    for p in (tmp_path / "c" / "images" / "train").iterdir():
        assert Image.open(io.BytesIO(p.read_bytes())).size == (W, H)


def test_two_records_of_one_file_name_keep_apart_both_ways(tmp_path):
    src = tmp_path / "dups.tfrecord"
    write_records(src, [od_record(1), od_record(2), od_record(1)])  # records 0 and 2: img_001.jpg
    export(ExportFormat.COCO, src, tmp_path / "coco")
    ann = tmp_path / "coco" / "annotations" / "instances_all.json"
    assert [i["file_name"] for i in json.loads(ann.read_text())["images"]] == [
        "img_001.jpg",
        "img_002.jpg",
        "r000000002_img_001.jpg",
    ]
    ds, items = items_of(src)
    with ds:
        assert import_coco(ann, items, tmp_path / "b.tfrecord", inputs=[src]).matched == 3


def test_instance_masks_become_rle_that_pycocotools_decodes(tmp_path):
    coco_mod = pytest.importorskip("pycocotools.coco", reason="pycocotools not installed (test extra)")
    from tests.exportdata import od_record
    from tfrview.core.records.proto import example_pb2

    ex = example_pb2.Example.FromString(od_record(2))  # two boxes
    masks = []
    for k in range(2):
        m = np.zeros((H, W), dtype=np.uint8)
        m[5 + k : 20 + 3 * k, 7 : 30 + k] = 1
        m[0, 0] = k  # the first pixel set in one mask, not the other: RLE starting with a run of ones
        buf = io.BytesIO()
        Image.fromarray(m).save(buf, "PNG")
        masks.append(m)
        ex.features.feature["image/object/mask"].bytes_list.value.append(buf.getvalue())
    src = tmp_path / "masks.tfrecord"
    write_records(src, [ex.SerializeToString()])
    export(ExportFormat.COCO, src, tmp_path / "c")
    c = coco_mod.COCO(str(tmp_path / "c" / "annotations" / "instances_all.json"))
    anns = c.loadAnns(c.getAnnIds(imgIds=[0]))
    for a, m in zip(anns, masks, strict=True):
        assert np.array_equal(c.annToMask(a), m) and a["area"] == m.sum()


def test_file_names_follow_the_bytes_and_stay_apart_by_stem(tmp_path):
    from tfrview.core.output.annotated import file_name

    assert file_name("dir/a b.JPG", "r1", "jpg") == "a_b.JPG"
    assert file_name("photo.jpg", "r1", "png") == "photo.png"  # raw pixels written as PNG
    assert file_name("frame_0007", "r1", "jpg") == "frame_0007.jpg"
    assert file_name(None, "r000000001", "png") == "r000000001.png"
    assert file_name("../../etc/passwd", "r1", "jpg") == "passwd.jpg"
    src = tmp_path / "stems.tfrecord"
    a = example({"image/encoded": jpeg(W, H, 1), "image/filename": "same.jpg"})
    b = example({"image/encoded": jpeg(W, H, 2), "image/filename": "same.jpeg"})
    write_records(src, [a, b])
    export(ExportFormat.YOLO, src, tmp_path / "y")
    assert sorted(p.name for p in (tmp_path / "y" / "labels" / "all").iterdir()) == [
        "r000000001_same.txt",
        "same.txt",
    ]
