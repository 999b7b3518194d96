"""Files where they live: URLs (s3://, gs://, az://, https://, hf://, …) read through fsspec.

Object storage answers in 50–250 ms a request, so nothing here asks per record: a scan reads
a shard front to back in blocks that double while it reads on (1 MB up to 32 MB), the rows on
screen are read together with one batched, concurrent `cat_ranges`, and a dataset of many
shards is listed once and opened with one batched request for every shard's first bytes, and the
analysis pass fetches a task's small objects whole, many requests in flight (`fetch_ahead`).

fsspec and its back-ends are optional extras; a URL whose back-end is missing names the extra.
A network or permission failure is a `NetworkError` that says what failed, never damage; reads
that can succeed on a second try are retried.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import tempfile
import threading
import time
from dataclasses import dataclass

from tfrview.core import limits
from tfrview.core.errors import SourceError
from tfrview.core.limits import (
    NET_LISTING_THREADS,
    NET_MAX_BLOCK,
    NET_RETRIES,
    NET_WHOLE_OBJECT_BYTES,
    REMOTE_HANDED_MAX,
    REMOTE_LISTED_MAX,
    REMOTE_LISTED_SECONDS,
    REMOTE_SPILL_BYTES,
    REMOTE_TRIM_EVERY,
    net_timeouts,
)
from tfrview.core.termtext import printable
from tfrview.core.tfrecord.framing import Compression

_URL = re.compile(r"^(?P<scheme>[a-zA-Z][a-zA-Z0-9+.-]*)://")
# The extra that brings each scheme's back-end (pyproject's optional dependencies).
EXTRAS = {
    "s3": "s3",
    "s3a": "s3",
    "gs": "gcs",
    "gcs": "gcs",
    "az": "azure",
    "abfs": "azure",
    "abfss": "azure",
    "adl": "azure",
    "http": "http",
    "https": "http",
    "hf": "hf",
}

PAGE = 1 << 20  # fetched bytes are kept in pages of this size; a read fetches at least one
HEAD_BYTES = 64 * 1024  # read at open to tell the compression (as local files)


class NetworkError(SourceError):
    """Reading a remote file failed (credentials, 403, 404, a timeout): said as such, never as a
    damaged record."""


def is_url(s) -> bool:
    """A URL other than file:// (local paths, file:// included, are read as files)."""
    m = _URL.match(str(s)) if isinstance(s, str | RemotePath) else None
    return m is not None and m["scheme"].lower() != "file"


def url_scheme(url: str) -> str:
    """A URL's scheme, lower case ('s3', 'gs', 'https'): requests are batched per back-end."""
    return _URL.match(url)["scheme"].lower()


class RemotePath:
    """A URL with the parts of a Path that naming and display use (`name`, `parent`, `suffix`);
    `str()` gives the URL back whole (a Path would fold its `//`)."""

    __slots__ = ("url",)

    def __init__(self, url: str) -> None:
        self.url = str(url)

    def __str__(self) -> str:
        return self.url

    def __repr__(self) -> str:
        return f"RemotePath({self.url!r})"

    def __eq__(self, other) -> bool:
        return isinstance(other, RemotePath) and other.url == self.url

    def __hash__(self) -> int:
        return hash(self.url)

    def __lt__(self, other) -> bool:
        return str(self) < str(other)

    @property
    def name(self) -> str:
        return self.url.rstrip("/").rsplit("/", 1)[-1]

    @property
    def parent(self) -> RemotePath:
        base = self.url.rstrip("/")
        head = base.rsplit("/", 1)[0]
        return RemotePath(head if "://" in head and len(head) > len(_URL.match(base)[0]) else base)

    @property
    def suffix(self) -> str:
        name = self.name
        i = name.rfind(".")
        return name[i:] if i > 0 else ""

    @property
    def suffixes(self) -> list[str]:
        return ["." + s for s in self.name.split(".")[1:]]

    @property
    def stem(self) -> str:
        return self.name[: len(self.name) - len(self.suffix)] if self.suffix else self.name

    def __truediv__(self, other: str) -> RemotePath:
        return RemotePath(self.url.rstrip("/") + "/" + str(other))

    def resolve(self) -> RemotePath:
        return self

    def is_dir(self) -> bool:
        return False


_fs_memo: dict[tuple, object] = {}  # (scheme://host, timeouts, environment) -> its filesystem

# What a back-end reads from the environment when it is made (where the server is, who we are):
# an instance made under other values points at another server, or signs as someone else.
_ENVIRONMENT = {
    "s3": (
        "AWS_ENDPOINT_URL",
        "AWS_ENDPOINT_URL_S3",
        "AWS_PROFILE",
        "AWS_DEFAULT_PROFILE",
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "AWS_ACCESS_KEY_ID",
        "AWS_SECRET_ACCESS_KEY",
        "AWS_SESSION_TOKEN",
        "AWS_CONFIG_FILE",
        "AWS_SHARED_CREDENTIALS_FILE",
    ),
    "gs": ("STORAGE_EMULATOR_HOST", "GOOGLE_APPLICATION_CREDENTIALS", "GOOGLE_CLOUD_PROJECT"),
    "az": (
        "AZURE_STORAGE_CONNECTION_STRING",
        "AZURE_STORAGE_ACCOUNT_NAME",
        "AZURE_STORAGE_ACCOUNT_KEY",
        "AZURE_STORAGE_SAS_TOKEN",
    ),
    "hf": ("HF_ENDPOINT", "HF_TOKEN"),
}
_ENVIRONMENT |= {"s3a": _ENVIRONMENT["s3"], "gcs": _ENVIRONMENT["gs"], "abfs": _ENVIRONMENT["az"]}
_ENVIRONMENT["abfss"] = _ENVIRONMENT["az"]
# CPython's dict behind os.environ and its key encoding: a name not set costs os.environ.get a
# KeyError caught (~2 us; 11 names twice an object), a lookup in the dict itself ~0.1 us
_ENV_DATA = getattr(os.environ, "_data", None)
_ENV_KEYS = (
    {s: tuple(map(os.environ.encodekey, names)) for s, names in _ENVIRONMENT.items()}
    if _ENV_DATA is not None and hasattr(os.environ, "encodekey")
    else None
)


def _environment_of(scheme: str) -> tuple:
    """What a back-end of `scheme` reads from the environment when it is made, as it is now."""
    if _ENV_KEYS is not None:
        return tuple(map(_ENV_DATA.get, _ENV_KEYS.get(scheme, ())))
    return tuple(map(os.environ.get, _ENVIRONMENT.get(scheme, ())))


