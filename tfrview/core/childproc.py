"""What every worker process tfrview starts has in common: how it is started (`spawn`, the one
spawner), its priority, and its death with its parent."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable

from tfrview.core.logs import configure_child

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # the checkout


def cores() -> int:
    """The cores this process may use: the default number of worker processes, and of the ranges a
    big plain file is framed in (one rule, in a module that loads no numpy: the CLI's parser asks)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


def child_argv(module: str, *args: str) -> list[str]:
    """`python -m module args`, with this interpreter."""
    return [sys.executable, "-m", module, *args]


def one_blas_thread(env: dict[str, str] | os._Environ = os.environ) -> None:
    """numpy's OpenBLAS starts a thread a core as numpy loads (~0.1-0.15 s of CPU a process on a
    2-core machine: the CLI, each part process, pool worker and job, and the window), for matrix
    products tfrview never makes large. tfrview's own processes ask for one thread before numpy
    loads (`cli.main` as a process of its own, and every worker's environment, `child_env`); a
    setting the person made is kept, and a program that imports tfrview keeps its own."""
    env.setdefault("OPENBLAS_NUM_THREADS", "1")


def child_env() -> dict[str, str]:
    """The environment of a worker: ours, with this checkout importable (as when run from source),
    and one BLAS thread (`one_blas_thread`)."""
    env = dict(os.environ)
    one_blas_thread(env)
    env["PYTHONPATH"] = _ROOT + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


class _NoPandas:
    """An import finder that says pandas is not installed. pyarrow asks whether pandas is, the first
    time it is handed anything (a table, a list), and imports it when it is: ~0.3 s of every
    process, for nothing, since tfrview never hands pyarrow a DataFrame. pyarrow remembers the
    answer, so hiding pandas for a whole process of ours costs nothing else."""

    def find_spec(self, name: str, path=None, target=None):
        if name == "pandas" or name.startswith("pandas."):
            raise ModuleNotFoundError("tfrview's own processes do not load pandas", name=name)
        return None


def hide_pandas() -> None:
    """Called first in tfrview's own processes (the CLI, pool workers, jobs), never on import of the
    library: a program that imports tfrview keeps its pandas."""
    if "pandas" not in sys.modules and not any(isinstance(f, _NoPandas) for f in sys.meta_path):
        sys.meta_path.insert(0, _NoPandas())


def write_all(data, fd: int = 1) -> None:
    """All of `data` to `fd` (a worker's answer on its stdout), by os.write until every byte is taken.
    Not sys.stdout.buffer: a write of megabytes through it to a pipe, stopped and continued on its
    way (Ctrl-Z then fg, a tracer such as py-spy), lost all but the first pipeful and still exited 0
    (CPython 3.11), so the parent read a short or misaligned answer."""
    view = memoryview(data).cast("B")
    at = 0
    while at < len(view):
        at += os.write(fd, view[at:])


class PipeOut:
    """A worker's stdout as a binary stream whose every write is whole (`write_all`)."""

    def __init__(self, fd: int = 1) -> None:
        self.fd = fd

    def write(self, data) -> None:
        write_all(data, self.fd)

    def flush(self) -> None:
        """Nothing is buffered."""


def lower_priority() -> None:
    """Called first thing in a worker: below the window's CPU priority, so the UI stays smooth while
    every core works (os.nice raises the niceness of this process only)."""
    with contextlib.suppress(OSError, AttributeError):
        os.nice(10)


def die_with_parent() -> None:
    """A pool worker ends when the process that started it does (killed by a window's Cancel, say),
    rather than reading on alone. Linux only (prctl PR_SET_PDEATHSIG); elsewhere the pool's pipes
    close and the worker ends after its current file."""
    import ctypes  # standard library, used here only
    import signal

    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def worker_start(parent: int | None = None, lower: bool = True) -> None:
    """First thing in a pool worker: lower priority (unless not `lower`: the parent's, inherited),
    die with the parent (`parent`: its pid; a parent that died while this worker was starting is
    caught here, after the death signal is armed), leave Ctrl-C to it, log to its stderr at the
    parent's level."""
    import signal

    hide_pandas()
    if lower:
        lower_priority()
    configure_child()
    die_with_parent()
    if parent is not None and os.getppid() != parent:
        os._exit(0)
    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def spawn(
    module: str,
    *args: str,
    stdin_text: str | None = None,
    text: bool = False,
    keep_stderr: bool = False,
    stdin_later: bool = False,
    pass_fds: tuple[int, ...] = (),
    share_stderr: bool = False,
) -> subprocess.Popen:
    """Start `python -m module args` as a worker: this interpreter, this checkout importable,
    results on its stdout (bytes, or text lines), `stdin_text` written to it and closed (a spec
    can be far longer than a command line; `stdin_later`: the pipe is left open for the caller to
    write it), its stderr kept in a temporary file for the reader to quote when the worker dies
    without saying why (`proc.error_file`), else dropped (`share_stderr`: this process's, inherited:
    what the worker says reaches the person). `pass_fds`: descriptors it inherits (the same
    numbers there)."""
    import tempfile  # standard library, used here only

    err = tempfile.TemporaryFile(mode="w+") if keep_stderr else None if share_stderr else subprocess.DEVNULL  # noqa: SIM115 - closed by its reader
    proc = subprocess.Popen(
        child_argv(module, *args),
        env=child_env(),
        stdout=subprocess.PIPE,
        stderr=err,
        text=text,
        stdin=subprocess.PIPE if stdin_text is not None or stdin_later else subprocess.DEVNULL,
        bufsize=-1 if text else 1 << 20,
        pass_fds=pass_fds,
    )
    proc.error_file = err if keep_stderr else None
    if stdin_text is not None:
        try:
            proc.stdin.write(stdin_text if text else stdin_text.encode())
            proc.stdin.close()
        except BrokenPipeError:  # it died at once: its exit code and stderr say why, to whoever waits on it
            pass
    return proc


_AHEAD: dict[str, list[subprocess.Popen]] = {}


def started_ahead(module: str) -> list[subprocess.Popen]:
    """The processes of `module` started ahead and not yet given their work (taken by popping)."""
    return _AHEAD.setdefault(module, [])


PARTS_MODULE = "tfrview.core.tfrecord.parts"
_MAX_CHUNKS = 4096  # tokens in one pipe: 32 KB, below its 64 KB, so writing them never waits
_RECORDS_A_CHUNK = 512  # a chunk holds at least this many of a file's long records (its search: ~2 %)


def record_scale(read: Callable[[int, int], bytes], size: int, records: int = 16) -> int:
    """The longest of a plain file's first `records` records (their lengths read from their
    headers, `read(offset, n)`; 0 when none can be): what chunks are sized to (`chunk_plan`)."""
    at = longest = 0
    for _ in range(records):
        head = read(at, 8)
        if len(head) < 8:
            break
        n = int.from_bytes(head[:8], "little")
        if at + n + 16 > size:
            break
        longest = max(longest, n)
        at += n + 16
    return longest


def chunk_plan(size: int, workers: int, record: int = 0) -> tuple[int, int]:
    """(bytes a chunk, chunks) of a plain file of `size` bytes framed by `workers` processes (the
    caller included): about limits.FRAME_CHUNK_BYTES each, or _RECORDS_A_CHUNK times `record` (a
    long record's length, `record_scale`) when more: each chunk's first header is searched for
    byte by byte (~20 ns a byte, half a record on average), which must stay small beside framing
    the chunk (~1 ns a byte). At least two a worker, at most _MAX_CHUNKS; the last may be shorter.
    Here, as it loads no numpy: `start_parts_ahead` deals them before the caller's imports."""
    from tfrview.core import limits

    want = max(1, limits.FRAME_CHUNK_BYTES, _RECORDS_A_CHUNK * record)
    n = min(_MAX_CHUNKS, max(2 * workers, -(-size // want)))
    chunk = max(1, -(-size // max(1, n)))
    return chunk, -(-size // chunk)


def deal_chunks(size: int, workers: int, record: int = 0) -> tuple[int, int]:
    """A pipe holding one token (its number, 8 bytes) a chunk of a file of `size` bytes, its write
    end closed: the caller and its part processes (given the read end) each take the next token
    when free, so whoever starts first or runs faster frames more and all end together (a read of 8
    bytes takes one token whole; an empty pipe with no writer says the end). (read end, chunk bytes)."""
    chunk, n = chunk_plan(size, workers, record)
    r, w = os.pipe()
    try:
        write_all(b"".join(k.to_bytes(8, "little") for k in range(n)), w)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    return r, chunk


def start_parts_ahead(size: int, jobs: int, path: str | None = None) -> int:
    """Start now the part processes (`tfrecord.parts`) a plain file of `size` bytes framed on `jobs`
    cores will need; here, as this module imports neither numpy nor the framing, so they start
    before the caller loads them (~0.15 s). Each gets the read end of one pipe of chunk tokens
    (`deal_chunks`); with `path` also the file, and frames chunks while the caller is still
    importing (`part`: path, size, token pipe, chunk bytes; `parts.frame_in_parts` takes them when
    the file is the one it frames, else they are killed); without, they wait on stdin for the path.
    How many were started."""
    from tfrview.core import limits

    if jobs < 2 or size < limits.FRAME_PARTS_BYTES:
        return 0
    ahead = started_ahead(PARTS_MODULE)
    if ahead:
        return 0
    n = min(jobs, size // max(1, limits.FRAME_PART_MIN_BYTES)) - 1
    if n < 1:
        return 0
    record = 0
    if path is not None:
        with contextlib.suppress(OSError), open(path, "rb", buffering=0) as f:
            record = record_scale(lambda at, k: os.pread(f.fileno(), k, at), size)
    fd, chunk = deal_chunks(size, n + 1, record)
    for _ in range(n):
        line = f"{fd} {chunk} {size} {path}\n" if path is not None else None
        proc = spawn(
            PARTS_MODULE, "-", stdin_text=line, stdin_later=line is None, keep_stderr=True, pass_fds=(fd,)
        )
        proc.part = (path, size, fd, chunk)
        ahead.append(proc)
    return n


def close_tokens(procs: list[subprocess.Popen]) -> None:
    """The token pipes these part processes were given, closed on this side (once each)."""
    for fd in {p.part[2] for p in procs if hasattr(p, "part")}:
        with contextlib.suppress(OSError):
            os.close(fd)


def drop_parts_ahead() -> None:
    """Part processes started ahead that nothing took end now: one given a range would frame it for
    nobody."""
    ahead = started_ahead(PARTS_MODULE)
    close_tokens(ahead)
    while ahead:
        proc = ahead.pop()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for pipe in (proc.stdin, proc.stdout, proc.error_file):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
