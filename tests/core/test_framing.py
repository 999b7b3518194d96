import struct

import numpy as np
import pytest

from tfrview.core.tfrecord.framing import (
    encode_record,
    length_crc,
    mask,
    masked_crc,
    masked_length_crcs,
    unmask,
)


def test_golden_length_crc():
    # From TensorBoard's tf_record.rs: length 0x18 has masked CRC 0x224b7fa3.
    assert masked_crc(b"\x18\x00\x00\x00\x00\x00\x00\x00") == 0x224B7FA3
    assert length_crc(0x18) == 0x224B7FA3


def test_crc32c_check_value():
    # The standard CRC-32C check value of "123456789" is 0xE3069283.
    import crc32c

    assert crc32c.crc32c(b"123456789") == 0xE3069283
    assert masked_crc(b"123456789") == mask(0xE3069283)


@pytest.mark.parametrize("crc", [0, 1, 0xFFFFFFFF, 0xE3069283, 0x12345678])
def test_mask_roundtrip(crc):
    assert unmask(mask(crc)) == crc


def test_encode_record_layout():
    rec = encode_record(b"hello")
    length, crc = struct.unpack_from("<QI", rec)
    assert length == 5 and crc == length_crc(5)
    assert rec[12:17] == b"hello"
    assert struct.unpack_from("<I", rec, 17)[0] == masked_crc(b"hello")
    assert len(rec) == 5 + 16


def test_vectorised_length_crcs_match_scalar():
    rng = np.random.default_rng(0)
    lengths = list(rng.integers(0, 2**63, 200, dtype=np.uint64)) + [0, 1, 24, 2**60]
    windows = np.frombuffer(b"".join(struct.pack("<Q", int(x)) for x in lengths), np.uint8).reshape(-1, 8)
    got = masked_length_crcs(windows)
    assert [int(x) for x in got] == [length_crc(int(x)) for x in lengths]


def test_crc32c_loaded_without_the_package_version_lookup():
    """A process that checks CRCs (a part process of a big file, the CLI) loads crc32c's compiled
    module alone: the package's `__init__` looks its version up with importlib.metadata (~0.1 s)."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from tfrview.core.tfrecord.framing import crc32c_module, masked_crc\n"
        "print(crc32c_module().crc32c(b'123456789'), crc32c_module().crc32c(b'56789', crc32c_module().crc32c(b'1234')),"
        " masked_crc(b'123456789'), 'importlib.metadata' in sys.modules, 'crc32c' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.split()
    assert out == [str(0xE3069283), str(0xE3069283), str(mask(0xE3069283)), "False", "False"]