def filesystem(url: str):
    """The fsspec filesystem for a URL and the path within it. A missing back-end is a one-line
    error naming the extra to install. Remembered by scheme and host, the timeouts and what the
    back-end reads from the environment (`_ENVIRONMENT`: fsspec's own lookup costs ~0.7 ms a call,
    twice an object: seconds for a split of thousands). Never fsspec's remembered instance, which
    it keys by the arguments alone: one made for another endpoint (`AWS_ENDPOINT_URL` changed, a
    server on another port) would be handed back, still pointing at the old one."""
    m = _URL.match(url)
    scheme = m["scheme"].lower() if m else ""
    key = None
    if m and "::" not in url and "?" not in url and "#" not in url:  # options in a URL: fsspec's way
        key = (
            url[: url.find("/", m.end()) % (len(url) + 1)].lower(),
            net_timeouts(),
            _environment_of(scheme),
        )
        fs = _fs_memo.get(key)
        if fs is not None:
            return fs, fs._strip_protocol(url)
    extra = EXTRAS.get(scheme)
    hint = f"pip install 'tfrview[{extra}]'" if extra else "its fsspec back-end"
    try:
        import fsspec.core  # optional dependency
    except ImportError:
        raise NetworkError(f"{printable(url)}: reading {scheme}:// needs {hint}") from None
    try:
        # remembered here, by the environment too; a URL with options (a chain, a version) is
        # fsspec's alone, its instance cache included
        fresh = {"skip_instance_cache": True} if key is not None else {}
        fs, path = fsspec.core.url_to_fs(url, **_timeouts_for(scheme), **fresh)
    except (ImportError, ValueError) as exc:
        if isinstance(exc, ValueError) and "Protocol not known" not in str(exc):
            raise NetworkError(f"{printable(url)}: {printable(str(exc))}") from None
        raise NetworkError(f"{printable(url)}: reading {scheme}:// needs {hint}") from None
    if scheme in ("s3", "s3a") and hasattr(fs, "retries"):
        fs.retries = 1  # s3fs tries a timed-out request 5 times over; with_retries decides here
    if key is not None and path == fs._strip_protocol(url):
        _fs_memo[key] = fs
    return fs, path


def _timeouts_for(scheme: str) -> dict:
    """The back-end's options that bound how long a server may keep us waiting (limits.NET_*):
    without them a server that accepts and never answers holds a command for ever."""
    connect, read, request = net_timeouts()
    if scheme in ("http", "https"):
        import aiohttp  # heavy: aiohttp on first use only

        timeout = aiohttp.ClientTimeout(total=request, sock_connect=connect, sock_read=read)
        return {"client_kwargs": {"timeout": timeout, "trace_configs": [_range_guard()]}}
    if scheme in ("s3", "s3a"):
        return {
            "config_kwargs": {
                "connect_timeout": connect,
                "read_timeout": read,
                "retries": {"total_max_attempts": 1},
                # botocore's pool holds 10 connections: NET_IN_FLIGHT requests need as many
                "max_pool_connections": max(10, limits.NET_IN_FLIGHT),
                # no CRC of every object's whole answer, in botocore's Python wrapper, before
                # tfrview checks every record's own CRCs (and reads a mismatch again before it is
                # called damage): ~0.2 ms of CPU an object of 100 KB, for no more certainty
                "response_checksum_validation": "when_required",
                "request_checksum_calculation": "when_required",
            }
        }
    return {}


class RangeIgnored(Exception):
    """A server answered a byte-range request with the whole of a large object. An internal signal,
    raised inside fsspec's read and found in the exception chain: it leaves this module as a
    NetworkError, never itself (so it stays outside TfrviewError, which a caller might catch first)."""


_RANGE_GUARD = None  # one for the process: fsspec keys its cached filesystems by their options


def _range_guard():
    """An aiohttp trace that drops, at its headers, a whole-object answer (200) to a byte-range
    request when the object is over limits.NET_WHOLE_OBJECT_BYTES or its length is not said: each
    read of a scan would otherwise bring the whole object into memory."""
    global _RANGE_GUARD
    if _RANGE_GUARD is None:
        import aiohttp  # heavy: aiohttp on first use only

        async def on_request_end(session, ctx, params) -> None:
            resp = params.response
            if resp.status != 200 or "Range" not in params.headers:
                return
            n = resp.content_length
            if n is None or n > NET_WHOLE_OBJECT_BYTES:
                resp.close()
                said = "an unsaid length" if n is None else f"{n:,} bytes"
                raise RangeIgnored(
                    f"the server ignores byte ranges: it sends the whole object ({said}) for each "
                    f"read, over the {NET_WHOLE_OBJECT_BYTES >> 20} MB tfrview accepts so "
                    "(limits.NET_WHOLE_OBJECT_BYTES)"
                )

        guard = aiohttp.TraceConfig()
        guard.on_request_end.append(on_request_end)
        guard.freeze()
        _RANGE_GUARD = guard
    return _RANGE_GUARD


def _budget(fs, seconds: float) -> dict:
    """The keyword that bounds one whole call of an asynchronous fsspec back-end (its `sync`
    cancels the call past it); nothing for a back-end that has no such bound."""
    return {"timeout": seconds} if getattr(fs, "async_impl", False) else {}


def _chain(exc: BaseException) -> list[BaseException]:
    """The error and what it was raised from, outermost first (bounded: a cycle ends it)."""
    out: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and len(out) < 8 and e not in out:
        out.append(e)
        e = e.__cause__ or e.__context__
    return out


def _timeout_hit(chain: list[BaseException], budget: str) -> str | None:
    """Which timeout an error is, in words that name its limit, or None if it is none. aiohttp and
    botocore name their connect and read timeouts; any other timeout is the whole call's budget."""
    connect, read, request = net_timeouts()
    names = [type(e).__name__ for e in chain]
    how = "TFRVIEW_NET_TIMEOUT sets it"
    if any(n in ("ConnectionTimeoutError", "ConnectTimeoutError", "ConnectTimeout") for n in names):
        return f"timed out: no connection within {connect:g} s (limits.NET_CONNECT_TIMEOUT; {how})"
    if any(n in ("SocketTimeoutError", "ReadTimeoutError", "ReadTimeout") for n in names):
        return f"timed out: the server sent nothing for {read:g} s (limits.NET_READ_TIMEOUT; {how})"
    if any(isinstance(e, TimeoutError) or "Timeout" in type(e).__name__ for e in chain):
        return f"timed out: no whole answer within {budget}"
    return None


_CUT = (
    "ClientPayloadError",
    "ContentLengthError",
    "TransferEncodingError",
    "IncompleteRead",
    "ServerDisconnectedError",
    "ResponseStreamingError",
    "ConnectionResetError",
)


