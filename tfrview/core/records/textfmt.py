"""Payloads as short human text (the CLI's dump, tooltips): long values elided, bytes made legible."""

from __future__ import annotations

from tfrview.core.records import msgpacks
from tfrview.core.records.feature import BYTES_LIST, FLOAT_LIST, Feature
from tfrview.core.records.images import sniff_image_format
from tfrview.core.records.kinds import FEATURE_KINDS, PayloadKind
from tfrview.core.records.payload import Payload, WireField, fixed_as_float
from tfrview.core.termtext import printable
from tfrview.core.units import human_bytes  # noqa: F401 (callers of textfmt find it here too)

TEXT_LIMIT = 80


def format_bytes(b: bytes, limit: int = TEXT_LIMIT) -> str:
    fmt = sniff_image_format(b)
    if fmt:
        return f"<{fmt} image, {len(b):,} bytes>"
    try:
        s = b.decode("utf-8")
        if all(c.isprintable() or c in "\n\t" for c in s):
            return repr(s[:limit]) + (f"…(+{len(s) - limit} chars)" if len(s) > limit else "")
    except UnicodeDecodeError:  # not text: shown as hex below
        pass
    head = b[:16].hex(" ")
    return f"<{len(b):,} bytes: {head}{' …' if len(b) > 16 else ''}>"


def format_number(x, is_float: bool) -> str:
    return f"{float(x):.6g}" if is_float else str(int(x))


def format_values(f: Feature, max_values: int = 8) -> str:
    n = len(f.values)
    shown = f.values[:max_values]
    if f.type == BYTES_LIST:
        parts = [format_bytes(v) for v in shown]
    else:
        parts = [format_number(v, f.type == FLOAT_LIST) for v in shown]
    more = f" … {n - max_values:,} more" if n > max_values else ""
    if f.total is not None:  # a limit decoded only the first n
        more += (
            " … and more not decoded (limit)"
            if f.total < 0
            else f" (of {f.total:,}; the rest not decoded: limit)"
        )
    return " ".join(parts) + more if parts else "(empty)"


def count_text(f: Feature) -> str:
    """A feature's value count, '1,000,000+' when a limit stopped counting."""
    return f"{len(f.values):,}+" if f.total is not None and f.total < 0 else f"{f.count:,}"


def format_feature(key: str, f: Feature, max_values: int = 8) -> str:
    return f"{key!r}: {f.type}[{count_text(f)}] {format_values(f, max_values)}"


def _format_wire(fields: list[WireField], indent: str, max_values: int) -> list[str]:
    lines = []
    for fl in fields[: max_values * 8]:
        if isinstance(fl.value, list):
            lines.append(f"{indent}{fl.number} {{")
            lines += _format_wire(fl.value, indent + "  ", max_values)
            lines.append(f"{indent}}}")
        elif isinstance(fl.value, bytes):
            lines.append(f"{indent}{fl.number}: {format_bytes(fl.value)}")
        else:
            as_float = fixed_as_float(fl.wire_type, fl.value)
            lines.append(
                f"{indent}{fl.number}: {fl.value}"
                + (f"  # as a float: {as_float:.10g}" if as_float is not None else "")
            )
    if len(fields) > max_values * 8:
        lines.append(f"{indent}… {len(fields) - max_values * 8} more fields")
    return lines


def format_payload(p: Payload, max_values: int = 8, indent: str = "") -> str:
    lines: list[str] = []
    if p.kind in FEATURE_KINDS:
        label = (
            "context" if p.kind in (PayloadKind.SEQUENCE_EXAMPLE, PayloadKind.EXAMPLE_LIST) else "features"
        )
        lines.append(f"{indent}{label} {{")
        for k, f in p.features.items():
            lines.append(f"{indent}  {format_feature(k, f, max_values)}")
        lines.append(f"{indent}}}")
        for i, ex in enumerate(p.examples):
            lines.append(f"{indent}examples[{i}] {{")
            lines += [f"{indent}  {format_feature(k, f, max_values)}" for k, f in ex.items()]
            lines.append(f"{indent}}}")
        if p.kind == PayloadKind.SEQUENCE_EXAMPLE:
            lines.append(f"{indent}feature_lists {{")
            for k, fl in p.feature_lists.items():
                lines.append(f"{indent}  {k!r}: {len(fl)} steps")
                for i, f in enumerate(fl[:max_values]):
                    lines.append(
                        f"{indent}    [{i}] {f.type}[{count_text(f)}] {format_values(f, max_values)}"
                    )
                if len(fl) > max_values:
                    lines.append(f"{indent}    … {len(fl) - max_values} more steps")
            lines.append(f"{indent}}}")
    elif p.kind == PayloadKind.PICKLE:
        lines.append(f"{indent}Python pickle, never unpickled: its pickletools disassembly {{")
        # pickletools writes opcodes' arguments as repr(): already one safe line each
        lines += [
            f"{indent}  {line if line.isprintable() else printable(line)}" for line in p.text.splitlines()
        ]
        lines.append(f"{indent}}}")
    elif p.kind == PayloadKind.MSGPACK:
        lines.append(f"{indent}msgpack {{")
        lines += msgpacks.text_lines(p.value, indent + "  ")
        lines.append(f"{indent}}}")
    elif p.kind == PayloadKind.PROTOBUF:
        lines.append(f"{indent}protobuf without a known schema (field number: value) {{")
        lines += _format_wire(p.fields, indent + "  ", max_values)
        lines.append(f"{indent}}}")
    else:
        lines.append(f"{indent}{format_bytes(p.raw)}")
    lines += [f"{indent}limit: {printable(note)}" for note in p.limits]
    return "\n".join(lines)
