"""The problem vocabulary: what kinds of damage and findings there are (`ProblemKind`), how bad each
is (`Severity`, with the words a person reads) and one `Problem` as every report carries it.

Framing, the QA checks, the analysis and the window all speak it; it imports nothing of tfrview's
but the terminal-text helper, so any module may use it.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tfrview.core.termtext import printable


class Severity(enum.StrEnum):
    """How bad a problem is; the value is the wire word (JSON, the store), worst first."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for notes: the order every panel and report lists them in."""
        return _RANKS[self]

    @property
    def plural(self) -> str:
        """The word a count of them takes: errors, warnings, notes (`info` problems are notes)."""
        return _PLURALS[self]

    @property
    def label(self) -> str:
        """The heading a person reads: Errors, Warnings, Notes."""
        return _PLURALS[self].capitalize()


_RANKS = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.INFO: 2}
_PLURALS = {Severity.ERROR: "errors", Severity.WARNING: "warnings", Severity.INFO: "notes"}
SEVERITIES = tuple(Severity)  # worst first


class ProblemKind(enum.StrEnum):
    BAD_LENGTH_CRC = "bad_length_crc"
    BAD_DATA_CRC = "bad_data_crc"
    TRUNCATED = "truncated"
    UNREADABLE_BYTES = "unreadable_bytes"
    TRAILING_BYTES = "trailing_bytes"
    NOT_TFRECORD = "not_tfrecord"
    DECOMPRESSION_ERROR = "decompression_error"
    UNREADABLE_FILE = "unreadable_file"  # a file that could not be opened or read at all (the window's rows)
    MISSING_SHARD = "missing_shard"  # a shard a `-NNNNN-of-MMMMM` set names that is not there
    # a TFDS prepared dataset's shards against its dataset_info.json (tfds.layout)
    SHARD_LENGTH_MISMATCH = "shard_length_mismatch"  # intact records != the split's shardLengths
    SPLIT_MISSING_SHARD = "split_missing_shard"  # a shard dataset_info.json names that is not there
    # ArrayRecord / Riegeli files (core/arrayrecord): a chunk whose header or data hash fails, or
    # that cannot be decoded; a file whose footer is missing or damaged (read by its block headers);
    # a chunk of a kind not read yet (transposed); a note: group_size > 1 (random access decodes a
    # whole chunk per record)
    CHUNK_DAMAGED = "chunk_damaged"
    FOOTER_MISSING = "footer_missing"
    CHUNK_UNSUPPORTED = "chunk_unsupported"
    ARRAYRECORD_GROUP_SIZE = "arrayrecord_group_size"
    # QA checks of record contents (tfrview.core.analysis.checks)
    UNEXPECTED_PAYLOAD = "unexpected_payload"
    IMAGE_UNDECODABLE = "image_undecodable"
    IMAGE_NOT_IMAGE = "image_not_an_image"  # an image key (by convention) holding empty bytes, text or noise
    IMAGE_FORMAT_MISMATCH = "image_format_mismatch"  # the bytes are one format, */format names another
    IMAGE_SIZE_MISMATCH = "image_size_mismatch"
    IMAGE_EXIF_ROTATION = "image_exif_rotation"
    DUPLICATE_IMAGE = "duplicate_image"  # the same pixels twice in one split
    # dataset-level QA after the merge (analysis.datasetqa): copies, image quality, label rules
    NEAR_DUPLICATE_IMAGE = "near_duplicate_image"  # a perceptual-hash neighbour in the same split
    SPLIT_LEAK = "split_leak"  # an exact or near copy in another split (test in train)
    IMAGE_DARK = "image_dark"
    IMAGE_BRIGHT = "image_bright"
    IMAGE_BLURRY = "image_blurry"
    IMAGE_LOW_INFORMATION = "image_low_information"
    IMAGE_BLANK = "image_blank"  # one colour, or nearly (an all-black camera frame)
    IMAGE_ODD_ASPECT = "image_odd_aspect"
    IMAGE_ODD_SIZE = "image_odd_size"
    CLASS_IMBALANCE = "class_imbalance"
    BOX_SIZE_OUTLIER = "box_size_outlier"
    DUPLICATE_BOX = "duplicate_box"
    OVERLAPPING_CLASSES = "overlapping_classes"
    TINY_BOX = "tiny_box"
    CLASS_MISSING_IN_SPLIT = "class_missing_in_split"
    # where predictions disagree with the ground truth (analysis.evaluation): likely label errors
    POSSIBLE_MISSING_LABEL = "possible_missing_label"  # a confident prediction no ground-truth box is near
    POSSIBLE_WRONG_CLASS = "possible_wrong_class"  # a confident prediction of another class on a box
    POSSIBLE_SPURIOUS_LABEL = "possible_spurious_label"  # a ground-truth box no prediction comes near
    # a segmentation or instance mask of another size than the image
    MASK_SIZE_MISMATCH = "mask_size_mismatch"
    MASK_CLASS_NOT_IN_MAP = "mask_class_not_in_map"  # class ids in a segmentation mask the label map lacks
    MASK_COUNT_MISMATCH = "mask_count_mismatch"  # instance masks and boxes differ in number
    MASK_EMPTY = "mask_empty"  # an instance mask with no pixel set
    BOX_OUT_OF_BOUNDS = "box_out_of_bounds"
    BOX_INVERTED = "box_inverted"
    BOX_ZERO_AREA = "box_zero_area"
    BOX_LIST_LENGTHS = "box_list_lengths"
    CLASS_LIST_LENGTH = "class_list_length"
    LABEL_NOT_IN_MAP = "label_not_in_map"
    LABEL_ZERO = "label_zero"
    LABEL_TEXT_MISMATCH = "label_text_mismatch"
    LABEL_TEXT_CASE = "label_text_case"  # class text and label map differ only in case or spacing
    IMAGE_SIZE_TYPE = "image_size_type"  # image/height or image/width stored as floats
    NAN_OR_INF = "nan_or_inf"
    MISSING_FEATURE = "missing_feature"
    FEATURE_TYPE_MISMATCH = "feature_type_mismatch"
    # a resource limit (tfrview.core.limits) kept part of a record unchecked
    LIMIT_EXCEEDED = "limit_exceeded"

    @property
    def severity(self) -> Severity:
        """error: data is lost or unreadable; warning: training would see wrong data; info: worth a look."""
        return _SEVERITY.get(self, Severity.WARNING)

    @property
    def severity_rank(self) -> int:
        """0 for errors, 1 for warnings, 2 for notes: the order every panel and report lists them in."""
        return self.severity.rank


