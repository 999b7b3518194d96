"""A small filter language over records, parsed safely (a tokenizer and a recursive-descent parser
into frozen dataclasses; nothing is ever `eval`ed).

    label == 3
    "image/object/class/text" contains "cat"
    width < 100 and not problem
    len("image/object/bbox/xmin") > 5
    problem == "bad_data_crc" or kind != "example"

Grammar: `or` of `and` of `not` of comparisons; a comparison is `term [op term]` with op one of
== != < <= > >= contains. Terms: numbers, 'single' or "double" quoted strings, bare feature keys
(letters, digits and _ / . -), len(key), (expr), and the record's own facts: problem, kind, record,
size, file, split, tag (the person's tag: `tag == "drop"`, `not tag`; joined from the tag store when
the filter runs, never stored with the facts: tags change). A double-quoted string names a feature when it stands on the left of a comparison, alone,
or inside len(); elsewhere it is text. A feature with several values matches when any value does.

On a list (a feature with several values, or `problem`): `==`, `<`, `contains`... hold when some value
does, and `!=` holds when no value equals (`problem != "x"`: no problem is x). To say otherwise,
quantify a comparison: `any(problem != "x")` (some problem is not x), `all(label == 3)` (every
value is 3; true for a record with no value, as Python's all()), over the values on the left of
the comparison (on its right when the left is a literal). `any(...)` / `all(...)` are words only
before "(", so a feature named any or all still works.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from tfrview.core.errors import TfrviewError
from tfrview.core.records.kinds import PayloadKind

KEYWORDS = {"and", "or", "not", "contains", "len", "true", "false"}
FACTS = {"problem", "kind", "record", "size", "file", "split", "tag"}
QUANTIFIERS = ("any", "all")  # words only before "(": any(problem != "x")
OPS = ("==", "!=", "<=", ">=", "<", ">")


class FilterError(TfrviewError, ValueError):
    """A parse error, with the character position where it was found."""

    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.message = message
        self.position = position

    def __str__(self) -> str:
        return f"{self.message} (at character {self.position + 1})"


# --- tokens ---------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"""\s*(?:
        (?P<num>-?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w/.]))
      | (?P<dq>"(?:[^"\\]|\\.)*")
      | (?P<sq>'(?:[^'\\]|\\.)*')
      | (?P<op>==|!=|<=|>=|<|>|=)
      | (?P<lp>\()
      | (?P<rp>\))
      | (?P<word>[A-Za-z_][\w/.\-]*)
    )""",
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class Token:
    kind: str  # num dq sq op lp rp word end
    text: str
    pos: int


def tokenize(text: str) -> list[Token]:
    out = []
    i = 0
    while i < len(text):
        if text[i:].strip() == "":
            break
        m = _TOKEN.match(text, i)
        if m is None or m.end() == i:
            j = i + len(text[i:]) - len(text[i:].lstrip())
            ch = text[j]
            if ch in "\"'":
                raise FilterError(f"unclosed {ch}quote{ch}", j)
            raise FilterError(f"unexpected {ch!r}", j)
        kind = m.lastgroup
        start = m.start(kind)
        tok = m.group(kind)
        if kind == "op" and tok == "=":
            raise FilterError("use == to compare", start)
        out.append(Token(kind, tok, start))
        i = m.end()
    out.append(Token("end", "", len(text)))
    return out


def _unquote(s: str) -> str:
    body = s[1:-1]
    return re.sub(r"\\(.)", r"\1", body)


# --- AST ---------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Key:
    name: str
    pos: int = field(default=0, compare=False)  # where it was written, for errors


@dataclass(frozen=True, slots=True)
class Lit:
    value: object


@dataclass(frozen=True, slots=True)
class Len:
    key: str
    pos: int = field(default=0, compare=False)


@dataclass(frozen=True, slots=True)
class Fact:
    name: str  # problem, kind, record, size, file, split, tag


@dataclass(frozen=True, slots=True)
class Cmp:
    op: str
    left: object
    right: object


@dataclass(frozen=True, slots=True)
class Quant:
    """any(cmp) / all(cmp): the comparison over each value of its list side, one at a time."""

    kind: str  # any, all
    cmp: Cmp


@dataclass(frozen=True, slots=True)
class Not:
    inner: object


@dataclass(frozen=True, slots=True)
class And:
    items: tuple


@dataclass(frozen=True, slots=True)
class Or:
    items: tuple


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = tokenize(text)
        self.i = 0

    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def take(self) -> Token:
        t = self.toks[self.i]
        self.i += 1
        return t

    def is_word(self, w: str) -> bool:
        return self.tok.kind == "word" and self.tok.text.lower() == w

    def parse(self):
        if self.tok.kind == "end":
            raise FilterError("empty filter", 0)
        node = self.parse_or()
        if self.tok.kind != "end":
            raise FilterError(f"unexpected {self.tok.text!r}; expected and, or or the end", self.tok.pos)
        return node

    def parse_or(self):
        items = [self.parse_and()]
        while self.is_word("or"):
            self.take()
            items.append(self.parse_and())
        return items[0] if len(items) == 1 else Or(tuple(items))

    def parse_and(self):
        items = [self.parse_not()]
        while self.is_word("and"):
            self.take()
            items.append(self.parse_not())
        return items[0] if len(items) == 1 else And(tuple(items))

    def parse_not(self):
        if self.is_word("not"):
            self.take()
            return Not(self.parse_not())
        return self.parse_cmp()

    def parse_cmp(self):
        left = self.parse_term(left_side=True)
        if self.tok.kind == "op" or self.is_word("contains"):
            op = self.take().text.lower()
            if self.tok.kind == "end":
                raise FilterError(f"{op} needs something on its right", self.tok.pos)
            right = self.parse_term(left_side=False)
            return Cmp(op, left, right)
        return left

    def parse_term(self, left_side: bool):
        t = self.tok
        if t.kind == "num":
            self.take()
            return Lit(float(t.text) if any(c in t.text for c in ".eE") else int(t.text))
        if t.kind == "sq":
            self.take()
            return Lit(_unquote(t.text))
        if t.kind == "dq":
            self.take()
            return Key(_unquote(t.text), t.pos) if left_side else Lit(_unquote(t.text))
        if t.kind == "lp":
            self.take()
            node = self.parse_or()
            if self.tok.kind != "rp":
                raise FilterError("missing )", self.tok.pos)
            self.take()
            return node
        if t.kind == "word":
            w = t.text.lower()
            if w == "len":
                self.take()
                if self.tok.kind != "lp":
                    raise FilterError("len needs (key)", self.tok.pos)
                self.take()
                k = self.take()
                if k.kind not in ("dq", "sq", "word") or k.text.lower() in KEYWORDS:
                    raise FilterError("len( ) takes a feature key", k.pos)
                if self.tok.kind != "rp":
                    raise FilterError("missing ) after len(key", self.tok.pos)
                self.take()
                return Len(_unquote(k.text) if k.kind in ("dq", "sq") else k.text, k.pos)
            if w in ("true", "false"):
                self.take()
                return Lit(w == "true")
            if w in QUANTIFIERS and self.toks[self.i + 1].kind == "lp":
                self.take()
                self.take()
                inner = self.parse_cmp()
                if not isinstance(inner, Cmp):
                    raise FilterError(f'{w}( ) takes a comparison, e.g. {w}(problem == "x")', t.pos)
                if self.tok.kind != "rp":
                    raise FilterError(f"missing ) after {w}(", self.tok.pos)
                self.take()
                return Quant(w, inner)
            if w in FACTS:
                self.take()
                return Fact(w)
            if w in KEYWORDS:
                raise FilterError(f"{t.text!r} cannot start a term", t.pos)
            self.take()
            return Key(t.text, t.pos)
        if t.kind == "end":
            raise FilterError("the filter ends too early", t.pos)
        raise FilterError(f"unexpected {t.text!r}", t.pos)


def parse(text: str):
    """The AST of a filter. Raises FilterError with the position of the mistake."""
    return _split_words(_Parser(text).parse())


def _split_words(node):
    """`split == "val"` means the split `val` names (`tfrecord.splits.ALIASES`: validation), as a
    `val/` folder does: a split is compared by its one name."""
    from tfrview.core.tfrecord.splits import ALIASES

    def word(n):
        return Lit(ALIASES[n.value.lower()]) if isinstance(n, Lit) and str(n.value).lower() in ALIASES else n

    def leaf(n):
        if isinstance(n, Cmp) and n.op != "contains" and Fact("split") in (n.left, n.right):
            return Cmp(n.op, word(n.left), word(n.right))
        return n

    return _rebuilt(node, leaf)


def _rebuilt(node, leaf):
    """The filter with `leaf` applied to each of its terms (a comparison, a key, a fact), the
    `and`, `or`, `not` and `any`/`all` around them kept as they are."""
    if isinstance(node, Quant):
        return Quant(node.kind, _rebuilt(node.cmp, leaf))
    if isinstance(node, Not):
        return Not(_rebuilt(node.inner, leaf))
    if isinstance(node, And | Or):
        return type(node)(tuple(_rebuilt(x, leaf) for x in node.items))
    return leaf(node)


def resolve_keys(node, known: set[str], complete: bool = False):
    """The filter with its feature keys checked against the dataset's: a bare last part resolves to
    the one key it ends (`width` -> `image/width`); a key no record has is an error naming the
    nearest one, and a bare word on the right of a comparison is text that wants quotes. `complete`
    says `known` holds every key of the dataset (else only a sample's: unknown keys with no near
    match are left alone, as they may live in records not sampled)."""
    import difflib  # standard library, used here only

    from tfrview.core.analysis.stepcolumns import NAMES  # the dataset step's record columns
    from tfrview.core.records.imagesignals import COLUMNS  # the image signals' fact columns

    def name_of(name: str, pos: int, right: bool) -> str:
        if not known or name in known or ((name in COLUMNS or name in NAMES) and not right):
            return name
        ends = sorted(k for k in known if k.rsplit("/", 1)[-1] == name)
        if len(ends) == 1:
            return ends[0]
        if len(ends) > 1:
            raise FilterError(f"{name!r} could be {' or '.join(ends[:3])}: write the whole key", pos)
        if right:
            raise FilterError(f'no feature {name!r}; to compare with text, quote it: "{name}"', pos)
        near = difflib.get_close_matches(name, sorted(known), n=1, cutoff=0.75)
        if near:
            raise FilterError(f"no feature {name!r}; did you mean {near[0]}?", pos)
        if complete:
            raise FilterError(f"no record has a feature {name!r}", pos)
        return name

    def leaf(n, right: bool = False):
        if isinstance(n, Key):
            return replace(n, name=name_of(n.name, n.pos, right))
        if isinstance(n, Len):
            return replace(n, key=name_of(n.key, n.pos, False))
        if isinstance(n, Cmp):
            return Cmp(n.op, leaf(n.left), leaf(n.right, right=True))
        return n

    return _rebuilt(node, leaf)


def keys_used(node) -> set[str]:
    """The feature keys (and fact columns such as `blur` or `leak`) a filter names."""
    if isinstance(node, Key):
        return {node.name}
    if isinstance(node, Len):
        return {node.key}
    if isinstance(node, Cmp):
        return keys_used(node.left) | keys_used(node.right)
    if isinstance(node, Quant):
        return keys_used(node.cmp)
    if isinstance(node, Not):
        return keys_used(node.inner)
    if isinstance(node, And | Or):
        return set().union(*(keys_used(x) for x in node.items))
    return set()


def facts_used(node) -> set[str]:
    """The record facts (problem, kind, ...) a filter asks about: a filter on `problem` depends on
    the QA findings, so the window runs it again as they arrive."""
    if isinstance(node, Fact):
        return {node.name}
    if isinstance(node, Cmp):
        return facts_used(node.left) | facts_used(node.right)
    if isinstance(node, Quant):
        return facts_used(node.cmp)
    if isinstance(node, Not):
        return facts_used(node.inner)
    if isinstance(node, And | Or):
        return set().union(*(facts_used(x) for x in node.items))
    return set()


# --- evaluation ---------------------------------------------------------------------------------------


@dataclass
class RecordFacts:
    """What a filter can ask of one record. `values(key)` gives a feature's values (bytes decoded to
    str when they are UTF-8); missing features give []."""

    number: int
    size: int
    file: str
    problems: list[str]
    kind: Callable[[], str]
    values: Callable[[str], list]
    split: str = ""  # the file's split (tfrecord.splits; "" none)
    tag: str = ""  # the person's tag (tags.TagWord; "" none)


def _num(x) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _cmp1(op: str, a, b) -> bool:
    """One value against one value. Values of different types never match (3 is not "3")."""
    if op == "contains":
        if isinstance(a, str) and isinstance(b, str):
            return b.lower() in a.lower()
        return type(a) is type(b) and a == b
    both_num = _num(a) and _num(b)
    both_str = isinstance(a, str) and isinstance(b, str)
    both_bool = isinstance(a, bool) and isinstance(b, bool) and op == "=="
    if not (both_num or both_str or both_bool):
        return False
    if op == "==":
        return a == b
    if op == "<":
        return a < b
    if op == "<=":
        return a <= b
    if op == ">":
        return a > b
    return a >= b


# --- facts from a record's bytes ------------------------------------------------------------------------


def _list_values(f) -> list:
    which = f.WhichOneof("kind")
    if which == "bytes_list":
        out = []
        for b in f.bytes_list.value:
            try:
                out.append(b.decode("utf-8"))
            except UnicodeDecodeError:
                out.append(b)
        return out
    if which == "float_list":
        return list(f.float_list.value)
    if which == "int64_list":
        return list(f.int64_list.value)
    return []


def facts_for(
    data: bytes,
    number: int,
    file: str,
    problems: list[str],
    keys: set[str] = frozenset(),
    split: str = "",
    tag: str = "",
) -> RecordFacts:
    """Lazy facts: the payload is parsed only if the filter asks for a feature or the kind, and once."""
    from tfrview.core.records.payload import parse_clean_example, sniff_kind

    cache: list = []

    def parsed():
        if not cache:
            ex = parse_clean_example(data) if data[:1] == b"\x0a" else None
            if ex is not None:
                cache.append(("example", ex.features.feature))
            else:
                kind = sniff_kind(data)
                feats = None
                if kind == PayloadKind.SEQUENCE_EXAMPLE:
                    from tfrview.core.records.proto import example_pb2  # heavy: protobuf on first use only

                    feats = example_pb2.SequenceExample.FromString(data).context.feature
                cache.append((kind, feats))
        return cache[0]

    def values(key: str) -> list:
        feats = parsed()[1]
        if feats is None or key not in feats:
            return []
        return _list_values(feats[key])

    return RecordFacts(number, len(data), file, problems, lambda: parsed()[0], values, split, tag)


# --- compiling: the AST into nested closures, once per filter (evaluating 1M records) ----------------


def compile_filter(node) -> Callable[[RecordFacts], bool]:
    """The filter as nested closures, built once: evaluating a record does not walk the AST.

    A feature with several values matches when any value does; `!=` holds when no value equals (so a
    missing feature differs from everything); a bare key, len or fact is true when non-empty."""
    if isinstance(node, Or):
        parts = [compile_filter(x) for x in node.items]
        return lambda r: any(p(r) for p in parts)
    if isinstance(node, And):
        parts = [compile_filter(x) for x in node.items]
        return lambda r: all(p(r) for p in parts)
    if isinstance(node, Not):
        inner = compile_filter(node.inner)
        return lambda r: not inner(r)
    if isinstance(node, Quant):
        left, right, op = _compile_vals(node.cmp.left), _compile_vals(node.cmp.right), node.cmp.op
        kind, over_left = node.kind, quantified_side(node.cmp)
        return lambda r: quantified(kind, op, left(r), right(r), over_left)
    if isinstance(node, Cmp):
        left, right, op = _compile_vals(node.left), _compile_vals(node.right), node.op
        if op == "!=":
            return lambda r: not any(_cmp1("==", a, b) for a in left(r) for b in right(r))
        return lambda r: any(_cmp1(op, a, b) for a in left(r) for b in right(r))
    if isinstance(node, Lit):
        value = bool(node.value)
        return lambda r: value
    vals = _compile_vals(node)
    return lambda r: bool(vals(r))


def quantified_side(cmp: Cmp) -> bool:
    """True when any()/all() range over the left side's values: the side that is not a literal
    (`any("x" == problem)` ranges over the problems)."""
    return not (isinstance(cmp.left, Lit) and not isinstance(cmp.right, Lit))


def quantified(kind: str, op: str, left: list, right: list, over_left: bool = True) -> bool:
    """any/all of one side's values, each compared with the other side's as a plain comparison
    does (`!=`: equals none of them). all() of no value is true, any() of none false."""

    def holds(a, b_vals) -> bool:
        if op == "!=":
            return not any(_cmp1("==", a, b) for b in b_vals)
        return any(_cmp1(op, a, b) for b in b_vals)

    if over_left:
        each = (holds(a, right) for a in left)
    else:
        each = (any(holds(a, [b]) for a in left) if op != "!=" else holds(b, left) for b in right)
    return any(each) if kind == "any" else all(each)


def _compile_vals(node) -> Callable[[RecordFacts], list]:
    if isinstance(node, Lit):
        const = [node.value]
        return lambda r: const
    if isinstance(node, Key):
        name = node.name
        return lambda r: r.values(name)
    if isinstance(node, Len):
        key = node.key
        return lambda r: [len(r.values(key))]
    if isinstance(node, Fact):
        return {
            "problem": lambda r: r.problems,
            "kind": lambda r: [r.kind()],
            "record": lambda r: [r.number],
            "size": lambda r: [r.size],
            "file": lambda r: [r.file],
            "split": lambda r: [r.split] if r.split else [],
            "tag": lambda r: [r.tag] if r.tag else [],
        }[node.name]
    test = compile_filter(node)
    return lambda r: [test(r)]
