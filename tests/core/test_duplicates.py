"""Copies, near copies and leakage across splits (issue 21, item 2): a planted dataset made here
(exact copies; near copies re-encoded, resized to 50-90 %, cropped by at most 5 %, shifted in
brightness by at most 10 %; distinct images of one scene and palette beside them), through the
real pass, merge and dataset step."""

from __future__ import annotations

import io
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pytest
from PIL import Image

from tfrview.core.analysis import analyze
from tfrview.core.analysis.duplicates import NearIndex, _run_pairs, components, near_pairs, plan
from tfrview.core.analysis.merge import merge
from tfrview.core.output.writer import write_records
from tfrview.core.problems import ProblemKind
from tfrview.core.records.imagesignals import hamming, hashes
from tfrview.demo import _example

PALETTE = np.array([[40, 90, 40], [90, 140, 60], [150, 180, 90], [200, 200, 160], [70, 60, 40]], np.uint8)
W, H = 320, 240
_NOISE = np.random.default_rng(0).standard_normal((H, W), dtype=np.float32) * 6  # grain, shifted a scene


def scene(seed: int, objects_seed: int | None = None) -> np.ndarray:
    """A field of one palette (smooth noise, quantised) with red boxes: `seed` the field,
    `objects_seed` where the boxes stand (the same field with boxes moved is another image)."""
    r = np.random.default_rng(seed)
    small = r.random((H // 48 + 1, W // 48 + 1))
    img = np.asarray(Image.fromarray((small * 255).astype(np.uint8)).resize((W, H), Image.Resampling.BICUBIC))
    img = img.astype(np.float32) + np.roll(_NOISE, seed * 37, axis=1)
    a = PALETTE[np.clip((img * (len(PALETTE) / 256)).astype(np.int8), 0, len(PALETTE) - 1)]
    o = np.random.default_rng(objects_seed if objects_seed is not None else seed + 10_000)
    for _ in range(3):
        x, y, s = o.integers(0, W - 60), o.integers(0, H - 60), o.integers(20, 60)
        a[y : y + s, x : x + s] = [200, 40, 40]
    return a


def jpeg(a: np.ndarray, quality: int = 90) -> bytes:
    b = io.BytesIO()
    Image.fromarray(a).save(b, "JPEG", quality=quality)
    return b.getvalue()


def near_copy(a: np.ndarray, how: str, r: np.random.Generator) -> bytes:
    im = Image.fromarray(a)
    if how == "quality":
        return jpeg(a, 40)
    if how == "resize":
        f = r.uniform(0.5, 0.9)
        return jpeg(np.asarray(im.resize((int(W * f), int(H * f)), Image.Resampling.BILINEAR)))
    if how == "crop":
        c, lead = r.uniform(0.01, 0.05), r.uniform(0, 1)
        box = (int(W * c * lead), int(H * c * lead), W - int(W * c * (1 - lead)), H - int(H * c * (1 - lead)))
        return jpeg(np.asarray(im.crop(box)))
    shift = int(r.choice([-1, 1]) * r.uniform(0.03, 0.1) * 255)
    return jpeg(np.clip(a.astype(int) + shift, 0, 255).astype(np.uint8))


def pixels(data: bytes) -> np.ndarray:
    """The image as the pass's draft decode sees it (1/8 scale)."""
    im = Image.open(io.BytesIO(data))
    im.draft("RGB", (im.width // 8, im.height // 8))
    return np.asarray(im.convert("RGB"))


def record(image: bytes | None) -> bytes:
    feats = {"image/class/label": 1}
    if image is not None:
        feats["image/encoded"] = image
        feats["image/format"] = "jpeg"
    return _example(**feats).SerializeToString()


KINDS = ("quality", "resize", "crop", "bright")


@pytest.fixture(scope="module")
def planted(tmp_path_factory):
    """train: 100 distinct images (fields of one palette with red boxes); each of 20 of them
    copied exactly in train, 4 x 10 near copies in train, 6 exact and 6 near copies (the kinds in
    turn) in validation; validation also has 20 images of its own."""
    root = tmp_path_factory.mktemp("planted")
    r = np.random.default_rng(7)
    originals = [scene(i) for i in range(100)]
    train = [jpeg(a) for a in originals]
    val = [jpeg(scene(1000 + i)) for i in range(20)]
    want = {"exact": [], "near": [], "leak_exact": [], "leak_near": []}  # (split, index) of copies
    for i in range(20):
        train.append(train[i])
        want["exact"].append((i, len(train) - 1))
    for k, how in enumerate(KINDS):
        for i in range(20 + 10 * k, 30 + 10 * k):
            train.append(near_copy(originals[i], how, r))
            want["near"].append((i, len(train) - 1))
    for i in range(70, 76):
        val.append(train[i])
        want["leak_exact"].append((i, len(val) - 1))
    for j, i in enumerate(range(76, 82)):
        val.append(near_copy(originals[i], KINDS[j % 4], r))
        want["leak_near"].append((i, len(val) - 1))
    paths = [root / "train-00000-of-00001.tfrecord", root / "validation-00000-of-00001.tfrecord"]
    write_records(paths[0], [record(b) for b in train])
    write_records(paths[1], [record(b) for b in val])
    return [str(p) for p in paths], [train, val], want


def with_hashes(a, images):
    """The merged analysis again, its files' facts with the pass's hash columns. The deep pass
    stores them itself once branch wt4-quality lands (then this keeps its columns)."""
    shards = []
    for s, imgs in zip(a.shards, images, strict=True):
        t = s.deep.facts
        if "pixel_hash" not in t.column_names:
            words = np.array([hashes(pixels(b)) if b is not None else (0, 0, 0) for b in imgs], np.int64)
            none = np.array([b is None for b in imgs])
            for c, name in enumerate(("pixel_hash", "phash", "dhash")):
                t = t.append_column(name, pa.array(words[:, c], mask=none))
        shards.append(replace(s, deep=replace(s.deep, _facts=t)))
    return merge(shards)


@pytest.fixture(scope="module")
def merged(planted, tmp_path_factory):
    import os

    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
    paths, images, _ = planted
    return with_hashes(analyze(paths, deep=True, jobs=1, use_cache=False), images)


def _found(a, kind):
    return {(fi, p.record) for fi in range(len(a.shards)) for p in a.problems(fi) if p.kind == kind}


def test_every_planted_copy_is_found_and_no_distinct_pair(planted, merged):
    _, images, want = planted
    a = merged
    groups = {}
    facts = a.facts()
    dup = facts.column("dup_group").to_pylist()
    files = [0] * len(images[0]) + [1] * len(images[1])
    recs = list(range(len(images[0]))) + list(range(len(images[1])))
    for f, n, g in zip(files, recs, dup, strict=True):
        if g is not None:
            groups.setdefault(g, set()).add((f, n))
    pair_of = {}
    for members in groups.values():
        for m in members:
            pair_of[m] = members
    # every planted copy shares a group with its original
    for i, j in want["exact"] + want["near"]:
        assert (0, j) in pair_of.get((0, i), set()), (i, j)
    for i, j in want["leak_exact"] + want["leak_near"]:
        assert (1, j) in pair_of.get((0, i), set()), (i, j)
    # no other image is in any group: every group is one original and its copies
    planted_pairs = {frozenset({(0, i), (0, j)}) for i, j in want["exact"] + want["near"]}
    planted_pairs |= {frozenset({(0, i), (1, j)}) for i, j in want["leak_exact"] + want["leak_near"]}
    for members in groups.values():
        assert len(members) == 2 and frozenset(members) in planted_pairs, members
    # findings: the copy in its split is a duplicate or a near duplicate; a copy across splits a leak
    assert _found(a, ProblemKind.DUPLICATE_IMAGE) == {(0, j) for _, j in want["exact"]}
    assert _found(a, ProblemKind.NEAR_DUPLICATE_IMAGE) == {(0, j) for _, j in want["near"]}
    leaks = {(0, i) for i, _ in want["leak_exact"] + want["leak_near"]}
    leaks |= {(1, j) for _, j in want["leak_exact"] + want["leak_near"]}
    assert _found(a, ProblemKind.SPLIT_LEAK) == leaks
    leak = facts.column("leak").to_pylist()
    assert {(f, n) for f, n, x in zip(files, recs, leak, strict=True) if x} == leaks
    msg = next(p.message for p in a.problems(1) if p.kind == ProblemKind.SPLIT_LEAK)
    assert "of train-00000-of-00001.tfrecord (train)" in msg and msg.startswith("in validation")
    # the byte check says no pair twice: its exact copies are the step's
    assert sum(p.kind == ProblemKind.DUPLICATE_IMAGE for p in a.problems(0)) == len(want["exact"])


def test_the_leakage_table_counts_exactly(planted, merged):
    _, images, want = planted
    rows = {(r["split"], r["other"]): r for r in merged.qa.tables["leakage"]}
    val = rows[("validation", "train")]
    assert (val["images"], val["with_copy"], val["exact"], val["near"]) == (len(images[1]), 12, 6, 6)
    train = rows[("train", "validation")]
    assert (train["images"], train["with_copy"], train["exact"], train["near"]) == (len(images[0]), 12, 6, 6)
    groups = merged.qa.tables["duplicate_groups"]
    assert len(groups) == 20 + 40 + 12 and groups[0]["group"] == 1
    assert groups[0]["members"] == [[0, 0, "train"], [0, 100, "train"]] and groups[0]["exact"]
    assert merged.qa.tables["duplicates"]["in_groups"] == 2 * len(groups)


def test_filter_reads_dup_group_and_leak(merged):
    from tfrview.core.analysis.filterexpr import parse
    from tfrview.core.analysis.vfilter import match

    facts = merged.facts()
    assert sorted(match(facts, parse("dup_group == 1"))[0].tolist()) == [0, 100]
    assert len(match(facts, parse("leak"))[0]) == 24
    assert len(match(facts, parse("not leak and dup_group"))[0]) == 2 * (20 + 40)


def test_a_dataset_without_images_says_no_duplicates_step_ran(tmp_path, capsys):
    path = tmp_path / "train.tfrecord"
    write_records(path, [record(None) for _ in range(5)])
    a = analyze([str(path)], deep=True, jobs=1, use_cache=False)
    assert "leakage" not in a.qa.tables and "dup_group" not in a.facts().column_names
    from tfrview.cli import _report_dataset_step

    doc: dict = {}
    _report_dataset_step(a, doc)
    assert doc["duplicates"]["notes"] == [
        "No duplicates step: no record's image was hashed (no decoded images)"
    ]
    assert "leakage" not in doc and "duplicate_groups" not in doc
    assert [n for n in doc["dataset_notes"] if "image" in n] == [
        "no image in the data decoded: the image quality checks (dark, bright, blurry, blank, low "
        "information, odd aspect, odd size) did not run"
    ]
    _report_dataset_step(a, None)  # a step with nothing to judge is no news in the text...
    assert capsys.readouterr() == ("", "")
    _report_dataset_step(a, None, verbose=True)  # ...but -v says it, once
    out, err = capsys.readouterr()
    assert out == "" and err.count("no image in the data decoded") == 1 and "duplicates" not in err


def test_run_pairs_pairs_equal_keys_only():
    key = np.array([5, 1, 5, 2, 5, 1, 9])
    a, b = _run_pairs(key)
    got = {tuple(sorted(p)) for p in zip(a.tolist(), b.tolist(), strict=True)}
    assert got == {(0, 2), (0, 4), (2, 4), (1, 5)}


def test_near_pairs_are_every_pair_within_the_certain_distance():
    r = np.random.default_rng(3)
    words = r.integers(-(2**63), 2**63 - 1, 3000, dtype=np.int64)
    # plant neighbours 1-6 bits away
    flips = [
        np.bitwise_or.reduce(np.int64(1) << r.choice(64, d, replace=False).astype(np.int64))
        for d in range(1, 7)
    ]
    near = np.array([words[i] ^ flips[i % 6] for i in range(60)], np.int64)
    allw = np.concatenate([words, near])
    index = NearIndex(8, 2)  # two shared bytes: pairs within 6 bits are certain
    assert index.certain == 6
    a, b, _ = near_pairs(allw, allw, 6, 64, index)
    assert plan(len(allw), 12).certain == 12  # a small dataset: every pair within the distance
    brute = np.argwhere(np.triu(hamming(allw[:, None], allw[None, :]) <= 6, 1))
    assert {tuple(p) for p in brute.tolist()} == set(zip(a.tolist(), b.tolist(), strict=True))


def test_components_join_chains():
    label = components(6, np.array([0, 3, 4]), np.array([5, 2, 3]))
    assert label.tolist() == [0, 1, 2, 2, 2, 0]


def test_verify_prints_the_leakage_table(merged, capsys):
    from tfrview.cli import _report_dataset_step

    _report_dataset_step(merged, None)
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "copies: 72 groups of exact or near copies, 144 of 192 images"
    assert "  12 of 32 validation images (37.5 %) have a copy in train: 6 exact, 6 near" in out
    doc: dict = {}
    _report_dataset_step(merged, doc)
    import json

    back = json.loads(json.dumps(doc))
    assert {(r["split"], r["other"], r["with_copy"]) for r in back["leakage"]} == {
        ("train", "validation", 12),
        ("validation", "train", 12),
    }
    assert len(back["duplicate_groups"]) == 72


def test_the_demo_s_two_gradient_scenes_are_not_paired(tmp_path, monkeypatch):
    """Two different demo scenes (a vertical gradient with flat shapes, brown-pink and olive) are
    within the DCT hash's distance: their colour signatures keep them apart."""
    from tfrview.core.analysis.duplicates import group_hashes
    from tfrview.core.analysis.rules import DuplicateRules
    from tfrview.core.records.imagesignals import colour_distance
    from tfrview.demo import build_demo

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    shard0 = build_demo(tmp_path / "demo")[0]  # its drawn scenes (the other shard holds no pair)
    a = analyze([str(shard0)], deep=True, jobs=1, use_cache=False)
    for kind in (ProblemKind.NEAR_DUPLICATE_IMAGE, ProblemKind.DUPLICATE_IMAGE, ProblemKind.SPLIT_LEAK):
        assert not _found(a, kind), kind
    t = a.facts()
    names = ("pixel_hash", "phash", "dhash", "colour_top", "colour_bottom")
    word = {c: np.array(t[c].take([17, 24]).to_pylist(), np.int64) for c in names}
    colour = np.stack([word["colour_top"], word["colour_bottom"]], axis=1)
    rules = DuplicateRules()
    assert int(hamming(*word["phash"])) <= rules.near_distance  # the grey hash alone pairs them
    assert int(colour_distance(colour[:1], colour[1:])[0]) > rules.colour_distance
    grey_only = group_hashes(word["pixel_hash"], word["phash"], word["dhash"], rules.near_distance, 64)
    assert grey_only.count == 1
    with_colour = group_hashes(
        word["pixel_hash"],
        word["phash"],
        word["dhash"],
        rules.near_distance,
        64,
        True,
        colour,
        rules.colour_distance,
    )
    assert with_colour.count == 0


def test_colour_signature_reads_cells_and_distance_sums_steps():
    from tfrview.core.records.imagesignals import colour, colour_distance

    a = np.zeros((40, 40, 3), np.uint8)
    a[:, :] = (128, 128, 128)  # grey: every cell neutral (8, 8)
    top, bottom = colour(a)
    assert top == bottom == int.from_bytes(bytes([0x88] * 8), "big", signed=True)
    a[:10, :10] = (0, 0, 255)  # the top left cell blue: Cb +127 (clipped to 15), Cr -21 (3 steps)
    t2, b2 = colour(a)
    assert t2.to_bytes(8, "big", signed=True)[0] == 0xF3 and b2 == bottom
    assert colour_distance(np.array([[top, bottom]]), np.array([[t2, b2]])).tolist() == [7 + 5]
    ycc = np.asarray(Image.fromarray(a).convert("YCbCr"))
    assert colour(ycc, ycc=True) == (t2, b2)  # a JPEG's YCbCr draft: the same cells
