"""A TFDS `features.json`, read strictly as data: what each key of a prepared dataset's records means.

TFDS writes `features.json` as its `Feature` protobuf in JSON (`feature.proto`: each feature is
`{"pythonClassName": ..., "description": ..., <one content key>: {...}}`, int64 numbers as
strings, camelCase names), and each `ClassLabel`'s names as `<name>.labels.txt` beside it, a name a
line (`<name>`: the feature's path, nested names joined with `-` and a `/` inside one name made
`.`, as TFDS's `convert_feature_name_to_filename` does). `tfds.builder_from_directory()` imports
the Python class named in `pythonClassName`, so a metadata-only directory could run code. Here no
name is ever imported, looked up in `sys.modules` or executed: a class is one of `ALLOWED` (full
names, matched as strings), its content read by the content key the allow-list expects, or it is
an `UnknownFeature` that shows its class name and is not looked into. A feature without a class
name is read by its one content key (that is all the data says).

The allow-list: `FeaturesDict`, `ClassLabel`, `Image`, `LabeledImage`, `BBoxFeature`, `Tensor`,
`Scalar`, `Sequence`, `Dataset`, `Text`, `Video`, `Audio`, `Translation`,
`TranslationVariableLanguages` (each under `tensorflow_datasets.core.features.`).

How a record holds them (TFDS's Example serializer): a `FeaturesDict`'s children are keys joined
with `/` (`objects/bbox`); a `Sequence` or `Dataset` (RLDS `steps`) keeps its item's keys and
concatenates the items' values, so `steps/observation/image` holds one encoded image a step and
`objects/bbox` four floats a box; a sequence of sequences adds `/ragged_flat_values` and
`/ragged_row_lengths_N` keys. `Features.flat` maps every such key to its spec.

Everything is bounded by `limits` (the file's size, the nesting, the number of features, the
labels files); a features.json that is not JSON, too large, too deep or not features raises
`FeaturesError` with one line, and `features_of_folder` says that line instead of raising.
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
import os
import stat
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from tfrview.core.errors import TfrviewError
from tfrview.core.limits import (
    MAX_TFDS_CLASS_NAMES,
    MAX_TFDS_FEATURE_DEPTH,
    MAX_TFDS_FEATURES,
    MAX_TFDS_FEATURES_BYTES,
    MAX_TFDS_LABELS_BYTES,
    TFDS_FEATURES_MEMO,
    too_large,
)
from tfrview.core.termtext import printable

log = logging.getLogger(__name__)

FEATURES_FILE = "features.json"
_PREFIX = "tensorflow_datasets.core.features."


class FeatureError(TfrviewError):
    """A features.json (or a labels file beside it) that cannot be read as TFDS features."""


class FeatureKind(StrEnum):
    """What a TFDS feature is, as far as tfrview reads it (the allow-list's classes map onto these)."""

    FEATURES_DICT = "features_dict"
    CLASS_LABEL = "class_label"
    IMAGE = "image"
    BBOX = "bbox"
    TENSOR = "tensor"
    SEQUENCE = "sequence"
    TEXT = "text"
    VIDEO = "video"
    AUDIO = "audio"
    TRANSLATION = "translation"
    UNKNOWN = "unknown"


# The allow-list: a class's full name -> (its kind, the content key its JSON holds). Nothing else
# is read as a feature; no name here or elsewhere is ever imported.
ALLOWED: dict[str, tuple[FeatureKind, str]] = {
    _PREFIX + "features_dict.FeaturesDict": (FeatureKind.FEATURES_DICT, "featuresDict"),
    _PREFIX + "class_label_feature.ClassLabel": (FeatureKind.CLASS_LABEL, "classLabel"),
    _PREFIX + "image_feature.Image": (FeatureKind.IMAGE, "image"),
    _PREFIX + "labeled_image.LabeledImage": (FeatureKind.IMAGE, "image"),
    _PREFIX + "bounding_boxes.BBoxFeature": (FeatureKind.BBOX, "boundingBox"),
    _PREFIX + "tensor_feature.Tensor": (FeatureKind.TENSOR, "tensor"),
    _PREFIX + "scalar.Scalar": (FeatureKind.TENSOR, "tensor"),
    _PREFIX + "sequence_feature.Sequence": (FeatureKind.SEQUENCE, "sequence"),
    _PREFIX + "dataset_feature.Dataset": (FeatureKind.SEQUENCE, "sequence"),
    _PREFIX + "text_feature.Text": (FeatureKind.TEXT, "text"),
    _PREFIX + "video_feature.Video": (FeatureKind.VIDEO, "video"),
    _PREFIX + "audio_feature.Audio": (FeatureKind.AUDIO, "audio"),
    _PREFIX + "translation_feature.Translation": (FeatureKind.TRANSLATION, "translation"),
    _PREFIX + "translation_feature.TranslationVariableLanguages": (FeatureKind.TRANSLATION, "translation"),
}
_BY_CONTENT = {
    "featuresDict": FeatureKind.FEATURES_DICT,
    "classLabel": FeatureKind.CLASS_LABEL,
    "image": FeatureKind.IMAGE,
    "boundingBox": FeatureKind.BBOX,
    "tensor": FeatureKind.TENSOR,
    "sequence": FeatureKind.SEQUENCE,
    "text": FeatureKind.TEXT,
    "video": FeatureKind.VIDEO,
    "audio": FeatureKind.AUDIO,
    "translation": FeatureKind.TRANSLATION,
}  # a feature with no class name: its one content key says what it is


@dataclass(frozen=True, kw_only=True)
class Spec:
    """What every feature says: its class as features.json names it (never imported) and its text."""

    class_name: str = ""
    description: str = ""

    @property
    def short(self) -> str:
        """The class's last name (`Image`), or the kind's word when features.json names none."""
        return self.class_name.rsplit(".", 1)[-1] if self.class_name else type(self).__name__


@dataclass(frozen=True, kw_only=True)
class FeaturesDict(Spec):
    features: tuple[tuple[str, Spec], ...] = ()


@dataclass(frozen=True, kw_only=True)
class ClassLabel(Spec):
    num_classes: int | None = None
    names: tuple[str, ...] = ()
    names_from: str = ""  # the labels file the names came from ("" inline or none)


@dataclass(frozen=True, kw_only=True)
class Image(Spec):
    shape: tuple[int | None, ...] = ()
    dtype: str = ""
    encoding: str = ""  # png, jpeg or "" (TFDS's default: png)
    use_colormap: bool = False  # a segmentation image: each value a class, shown in colours
    label: ClassLabel | None = None  # LabeledImage: the classes its pixel values are


@dataclass(frozen=True, kw_only=True)
class BBoxFeature(Spec):
    shape: tuple[int | None, ...] = ()
    dtype: str = ""
    bbox_format: str = ""  # "" is TFDS's default, normalised [ymin, xmin, ymax, xmax]


@dataclass(frozen=True, kw_only=True)
class Tensor(Spec):
    shape: tuple[int | None, ...] = ()
    dtype: str = ""
    encoding: str = "none"  # none (the values), bytes (raw array bytes), zlib (those deflated)


@dataclass(frozen=True, kw_only=True)
class Sequence(Spec):
    feature: Spec
    length: int | None = None
    dataset: bool = False  # tfds.features.Dataset (RLDS `steps`): a sequence of steps


@dataclass(frozen=True, kw_only=True)
class Text(Spec):
    pass


@dataclass(frozen=True, kw_only=True)
class Video(Spec):
    shape: tuple[int | None, ...] = ()
    dtype: str = ""
    encoding: str = ""
    use_colormap: bool = False


@dataclass(frozen=True, kw_only=True)
class Audio(Spec):
    shape: tuple[int | None, ...] = ()
    dtype: str = ""
    file_format: str = ""
    sample_rate: int | None = None
    encoding: str = ""


@dataclass(frozen=True, kw_only=True)
class Translation(Spec):
    languages: tuple[str, ...] = ()


@dataclass(frozen=True, kw_only=True)
class UnknownFeature(Spec):
    """A class outside the allow-list (or content it does not expect): shown by its name, never read
    further, never imported."""

    content: str = ""  # the content key it holds, if any


@dataclass(frozen=True, slots=True)
class FlatFeature:
    """One key of a record as TFDS writes it (`objects/bbox`), its spec, and the sequences it is in
    (`steps` for RLDS: one value or one item a step)."""

    key: str
    spec: Spec
    sequences: tuple[str, ...] = ()  # the keys of the Sequence/Dataset features around it, outermost first
    steps: bool = False  # inside a tfds Dataset (RLDS steps)

    @property
    def text(self) -> str:
        return describe(self.spec, self.sequences, self.steps)


@dataclass(frozen=True)
class Features:
    """A features.json read: its tree, every record key it declares, and what was not read (notes).
    Plain data: it pickles into the analysis pool's tasks."""

    root: Spec | None
    path: str = ""
    flat: Mapping[str, FlatFeature] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    error: str | None = None  # the one line why the file could not be read (root is None)
    stamp: str = ""  # a digest of the features.json and labels files read: a stored result's key

    def lookup(self, key: str) -> FlatFeature | None:
        """The declared feature behind a record key (a ragged sequence's `/ragged_*` keys included)."""
        got = self.flat.get(key)
        if got is None and "/ragged_" in key:
            got = self.flat.get(key.rsplit("/ragged_", 1)[0])
        return got

    @functools.cached_property
    def label_maps(self) -> dict[str, dict[int, str]]:
        """Each ClassLabel key's names as id -> name (keys whose ClassLabel names no class left out)."""
        out = {}
        for k, f in self.flat.items():
            if isinstance(f.spec, ClassLabel) and f.spec.names:
                out[k] = dict(enumerate(f.spec.names))
        return out

    def class_names(self, key: str | None) -> dict[int, str] | None:
        return self.label_maps.get(key) if key else None

    @functools.cached_property
    def boxes(self) -> tuple[tuple[str, str | None], ...]:
        """(BBoxFeature key, the ClassLabel key beside it or None) of every box feature in normalised
        [ymin, xmin, ymax, xmax]: TFDS's `objects/bbox` and `objects/label`."""
        out = []
        for k, f in self.flat.items():
            if not isinstance(f.spec, BBoxFeature) or f.spec.bbox_format.upper() not in ("", "REL_YXYX"):
                continue
            parent = k.rsplit("/", 1)[0] + "/" if "/" in k else ""
            siblings = [
                s.key
                for s in self.flat.values()
                if isinstance(s.spec, ClassLabel)
                and s.key.startswith(parent)
                and "/" not in s.key[len(parent) :]
                and s.sequences == f.sequences
            ]
            best = next(
                (s for s in siblings if s.endswith(("label", "labels"))), siblings[0] if siblings else None
            )
            out.append((k, best))
        return tuple(out)

    @functools.cached_property
    def record_labels(self) -> tuple[str, ...]:
        """ClassLabel keys outside any sequence: the record-level labels the features declare."""
        return tuple(k for k, f in self.flat.items() if isinstance(f.spec, ClassLabel) and not f.sequences)

    @property
    def unknown(self) -> tuple[FlatFeature, ...]:
        return tuple(f for f in self.flat.values() if isinstance(f.spec, UnknownFeature))

    def __getstate__(self):  # cached properties are rebuilt after a pickle, never shipped
        return {k: getattr(self, k) for k in ("root", "path", "flat", "notes", "error", "stamp")}

    def __setstate__(self, state) -> None:
        for k, v in state.items():
            object.__setattr__(self, k, v)


def describe(spec: Spec, sequences: tuple[str, ...] = (), steps: bool = False) -> str:
    """One line for a person: `ClassLabel, 10 classes`, `Image 28x28x1 png`, `Tensor float32 [7] zlib`,
    with `a step` / `a item` when the value repeats in a sequence."""
    text = _describe(spec)
    if steps:
        text += ", one a step"
    elif sequences:
        text += ", one an item of " + sequences[-1]
    return text


def _dims(shape: tuple[int | None, ...]) -> str:
    return "x".join("?" if d is None else str(d) for d in shape) if shape else "scalar"


def _describe(s: Spec) -> str:
    if isinstance(s, ClassLabel):
        n = s.num_classes if s.num_classes is not None else len(s.names)
        where = f" ({s.names_from})" if s.names_from else ""
        return f"ClassLabel, {n:,} classes" + (f", names{where}" if s.names else ", no names")
    if isinstance(s, Image):
        parts = [f"{s.short} {_dims(s.shape)}", s.dtype, s.encoding or "png"]
        if s.use_colormap:
            parts.append("segmentation (use_colormap)")
        if s.label is not None:
            parts.append(f"{len(s.label.names) or s.label.num_classes or 0} classes")
        return " ".join(p for p in parts if p)
    if isinstance(s, BBoxFeature):
        fmt = s.bbox_format or "REL_YXYX"
        words = "normalised [ymin, xmin, ymax, xmax]" if fmt.upper() == "REL_YXYX" else fmt
        return f"BBoxFeature, {words}"
    if isinstance(s, Tensor):
        enc = "" if s.encoding in ("", "none") else f" {s.encoding}"
        return f"{s.short} {s.dtype} [{_dims(s.shape)}]{enc}"
    if isinstance(s, Sequence):
        n = f" of {s.length}" if s.length is not None else ""
        return f"{s.short}{n}"
    if isinstance(s, Video):
        return f"Video {_dims(s.shape)} {s.dtype} {s.encoding or 'png'} frames".replace("  ", " ")
    if isinstance(s, Audio):
        rate = f" {s.sample_rate:,} Hz" if s.sample_rate else ""
        return f"Audio {_dims(s.shape)} {s.dtype} {s.file_format}{rate}".rstrip()
    if isinstance(s, Translation):
        return f"{s.short} ({', '.join(s.languages)})" if s.languages else s.short
    if isinstance(s, FeaturesDict):
        return f"FeaturesDict of {len(s.features)}"
    if isinstance(s, UnknownFeature):
        return f"unknown feature class {printable(s.class_name or '(none)')} (not read, never imported)"
    return s.short


# --- parsing -------------------------------------------------------------------------------------


class _Walk:
    """One parse: counts features against the limits, reads labels files beside the json."""

    def __init__(self, folder: str | None, sources: list | None = None) -> None:
        self.folder = folder
        self.sources = sources if sources is not None else []
        self.count = 0
        self.notes: list[str] = []
        self.flat: dict[str, FlatFeature] = {}
        self.digest = hashlib.sha256()

    def feature(self, d: object, name: str, depth: int) -> Spec:
        """The spec of one feature JSON object; `name` is its labels-file name (`objects-label`)."""
        self.count += 1
        if self.count > MAX_TFDS_FEATURES:
            raise FeatureError(
                too_large("features.json", None, MAX_TFDS_FEATURES, "features", "MAX_TFDS_FEATURES")
            )
        if depth > MAX_TFDS_FEATURE_DEPTH:
            raise FeatureError(
                too_large(
                    "features.json",
                    depth,
                    MAX_TFDS_FEATURE_DEPTH,
                    "levels of nesting",
                    "MAX_TFDS_FEATURE_DEPTH",
                )
            )
        if not isinstance(d, dict):
            raise FeatureError(
                f"features.json: feature {printable(name)!r} is a {type(d).__name__}, not an object"
            )
        cls = d.get("pythonClassName", "")
        cls = cls if isinstance(cls, str) else ""
        desc = d.get("description", "")
        base = {"class_name": cls, "description": desc if isinstance(desc, str) else ""}
        if cls:
            kind, key = ALLOWED.get(cls, (FeatureKind.UNKNOWN, ""))
            if kind is not FeatureKind.UNKNOWN and not isinstance(d.get(key), dict):
                kind = FeatureKind.UNKNOWN  # an allowed name with content it does not have: not guessed
        else:
            found = [k for k in d if k in _BY_CONTENT and isinstance(d[k], dict)]
            kind, key = (_BY_CONTENT[found[0]], found[0]) if len(found) == 1 else (FeatureKind.UNKNOWN, "")
        if kind is FeatureKind.UNKNOWN:
            content = next((k for k in d if k not in ("pythonClassName", "description", "valueRange")), "")
            log.info(
                "features.json: %s is not an allowed TFDS feature class; shown as unknown", printable(cls)
            )
            return UnknownFeature(content=str(content), **base)
        c = d[key]
        if kind is FeatureKind.FEATURES_DICT:
            children = c.get("features", {})
            if not isinstance(children, dict):
                raise FeatureError(
                    f"features.json: {printable(name or 'the root')}'s features are not an object"
                )
            out = []
            for child, sub in children.items():
                fname = child.replace("/", ".") if not name else f"{name}-{child.replace('/', '.')}"
                out.append((str(child), self.feature(sub, fname, depth + 1)))
            return FeaturesDict(features=tuple(out), **base)
        if kind is FeatureKind.CLASS_LABEL:
            return self.class_label(c, name, base)
        if kind is FeatureKind.IMAGE:
            label = self.class_label(c["label"], name, {}) if isinstance(c.get("label"), dict) else None
            return Image(
                shape=_shape(c),
                dtype=_text(c, "dtype"),
                encoding=_text(c, "encodingFormat"),
                use_colormap=c.get("useColormap") is True,
                label=label,
                **base,
            )
        if kind is FeatureKind.BBOX:
            return BBoxFeature(
                shape=_shape(c), dtype=_text(c, "dtype"), bbox_format=_text(c, "bboxFormat"), **base
            )
        if kind is FeatureKind.TENSOR:
            return Tensor(
                shape=_shape(c), dtype=_text(c, "dtype"), encoding=_text(c, "encoding") or "none", **base
            )
        if kind is FeatureKind.SEQUENCE:
            item = self.feature(c.get("feature"), name, depth + 1)
            return Sequence(
                feature=item, length=_int(c.get("length")), dataset=cls.endswith(".Dataset"), **base
            )
        if kind is FeatureKind.TEXT:
            return Text(**base)
        if kind is FeatureKind.VIDEO:
            return Video(
                shape=_shape(c),
                dtype=_text(c, "dtype"),
                encoding=_text(c, "encodingFormat"),
                use_colormap=c.get("useColormap") is True,
                **base,
            )
        if kind is FeatureKind.AUDIO:
            return Audio(
                shape=_shape(c),
                dtype=_text(c, "dtype"),
                file_format=_text(c, "fileFormat"),
                sample_rate=_int(c.get("sampleRate")),
                encoding=_text(c, "encoding"),
                **base,
            )
        langs = c.get("languages", [])
        return Translation(
            languages=tuple(str(x) for x in langs[:64]) if isinstance(langs, list) else (), **base
        )

    def class_label(self, c: dict, name: str, base: dict) -> ClassLabel:
        """A ClassLabel's count, and its names: inline (`names`, as some writers put them), else
        `<name>.labels.txt` beside the json (a name a line, blank lines skipped, as TFDS reads it)."""
        n = _int(c.get("numClasses"))
        inline = c.get("names")
        if isinstance(inline, list) and inline:
            names = tuple(str(x) for x in inline[:MAX_TFDS_CLASS_NAMES])
            if len(inline) > MAX_TFDS_CLASS_NAMES:
                self.notes.append(
                    f"{name}: "
                    + too_large(
                        "the names", len(inline), MAX_TFDS_CLASS_NAMES, "names", "MAX_TFDS_CLASS_NAMES"
                    )
                )
            return ClassLabel(num_classes=n, names=names, names_from="", **base)
        if self.folder is None or not name:
            return ClassLabel(num_classes=n, **base)
        fname = f"{name}.labels.txt"
        path = os.path.join(self.folder, fname)
        self.sources.append((path, _stat(path)))
        try:
            data = read_small(path, MAX_TFDS_LABELS_BYTES, "MAX_TFDS_LABELS_BYTES")
        except FileNotFoundError:
            return ClassLabel(num_classes=n, **base)
        except FeatureError as exc:
            self.notes.append(str(exc))
            return ClassLabel(num_classes=n, **base)
        self.digest.update(fname.encode() + b"\0" + data)
        lines = data.decode("utf-8", "replace").split("\n")
        names_l = [x.strip() for x in lines if x.strip()]
        if len(names_l) > MAX_TFDS_CLASS_NAMES:
            self.notes.append(
                f"{fname}: "
                + too_large(
                    "the labels file", len(names_l), MAX_TFDS_CLASS_NAMES, "names", "MAX_TFDS_CLASS_NAMES"
                )
                + "; the rest are not named"
            )
            names_l = names_l[:MAX_TFDS_CLASS_NAMES]
        if n is not None and names_l and len(names_l) != n:
            self.notes.append(f"{fname}: {len(names_l):,} names for the {n:,} classes features.json declares")
        return ClassLabel(num_classes=n, names=tuple(names_l), names_from=fname, **base)

    def flatten(self, spec: Spec, key: str, sequences: tuple[str, ...], steps: bool) -> None:
        """Every record key a spec stands for, as TFDS's serializer writes them."""
        if isinstance(spec, FeaturesDict):
            for child, sub in spec.features:
                self.flatten(sub, f"{key}/{child}" if key else child, sequences, steps)
        elif isinstance(spec, Sequence):
            self.flatten(spec.feature, key, (*sequences, key), steps or spec.dataset)
        elif key:
            self.flat[key] = FlatFeature(key, spec, sequences, steps)


def parse_features(
    text: str | bytes, folder: str | None = None, path: str = FEATURES_FILE, sources: list | None = None
) -> Features:
    """A features.json's text as `Features` (labels files read from `folder`). Raises FeatureError,
    one line, for anything that is not TFDS features JSON within the limits. `sources` receives
    each labels file looked for and its stat (None: not there), to tell when it changes."""
    where = printable(os.path.basename(path) or FEATURES_FILE)
    if len(text) > MAX_TFDS_FEATURES_BYTES:
        raise FeatureError(
            f"{where}: " + too_large("it", len(text), MAX_TFDS_FEATURES_BYTES, name="MAX_TFDS_FEATURES_BYTES")
        )
    try:
        d = json.loads(text)
    except RecursionError:
        raise FeatureError(
            f"{where}: nested too deeply to read "
            + f"(limits.MAX_TFDS_FEATURE_DEPTH is {MAX_TFDS_FEATURE_DEPTH})"
        ) from None
    except (ValueError, UnicodeError) as exc:
        raise FeatureError(f"{where}: not JSON ({printable(str(exc))[:200]})") from None
    if not isinstance(d, dict):
        raise FeatureError(f"{where}: not TFDS features (a JSON {type(d).__name__}, not an object)")
    if "pythonClassName" not in d and not any(k in _BY_CONTENT for k in d):
        raise FeatureError(f"{where}: not TFDS features (no pythonClassName and no feature content)")
    walk = _Walk(folder, sources)
    walk.digest.update(text.encode() if isinstance(text, str) else text)
    try:
        root = walk.feature(d, "", 0)
    except RecursionError:  # MAX_TFDS_FEATURE_DEPTH stops the walk long before
        raise FeatureError(f"{where}: nested too deeply (limits.MAX_TFDS_FEATURE_DEPTH)") from None
    except FeatureError as exc:
        raise FeatureError(f"{where}: {str(exc).removeprefix('features.json: ')}") from None
    walk.flatten(root, "", (), False)
    if isinstance(root, UnknownFeature):
        walk.notes.append(f"{where}: {describe(root)}")
    return Features(root, path, walk.flat, tuple(walk.notes), stamp=walk.digest.hexdigest()[:32])


def load_features(path: str | os.PathLike) -> Features:
    """`features.json` at `path` and the labels files beside it (FeatureError: one line why not)."""
    p = os.fspath(path)
    data = read_small(p, MAX_TFDS_FEATURES_BYTES, "MAX_TFDS_FEATURES_BYTES")
    return parse_features(data, os.path.dirname(p) or ".", p)


def features_of_folder(folder: str | os.PathLike) -> Features | None:
    """The features of the TFDS version directory `folder` (the shards sit beside features.json):
    None when it holds none, a `Features` with `error` set when it cannot be read (the caller says
    it). Never raises; one load a folder while its features.json and labels files are unchanged
    (their stats are compared; at most limits.TFDS_FEATURES_MEMO folders kept)."""
    path = os.path.join(os.fspath(folder), FEATURES_FILE)
    stamp = _stat(path)
    if stamp is None:
        return None
    with _MEMO_LOCK:  # the window's decode, row-text and thumbnail threads ask at once
        kept = _MEMO.get(path)
        if kept is not None and kept[0] == stamp and all(_stat(p) == st for p, st in kept[1]):
            _MEMO.move_to_end(path)
            return kept[2]
        sources: list[tuple[str, tuple | None]] = []
        got = _load(path, sources)
        _MEMO[path] = (stamp, tuple(sources), got)
        while len(_MEMO) > TFDS_FEATURES_MEMO:
            _MEMO.popitem(last=False)
        return got


_MEMO_LOCK = threading.Lock()
_MEMO: OrderedDict[str, tuple] = (
    OrderedDict()
)  # features.json path -> (its stat, labels files' stats, Features)


def _stat(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _load(path: str, sources: list) -> Features:
    try:
        data = read_small(path, MAX_TFDS_FEATURES_BYTES, "MAX_TFDS_FEATURES_BYTES")
        return parse_features(data, os.path.dirname(path) or ".", path, sources)
    except FeatureError as exc:
        log.info("%s", exc)  # the caller says it, once
        return Features(None, path, error=str(exc))
    except OSError as exc:
        msg = f"{printable(path)}: cannot read ({printable(exc.strerror or str(exc))})"
        log.info("%s", msg)
        return Features(None, path, error=msg)


def read_small(path: str, limit: int, name: str) -> bytes:
    """A regular file's bytes up to `limit` (FeatureError past it, named; a FIFO or device refused
    without blocking). FileNotFoundError passes through: a missing file is often no error."""
    shown = printable(os.path.basename(path))
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise FeatureError(f"{shown}: cannot open ({printable(exc.strerror or str(exc))})") from None
    with os.fdopen(fd, "rb") as fh:
        st = os.fstat(fh.fileno())
        if not stat.S_ISREG(st.st_mode):
            raise FeatureError(f"{shown}: not a regular file")
        if st.st_size > limit:
            raise FeatureError(f"{shown}: " + too_large("it", st.st_size, limit, name=name))
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise FeatureError(f"{shown}: " + too_large("it", None, limit, name=name))
    return data


def _shape(c: dict) -> tuple[int | None, ...]:
    s = c.get("shape")
    dims = s.get("dimensions", []) if isinstance(s, dict) else []
    if not isinstance(dims, list):
        return ()
    return tuple(None if (v := _int(x)) is None or v < 0 else v for x in dims[:MAX_TFDS_FEATURE_DEPTH])


def _int(x: object) -> int | None:
    """An int64 as proto JSON writes it (a string) or a number; None for anything else."""
    if isinstance(x, bool):
        return None
    if isinstance(x, int):
        return x
    if isinstance(x, str) and x.lstrip("-").isdigit() and len(x) <= 20:
        return int(x)
    return None


def _text(c: dict, key: str) -> str:
    v = c.get(key, "")
    return v if isinstance(v, str) else ""
