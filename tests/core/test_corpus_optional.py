"""Optional checks on the whole real files in ../shared/corpus (a fresh clone has only the trimmed
copies in tests/data; these skip, saying why, when the corpus is absent)."""

from tests.helpers import RACCOON, need_corpus
from tfrview.core.records.payload import decode
from tfrview.core.tfrecord.payload_bytes import bounded_payload
from tfrview.core.tfrecord.report import verify_source
from tfrview.core.tfrecord.source import open_source


def test_the_whole_raccoon_file_is_clean_and_its_prefix_is_ours():
    path = need_corpus("raccoon_test.record")
    with open_source(path) as src:
        idx, rep = verify_source(src)
        assert rep.ok and rep.records == 40
        for k in range(idx.count):
            p = decode(bounded_payload(src.read, int(idx.offsets[k]), int(idx.lengths[k])))
            assert p.features["image/object/class/text"].values[0] == b"raccoon"
    assert path.read_bytes().startswith(RACCOON.read_bytes())  # tests/data holds a byte-exact prefix


def test_the_penguin_shard_matches_the_copy_in_tests_data():
    from tests.helpers import PENGUIN

    assert need_corpus("penguin_train-00000-of-00001.gz").read_bytes() == PENGUIN.read_bytes()
