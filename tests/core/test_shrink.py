"""A file that shrinks while mapped must not kill the process with SIGBUS."""

import subprocess
import sys
import textwrap

from tests.helpers import payloads
from tfrview.core.output.writer import write_records


def test_file_truncated_while_open_gives_an_error_not_sigbus(tmp_path):
    path = tmp_path / "shrinks.tfrecord"
    write_records(path, payloads(20000, base=300))
    code = textwrap.dedent(
        """
        import os, sys
        from tfrview.core.errors import SourceError
        from tfrview.core.tfrecord.index import verify
        from tfrview.core.tfrecord.report import index_source
        from tfrview.core.tfrecord.source import open_source
        src = open_source(sys.argv[1])
        idx = index_source(src)
        os.truncate(sys.argv[1], 4096)  # another process cut the file
        for k in (0, idx.count - 1):
            try:
                src.read(int(idx.offsets[k]) + 12, int(idx.lengths[k]))
                print("read", k)
            except SourceError as e:
                print("error:", e)
        try:
            for _ in verify(src, idx):
                pass
        except SourceError as e:
            print("verify error:", e)
        """
    )
    r = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, f"process died ({r.returncode}): {r.stderr}"
    assert "error:" in r.stdout and "shrank" in r.stdout
    assert "verify error:" in r.stdout


def test_a_file_replaced_while_open_is_refused_not_misread(tmp_path):
    import os

    import pytest

    from tfrview.core.errors import SourceError
    from tfrview.core.tfrecord.report import index_source
    from tfrview.core.tfrecord.source import open_source

    path = tmp_path / "a.tfrecord"
    write_records(path, payloads(50))
    src = open_source(path)
    idx = index_source(src)
    assert src.read(int(idx.offsets[3]) + 12, int(idx.lengths[3])) == payloads(50)[3]
    other = tmp_path / "b.tfrecord"
    write_records(other, [b"something else entirely"] * 50)
    os.replace(other, path)  # an atomic rewrite of the same name, as writers do
    with pytest.raises(SourceError, match="replaced"):
        src.read(int(idx.offsets[3]) + 12, int(idx.lengths[3]))
    src.close()