def network_error(url: str, exc: BaseException, budget: str = "") -> NetworkError:
    """What failed, in one line: connection refused, a timeout (naming its limit), a connection cut
    mid-answer, not found, access denied, no credentials, an HTTP status, or the network error as its
    library says it. fsspec's HTTP back-end says FileNotFoundError for whatever stopped its size
    request, so the error it was raised from is looked at first."""
    chain = _chain(exc)
    name = type(exc).__name__
    status = _status(exc)
    text = printable(str(exc))[:200]
    timeout = _timeout_hit(chain, budget or _request_budget())
    cut = next((e for e in chain if type(e).__name__ in _CUT), None)
    ignored = next((e for e in chain if isinstance(e, RangeIgnored)), None)
    if ignored is not None:
        why = str(ignored)
    elif any(isinstance(e, ConnectionRefusedError) for e in chain):
        why = "connection refused (nothing listens there, or a firewall said no)"
    elif timeout is not None:
        why = timeout
    elif cut is not None:
        why = f"the connection was cut before the answer was whole ({type(cut).__name__}: {printable(str(cut))[:160]})"
    elif status in (401, 403) or isinstance(exc, PermissionError):
        why = "access denied (403): check the credentials this back-end reads (environment, config files)"
    elif status == 404 or (isinstance(exc, FileNotFoundError) and (status is not None or len(chain) == 1)):
        why = "not found (404)"
    elif "NoCredentials" in name or "credential" in text.lower():
        why = "no credentials found: set them where this back-end reads them (environment, config files)"
    elif isinstance(status, int):
        why = f"HTTP {status}" + (f": {text}" if text else "")
    else:
        inner = chain[1] if isinstance(exc, FileNotFoundError) and len(chain) > 1 else exc
        inner_text = printable(str(inner))[:200]
        why = f"network error: {type(inner).__name__}" + (f": {inner_text}" if inner_text else "")
    return NetworkError(f"{printable(url)}: {why}")


def _request_budget() -> str:
    return f"{net_timeouts()[2]:g} s (limits.NET_REQUEST_TIMEOUT)"


def _status(exc: BaseException) -> int | None:
    """The HTTP status behind an error, looking through what it was raised from (fsspec's HTTP
    back-end says FileNotFoundError for a 403 too). A connection cut mid-answer is no status,
    whatever code aiohttp gives it."""
    for e in _chain(exc):
        if type(e).__name__ in _CUT:
            return None
        for attr in ("status", "code", "status_code"):
            v = getattr(e, attr, None)
            if isinstance(v, int) and 100 <= v < 600:
                return v
        resp = getattr(e, "response", None)
        if isinstance(resp, dict):
            v = resp.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if isinstance(v, int):
                return v
    return None


def _retryable(exc: BaseException) -> bool:
    """Whether trying again can pass: not for a refusal of the request itself (400, 401, 403, 404,
    416, no credentials), nor for a timeout (the server had its whole timeout: a silent server is
    said once, not three times over)."""
    chain = _chain(exc)
    if _timeout_hit(chain, "") is not None or any(isinstance(e, RangeIgnored) for e in chain):
        return False
    status = _status(exc)
    if status in (400, 401, 403, 404, 416) or isinstance(exc, PermissionError):
        return False
    if isinstance(exc, FileNotFoundError) and (status is not None or len(chain) == 1):
        return False  # a real "not found"; one raised from a reset or a refusal may pass
    return "NoCredentials" not in type(exc).__name__


def with_retries(url: str, call, attempts: int = NET_RETRIES, budget: str = ""):
    """call() until it succeeds, backing off between tries that can pass; a NetworkError after.
    `budget` says what bounded one call, for the message when it is hit."""
    for k in range(attempts):
        try:
            return call()
        except Exception as exc:  # what a back-end raises varies: classified, never passed raw
            if k == attempts - 1 or not _retryable(exc):
                raise network_error(url, exc, budget) from None
            logging.getLogger(__name__).info("%s: trying again after %s", url, type(exc).__name__)
            time.sleep(0.2 * 2**k)
    raise AssertionError("unreachable")


@dataclass(frozen=True, slots=True)
class RemoteInfo:
    url: str
    size: int
    version: str  # ETag, generation or modification time: what says the object is unchanged


def _version(info: dict) -> str:
    for k in (
        "ETag",
        "etag",
        "generation",
        "VersionId",
        "version_id",
        "LastModified",
        "last_modified",
        "mtime",
        "updated",
        "Last-Modified",
    ):
        v = info.get(k)
        if v:
            return f"{k}={v}"
    return ""


def _info(url: str, fs, path: str, info: dict) -> RemoteInfo:
    size = info.get("size")
    if size is None:
        raise NetworkError(f"{printable(url)}: the server does not say the file's size")
    return RemoteInfo(url, int(size), _version(info))


def _url_of(fs, path: str, like: str) -> str:
    """A listed path back as a URL of the scheme the person used."""
    scheme = _URL.match(like)["scheme"]
    if "://" in path:
        return path
    return f"{scheme}://{path.lstrip('/')}"


def ask_info(url: str, fs, path: str) -> dict:
    """One object's size and version from its server, within NET_CONNECT_TIMEOUT +
    NET_READ_TIMEOUT (HTTP asks HEAD, then GET: without the bound, a silent server costs both)."""
    connect, read, _ = net_timeouts()
    budget = f"{connect + read:g} s (limits.NET_CONNECT_TIMEOUT + limits.NET_READ_TIMEOUT)"
    return with_retries(url, lambda: fs.info(path, **_budget(fs, connect + read)), budget=budget)


# What listings said, so opening a listed object asks nothing again: keyed, as `filesystem` is, by
# the URL and what its back-end reads from the environment (another endpoint or other credentials
# name another object under the same URL), each entry with the time it was said (an answer older
# than limits.REMOTE_LISTED_SECONDS is asked again: the object may have been rewritten since), at
# most limits.REMOTE_LISTED_MAX entries, the oldest dropped first.
_listed: dict[tuple[str, tuple], tuple[float, RemoteInfo]] = {}
_listed_lock = threading.Lock()


def _listed_key(url: str) -> tuple[str, tuple]:
    m = _URL.match(url)
    return url, _environment_of(m["scheme"].lower() if m else "")


def _remembered(url: str) -> RemoteInfo | None:
    """What a listing said of `url` under this environment, if said within REMOTE_LISTED_SECONDS."""
    hit = _listed.get(_listed_key(url))
    if hit is None or time.monotonic() - hit[0] > REMOTE_LISTED_SECONDS:
        return None
    return hit[1]


def _remember(info: RemoteInfo) -> None:
    """Keep what a listing (or a size request) said of an object, now; past REMOTE_LISTED_MAX
    entries the oldest go."""
    key = _listed_key(info.url)
    with _listed_lock:
        _listed.pop(key, None)  # said again: the newest, kept last
        _listed[key] = (time.monotonic(), info)
        while len(_listed) > REMOTE_LISTED_MAX:
            del _listed[next(iter(_listed))]


def info_of(url: str) -> RemoteInfo:
    """Size and version of one object: from the listing that named it, else one request (or the
    answer of the one `fetch_ahead` is making for it: waited for, never asked twice)."""
    hit = _remembered(url)
    if hit is not None:
        return hit
    _after_ahead(url)
    hit = _remembered(url)
    return hit if hit is not None else _info_now(url)


def _info_now(url: str) -> RemoteInfo:
    fs, path = filesystem(url)
    return _info(url, fs, path, ask_info(url, fs, path))


def listed_claim(url: str) -> tuple[int, str] | None:
    """(size, version) of an object as a listing in this process said them, or None: what a task
    carries to a worker process, so the worker asks no size (`note_listed` there)."""
    hit = _remembered(str(url))
    return (hit.size, hit.version) if hit is not None else None


def note_listed(url: str, size: int, version: str) -> None:
    """What a listing (made in another process) said of an object: opening it asks nothing again."""
    _remember(RemoteInfo(url, int(size), version))


