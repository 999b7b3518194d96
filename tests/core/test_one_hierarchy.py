"""docs/architecture.md says every error the core raises on purpose derives from one base,
TfrviewError (issue 20: the claim was false). This reads every exception class the core defines
and checks its bases, so a new one outside the hierarchy fails here."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

from tfrview.core.errors import Cancelled, TfrviewError

CORE = Path(__file__).resolve().parents[2] / "tfrview" / "core"
# Internal signals that never leave their module as themselves (each says so in its docstring).
INTERNAL = {"tfrview.core.tfrecord.remote.RangeIgnored"}


def _exception_classes() -> list[str]:
    found = []
    for path in sorted(CORE.rglob("*.py")):
        if "/proto/" in path.as_posix():
            continue
        module = ".".join(path.relative_to(CORE.parents[1]).with_suffix("").parts)
        for node in ast.parse(path.read_text()).body:
            bases = {getattr(b, "id", getattr(b, "attr", "")) for b in getattr(node, "bases", [])}
            if isinstance(node, ast.ClassDef) and any(
                b.endswith(("Error", "Exception", "Failed")) for b in bases | {node.name}
            ):
                found.append(f"{module}.{node.name}")
    return found


def test_every_core_exception_derives_from_the_one_base() -> None:
    names = _exception_classes()
    assert (
        "tfrview.core.records.payload.WireError" in names
        and "tfrview.core.analysis.cache.StoreError" in names
    )
    outside = []
    for name in names:
        module, _, cls = name.rpartition(".")
        obj = getattr(importlib.import_module(module), cls)
        is_error = isinstance(obj, type) and issubclass(obj, BaseException) and obj is not Cancelled
        if is_error and not issubclass(obj, TfrviewError) and name not in INTERNAL:
            outside.append(name)
    assert outside == [], f"exceptions outside TfrviewError: {outside}"
    assert not issubclass(Cancelled, Exception)  # a stop is never caught as a failure
