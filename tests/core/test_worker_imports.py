"""What a pool worker imports (issue 19): unpickling shard.analyze_batch loads the analysis package,
whose names load on first use, so a worker that frames and checks CRCs imports neither merge's
checks nor pyarrow; `tfrview.core.merge` names the function."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    p = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False
    )
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_a_worker_framing_small_files_imports_no_checks_and_no_pyarrow(tmp_path):
    from tests.helpers import framed, payloads

    paths = []
    for i in range(3):
        p = tmp_path / f"s-{i}.tfrecord"
        p.write_bytes(framed(payloads(20 + i))[0])
        paths.append(str(p))
    out = _run(
        "import os, pickle, sys\n"
        f"os.environ['XDG_CACHE_HOME'] = {str(tmp_path / 'cache')!r}\n"
        "from tfrview.core.analysis.shard import ShardTask, analyze_batch\n"
        "fn = pickle.loads(pickle.dumps(analyze_batch))\n"  # as a spawned worker gets it
        f"rs = fn([ShardTask(p, i) for i, p in enumerate({paths!r})])\n"
        "print([r.records for r in rs])\n"
        "print(sorted(m for m in ('pyarrow', 'tfrview.core.analysis.checks', 'tfrview.core.analysis.merge')"
        " if m in sys.modules))\n"
    )
    assert out.splitlines() == ["[20, 21, 22]", "[]"]


def test_the_public_face_names_merge_the_function_and_the_package_its_submodule():
    out = _run(
        "import tfrview.core as core\n"
        "import tfrview.core.analysis as a\n"
        "from tfrview.core.analysis import plan, run_tasks, DatasetAnalysis\n"
        "print(callable(core.merge), core.merge.__module__, type(a.merge).__name__, plan.__module__,"
        " run_tasks.__module__, DatasetAnalysis.__name__)\n"
    )
    assert out.split() == [
        "True",
        "tfrview.core.analysis.merge",
        "module",
        "tfrview.core.analysis.shard",
        "tfrview.core.analysis.pool",
        "DatasetAnalysis",
    ]


def test_one_file_framed_here_loads_no_multiprocessing_and_no_log_handlers(tmp_path):
    """`verify` of one file runs its pass in this process (its big file's parts are `subprocess`
    children): neither `multiprocessing` nor `concurrent.futures.process` is loaded, and no process
    but the window's loads `logging.handlers` (socket, queue: start-up of every worker)."""
    from tests.helpers import framed, payloads

    path = tmp_path / "one.tfrecord"
    path.write_bytes(framed(payloads(30))[0])
    out = _run(
        "import os, sys\n"
        f"os.environ['XDG_CACHE_HOME'] = {str(tmp_path / 'cache')!r}\n"
        "from tfrview.cli import main\n"
        f"rc = main(['verify', '--quiet', {str(path)!r}])\n"
        "print(rc, sorted(m for m in ('multiprocessing', 'concurrent.futures.process', 'logging.handlers')"
        " if m in sys.modules))\n"
    )
    assert out.split() == ["0", "[]"]


def test_the_cli_as_a_process_answers_with_pyarrow_but_never_loads_pandas(tmp_path):
    """pyarrow imports pandas (where installed) the first time it is handed anything: ~0.3 s of
    every command. `tfrview` as a process of its own hides it (childproc.hide_pandas); a program
    that calls `main([...])` or imports the library keeps its pandas."""
    data = ROOT / "tests" / "data" / "raccoon_test-first12.record"
    out = _run(
        "import os, sys\n"
        f"os.environ['XDG_CACHE_HOME'] = {str(tmp_path / 'cache')!r}\n"
        f"sys.argv = ['tfrview', 'export', '--parquet', {str(tmp_path / 'f.parquet')!r}, {str(data)!r}]\n"
        "from tfrview.cli import main\n"
        "code = main()\n"
        "import pyarrow.parquet as pq\n"
        f"print(code, pq.read_table({str(tmp_path / 'f.parquet')!r}).num_rows, 'pyarrow' in sys.modules,"
        " 'pandas' in sys.modules)\n"
    )
    assert out.splitlines()[-1] == "0 12 True False"


def test_tfrviews_own_processes_ask_numpy_for_one_blas_thread_and_keep_a_persons_setting():
    """OpenBLAS starts a thread a core as numpy loads (~0.1 s of CPU each process): `tfrview` as a
    process of its own and every worker it spawns ask for one (childproc.one_blas_thread) before
    numpy loads; a value the person set is kept, and a program calling `main([...])` keeps its own."""
    code = (
        "import os, sys\n"
        "os.environ.pop('OPENBLAS_NUM_THREADS', None)\n"
        "{setup}"
        "sys.argv = ['tfrview', 'no-such-command']\n"
        "from tfrview.cli import main\n"
        "before = 'numpy' in sys.modules\n"
        "main({args})\n"
        "from tfrview.core.childproc import child_env\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), child_env().get('OPENBLAS_NUM_THREADS'), before)\n"
    )
    assert _run(code.format(setup="", args="")).splitlines()[-1] == "1 1 False"
    kept = "os.environ['OPENBLAS_NUM_THREADS'] = '3'\n"
    assert _run(code.format(setup=kept, args="")).splitlines()[-1] == "3 3 False"
    assert _run(code.format(setup="", args="['no-such-command']")).splitlines()[-1] == "None 1 False"