def _complete(url: str, fs, items: list[tuple[str, dict]]) -> list[tuple[str, dict]]:
    """Listings that lack sizes or versions (an HTTP index page) are completed by asking each
    object, concurrently: 64 shards behind 100 ms cost 0.2 s, not 6.4 s."""
    from concurrent.futures import ThreadPoolExecutor  # start-up: kept off the CLI's path

    need = [k for k, (_, i) in enumerate(items) if i.get("size") is None or not _version(i)]
    if not need:
        return items
    with ThreadPoolExecutor(min(NET_LISTING_THREADS, len(need))) as pool:
        got = list(pool.map(lambda k: ask_info(url, fs, items[k][0]), need))
    items = list(items)
    for k, info in zip(need, got, strict=True):
        items[k] = (items[k][0], {**items[k][1], **info})
    return items


def expand(url: str) -> list[RemoteInfo]:
    """The objects a URL names: one object, every object under a "directory", or a glob's
    matches (shard patterns too), listed once, in natural order."""
    fs, path = filesystem(url)
    if any(c in path for c in "*?["):
        found = with_retries(url, lambda: fs.glob(path, detail=True))
        items = [(p, i) for p, i in found.items() if i.get("type", "file") != "directory"]
        if not items:
            raise NetworkError(f"{printable(url)}: no objects match")
    else:
        info = {"type": "directory"} if url.endswith("/") else ask_info(url, fs, path)
        if info.get("type") == "directory":
            listed = with_retries(url, lambda: fs.ls(path, detail=True))
            items = [
                (i["name"], i)
                for i in listed
                if i.get("type", "file") != "directory" and not i["name"].endswith("/")
            ]
            items = [(p, i) for p, i in items if not p.rstrip("/").rsplit("/", 1)[-1].startswith(".")]
            if not items:
                raise NetworkError(f"{printable(url)}: no objects under it")
        else:
            items = [(path, info)]
    items = _complete(url, fs, items)
    out = [_info(url if p == path else _url_of(fs, p, url), fs, p, i) for p, i in items]
    for r in out:
        _remember(r)
    key = lambda r: [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", r.url)]  # noqa: E731
    return sorted(out, key=key)


class _Pages:
    """Which pages of an object are kept: a byte each, grown as pages are kept, never sized by the
    object's claimed size (a server that says 1 PiB would cost a 1 GiB table before one read)."""

    __slots__ = ("_kept", "count")

    def __init__(self, count: int) -> None:
        self.count = count
        self._kept = bytearray()

    def __len__(self) -> int:
        return self.count

    def has(self, k: int) -> bool:
        return k < len(self._kept) and self._kept[k] == 1

    def all(self, a: int, z: int) -> bool:
        """Whether pages a..z-1 are all kept."""
        return a >= z or (z <= len(self._kept) and self._kept.find(0, a, z) < 0)

    def mark(self, a: int, z: int) -> None:
        if z > len(self._kept):
            self._kept.extend(bytes(z - len(self._kept)))
        self._kept[a:z] = b"\x01" * (z - a)


class RemoteBytes:
    """A remote object as the sliceable, read-only bytes a Source reads: `rb[a:b]`.

    What is fetched is kept in pages of 1 MB in the cache directory, in a file named by the
    object's URL and version: memory stays small, and the CRC pass, the analysis workers and a
    later session read what any of them fetched instead of the network (an object without a
    version gets an unlinked temporary file instead). A read that goes on where the last fetch
    stopped doubles the next fetch (a scan streams: a 26 MB shard costs 5 requests); any other
    fetches what it needs, rounded to pages (a row on screen). The kept bytes are trimmed to
    `limits.REMOTE_SPILL_BYTES`, least recently used first. Thread-safe: the page table is
    locked, the requests are not."""

    def __init__(self, info: RemoteInfo, fs=None, path: str | None = None, adopt: bool = True) -> None:
        self.info = info
        self.url = info.url
        self.size = info.size
        if fs is None:
            fs, path = filesystem(info.url)
        self.fs = fs
        self.path = path
        self._lock = threading.Lock()
        self._pages = _Pages((info.size + PAGE - 1) // PAGE)  # which pages the spill file holds
        self._fd: int | None = None  # the spill file, opened at the first read
        self._pages_fd: int | None = None  # its page table, shared with other processes
        self._spill_failed = False
        self._next = -1  # where the last fetch ended
        self._run = 1  # pages in the next sequential fetch
        self.requests = 0  # for benchmarks and tests: how many requests this file cost
        if _ahead and adopt:  # (not for the fetch ahead's own objects: it fills them)
            self._adopt()

    def _adopt(self) -> None:
        """Take over the kept file a fetch ahead of this object filled and held open (waiting for
        it, and raising what it failed with): the object is then read without opening it again."""
        _after_ahead(self.url)
        with _ahead_lock:
            done = _handed.pop(self.url, None)
        if done is None or done.info != self.info:
            if done is not None:
                done.close()
            return
        with done._lock:
            self._fd, self._pages_fd, self._pages = done._fd, done._pages_fd, done._pages
            done._fd = done._pages_fd = None

    def __len__(self) -> int:
        return self.size

    def __getitem__(self, s: slice) -> bytes:
        start, stop, _ = s.indices(self.size)
        return self.pread(start, stop - start)

    def _held(self, first: int, last: int) -> bool:
        """Whether pages first..last are kept here, asking the shared page table about the ones
        this process has not seen kept (another process may have fetched them). Lock held."""
        if self._fd is None and not self._open_spill():
            return False
        if self._pages.all(first, last + 1):
            return True
        if self._pages_fd is not None:
            have = os.pread(self._pages_fd, last + 1 - first, first)
            for k, v in enumerate(have):
                if v:
                    self._pages.mark(first + k, first + k + 1)
        return self._pages.all(first, last + 1)

    def pread(self, offset: int, n: int) -> bytes:
        n = max(0, min(n, self.size - offset))
        if n <= 0:
            return b""
        if _ahead:
            _after_ahead(self.url)  # being fetched whole: wait for it (raises what it failed with)
        first, last = offset // PAGE, (offset + n - 1) // PAGE
        with self._lock:
            held = self._held(first, last)
            if not held:
                sequential = self._next >= 0 and first * PAGE <= self._next <= (last + 1) * PAGE
                self._run = min(self._run * 2, NET_MAX_BLOCK // PAGE) if sequential else 1
                while first <= last and self._pages.has(first) and self._fd is not None:
                    first += 1  # the pages already here are not fetched again
                stop = min(len(self._pages), max(last + 1, first + self._run))
                while stop > last + 1 and self._pages.has(stop - 1):
                    stop -= 1
        if held:
            return _pread_all(self._fd, n, offset, self.url)
        start, end = first * PAGE, min(self.size, stop * PAGE)
        data = self._fetch(start, end)
        with self._lock:
            self._next = end
            if self._fd is not None:
                os.pwrite(self._fd, data, start)
                self._pages.mark(first, stop)
                if self._pages_fd is not None:  # after the data: a page marked kept is whole
                    os.pwrite(self._pages_fd, b"\x01" * (stop - first), first)
        if start <= offset:  # always so when nothing is kept (no page was skipped)
            return data[offset - start : offset - start + n]
        return _pread_all(self._fd, n, offset, self.url)  # part was here already, the rest now is

    def _open_spill(self) -> bool:
        """Open (or make) the file that keeps this object's fetched pages (lock held)."""
        if self._spill_failed:
            return False
        from tfrview.core.userdirs import cache_dir  # start-up: kept off the CLI's path

        where = cache_dir() / "remote" / "data"
        try:
            if where not in _made:  # once a process (a split opens thousands of objects)
                where.mkdir(parents=True, exist_ok=True)
                _made.add(where)
            if self.info.version:
                import hashlib  # start-up: kept off the CLI's path

                key = hashlib.sha256(f"{self.url}\n{self.info.version}".encode()).hexdigest()[:32]
                flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                self._fd = os.open(where / f"{key}.bin", flags, 0o600)
                self._pages_fd = os.open(where / f"{key}.pages", flags, 0o600)
                os.utime(where / f"{key}.bin")  # recently used: trimmed last
                global _opened
                _opened += 1
                if _opened % REMOTE_TRIM_EVERY == 1:  # a scan of the folder: not for each of 10,000 shards
                    trim_kept(REMOTE_SPILL_BYTES, keep=f"{key}.bin")
            else:
                self._fd = os.dup((tmp := tempfile.TemporaryFile(dir=where)).fileno())  # noqa: SIM115
                tmp.close()
        except OSError:
            self.close()
            if where in _made:  # the folder went away since (a cleared cache): made again, once
                _made.discard(where)
                return self._open_spill()
            self._spill_failed = True  # no room or no cache directory: fetch as read, keep nothing
            return False
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            for fd in (self._fd, self._pages_fd):
                if fd is not None:
                    os.close(fd)
        self._fd = self._pages_fd = None
        self._pages = _Pages(len(self._pages))

    def fetch_pages(self, spans: list[tuple[int, int]]) -> None:
        """Make the pages of these (offset, n) spans local with one batched, concurrent request
        (the rows on screen: their records are then read from here)."""
        with self._lock:
            runs: list[list[int]] = []
            for off, n in sorted(spans):
                if n <= 0 or off >= self.size or n > NET_MAX_BLOCK:
                    continue  # a span this long is read as usual, in pieces, not in one batch
                first, last = off // PAGE, (min(self.size, off + n) - 1) // PAGE
                if self._held(first, last):
                    continue
                for pg in range(first, last + 1):
                    if self._pages.has(pg):
                        continue
                    if runs and runs[-1][1] == pg:
                        runs[-1][1] = pg + 1
                    elif not runs or runs[-1][1] < pg:
                        runs.append([pg, pg + 1])
            if self._fd is None or not runs:
                return
        starts = [a * PAGE for a, _ in runs]
        ends = [min(self.size, z * PAGE) for _, z in runs]

        def call():
            self.requests += 1
            return self.fs.cat_ranges([self.path] * len(runs), starts, ends, on_error="raise")

        got = with_retries(self.url, call)
        with self._lock:
            for (a, z), start, end, data in zip(runs, starts, ends, got, strict=True):
                if isinstance(data, BaseException) or len(data) != end - start or self._fd is None:
                    continue  # read as usual later, with its own error if it has one
                os.pwrite(self._fd, data, start)
                self._pages.mark(a, z)
                if self._pages_fd is not None:
                    os.pwrite(self._pages_fd, b"\x01" * (z - a), a)

    def fetch_whole(self) -> bool:
        """Fetch the whole object in one request into its kept pages (nothing asked if they are
        all kept already). False when nothing can be kept (no cache directory: read as usual)."""
        need = self.needs_whole()
        if need is not True:
            return need is None
        return self.keep_whole(self._fetch(0, self.size))

    def needs_whole(self) -> bool | None:
        """True when the object's bytes are to be fetched whole (its kept file open, some pages
        missing); None when they are all kept already; False when nothing can be kept."""
        with self._lock:
            if self._fd is None and not self._open_spill():
                return False
            if not len(self._pages) or self._held(0, len(self._pages) - 1):
                return None
        return True

    def keep_whole(self, data: bytes) -> bool:
        """Keep the whole object's bytes (`data`, its size checked by the caller) in its pages."""
        with self._lock:
            if self._fd is None:
                return False
            os.pwrite(self._fd, data, 0)
            self._pages.mark(0, len(self._pages))
            if self._pages_fd is not None:  # after the data: a page marked kept is whole
                os.pwrite(self._pages_fd, b"\x01" * len(self._pages), 0)
        return True

    def refetch(self, offset: int, n: int) -> bytes:
        """The bytes again, from the server, past what is kept: a CRC mismatch is read twice before
        it is called damage (a network can corrupt what TCP's checksum misses). What is kept is
        replaced by what came the second time."""
        end = min(self.size, offset + n)
        data = self._fetch(offset, end)
        with self._lock:
            if self._fd is not None:
                os.pwrite(self._fd, data, offset)
        return data

    def _fetch(self, start: int, end: int) -> bytes:
        def call():
            self.requests += 1
            return self.fs.cat_file(self.path, start=start, end=end, **_budget(self.fs, request))

        request = net_timeouts()[2]
        data = with_retries(self.url, call)
        if len(data) == self.size and end - start < self.size:  # a server that ignores Range sent it all
            data = data[start:end]
        if len(data) < end - start:
            raise short_answer(
                self.url, self.fs, self.path, self.size, start + len(data), end - start, len(data)
            )
        if len(data) != end - start:
            raise NetworkError(
                f"{printable(self.url)}: the server sent {len(data):,} bytes for a range of "
                f"{end - start:,}; the object may have changed since it was opened"
            )
        return data


def short_answer(url: str, fs, path: str, size: int, served_to: int, asked: int, got: int) -> NetworkError:
    """What a read that came back short of the object's size means, said in one line. The size was
    the server's claim (HEAD, a listing); its last claimed byte is asked for once: a server that has
    none does not hold what it claimed, which is neither damage nor a file cut short that tfrview could
    vouch for (which of its two answers is wrong is not ours to guess). A server that has it sent a
    short answer: the object changed, or the connection was cut."""
    name = printable(url)
    try:
        last = fs.cat_file(path, start=size - 1, end=size, **_budget(fs, net_timeouts()[2]))
    except Exception as exc:  # what a back-end raises varies: classified, never passed raw
        if _status(exc) != 416:
            return network_error(url, exc)
        last = b""
    if len(last) == 1:
        return NetworkError(
            f"{name}: the server sent {got:,} bytes for a range of {asked:,}; "
            "the object may have changed since it was opened"
        )
    served = served_to if not last else len(last)  # more than one byte: it ignores ranges, sends it all
    logging.getLogger(__name__).info("%s: claimed %d bytes, serves %d", url, size, served)
    return NetworkError(f"{name}: the server claims {size:,} bytes but serves {served:,}")


_opened = 0  # objects whose kept bytes this process opened
_made: set = set()  # folders of kept bytes made by this process


def _pread_all(fd: int, n: int, offset: int, url: str) -> bytes:
    data = os.pread(fd, n, offset)
    if len(data) != n:  # the kept file was cut (a full disk, a cleared cache): never a short read
        raise NetworkError(f"{printable(url)}: the local copy of fetched bytes is damaged; reopen it")
    return data


def kept_dir():
    from tfrview.core.userdirs import cache_dir  # start-up: kept off the CLI's path

    return cache_dir() / "remote"


def kept_usage() -> tuple[int, int]:
    """(objects, bytes on disk) of the fetched remote bytes kept in the cache directory, with the
    pages they hold and the compression remembered for each: what `tfrview cache` reports. Objects
    without a version are kept in an unlinked file while open only, and are not counted."""
    objects = size = 0
    for sub in ("data", "compression"):
        try:
            with os.scandir(kept_dir() / sub) as entries:
                for e in entries:
                    with contextlib.suppress(OSError):
                        st = e.stat(follow_symlinks=False)
                        size += st.st_blocks * 512 if hasattr(st, "st_blocks") else st.st_size
                        objects += e.name.endswith(".bin")
        except OSError:
            continue
    return objects, size


def trim_kept(max_bytes: int, keep: str = "") -> tuple[int, int]:
    """Drop kept remote bytes, least recently used first, until at most `max_bytes` remain (on
    disk: the files are sparse). Returns (files, bytes) dropped. A file another process has open
    stays readable by it until it closes it."""
    where = kept_dir() / "data"
    try:
        files = [
            (e.stat().st_mtime, e.stat().st_blocks * 512, e)
            for e in os.scandir(where)
            if e.name.endswith(".bin")
        ]
    except OSError:
        return 0, 0
    total = sum(b for _, b, _ in files)
    dropped = [0, 0]
    for _, b, e in sorted(files, key=lambda f: f[0]):
        if total <= max_bytes:
            break
        if e.name == keep:
            continue
        with contextlib.suppress(OSError):
            os.unlink(e.path)
            os.unlink(e.path[: -len(".bin")] + ".pages")
        total -= b
        dropped[0] += 1
        dropped[1] += b
    return dropped[0], dropped[1]


def heads(infos: list[RemoteInfo]) -> list[bytes | NetworkError]:
    """The first bytes of many objects of one back-end, in one batched, concurrent request (a split
    of thousands of shards opens in seconds, not a request-time per shard)."""
    if not infos:
        return []
    fs, _ = filesystem(infos[0].url)
    paths = [filesystem(i.url)[1] for i in infos]
    ends = [min(i.size, HEAD_BYTES) for i in infos]

    def call():
        return fs.cat_ranges(paths, [0] * len(paths), ends, on_error="return")

    got = with_retries(infos[0].url, call)
    out: list[bytes | NetworkError] = []
    for info, path, end, data in zip(infos, paths, ends, got, strict=True):
        if isinstance(data, BaseException):
            out.append(network_error(info.url, data))
        elif len(data) < end:  # short of the claimed size: checked before anything is sized by it
            out.append(short_answer(info.url, fs, path, info.size, len(data), end, len(data)))
        else:
            out.append(bytes(data[:end]))
    return out


def _memo(info: RemoteInfo):
    """Where what this object's first bytes said (its compression) is remembered, by URL and
    version: reopening a split then reads no record bytes to open it."""
    import hashlib  # start-up: kept off the CLI's path

    from tfrview.core.userdirs import cache_dir  # start-up: kept off the CLI's path

    if not info.version:
        return None
    key = hashlib.sha256(f"{info.url}\n{info.version}".encode()).hexdigest()[:32]
    return cache_dir() / "remote" / "compression" / key


def known_compression(info: RemoteInfo) -> str | None:
    where = _memo(info)
    try:
        text = where.read_text().strip() if where is not None else ""
    except OSError:
        return None
    return Compression.of(text)


def remember_compression(info: RemoteInfo, compression: str) -> None:
    where = _memo(info)
    if where is None:
        return
    try:
        where.parent.mkdir(parents=True, exist_ok=True)
        tmp = where.with_name(f".{where.name}.{os.getpid()}")
        tmp.write_text(compression)
        os.replace(tmp, where)
    except OSError:
        pass  # a cache that cannot be written is no error


# --- many small objects in flight ---------------------------------------------------------------------
# A task of the analysis pass reads its files one after another; their objects are fetched ahead,
# limits.NET_IN_FLIGHT at a time, each whole in one request into the kept pages (which the file's
# own reads then find). `_ahead` holds, while a `fetch_ahead` runs, each object's future: a read or
# a size request of that object waits for it, and fails with what it failed with (asked once).
# An asynchronous back-end's objects (s3fs, gcsfs, adlfs, HTTP) are fetched by one coroutine on its
# own event loop, NET_IN_FLIGHT lanes taking the objects in order: no thread a request (a pool of 32
# threads, each handing one call at a time to the loop and waiting for it, cost ~1.5 ms of CPU an
# object in thread hand-offs and GIL contention). Other back-ends are fetched by a pool of threads.

log = logging.getLogger(__name__)
_ahead: dict[str, object] = {}  # URL -> Future of its fetch ahead: None, or the NetworkError it met
_ahead_lock = threading.Lock()


def _after_ahead(url: str) -> None:
    """Wait for the fetch ahead of this object, if one is under way; raise what it failed with."""
    with _ahead_lock:
        fut = _ahead.get(url)
    if fut is None or threading.current_thread().name.startswith(_AHEAD_THREADS):
        return
    from concurrent.futures import CancelledError  # start-up: kept off the CLI's path

    try:
        failed = fut.result()
    except CancelledError:  # the block that started it ended: read as usual
        return
    if failed is not None:
        raise failed


_AHEAD_THREADS = "tfrview-fetch-ahead"
_handed: dict[str, RemoteBytes] = {}  # fetched ahead, kept file open, for the reader to take over


def _fetch_one(url: str, claim: tuple[int, str] | None) -> NetworkError | None:
    """One object of a fetch ahead: its size (unless claimed), then its bytes whole when small
    and versioned (kept by URL and version, where the file's own reads find them)."""
    try:
        info = _remembered(url)
        if info is None:
            info = _info_now(url)
            _remember(info)
        if not _worth_fetching(url, info):
            return None
        rb = RemoteBytes(info)
        kept = False
        try:
            kept = rb.fetch_whole()
        finally:
            _hand(url, rb, kept)
    except Exception as exc:
        return _ahead_failed(url, exc)
    return None


def _worth_fetching(url: str, info: RemoteInfo) -> bool:
    """Is an object fetched whole ahead: small (`limits.NET_SMALL_OBJECT_BYTES`), not empty, and
    with a version its kept pages can be filed under."""
    if info.size > limits.NET_SMALL_OBJECT_BYTES:
        log.debug("%s: %d bytes, over limits.NET_SMALL_OBJECT_BYTES: read as scanned", url, info.size)
        return False
    return bool(info.version and info.size)


def _ahead_failed(url: str, exc: Exception) -> NetworkError | None:
    """A fetch ahead's failure: a network failure is the object's answer (said by the file's own
    read); anything else only cost the time saved, logged, and the file is read as usual."""
    if isinstance(exc, NetworkError):
        return exc
    log.info("%s: fetch ahead failed (%s): read as usual", url, printable(str(exc))[:200])
    return None


def fetched_whole(url: str) -> tuple[RemoteInfo, bytes] | None:
    """An object a running `fetch_ahead` kept whole, as (its info, its bytes), taken over from the
    fetch, or from its kept file (its reader then frames it from memory, with no Source and no reads
    in chunks); None when none was kept for it (not asked ahead, too big, no cache directory): read
    it as usual. Raises the NetworkError its fetch met, as its reads would."""
    with _ahead_lock:
        if url not in _ahead:
            return None
    _after_ahead(url)
    with _ahead_lock:
        rb = _handed.pop(url, None)
    info = _remembered(url)
    if rb is None and info is not None and 0 < info.size <= limits.NET_SMALL_OBJECT_BYTES and info.version:
        rb = RemoteBytes(info, adopt=False)  # kept whole, not held open (past REMOTE_HANDED_MAX)
        if rb.needs_whole() is not None:
            rb.close()
            return None
    if rb is None:
        return None
    try:
        with rb._lock:
            whole = rb._fd is not None and rb._pages.all(0, len(rb._pages))
            data = os.pread(rb._fd, rb.size + 1, 0) if whole else b""
    finally:
        rb.close()
    return (rb.info, data) if whole and len(data) == rb.size else None


def _hand(url: str, rb: RemoteBytes, kept: bool) -> None:
    """Hold a fetched object's kept file open for its reader (`RemoteBytes._adopt`), or close it."""
    with _ahead_lock:
        if kept and url in _ahead and len(_handed) < REMOTE_HANDED_MAX:
            _handed[url] = rb
            return
    rb.close()


async def _retrying(url: str, make, seconds: float, budget: str):
    """`await make()` within `seconds`, tried again as `with_retries` does; a NetworkError after."""
    import asyncio  # start-up: kept off the CLI's path

    for k in range(NET_RETRIES):
        try:
            return await asyncio.wait_for(make(), seconds)
        except Exception as exc:  # what a back-end raises varies: classified, never passed raw
            if k == NET_RETRIES - 1 or not _retryable(exc):
                raise network_error(url, exc, budget) from None
            log.info("%s: trying again after %s", url, type(exc).__name__)
            await asyncio.sleep(0.2 * 2**k)
    raise AssertionError("unreachable")


direct_gets = 0  # for tests and benchmarks: the GETs sent by _DirectS3 in this process


class _DirectS3:
    """Whole-object GETs of one bucket's small objects, each signed by botocore's own SigV4 signer
    and sent on one aiohttp session of this task's, outside botocore's client: its pipeline
    (parameter checks, endpoint rules, a dozen events, response parsing) cost ~2 ms of CPU a
    request, ~3x the GET itself, and a split of thousands of small objects is that many requests.
    Where to send them is botocore's: the address it presigns for the first object (endpoint rules,
    path or host style, region), its credentials (refreshed, with their session token). Anything
    unusual goes through s3fs as before: a bucket of requester pays, extra request arguments,
    versions, S3 Express; an answer other than the object's bytes or S3's NoSuchKey (a redirect to
    another region, 403, 500...) sends that object through s3fs (its error said in s3fs's words),
    and a refusal of the signature (400, 403) or a redirect, every later one of the task too."""

    def __init__(self, session, bucket: str, prefix: str, region: str, credentials) -> None:
        self.session, self.bucket, self.prefix, self.region = session, bucket, prefix, region
        self.credentials = credentials  # None: an anonymous (unsigned) client
        self.off = False
        self.proxy: str | None = None

    @classmethod
    async def open(cls, fs, first_path: str) -> _DirectS3 | None:
        """The direct path for `fs`'s bucket of `first_path`, or None (not S3, or unusual)."""
        import inspect  # start-up: kept off the CLI's path
        import urllib.request  # start-up: kept off the CLI's path
        from urllib.parse import urlsplit  # start-up: kept off the CLI's path

        if type(fs).__name__ != "S3FileSystem" or fs.req_kw or fs.s3_additional_kwargs or fs.version_aware:
            return None
        import aiohttp  # heavy: aiohttp on first use only
        from botocore import UNSIGNED  # start-up: kept off the CLI's path
        from botocore.utils import percent_encode  # start-up: kept off the CLI's path

        bucket, key, version = fs.split_path(first_path)
        if version or bucket.endswith("--x-s3"):  # a version, an S3 Express bucket: botocore's own
            return None
        client = await fs.set_session()
        url = await client.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": key})
        parts = urlsplit(url)
        quoted = percent_encode(key, safe="/~")
        if not parts.path.endswith("/" + quoted) or parts.scheme not in ("http", "https"):
            return None
        how = client.meta.config.signature_version
        credentials = None
        if how is not UNSIGNED:
            if how not in (None, "s3v4", "v4") or not client.meta.region_name:
                return None  # another signature: botocore's own
            credentials = client._get_credentials()
            credentials = credentials.get_frozen_credentials() if credentials is not None else None
            if inspect.isawaitable(credentials):
                credentials = await credentials
            if credentials is None:
                return None  # none found: s3fs says so
        connect, read, request = net_timeouts()
        session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=limits.NET_IN_FLIGHT),
            timeout=aiohttp.ClientTimeout(total=request, sock_connect=connect, sock_read=read),
            auto_decompress=False,
        )
        prefix = f"{parts.scheme}://{parts.netloc}{parts.path[: len(parts.path) - len(quoted)]}"
        direct = cls(session, bucket, prefix, client.meta.region_name or "", credentials)
        # the proxy the environment names, as botocore would use it: asked once, not by aiohttp's
        # trust_env at each request (a read of ~/.netrc in a thread of its own, ~0.3 ms a request)
        if not urllib.request.proxy_bypass(parts.hostname or ""):
            direct.proxy = urllib.request.getproxies().get(parts.scheme)
        return direct

    async def get(self, url: str, path: str, size: int) -> bytes | None:
        """The object's `size` bytes, or None: fetch it through s3fs (which says any error). A
        timeout is said here, in the words that name its limit (asking again would wait as long)."""
        from botocore.auth import S3SigV4Auth  # start-up: kept off the CLI's path
        from botocore.awsrequest import AWSRequest  # start-up: kept off the CLI's path
        from botocore.utils import percent_encode  # start-up: kept off the CLI's path
        from yarl import URL  # aiohttp's own

        bucket, key, version = _split_s3(path)
        if self.off or bucket != self.bucket or version:
            return None
        global direct_gets
        direct_gets += 1
        req = AWSRequest(
            "GET", self.prefix + percent_encode(key, safe="/~"), {"Range": f"bytes=0-{size - 1}"}
        )
        if self.credentials is not None:
            S3SigV4Auth(self.credentials, "s3", self.region).add_auth(req)
        try:
            async with self.session.get(
                URL(req.url, encoded=True),
                headers=dict(req.headers.items()),
                allow_redirects=False,
                proxy=self.proxy,
            ) as resp:
                if resp.status == 404 and b"<Code>NoSuchKey</Code>" in await resp.content.read(4096):
                    raise FileNotFoundError(f"{self.bucket}: no such key")  # said as s3fs's 404 is
                if resp.status not in (200, 206):
                    self.off = self.off or resp.status in (301, 302, 307, 400, 403)
                    return None
                return await resp.read()
        except FileNotFoundError as exc:
            raise network_error(url, exc) from None
        except Exception as exc:  # what aiohttp raises varies: a timeout said here, the rest asked again
            if _timeout_hit(_chain(exc), "") is not None:
                raise network_error(url, exc) from None
            return None

    async def close(self) -> None:
        await self.session.close()


def _split_s3(path: str) -> tuple[str, str, str | None]:
    """(bucket, key, version) of an s3fs path, as s3fs splits it."""
    bucket, _, rest = path.partition("/")
    key, _, version = rest.partition("?versionId=")
    return bucket, key, version or None


async def _fetch_one_async(fs, url: str, path: str, direct: _DirectS3 | None = None) -> NetworkError | None:
    """`_fetch_one` on the back-end's event loop: its size (unless listed), then its bytes whole
    into its kept pages. An answer of another length is not kept: the file's own read says why."""
    connect, read, request = net_timeouts()
    try:
        info = _remembered(url)
        if info is None:
            budget = f"{connect + read:g} s (limits.NET_CONNECT_TIMEOUT + limits.NET_READ_TIMEOUT)"
            info = _info(url, fs, path, await _retrying(url, lambda: fs._info(path), connect + read, budget))
            _remember(info)
        if not _worth_fetching(url, info):
            return None
        rb = RemoteBytes(info, fs, path, adopt=False)
        kept = False
        try:
            need = rb.needs_whole()
            if need is None:
                kept = True  # kept whole already (another process, an earlier session)
            elif need:
                data = await direct.get(url, path, info.size) if direct is not None else None
                if data is None:
                    data = await _retrying(
                        url, lambda: fs._cat_file(path, start=0, end=info.size), request, _request_budget()
                    )
                if len(data) == info.size:
                    kept = rb.keep_whole(data)
                else:
                    log.info("%s: %d bytes of %d fetched ahead: read as usual", url, len(data), info.size)
        finally:
            _hand(url, rb, kept)
    except Exception as exc:
        return _ahead_failed(url, exc)
    return None


async def _fetch_all(fs, items: list[tuple[str, str]], futures: dict) -> None:
    """Fetch `items` ((url, path)) in order, limits.NET_IN_FLIGHT at a time, each object's answer
    set on its future (None, or the NetworkError it met); a future cancelled meanwhile is skipped.
    Every future is answered, whatever happens here (a reader waits on it)."""
    import asyncio  # start-up: kept off the CLI's path

    async def lane(todo) -> None:
        for url, path in todo:
            fut = futures[url]
            if not fut.set_running_or_notify_cancel():
                continue  # the block that asked for it ended
            failed = None
            try:
                failed = await _fetch_one_async(fs, url, path, direct)
            finally:
                fut.set_result(failed)

    direct = None
    try:
        start = getattr(fs, "set_session", None)
        todo = iter(items)
        if asyncio.iscoroutinefunction(start):
            await start()  # the client made once, before the lanes share it
            try:
                direct = await _DirectS3.open(fs, items[0][1])
            except Exception as exc:  # the direct path only saves time: s3fs's is the usual one
                log.info("direct requests not used: %s", printable(str(exc))[:200])
        else:
            await lane(iter([next(todo)]))  # the first alone: it makes the client the others share
        await asyncio.gather(*(lane(todo) for _ in range(min(limits.NET_IN_FLIGHT, len(items)))))
    finally:
        if direct is not None:
            await direct.close()
        for fut in futures.values():
            if not fut.running() and not fut.done() and fut.set_running_or_notify_cancel():
                fut.set_result(None)  # not fetched ahead: read as usual


def _said(whole) -> None:
    if not whole.cancelled() and whole.exception() is not None:
        log.info("fetch ahead: %s", printable(str(whole.exception()))[:200])


@contextlib.contextmanager
def fetch_ahead(objects: list[tuple[str, tuple[int, str] | None]]):
    """While the block runs, the remote objects among `objects` ((path, (size, version) or None))
    are fetched, in this order, limits.NET_IN_FLIGHT requests at a time: the sizes not claimed by a
    listing, then each small object whole. The block reads them one by one as usual; a read of one
    not fetched yet waits for it. Local paths are left alone. Leaving the block drops what has not
    started; a request under way ends within its own timeout, unwaited."""
    todo = [(str(u), c) for u, c in objects if is_url(str(u))]
    todo = [(u, c) for u, c in todo if u not in _ahead]
    for url, claim in todo:
        if claim is not None and _remembered(url) is None:
            note_listed(url, *claim)
    if len(todo) < 2:  # one object: its own read is as quick (local files: no asyncio loaded, ~35 ms)
        yield
        return
    import asyncio  # start-up: kept off the CLI's path
    from concurrent.futures import Future, ThreadPoolExecutor  # start-up: kept off the CLI's path

    loops: dict[int, tuple[object, list[tuple[str, str]]]] = {}  # one coroutine a back-end
    threaded: list[tuple[str, tuple[int, str] | None]] = []
    for url, claim in todo:
        try:
            fs, path = filesystem(url)
        except NetworkError:
            threaded.append((url, claim))  # its own read says what is missing
            continue
        if getattr(fs, "async_impl", False) and getattr(fs, "_loop", None) is not None:
            loops.setdefault(id(fs), (fs, []))[1].append((url, path))
        else:
            threaded.append((url, claim))
    pool = None
    mine: list[str] = []
    try:
        with _ahead_lock:
            for fs, items in loops.values():
                futures = {url: Future() for url, _ in items}
                _ahead.update(futures)
                mine += futures
                asyncio.run_coroutine_threadsafe(_fetch_all(fs, items, futures), fs.loop).add_done_callback(
                    _said
                )
        if threaded:
            pool = ThreadPoolExecutor(
                min(limits.NET_IN_FLIGHT, len(threaded)), thread_name_prefix=_AHEAD_THREADS
            )
            first = threaded[0][0]
            with _ahead_lock:  # the first alone: it makes the back-end's client, which others then share
                _ahead[first] = pool.submit(_fetch_one, *threaded[0])
                mine.append(first)
            _ahead[first].result()
            with _ahead_lock:
                for url, claim in threaded[1:]:
                    _ahead[url] = pool.submit(_fetch_one, url, claim)
                    mine.append(url)
        yield
    finally:
        with _ahead_lock:
            for url in mine:
                fut = _ahead.pop(url, None)
                if fut is not None:
                    fut.cancel()  # not started: never will be
                left = _handed.pop(url, None)
                if left is not None:
                    left.close()
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
