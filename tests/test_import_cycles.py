"""The import-cycle gate of `make test` (pyproject's `acyclic_siblings` contract) catches a cycle
hidden in a function-level import, which a reader of module headers would miss."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cycle_contract() -> dict:
    contracts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]
    (contract,) = [c for c in contracts if c["type"] == "acyclic_siblings"]
    assert contract["ancestors"] == ["tfrview"]
    return contract


def _lint(tmp_path: Path, files: dict[str, str]) -> subprocess.CompletedProcess:
    pkg = tmp_path / "cyc"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    for name, text in files.items():
        (pkg / name).write_text(text)
    contract = _cycle_contract()
    (tmp_path / ".importlinter").write_text(
        f"[importlinter]\nroot_package = cyc\n\n[importlinter:contract:cycles]\nname = {contract['name']}\n"
        f"type = {contract['type']}\nancestors = cyc\n"
    )
    lint = Path(sys.executable).with_name("lint-imports")
    return subprocess.run(
        [str(lint), "--config", str(tmp_path / ".importlinter"), "--no-cache"],
        cwd=tmp_path,
        env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_function_level_cycle_breaks_the_contract(tmp_path: Path) -> None:
    r = _lint(tmp_path, {"a.py": "import cyc.b\n", "b.py": "def f():\n    from cyc import a\n    return a\n"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert "BROKEN" in r.stdout
    assert ".a -> .b" in r.stdout or ".b -> .a" in r.stdout


def test_no_cycle_keeps_it(tmp_path: Path) -> None:
    r = _lint(tmp_path, {"a.py": "import cyc.b\n", "b.py": "def f():\n    return 1\n"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "KEPT" in r.stdout
