"""Standard JSON for what tfrview stores and sends: a float that is not finite (NaN, ±inf) written as
a tagged value, `{"__float__": "nan"}` (or `"inf"`, `"-inf"`), and given back as the float.

Python's `json` writes such a float as the bare words `NaN` and `Infinity`, which are not JSON:
SQLite's `json_extract` refuses a row holding them ("malformed JSON"), and so would any other
reader. `dumps` costs nothing extra when every float is finite (the common case: one `json.dumps`
with `allow_nan=False`); only an object that holds a non-finite float is walked. `loads` walks only
a text that holds the tag.
"""

from __future__ import annotations

import json
import math
from typing import Any

TAG = "__float__"
_WORDS = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}


def dumps(obj: Any, **kw) -> str:
    """`json.dumps(obj, **kw)` as standard JSON: non-finite floats tagged."""
    try:
        # without keywords, one encoder kept: json.dumps makes a new one at every call given any
        # (~4 us of a stored result's ~20 us meta text; 2,048 shards store 2,048 of them)
        return _PLAIN.encode(obj) if not kw else json.dumps(obj, allow_nan=False, **kw)
    except ValueError:  # a non-finite float (any other cause is raised again below)
        pass
    return json.dumps(tagged(obj), allow_nan=False, **kw)


_PLAIN = json.JSONEncoder(allow_nan=False)


def tagged(obj: Any) -> Any:
    """`obj` with each non-finite float replaced by its tag (tuples become lists, as JSON has them)."""
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else {TAG: "nan" if obj != obj else ("inf" if obj > 0 else "-inf")}
    if isinstance(obj, dict):
        return {k: tagged(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [tagged(v) for v in obj]
    return obj


def loads(text: str | bytes) -> Any:
    """What `dumps` wrote (plain JSON, and Python's own `NaN`/`Infinity` too, as `json.loads` reads)."""
    marker = TAG if isinstance(text, str) else TAG.encode()
    if marker not in text:
        return json.loads(text)
    return json.loads(text, object_hook=_untag)


def _untag(d: dict) -> Any:
    if len(d) == 1 and TAG in d:
        word = d[TAG]
        if isinstance(word, str) and word in _WORDS:
            return _WORDS[word]
    return d
