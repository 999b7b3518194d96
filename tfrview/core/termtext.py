"""Text from the data made safe for a terminal: the one helper every message that quotes data uses.

It sits at the bottom of the core (beside `units`), not in `cli` or `output`: framing, records and
the problem vocabulary quote keys, paths and class texts too, and they may import nothing above.
"""

from __future__ import annotations

_ESCAPES = {ord("\n"): "\\n", ord("\r"): "\\r", ord("\t"): "\\t", ord("\\"): "\\\\"}


def printable(text: str) -> str:
    """Text from the data made safe for a terminal and one line long: control characters (escape
    sequences, CR, LF), other unprintable characters and backslashes are shown as escapes."""
    if text.isprintable() and "\\" not in text:
        return text
    out = []
    for ch in text:
        code = ord(ch)
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
        elif ch.isprintable():
            out.append(ch)
        elif code < 0x100:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    return "".join(out)
