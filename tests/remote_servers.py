"""Real servers for the remote tests and benchmarks.

- `http_server(root, latency)`: the standard library's file server with Range requests (206),
  HEAD with Content-Length and ETag, directory listings fsspec can read, an optional delay on
  every request (object storage answers in 50–250 ms), and `/_stats` counting the requests.
- `s3_server()`: moto's standalone S3 server; the environment it gives (AWS_ENDPOINT_URL and
  test credentials) is where s3fs, like every AWS client, looks.
- `SilentServer`, `FullBacklogServer`, `HostileHTTPServer(data, how)`: hostile servers in the test's own process (a
  thread, port 0) that never answer or never connect, lie about a size, cut a body, ignore Range, or serve other bytes again.

Run as a script, `python tests/remote_servers.py http ROOT PORT LATENCY` serves ROOT.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
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
    proc = subprocess.Popen(
        [sys.executable, __file__, "http", str(root), str(port), str(latency)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        _wait_for(base + "/_stats", proc)
        yield base
    finally:
        proc.kill()
        proc.wait()


def http_requests(base: str) -> dict:
    """{"requests": every request answered so far (its /_stats excluded), "ranges": range reads,
    "in_flight_max": the most requests answered at once}."""
    with urllib.request.urlopen(base + "/_stats", timeout=5) as r:
        return json.load(r)


@contextlib.contextmanager
def s3_server(latency: float | None = None):
    """moto's S3 server in a child process; yields the environment that points clients at it.
    With `latency` (0 too), every request waits that long in the server before moto answers it (a
    WSGI wrapper around moto's application, `_serve_s3`): object storage's round trip, on each
    request, concurrent requests each waiting their own; `/_stats` (not S3) then counts the
    requests by method, and the most answered at once (`in_flight_max`)."""
    port = free_port()
    cmd = [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)]
    if latency is not None:
        cmd = [sys.executable, __file__, "s3", "-", str(port), str(latency)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    endpoint = f"http://127.0.0.1:{port}"
    try:
        _wait_for(endpoint + "/moto-api/", proc)
        yield {
            "AWS_ENDPOINT_URL": endpoint,
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
        }
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
    in_flight = 0
    in_flight_max = 0  # the most requests answered at once
    lock = threading.Lock()

    def log_message(self, *args) -> None:
        pass

    def _count(self) -> bool:
        if self.path == "/_stats":
            body = json.dumps(
                {
                    "requests": _Handler.requests,
                    "ranges": _Handler.ranges,
                    "in_flight_max": _Handler.in_flight_max,
                }
            ).encode()
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

    def handle_one_request(self) -> None:
        with _Handler.lock:
            _Handler.in_flight += 1
            _Handler.in_flight_max = max(_Handler.in_flight_max, _Handler.in_flight)
        try:
            super().handle_one_request()
        finally:
            with _Handler.lock:
                _Handler.in_flight -= 1

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
    # the default 5 drops concurrent connects: a 1 s SYN retry each
    ThreadingHTTPServer.request_queue_size = 256
    ThreadingHTTPServer(("127.0.0.1", port), _Handler).serve_forever()


def _serve_s3(port: int, latency: float) -> None:
    """moto's S3 server (as `python -m moto.server` runs it) with `latency` seconds slept in each
    request's thread before moto sees it, and the requests counted by method at `/_stats`."""
    from moto.moto_server.werkzeug_app import (
        DomainDispatcherApplication,
        MotoRequestHandler,
        create_backend_app,
    )
    from werkzeug.serving import run_simple

    os.environ.setdefault("MOTO_PORT", str(port))
    moto_app = DomainDispatcherApplication(create_backend_app)
    counts: dict[str, int] = {"in_flight_max": 0}
    now = [0]
    lock = threading.Lock()

    def app(environ, start_response):
        if environ.get("PATH_INFO") == "/_stats":
            body = json.dumps({**counts, "cpu_seconds": time.process_time()}).encode()
            head = [("Content-Type", "application/json"), ("Content-Length", str(len(body)))]
            start_response("200 OK", head)
            return [body]
        if environ.get("PATH_INFO", "").startswith("/moto-api"):
            return moto_app(environ, start_response)
        with lock:
            method = environ["REQUEST_METHOD"] + (" range" if environ.get("HTTP_RANGE") else "")
            counts[method] = counts.get(method, 0) + 1
            now[0] += 1
            counts["in_flight_max"] = max(counts["in_flight_max"], now[0])
        try:
            time.sleep(latency)
            return moto_app(environ, start_response)
        finally:
            with lock:
                now[0] -= 1

    # werkzeug logs every request (coloured, to the stderr the parent discards): ~8 % of this
    # server's CPU, on the cores the client under measure shares
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    run_simple("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)


def s3_requests(env: dict) -> dict:
    """{method: requests} the latency-adding S3 server answered so far ("GET range" apart),
    "in_flight_max": the most it answered at once, and "cpu_seconds": the server's CPU time."""
    with urllib.request.urlopen(env["AWS_ENDPOINT_URL"] + "/_stats", timeout=5) as r:
        return json.load(r)


if __name__ == "__main__":
    if sys.argv[1] == "http":
        _serve(sys.argv[2], int(sys.argv[3]), float(sys.argv[4]))
    elif sys.argv[1] == "s3":
        _serve_s3(int(sys.argv[3]), float(sys.argv[4]))


# --- hostile servers ----------------------------------------------------------------------------------
# Small servers in the test's own process (a thread each, bound to 127.0.0.1 port 0, every loop
# bounded, stopped by the test: `with SilentServer() as srv: ... srv.url("data.tfrecord")`). Each
# misbehaves in one way a real server or a middlebox can.


class _Threaded:
    """A server run on a daemon thread until `stop()` (or the end of its `with` block)."""

    host = "127.0.0.1"

    def __init__(self) -> None:
        self.port = 0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def url(self, name: str = "data.tfrecord") -> str:
        return f"http://{self.host}:{self.port}/{name}"

    def start(self):
        raise NotImplementedError

    def stop(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class SilentServer(_Threaded):
    """Accepts every connection, reads the request, and never answers (a hung server, a firewall
    that swallows packets after the handshake). Connections stay open until `stop()`."""

    MAX_CONNECTIONS = 256

    def __init__(self) -> None:
        super().__init__()
        self._sock = socket.socket()
        self._conns: list[socket.socket] = []
        self.accepted = 0

    def start(self) -> SilentServer:
        self._sock.bind((self.host, 0))
        self._sock.listen(64)
        self._sock.settimeout(0.1)
        self.port = self._sock.getsockname()[1]
        self._thread = threading.Thread(target=self._run, name="silent-server", daemon=True)
        self._thread.start()
        return self

    def _run(self) -> None:
        while not self._stop.is_set() and self.accepted < self.MAX_CONNECTIONS:
            try:
                conn, _ = self._sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            conn.settimeout(0.5)
            with contextlib.suppress(OSError):
                conn.recv(65536)  # the request, read and ignored
            self._conns.append(conn)

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
        for c in [*self._conns, self._sock]:
            with contextlib.suppress(OSError):
                c.close()


class FullBacklogServer(_Threaded):
    """A listener that never accepts, its backlog filled by one connection of its own: the kernel
    drops every further SYN, so a client's connect waits as for a host that is down (no thread)."""

    def __init__(self) -> None:
        super().__init__()
        self._sock = socket.socket()
        self._filler = socket.socket()

    def start(self) -> FullBacklogServer:
        self._sock.bind((self.host, 0))
        self._sock.listen(0)
        self.port = self._sock.getsockname()[1]
        self._filler.connect((self.host, self.port))  # completes: the one place in the queue
        return self

    def stop(self) -> None:
        for s in (self._filler, self._sock):
            with contextlib.suppress(OSError):
                s.close()


class HostileHTTPServer(_Threaded):
    """One object, `data`, served at every path with a misbehaviour (`how`):

    - "honest": HEAD and Range GET as a good server answers them (206, Content-Range).
    - "lie_size": HEAD says Content-Length `claim`; GET and Range reads serve the real bytes.
    - "cut": every GET announces its whole length, sends half of it, and closes the connection.
    - "ignore_range": a Range request gets 200 and the whole object.
    - "changing": every GET after the first serves other bytes (one byte flipped, a different
      one each time), as an object rewritten while it is read.
    - "stall_body": the headers of a GET, a few bytes of its body, then silence until `stop()`.
    """

    HOW = ("honest", "lie_size", "cut", "ignore_range", "changing", "stall_body")

    def __init__(self, data: bytes, how: str = "honest", claim: int | None = None) -> None:
        super().__init__()
        if how not in self.HOW:
            raise ValueError(f"unknown misbehaviour {how!r}")
        self.data = bytes(data)
        self.how = how
        self.claim = claim if claim is not None else len(self.data)
        self.gets = 0
        self.heads = 0
        self._server: ThreadingHTTPServer | None = None

    def start(self) -> HostileHTTPServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args) -> None:
                pass

            def do_HEAD(self) -> None:
                server.heads += 1
                self.send_response(200)
                self.send_header(
                    "Content-Length", str(server.claim if server.how == "lie_size" else len(server.data))
                )
                self.send_header("ETag", f'"{hashlib.md5(server.data).hexdigest()}"')
                self.send_header("Accept-Ranges", "bytes")
                self.end_headers()

            def do_GET(self) -> None:
                server.gets += 1
                server._get(self, server.gets)

        class Server(ThreadingHTTPServer):
            # the default 5 drops concurrent connects (many in flight): 1 s SYN retries
            request_queue_size = 128

            def handle_error(self, request, client_address) -> None:
                pass  # a client that hangs up mid-body (as tfrview does on purpose) is no news

        self._server = Server((self.host, 0), Handler)
        self._server.daemon_threads = True
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()
        return self

    def _body(self, n: int) -> bytes:
        if self.how != "changing" or n <= 1 or not self.data:
            return self.data
        b = bytearray(self.data)
        b[(n * 7919) % len(b)] ^= 0xFF
        return bytes(b)

    def _get(self, h: BaseHTTPRequestHandler, n: int) -> None:
        data = self._body(n)
        size = len(data)
        start, stop, partial = 0, size, False
        rng = h.headers.get("Range", "")
        if rng.startswith("bytes=") and self.how != "ignore_range":
            a, _, b = rng[6:].partition("-")
            with contextlib.suppress(ValueError):
                start = int(a) if a else max(0, size - int(b))
                stop = min(size, int(b) + 1) if a and b else size
                partial = True
        if partial and start >= size:
            h.send_response(416)
            h.send_header("Content-Range", f"bytes */{size}")
            h.send_header("Content-Length", "0")
            h.end_headers()
            return
        body = data[start:stop]
        h.send_response(206 if partial else 200)
        if partial:
            total = self.claim if self.how == "lie_size" else size
            h.send_header("Content-Range", f"bytes {start}-{stop - 1}/{total}")
        h.send_header("Content-Length", str(len(body)))
        h.send_header("Content-Type", "application/octet-stream")
        h.end_headers()
        if self.how == "cut":
            h.wfile.write(body[: len(body) // 2])
            h.wfile.flush()
            h.close_connection = True
            with contextlib.suppress(OSError):
                h.connection.shutdown(socket.SHUT_RDWR)
            return
        if self.how == "stall_body":
            h.wfile.write(body[:8])
            h.wfile.flush()
            self._stop.wait(60)  # bounded: the test stops the server well before
            h.close_connection = True
            return
        h.wfile.write(body)

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(5)
