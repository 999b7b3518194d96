"""The payload kinds a record may hold, as one type: the wire words (JSON, the fact table, the
store) are the values, and which kinds carry features is said once, here."""

from __future__ import annotations

import enum


class PayloadKind(enum.StrEnum):
    """What a record's payload is (decided by `payload.sniff_kind`, by trying, never from names)."""

    EXAMPLE = "example"
    SEQUENCE_EXAMPLE = "sequence_example"
    # TF-Ranking's ExampleListWithContext: the context as features, each example's in `examples`
    EXAMPLE_LIST = "example_list_with_context"
    EVENT = "event"  # a TensorBoard Event (records.events): wall time, step and tags as features
    PROTOBUF = "protobuf"  # another protobuf message: field numbers and values, no features
    # a protobuf message read through the person's schema (`--proto`, Load Schema…): field names,
    # in `dump --json`'s "message" and the row text; not features
    MESSAGE = "message"
    BYTES = "bytes"  # no protobuf at all (or too large to tell from its head)
    # a Python pickle (what some ArrayRecord datasets hold): shown as `pickletools` disassembly of
    # its first bytes, never unpickled (unpickling runs code the data names)
    PICKLE = "pickle"
    # one msgpack map or array filling the whole payload (records.msgpacks: decoded strictly,
    # without hooks; found only where no protobuf kind above matches): shown as a tree
    MSGPACK = "msgpack"

    @property
    def has_features(self) -> bool:
        """Whether `Payload.features` holds what the record carries (an Example's features, a
        SequenceExample's or an example list's context, an event's wall time, step and tags):
        the JSON outputs, the row text, statistics and the sample of keys all ask this."""
        return self in FEATURE_KINDS

    @property
    def title(self) -> str:
        """The name a person knows the kind by."""
        return _TITLES[self]


# A kind's plain string is in it too: a StrEnum hashes and compares as its value.
FEATURE_KINDS = frozenset(
    {
        PayloadKind.EXAMPLE,
        PayloadKind.SEQUENCE_EXAMPLE,
        PayloadKind.EXAMPLE_LIST,
        PayloadKind.EVENT,
    }
)
_TITLES = {
    PayloadKind.EXAMPLE: "Example",
    PayloadKind.SEQUENCE_EXAMPLE: "SequenceExample",
    PayloadKind.EXAMPLE_LIST: "ExampleListWithContext",
    PayloadKind.EVENT: "TensorBoard event",
    PayloadKind.PROTOBUF: "other protobuf",
    PayloadKind.MESSAGE: "message by the loaded schema",
    PayloadKind.BYTES: "opaque bytes",
    PayloadKind.PICKLE: "Python pickle (never unpickled)",
    PayloadKind.MSGPACK: "msgpack",
}