FRAMING_KINDS = frozenset(
    {
        ProblemKind.BAD_LENGTH_CRC,
        ProblemKind.BAD_DATA_CRC,
        ProblemKind.TRUNCATED,
        ProblemKind.UNREADABLE_BYTES,
        ProblemKind.TRAILING_BYTES,
        ProblemKind.NOT_TFRECORD,
        ProblemKind.DECOMPRESSION_ERROR,
        ProblemKind.UNREADABLE_FILE,
        ProblemKind.MISSING_SHARD,
        ProblemKind.SHARD_LENGTH_MISMATCH,
        ProblemKind.SPLIT_MISSING_SHARD,
        ProblemKind.CHUNK_DAMAGED,
        ProblemKind.FOOTER_MISSING,
        ProblemKind.CHUNK_UNSUPPORTED,
        ProblemKind.ARRAYRECORD_GROUP_SIZE,
    }
)
QA_KINDS = frozenset(k for k in ProblemKind if k not in FRAMING_KINDS)
# what only the dataset step after the merge finds (analysis.datasetqa), never one record's checks
DATASET_STEP_KINDS = frozenset(
    {
        ProblemKind.NEAR_DUPLICATE_IMAGE,
        ProblemKind.SPLIT_LEAK,
        ProblemKind.IMAGE_DARK,
        ProblemKind.IMAGE_BRIGHT,
        ProblemKind.IMAGE_BLURRY,
        ProblemKind.IMAGE_LOW_INFORMATION,
        ProblemKind.IMAGE_BLANK,
        ProblemKind.IMAGE_ODD_ASPECT,
        ProblemKind.IMAGE_ODD_SIZE,
        ProblemKind.CLASS_IMBALANCE,
        ProblemKind.BOX_SIZE_OUTLIER,
        ProblemKind.DUPLICATE_BOX,
        ProblemKind.OVERLAPPING_CLASSES,
        ProblemKind.TINY_BOX,
        ProblemKind.CLASS_MISSING_IN_SPLIT,
        ProblemKind.POSSIBLE_MISSING_LABEL,
        ProblemKind.POSSIBLE_WRONG_CLASS,
        ProblemKind.POSSIBLE_SPURIOUS_LABEL,
    }
)

# Advice on how a file is laid out, not a problem of its data: a file with only these is OK (verify
# exits 0 for it and counts it clean), and they are still listed under it.
ADVICE_KINDS = frozenset({ProblemKind.ARRAYRECORD_GROUP_SIZE})

