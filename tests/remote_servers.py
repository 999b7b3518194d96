"""Real servers for the remote tests and benchmarks, each in its own process.

- `http_server(root, latency)`: the standard library's file server with Range requests (206),
  HEAD with Content-Length and ETag, directory listings fsspec can read, an optional delay on
  every request (object storage answers in 50–250 ms), and `/_stats` counting the requests.
- `s3_server()`: moto's standalone S3 server; the environment it gives (AWS_ENDPOINT_URL and
  test credentials) is where s3fs, like every AWS client, looks.

Run as a script, `python tests/remote_servers.py http ROOT PORT LATENCY` serves ROOT.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import ClassVar


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _wait_for(url: str, proc: subprocess.Popen, timeout: float = 30.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited with {proc.returncode}")
        try:
            urllib.request.urlopen(url, timeout=1).close()
            return
        except Exception:
            time.sleep(0.05)
    raise RuntimeError(f"the server at {url} did not answer within {timeout} s")


@contextlib.contextmanager
def http_server(root: Path, latency: float = 0.0):
    """Serve `root` over HTTP in a child process; yields the base URL (no trailing slash)."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, __file__, "http", str(root), str(port), str(latency)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base + "/_stats", proc)
        yield base
    finally:
        proc.kill()
        proc.wait()


def http_requests(base: str) -> dict:
    """{"requests": every request answered so far (its /_stats excluded), "ranges": range reads}."""
    with urllib.request.urlopen(base + "/_stats", timeout=5) as r:
        return json.load(r)


@contextlib.contextmanager
def s3_server():
    """moto's S3 server in a child process; yields the environment that points clients at it."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_for(endpoint + "/moto-api/", proc)
        yield {"AWS_ENDPOINT_URL": endpoint, "AWS_ACCESS_KEY_ID": "testing", "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1"}  # fmt: skip
    finally:
        proc.kill()
        proc.wait()


class _Handler(SimpleHTTPRequestHandler):
    """Besides files: `/forbidden/…` answers 403, and the first range read of a file whose name
    starts with `flaky-` comes back with one bit flipped (damage on the way, not in the file)."""

    latency = 0.0
    requests = 0
    ranges = 0  # range reads: record data, not listings or sizes
    flipped: ClassVar[set] = set()

    def log_message(self, *args) -> None:
        pass

    def _count(self) -> bool:
        if self.path == "/_stats":
            body = json.dumps({"requests": _Handler.requests, "ranges": _Handler.ranges}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return False
        _Handler.requests += 1
        if self.latency:
            time.sleep(self.latency)
        return True

    def _forbidden(self) -> bool:
        if self.path.startswith("/forbidden/"):
            self.send_error(403, "Forbidden")
            return True
        return False

    def do_HEAD(self) -> None:
        if self._count() and not self._forbidden():
            super().do_HEAD()

    def do_GET(self) -> None:
        if not self._count() or self._forbidden():
            return
        path = Path(self.translate_path(self.path))
        rng = self.headers.get("Range")
        if not path.is_file() or not rng or not rng.startswith("bytes="):
            return super().do_GET()
        size = path.stat().st_size
        a, _, b = rng[6:].partition("-")
        start = int(a) if a else max(0, size - int(b))
        stop = min(size - 1, int(b)) if a and b else size - 1
        if start >= size:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.end_headers()
            return
        with open(path, "rb") as fh:
            fh.seek(start)
            body = fh.read(stop - start + 1)
        _Handler.ranges += 1
        if path.name.startswith("flaky-") and path.name not in _Handler.flipped and len(body) > 100:
            _Handler.flipped.add(path.name)
            b = bytearray(body)
            b[len(b) // 2] ^= 0x10
            body = bytes(b)
        self.send_response(206)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Range", f"bytes {start}-{stop}/{size}")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Accept-Ranges", "bytes")
        self.end_headers()
        self.wfile.write(body)

    def end_headers(self) -> None:
        path = Path(self.translate_path(self.path))
        if path.is_file():
            st = path.stat()
            tag = hashlib.md5(f"{st.st_size}-{st.st_mtime_ns}".encode()).hexdigest()
            self.send_header("ETag", f'"{tag}"')
            self.send_header("Accept-Ranges", "bytes")
        super().end_headers()


def _serve(root: str, port: int, latency: float) -> None:
    os.chdir(root)
    _Handler.latency = latency
    ThreadingHTTPServer.daemon_threads = True
    ThreadingHTTPServer.request_queue_size = 256  # the default 5 drops concurrent connects: a 1 s SYN retry each
    ThreadingHTTPServer(("127.0.0.1", port), _Handler).serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "http":
        _serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
