"""A TFDS dataset's features.json read as data, and the records read by it (issue 22, item 1's
feature part): each figure beside its target, on this machine's cores.

    python bench/bench_tfds_features.py [--records 2000]

An RLDS features.json of Open X-Embodiment's shape (three cameras, state, action, flags, texts) and
one of limits.MAX_TFDS_FEATURES features with a 20,000-name labels file: a cold load
(`features_of_folder`: read, parse, labels files, the flat keys) and a warm one (the folder's memo,
its files' stats compared). Then the reading of detection records with and without the features
(`read_record` with `ReadingContext.tfds`, and `tfdsvalues.declared`): what the features cost a
record of the deep pass.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.timing import best  # noqa: E402

TARGET_COLD_RLDS = 0.010  # s: an RLDS features.json loaded (the window's first record waits on it)
TARGET_COLD_HUGE = 1.0  # s: a features.json at the feature limit, with 20,000 class names
TARGET_WARM = 0.0002  # s: a folder's features again (each record of the window's row summaries asks)
TARGET_RECORD_EXTRA = 0.00002  # s: the features' extra cost to read one record (20 us)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--records", type=int, default=2000)
    args = ap.parse_args()
    from tests import tfdsdata as td
    from tests.helpers import payloads_of
    from tfrview.core.limits import MAX_TFDS_FEATURES
    from tfrview.core.records.payload import decode
    from tfrview.core.records.reading import ReadingContext, read_record
    from tfrview.core.records.tfdsvalues import declared
    from tfrview.core.tfds import features as tf

    print(f"cores: {os.cpu_count()}  load: {os.getloadavg()[0]:.1f}")
    with tempfile.TemporaryDirectory() as tmp:
        rlds = Path(tmp) / "rlds"
        rlds.mkdir()
        cams = {f"image_{i}": td.image([180, 320, 3]) for i in range(3)}
        obs = td.fdict(**cams, state=td.tensor([8]), joint=td.tensor([7], "float64"))
        step = td.fdict(
            observation=obs,
            action=td.tensor([7]),
            is_first=td.tensor([], "bool", scalar=True),
            is_last=td.tensor([], "bool", scalar=True),
            reward=td.tensor([], "float32", scalar=True),
            language_instruction=td.text(),
            language_embedding=td.tensor([512]),
        )
        feats = td.fdict(
            steps=td.sequence(step, dataset=True), episode_metadata=td.fdict(file_path=td.text())
        )
        (rlds / "features.json").write_text(json.dumps(feats, indent=4))

        def cold(folder):
            tf._MEMO.clear()
            assert tf.features_of_folder(folder).error is None

        t = best(lambda: cold(rlds))
        print(
            f"RLDS features.json cold load      {t * 1e3:8.2f} ms   target <= {TARGET_COLD_RLDS * 1e3:.0f} ms"
        )
        tf.features_of_folder(rlds)
        t = best(lambda: tf.features_of_folder(rlds), 50)
        print(f"a folder's features again (memo)  {t * 1e6:8.1f} us   target <= {TARGET_WARM * 1e6:.0f} us")

        huge = Path(tmp) / "huge"
        huge.mkdir()
        n = (
            MAX_TFDS_FEATURES // 2 - 1
        )  # a key and its ClassLabel-free Tensor: two features a key... plus the root
        many = td.fdict(label=td.class_label(20_000), **{f"k{i}": td.tensor([3]) for i in range(n)})
        (huge / "features.json").write_text(json.dumps(many))
        (huge / "label.labels.txt").write_text("\n".join(f"class_{i}" for i in range(20_000)) + "\n")
        size = (huge / "features.json").stat().st_size
        t = best(lambda: cold(huge), 3)
        print(
            f"{n + 2:,} features ({size / 1e6:.1f} MB), 20,000 names  {t * 1e3:8.1f} ms   "
            f"target <= {TARGET_COLD_HUGE * 1e3:.0f} ms"
        )

        det = td.detection(Path(tmp) / "det", records=args.records)
        tfds = tf.features_of_folder(det)
        ps = [decode(p) for p in payloads_of(next(det.glob("*.tfrecord-*")))]

        def reading(ctx_of):
            ctx = ctx_of()
            for p in ps:
                r = read_record(p, ctx)
                r.class_counts, r.label_text  # noqa: B018 (what the pass asks of every record)

        plain = best(lambda: reading(ReadingContext)) / len(ps)
        with_f = best(lambda: reading(lambda: ReadingContext(tfds=tfds))) / len(ps)
        extra = with_f - plain
        print(
            f"read_record: {plain * 1e6:.1f} us plain, {with_f * 1e6:.1f} us with the features "
            f"(+{extra * 1e6:.1f} us)   target <= +{TARGET_RECORD_EXTRA * 1e6:.0f} us"
        )
        t = best(lambda: [declared(tfds, p.features) for p in ps]) / len(ps)
        print(f"tfdsvalues.declared (the tree's, dump's rows, a Tensor inflated) {t * 1e6:.1f} us a record")


if __name__ == "__main__":
    main()