_SEVERITY = {
    ProblemKind.BAD_LENGTH_CRC: Severity.ERROR,
    ProblemKind.BAD_DATA_CRC: Severity.ERROR,
    ProblemKind.TRUNCATED: Severity.ERROR,
    ProblemKind.UNREADABLE_BYTES: Severity.ERROR,
    ProblemKind.TRAILING_BYTES: Severity.ERROR,
    ProblemKind.NOT_TFRECORD: Severity.ERROR,
    ProblemKind.DECOMPRESSION_ERROR: Severity.ERROR,
    ProblemKind.UNREADABLE_FILE: Severity.ERROR,
    ProblemKind.MISSING_SHARD: Severity.ERROR,
    ProblemKind.SHARD_LENGTH_MISMATCH: Severity.ERROR,
    ProblemKind.SPLIT_MISSING_SHARD: Severity.ERROR,
    ProblemKind.CHUNK_DAMAGED: Severity.ERROR,
    ProblemKind.FOOTER_MISSING: Severity.ERROR,
    ProblemKind.CHUNK_UNSUPPORTED: Severity.ERROR,
    ProblemKind.ARRAYRECORD_GROUP_SIZE: Severity.INFO,
    ProblemKind.UNEXPECTED_PAYLOAD: Severity.ERROR,
    ProblemKind.IMAGE_UNDECODABLE: Severity.ERROR,
    ProblemKind.IMAGE_NOT_IMAGE: Severity.ERROR,
    ProblemKind.DUPLICATE_IMAGE: Severity.INFO,
    ProblemKind.MISSING_FEATURE: Severity.INFO,
    ProblemKind.IMAGE_EXIF_ROTATION: Severity.INFO,
    ProblemKind.LABEL_TEXT_CASE: Severity.INFO,
    ProblemKind.IMAGE_SIZE_TYPE: Severity.ERROR,
    ProblemKind.NEAR_DUPLICATE_IMAGE: Severity.INFO,
    ProblemKind.SPLIT_LEAK: Severity.WARNING,
    ProblemKind.IMAGE_DARK: Severity.INFO,
    ProblemKind.IMAGE_BRIGHT: Severity.INFO,
    ProblemKind.IMAGE_BLURRY: Severity.INFO,
    ProblemKind.IMAGE_LOW_INFORMATION: Severity.INFO,
    ProblemKind.IMAGE_BLANK: Severity.WARNING,
    ProblemKind.IMAGE_ODD_ASPECT: Severity.INFO,
    ProblemKind.IMAGE_ODD_SIZE: Severity.INFO,
    ProblemKind.CLASS_IMBALANCE: Severity.INFO,
    ProblemKind.BOX_SIZE_OUTLIER: Severity.INFO,
    ProblemKind.DUPLICATE_BOX: Severity.WARNING,
    ProblemKind.OVERLAPPING_CLASSES: Severity.WARNING,
    ProblemKind.TINY_BOX: Severity.INFO,
    ProblemKind.CLASS_MISSING_IN_SPLIT: Severity.WARNING,
    # a model's opinion, not a proof: worth a look
    ProblemKind.POSSIBLE_MISSING_LABEL: Severity.INFO,
    ProblemKind.POSSIBLE_WRONG_CLASS: Severity.INFO,
    ProblemKind.POSSIBLE_SPURIOUS_LABEL: Severity.INFO,
}


@dataclass(frozen=True, slots=True)
class Problem:
    """One damaged region. `offset` is in the (decompressed) record stream; `record` is the local
    record number the damage belongs to, or None when no record could be framed there."""

    kind: ProblemKind
    offset: int
    length: int | None
    record: int | None
    message: str
    cause: str = ""  # why, where the bytes show it (tfrecord.forensics); "" when they do not
    feature: str = ""  # the feature key a finding is about: repeats group by kind and feature
    # what varies from record to record (quoted data bytes, a class text), apart from the message
    detail: str = ""

    def __post_init__(self) -> None:
        for name in (
            "message",
            "feature",
            "detail",
        ):  # they quote the data (keys, class text): one line, always
            text = getattr(self, name)
            if not text.isprintable():
                object.__setattr__(self, name, printable(text))

    @property
    def text(self) -> str:
        """The message with its detail, for a person reading one problem."""
        return f"{self.message}: {self.detail}" if self.detail else self.message

    def to_json(self) -> dict:
        return {
            "kind": str(self.kind),
            "offset": self.offset,
            "length": self.length,
            "record": self.record,
            "message": self.message,
            **({"cause": self.cause} if self.cause else {}),
            **({"feature": self.feature} if self.feature else {}),
            **({"detail": self.detail} if self.detail else {}),
        }

    @classmethod
    def from_json(cls, d: dict) -> Problem:
        return cls(
            ProblemKind(d["kind"]),
            d["offset"],
            d["length"],
            d["record"],
            d["message"],
            d.get("cause", ""),
            d.get("feature", ""),
            d.get("detail", ""),
        )
