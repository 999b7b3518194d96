"""A file that shrinks while mapped must not kill the process with SIGBUS."""

import subprocess
import sys
import textwrap

from tests.helpers import payloads
from tfrview.core.writer import write_records


def test_file_truncated_while_open_gives_an_error_not_sigbus(tmp_path):
    path = tmp_path / "shrinks.tfrecord"
    write_records(path, payloads(20000, base=300))
    code = textwrap.dedent(
        """
        import os, sys
        from tfrview.core.framing import SourceError
        from tfrview.core.index import verify
        from tfrview.core.report import index_source
        from tfrview.core.source import open_source
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
