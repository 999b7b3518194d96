"""Per-image signals in the deep pass (fact columns) and the model-free image quality findings of
the dataset step (analysis.imagequality), on datasets built here with planted images."""

from __future__ import annotations

import io

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image, ImageFilter

from tests.helpers import RACCOON
from tfrview.core.analysis import analyze
from tfrview.core.analysis.filterexpr import parse, resolve_keys
from tfrview.core.analysis.imagequality import step
from tfrview.core.analysis.rules import DatasetRules
from tfrview.core.analysis.vfilter import match
from tfrview.core.output.writer import write_records
from tfrview.core.problems import ProblemKind
from tfrview.core.records import imagesignals
from tfrview.core.records.imagesignals import COLUMNS
from tfrview.demo import _example

QUALITY = {
    ProblemKind.IMAGE_DARK,
    ProblemKind.IMAGE_BRIGHT,
    ProblemKind.IMAGE_BLURRY,
    ProblemKind.IMAGE_BLANK,
    ProblemKind.IMAGE_LOW_INFORMATION,
    ProblemKind.IMAGE_ODD_ASPECT,
    ProblemKind.IMAGE_ODD_SIZE,
}


def scene(rng: np.random.Generator, w: int = 256, h: int = 192, light: float = 1.0) -> np.ndarray:
    """An ordinary photo's likeness: broad shading, shapes with edges, texture and noise."""
    low = Image.fromarray((rng.random((4, 5, 3)) * 160 + 50).astype(np.uint8)).resize((w, h), Image.BILINEAR)
    a = np.asarray(low, dtype=np.float32)
    for _ in range(12):
        x, y = rng.integers(0, w - 20), rng.integers(0, h - 20)
        a[y : y + rng.integers(10, h // 2), x : x + rng.integers(10, w // 2)] += rng.normal(0, 50, 3)
    a += rng.normal(0, 12, a.shape)
    return (a * light).clip(0, 255).astype(np.uint8)


def jpeg(a: np.ndarray, quality: int = 90) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(a).save(buf, "JPEG", quality=quality)
    return buf.getvalue()


def record(img: bytes, **more) -> bytes:
    return _example(**{"image/encoded": img, "image/format": "jpeg", **more}).SerializeToString()


def qa_of(tmp_path, payloads: list[bytes], name: str = "data.tfrecord"):
    p = tmp_path / name
    write_records(p, payloads)
    a = analyze([str(p)], deep=True, jobs=1, use_cache=False)
    found = {}
    for probs in a.dataset_problems.values():
        for pr in probs:
            if pr.kind in QUALITY:
                found.setdefault(pr.record, set()).add(pr.kind)
    return a, found


def test_planted_images_are_found_and_clean_ones_are_not(tmp_path):
    rng = np.random.default_rng(1)
    clean = [scene(rng) for _ in range(24)]
    planted = {
        24: (ProblemKind.IMAGE_DARK, (scene(rng).astype(np.float32) * 0.08).astype(np.uint8)),
        25: (ProblemKind.IMAGE_BRIGHT, (255 - (255 - scene(rng).astype(np.float32)) * 0.08).astype(np.uint8)),
        26: (
            ProblemKind.IMAGE_BLURRY,
            np.asarray(Image.fromarray(scene(rng)).filter(ImageFilter.GaussianBlur(10))),
        ),
        27: (ProblemKind.IMAGE_BLANK, np.full((192, 256, 3), 90, np.uint8)),
        28: (ProblemKind.IMAGE_ODD_ASPECT, scene(rng, 640, 120)),
    }
    imgs = clean + [a for _, a in planted.values()]
    a, found = qa_of(tmp_path, [record(jpeg(x)) for x in imgs])
    for n, (kind, _) in planted.items():
        assert kind in found.get(n, set()), (n, kind, found.get(n))
    assert not any(n < 24 for n in found), found
    msgs = [p.message for p in a.dataset_problems[0] if p.kind == ProblemKind.IMAGE_DARK]
    assert msgs[0].startswith("image/encoded is dark: mean brightness ") and "below 40)" in msgs[0]
    table = a.qa.tables["image_quality"]
    assert table["images"] == 29 and table["counts"]["image_dark"] == 1
    assert table["rules"]["dark_brightness"] == 40.0


def test_a_dataset_of_night_images_does_not_drown(tmp_path):
    rng = np.random.default_rng(2)
    imgs = [scene(rng, light=rng.uniform(0.08, 0.25)) for _ in range(30)]
    a, found = qa_of(tmp_path, [record(jpeg(x)) for x in imgs])
    assert np.median([s for s in a.facts()["brightness"].to_pylist()]) < 40  # dark by the fixed bound
    dark = [n for n, k in found.items() if ProblemKind.IMAGE_DARK in k]
    assert len(dark) <= 2, found


def test_real_photos_show_no_quality_finding(tmp_path):
    a = analyze([str(RACCOON)], deep=True, use_cache=False)
    kinds = {p.kind for ps in a.dataset_problems.values() for p in ps}
    assert not kinds & QUALITY
    assert a.qa.tables["image_quality"]["images"] == 12


def test_columns_types_and_nulls(tmp_path):
    rng = np.random.default_rng(3)
    good = jpeg(scene(rng))
    grey = jpeg(np.repeat(scene(rng)[:, :, :1], 3, axis=2))
    payloads = [
        record(good),
        record(good[: len(good) // 3]),  # cut short: does not decode
        _example(**{"label": 3}).SerializeToString(),  # no image
        record(grey),
    ]
    a, _ = qa_of(tmp_path, payloads)
    t = a.facts()
    types = {n: t.schema.field(n).type for n in COLUMNS}
    assert types["pixel_hash"] == types["phash"] == types["dhash"] == pa.int64()
    assert types["brightness"] == types["blur"] == types["blank"] == pa.float32()
    assert types["gray_as_color"] == pa.bool_() and types["pixels"] == pa.int64()
    for name in COLUMNS:
        vals = t[name].to_pylist()
        assert vals[0] is not None and vals[3] is not None, name
        assert vals[1] is None and vals[2] is None, name  # undecodable and no image: null, not blank
    assert t["pixels"].to_pylist()[0] == 256 * 192 and t["aspect"].to_pylist()[0] == pytest.approx(256 / 192)
    assert t["gray_as_color"].to_pylist() == [False, None, None, True]
    kinds = {p.kind for p in a.shards[0].problems}
    assert ProblemKind.IMAGE_UNDECODABLE in kinds
    assert a.qa.tables["image_quality"]["undecodable"] == 1


def test_no_images_no_checks_said_once(tmp_path):
    a, found = qa_of(tmp_path, [_example(label=i).SerializeToString() for i in range(5)])
    assert not found
    assert "image_quality" not in a.qa.tables
    assert len([n for n in a.qa.notes if "image quality checks" in n]) == 1
    assert all(v is None for v in a.facts()["blur"].to_pylist())


def test_same_pixels_same_hashes(tmp_path):
    """One image's pixels, written as PNG and as two files with different bytes: equal hashes; a
    re-encoded JPEG (other pixels, same picture): equal perceptual hashes within a few bits."""
    rng = np.random.default_rng(4)
    a = scene(rng)
    png1 = io.BytesIO()
    Image.fromarray(a).save(png1, "PNG")
    png2 = io.BytesIO()
    Image.fromarray(a).save(png2, "PNG", compress_level=1)
    assert png1.getvalue() != png2.getvalue()
    payloads = [record(png1.getvalue()), record(png2.getvalue()), record(jpeg(a, 95)), record(jpeg(a, 60))]
    res, _ = qa_of(tmp_path, payloads)
    t = res.facts()
    ph, p, d = (t[c].to_pylist() for c in ("pixel_hash", "phash", "dhash"))
    assert ph[0] == ph[1] and p[0] == p[1] and d[0] == d[1]
    assert ph[2] != ph[3]
    assert int(imagesignals.hamming(p[2], p[3])) <= 6


def test_scores_mean_what_the_docstring_says():
    flat = np.full((48, 64), 200, np.uint8)
    s = imagesignals.signals(flat, (640, 480))
    assert s.brightness == 200 and s.contrast == 0 and s.blank == 1.0 and s.entropy == 0.0
    assert s.blur == 0.0 and s.aspect == pytest.approx(4 / 3) and s.pixels == 307200
    half = flat.copy()
    half[:, :32] = 0
    h = imagesignals.signals(half)
    assert h.entropy == pytest.approx(1.0) and h.blank == pytest.approx(0.5) and h.brightness == 100
    # blur at the working scale: the same picture at two draft sizes measures alike
    rng = np.random.default_rng(5)
    big = scene(rng, 512, 384)
    b1 = imagesignals.blur(
        np.asarray(Image.fromarray(big).convert("L").resize((128, 96), Image.BOX), np.float32)
    )
    b2 = imagesignals.blur(
        np.asarray(Image.fromarray(big).convert("L").resize((64, 48), Image.BOX), np.float32)
    )
    assert 0.7 < b1 / b2 < 1.4


def test_filter_reads_the_scores(tmp_path):
    rng = np.random.default_rng(6)
    imgs = [scene(rng), np.asarray(Image.fromarray(scene(rng)).filter(ImageFilter.GaussianBlur(10)))]
    imgs.append((255 - (255 - scene(rng).astype(np.float32)) * 0.1).astype(np.uint8))
    a, _ = qa_of(tmp_path, [record(jpeg(x)) for x in imgs])
    t = a.facts()
    known = set(a.summary.to_json().get("keys", {}))
    hits, _ = match(t, resolve_keys(parse("blur < 50"), known, complete=True), {})
    assert 1 in hits.tolist() and 0 not in hits.tolist()  # the blurred one (the washed-out one is flat too)
    hits, _ = match(t, resolve_keys(parse("brightness > 200"), known, complete=True), {})
    assert hits.tolist() == [2]


def test_step_settable_rules(tmp_path):
    rng = np.random.default_rng(7)
    imgs = [scene(rng) for _ in range(10)] + [(scene(rng).astype(np.float32) * 0.08).astype(np.uint8)]
    a, found = qa_of(tmp_path, [record(jpeg(x)) for x in imgs])
    assert ProblemKind.IMAGE_DARK in found[10]
    from tfrview.core.analysis.datasetqa import DatasetQA

    qa = DatasetQA()
    strict = DatasetRules().with_words(["dark_brightness=5"])
    assert not [f for _, _, f in step(a, strict, qa) if f.kind == ProblemKind.IMAGE_DARK]
    assert qa.tables["image_quality"]["rules"]["dark_brightness"] == 5.0


def test_plots_offer_the_scores(tmp_path):
    from tfrview.core.analysis.plot_names import IMAGE_SCORES
    from tfrview.core.analysis.plots import plot

    assert set(IMAGE_SCORES) == set(imagesignals.SCORE_COLUMNS) - {"gray_as_color"}
    rng = np.random.default_rng(8)
    a, _ = qa_of(tmp_path, [record(jpeg(scene(rng))) for _ in range(4)])
    t = a.facts()
    got = plot(t, "brightness", histogram=True)["histogram"]
    assert got["values"] == 4 and sum(got["counts"]) == 4
    assert got["edges"][0] <= min(t["brightness"].to_pylist()) <= got["edges"][-1]
    series = plot(t, "blur")["series"]
    assert series["records"] == [0, 1, 2, 3] and series["y"] == pytest.approx(t["blur"].to_pylist())


def test_stored_results_keep_the_columns(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    rng = np.random.default_rng(9)
    p = tmp_path / "d.tfrecord"
    write_records(p, [record(jpeg(scene(rng))) for _ in range(3)])
    first = analyze([str(p)], deep=True, jobs=1).facts()
    assert (tmp_path / "cache" / "tfrview" / "analysis" / "results.sqlite3").is_file()
    again = analyze([str(p)], deep=True, jobs=1)  # from the store
    t = again.facts()
    for name in COLUMNS:
        assert t.schema.field(name).type == first.schema.field(name).type
        assert t[name].to_pylist() == first[name].to_pylist()
    assert again.qa.tables["image_quality"]["images"] == 3
