"""Riegeli transposed chunks ('t'): records decoded from their columns, in numpy.

Written from the format as google/riegeli's transpose decoder reads it (its file-format document
leaves this chunk "TODO"). A transposed chunk stores protocol-buffer records field by field:

- `data` = compression byte, varint header size, the (compressed) header, the data buckets, the
  (compressed) transitions;
- the header: bucket and buffer counts, each bucket's compressed length, each buffer's length
  (buffers are laid end to end inside the decompressed buckets), then a state machine of nodes
  (a proto tag each, or a reserved id: no-op 0, non-proto record 1, submessage start 2, message
  start 3; a tag of wire type 6 ends a submessage), each node's next node (+ node count: an
  "implicit" transition read from no byte), one subtype byte per varint node (a varint of 1-10
  bytes in its buffer, or a value 0-127 inline), a buffer index per node that has data, and the
  first node;
- the transitions: one byte per explicit transition, `offset << 2 | repeats`: the next node is
  the current node's next + offset, and the next `repeats` explicit transitions go straight to
  their next node without a byte.

Walking the nodes writes the records backwards (the last record first, each message's last field
first); each node writes its tag and its value from its buffer, a submessage start writes the
submessage's tag and length, a message start marks where a record begins.

Decoding here is in two passes so that the per-field work is array operations: (1) the node
sequence, from the transitions (a Python step per transition byte, none per implicit or repeated
transition: the walk between two bytes depends only on the node and the repeat count, so each is
worked out once and the sequence is built by `np.repeat`); (2) each step's bytes, submessage
lengths and positions, and the output, with numpy. Only length-prefixed strings are walked one by
one (each string's length is in the buffer before it).

Every count and size is checked before what it sizes is allocated: the decoded size against
`AR_CHUNK_BYTES`, the buffers against the decoded size, the number of steps against what the
decoded size allows. A chunk that breaks a rule raises ValueError with what is wrong (the reader
names the chunk `chunk_damaged`); the caller's RiegeliError is for limits.
"""

from __future__ import annotations

import enum

import numpy as np

from tfrview.core.arrayrecord.riegeli import (
    ChunkHeader,
    ChunkType,
    RiegeliError,
    decompress_block,
    read_varint,
    simple_chunk_records,
    varints_at,
)
from tfrview.core.limits import AR_CHUNK_BYTES, AR_TRANSPOSED_STEPS, too_large

_U32 = (1 << 32) - 1
_NUM_RESERVED = 4  # reserved node ids: no-op, non-proto, submessage start, message start


class Op(enum.IntEnum):
    """What a node of the state machine does when the walk reaches it."""

    NOOP = 0
    NONPROTO = 1  # a record that is not a proto: its length from the lengths buffer, its bytes
    SUB_START = 2  # (met after the submessage's fields) the submessage's tag and length
    MSG_START = 3  # (met after the record's fields) a record begins here
    SUB_END = 4  # (met before the submessage's fields) remember where it ends
    COPY = 5  # the tag alone (groups), or the tag and an inline varint byte
    VARINT = 6  # the tag and a varint of `width` bytes from the buffer, continuation bits restored
    FIXED = 7  # the tag and 4 or 8 bytes from the buffer
    STRING = 8  # the tag, then a varint length and that many bytes from the buffer


_STRING = int(Op.STRING)
_READS = np.zeros(len(Op), dtype=bool)
_READS[[Op.NONPROTO, Op.VARINT, Op.FIXED, Op.STRING]] = True
_SIZED = np.zeros(len(Op), dtype=bool)  # reads a size known from the node alone
_SIZED[[Op.VARINT, Op.FIXED]] = True
_RECORD = np.zeros(len(Op), dtype=bool)  # a record begins at this step
_RECORD[[Op.MSG_START, Op.NONPROTO]] = True
_MAX_GRAMS = 1 << 18  # eight-byte transition patterns kept (each ~200 bytes)
_COPY_BIG = 4096  # payloads at least this long are copied by slices, shorter ones by index arrays
_INDEX_BATCH = 8 << 20  # bytes copied per batch of index arrays
_EXACT = 16  # payloads this short are copied by one (rows, length) gather per length
_CHAIN_BLOCKS_FROM = 1 << 18  # buffers of strings this long are chained by blocks
_CHAIN_SAMPLE = 1 << 14  # bytes walked first to see how long the strings are
_CHAIN_BLOCK = 2048  # bytes a walker of the chain starts in
_BATCH_STEPS = 1 << 19  # steps decoded at a time: per-step arrays stay a few tens of MB


class _Cursor:
    """Varints read from a header, checked against what is left of it."""

    def __init__(self, buf: bytes) -> None:
        self.buf = buf
        self.pos = 0

    def left(self) -> int:
        return len(self.buf) - self.pos

    def one(self, what: str, bits32: bool = True) -> int:
        try:
            value, self.pos = read_varint(self.buf, self.pos)
        except ValueError:
            raise ValueError(f"the header ends inside {what}") from None
        if bits32 and value > _U32:
            raise ValueError(f"{what} does not fit 32 bits")
        return value

    def many(self, count: int, what: str, bits32: bool = True) -> np.ndarray:
        """`count` varints as uint64, decoded as array operations."""
        if count > self.left():
            raise ValueError(f"the header claims {count:,} {what} in {self.left():,} bytes")
        if count == 0:
            return np.zeros(0, dtype=np.uint64)
        a = np.frombuffer(self.buf, dtype=np.uint8, count=min(self.left(), 10 * count), offset=self.pos)
        ends = np.flatnonzero(a < 0x80)
        if len(ends) < count:
            raise ValueError(f"the header ends inside its {what}")
        ends = ends[:count]
        starts = np.empty(count, dtype=np.int64)
        starts[0] = 0
        starts[1:] = ends[:-1] + 1
        lens = ends - starts + 1
        if int(lens.max()) > (5 if bits32 else 10):
            raise ValueError(f"a varint too long among its {what}")
        out = (a[starts] & 0x7F).astype(np.uint64)
        for j in range(1, int(lens.max())):
            rows = np.flatnonzero(lens > j)
            out[rows] |= (a[starts[rows] + j] & 0x7F).astype(np.uint64) << np.uint64(7 * j)
        if bits32 and len(out) and int(out.max()) > _U32:
            raise ValueError(f"one of its {what} does not fit 32 bits")
        self.pos += int(ends[-1]) + 1
        return out

    def raw(self, n: int, what: str) -> bytes:
        if n > self.left():
            raise ValueError(f"the header ends inside its {what}")
        self.pos += n
        return self.buf[self.pos - n : self.pos]


def _varint_bytes(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _varint_len(v: np.ndarray) -> np.ndarray:
    """Bytes of each value's varint (values < 2**35)."""
    v = v.astype(np.int64)
    return 1 + (v >= 1 << 7) + (v >= 1 << 14) + (v >= 1 << 21) + (v >= 1 << 28)


class _Machine:
    """The header's state machine, as arrays by node."""

    def __init__(self, hdr: bytes, num_buffers: int, max_steps: int) -> None:
        c = _Cursor(hdr)
        self.cursor = c
        n = c.one("the state machine's size")
        if 2 * n > c.left():  # each node has at least a tag and a next node
            raise ValueError(f"the header claims {n:,} nodes in {c.left():,} bytes")
        if n == 0:
            raise ValueError("a state machine with no nodes")
        if n > max_steps:  # the writer makes a node for what its records hold, no more
            raise ValueError(f"a state machine of {n:,} nodes, more than its records can need")
        if n > AR_TRANSPOSED_STEPS:
            raise RiegeliError(
                too_large(
                    "a transposed chunk's state machine",
                    n,
                    AR_TRANSPOSED_STEPS,
                    "nodes",
                    "AR_TRANSPOSED_STEPS",
                )
            )
        self.n = n
        tags = c.many(n, "node tags").astype(np.int64)
        nxt = c.many(n, "next nodes").astype(np.int64)
        wire = tags & 7
        reserved = tags < _NUM_RESERVED
        has_subtype = ~reserved & (tags >= 8) & (wire == 0)
        subtypes = np.zeros(n, dtype=np.int64)
        raw = c.raw(int(has_subtype.sum()), "subtypes")
        subtypes[has_subtype] = np.frombuffer(raw, dtype=np.uint8)
        # a tag of wire type 6 ends a submessage: the tag written is the length-delimited one
        end = ~reserved & (wire == 6)
        tag = np.where(end, tags - 4, tags)
        wire = tag & 7
        if bool((~reserved & ((tag < 8) | (wire == 7) | (wire == 6))).any()):
            bad = int(tags[np.flatnonzero(~reserved & ((tag < 8) | (wire >= 6)))[0]])
            raise ValueError(f"a node with an invalid tag ({bad:,})")
        op = np.full(n, Op.COPY, dtype=np.int8)
        width = np.zeros(n, dtype=np.int64)
        inline = np.full(n, -1, dtype=np.int64)
        op[tags == 0] = Op.NOOP
        op[tags == 1] = Op.NONPROTO
        op[tags == 2] = Op.SUB_START
        op[tags == 3] = Op.MSG_START
        op[end] = Op.SUB_END
        plain = ~reserved & ~end
        varint = plain & (wire == 0)
        if bool((varint & (subtypes > 10 + 127)).any()):
            raise ValueError("a varint node with an invalid subtype")
        in_buf = varint & (subtypes < 10)
        op[in_buf] = Op.VARINT
        width[in_buf] = subtypes[in_buf] + 1
        inl = varint & (subtypes >= 10)
        inline[inl] = subtypes[inl] - 10
        op[plain & (wire == 1)] = Op.FIXED
        width[plain & (wire == 1)] = 8
        op[plain & (wire == 5)] = Op.FIXED
        width[plain & (wire == 5)] = 4
        op[plain & (wire == 2)] = Op.STRING
        reads = _READS[op]
        self.buffer = np.full(n, -1, dtype=np.int64)
        if reads.any():
            idx = c.many(int(reads.sum()), "buffer indices").astype(np.int64)
            if int(idx.max()) >= num_buffers:
                raise ValueError(f"a node reads buffer {int(idx.max()):,} of {num_buffers:,}")
            self.buffer[reads] = idx
        self.first = c.one("the first node")
        if self.first >= n:
            raise ValueError(f"the first node {self.first:,} is not one of the {n:,}")
        if c.left():
            raise ValueError(f"{c.left():,} bytes after the header's end")
        self.implicit = nxt >= n
        self.next = np.where(self.implicit, nxt - n, nxt)
        if bool((self.next >= n).any()):
            raise ValueError("a node's next node is not one of them")
        # tag bytes (and an inline value after them), as a (n, 6) table and a length each
        self.tag_len = (_varint_len(tag) * ~reserved).astype(np.int32)
        self.tag_len[inl] += 1
        self.tag_len[end] = _varint_len(tag[end])  # kept for the submessage start that writes it
        self.op, self.width = op, width
        self.is_record = _RECORD[op]
        self.tag_data = np.zeros((n, 6), dtype=np.uint8)
        v = np.where(reserved, 0, tag)
        for j in range(5):
            more = v >= 0x80
            self.tag_data[:, j] = (v & 0x7F) | (more * 0x80)
            v = v >> 7
        rows = np.flatnonzero(inl)
        self.tag_data[rows, self.tag_len[rows] - 1] = inline[rows]
        self.tag_cols = [np.ascontiguousarray(self.tag_data[:, j]) for j in range(6)]  # byte j of each
        self.tag_len[op == Op.SUB_END] = 0  # a submessage end writes nothing itself
        self.end_tag_len = np.where(op == Op.SUB_END, _varint_len(tag), 0)
        self._no_implicit_loop()

    def _no_implicit_loop(self) -> None:
        """A cycle of implicit transitions would never read a byte: the format forbids it. Each
        node follows its implicit transitions by doubling jumps (a node with an explicit one
        stays put): a node still on an implicit one after n steps is on a cycle."""
        jump = np.where(self.implicit, self.next, np.arange(self.n))
        for _ in range(max(1, int(self.n).bit_length())):
            jump = jump[jump]
        if bool(self.implicit[jump].any()):
            raise ValueError("its state machine has a loop of implicit transitions")


def _walk(m: _Machine, transitions: bytes, max_steps: int) -> _Walk:
    """The sequence of nodes the transitions walk (as segments), at most `max_steps` long."""
    n = m.n
    imp = m.implicit.tolist()
    nxt = m.next.tolist()
    # a segment: the nodes walked from a transition byte to the next byte read; it depends only on
    # the node the byte leads to and the byte's repeat count (node * 4 + repeats: its key)
    seg_of: dict[int, tuple[int, int]] = {}  # key -> (segment number, the base for the next byte)
    segments: list[list[int]] = []

    def one(base: int, b: int) -> tuple[int, int]:
        """One transition byte from `base`: its segment's number, the base after it."""
        s = base + (b >> 2)
        if s >= n:
            raise ValueError(f"a transition to node {s:,} of {n:,}")
        key = s * 4 + (b & 3)
        got = seg_of.get(key)
        if got is not None:
            return got
        nodes = [s]
        left = (b & 3) + imp[s]
        cur = s
        while left:
            cur = nxt[cur]
            nodes.append(cur)
            if not imp[cur]:
                left -= 1
        segments.append(nodes)
        seg_of[key] = got = (len(segments) - 1, nxt[cur])
        return got

    # the first node is walked to as if by a byte of offset 0 and no repeats from its own place
    first_seg, base = one(m.first, 0)
    # eight bytes at a time: what eight bytes do from a base is worked out once and kept (records
    # of one shape repeat the same few), so the Python work is one look-up per eight bytes
    words = np.frombuffer(transitions, dtype="<u8", count=len(transitions) // 8).tolist()
    memo: dict[int, int] = {}
    gram_segs: list[int] = []
    gram_base: list[int] = []
    ids = [0] * len(words)
    done = 0
    for i, w in enumerate(words):
        g = memo.get((base << 64) | w)
        if g is None:
            if len(gram_base) >= _MAX_GRAMS:  # no repeats worth keeping: byte by byte from here
                break
            at = base
            for j in range(0, 64, 8):
                seg, at = one(at, (w >> j) & 0xFF)
                gram_segs.append(seg)
            g = len(gram_base)
            memo[(base << 64) | w] = g
            gram_base.append(at)
        ids[i] = g
        base = gram_base[g]
        done = i + 1
    tail = []
    for b in transitions[8 * done :]:
        seg, base = one(base, b)
        tail.append(seg)
    grams = np.array(gram_segs, dtype=np.int32).reshape(-1, 8)
    order = np.concatenate(
        [
            np.array([first_seg], dtype=np.int32),
            grams[np.array(ids[:done], dtype=np.int64)].ravel(),
            np.array(tail, dtype=np.int32),
        ]
    )
    lens = np.array([len(x) for x in segments], dtype=np.int64)
    total = int(lens[order].sum())
    if total > max_steps:
        raise ValueError(f"its transitions walk {total:,} steps, more than its {max_steps:,} can need")
    if total > AR_TRANSPOSED_STEPS:
        raise RiegeliError(
            too_large("a transposed chunk's walk", total, AR_TRANSPOSED_STEPS, "steps", "AR_TRANSPOSED_STEPS")
        )
    flat = np.array([x for nodes in segments for x in nodes], dtype=np.int32)
    starts = np.zeros(len(segments), dtype=np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    return _Walk(flat, starts, lens, order)


class _Walk:
    """The node sequence, kept as segments (`flat[start:start+len]` each) in walk `order`: it is
    expanded a batch at a time (`batches`), never whole."""

    def __init__(
        self, flat: np.ndarray, seg_start: np.ndarray, seg_len: np.ndarray, order: np.ndarray
    ) -> None:
        self.flat, self.seg_start, self.seg_len, self.order = flat, seg_start, seg_len, order

    def batches(self, is_record: np.ndarray, steps: int):
        """Runs of the node sequence of about `steps` steps each, cut after a step that begins a
        record (no submessage is open there), the last run being whatever follows the last one."""
        order = self.order
        cum = np.cumsum(self.seg_len[order], dtype=np.int32 if AR_TRANSPOSED_STEPS < 1 << 31 else np.int64)
        held: list[np.ndarray] = []
        i = 0
        while i < len(order):
            j = int(np.searchsorted(cum, (int(cum[i - 1]) if i else 0) + steps, side="right"))
            j = max(j, i + 1)
            piece = _ranges(self.seg_start[order[i:j]], self.seg_len[order[i:j]], self.flat)
            i = j
            rec = np.flatnonzero(is_record[piece])
            if not len(rec):
                held.append(piece)
                continue
            cut = int(rec[-1]) + 1
            yield np.concatenate([*held, piece[:cut]]) if held else piece[:cut]
            held = [piece[cut:]]
        rest = np.concatenate(held) if held else np.zeros(0, dtype=np.int32)
        if len(rest):
            yield rest


def _ranges(starts: np.ndarray, lens: np.ndarray, src: np.ndarray) -> np.ndarray:
    """src[starts[0]:starts[0]+lens[0]] + src[starts[1]:...] + ..., by index arrays."""
    total = int(lens.sum())
    if total == 0:
        return src[:0].copy()
    keep = lens > 0
    starts, lens = starts[keep], lens[keep]
    ends = np.cumsum(lens)
    idx = np.ones(total, dtype=np.int64)
    idx[0] = starts[0]
    idx[ends[:-1]] = starts[1:] - (starts[:-1] + lens[:-1]) + 1
    return src[np.cumsum(idx)]


def _claimed(lengths: np.ndarray, bound: int, words: str) -> int:
    """The sum of claimed lengths, each checked before they are summed (a sum of uint64 claims
    could wrap around); ValueError with `words` if past `bound`."""
    if not len(lengths):
        return 0
    top = int(lengths.max())
    total = int(lengths.sum()) if top <= bound else top
    if total > bound:
        raise ValueError(words.format(total))
    return total


def _buffers(codec: int, mv: memoryview, lengths: np.ndarray, bucket_lengths: np.ndarray, budget: int):
    """The buckets decompressed and joined (uint8) and each buffer's offset in them."""
    total = _claimed(lengths, budget, "its buffers claim {:,} bytes, more than its records can hold")
    starts = np.zeros(len(lengths) + 1, dtype=np.int64)
    np.cumsum(lengths.astype(np.int64), out=starts[1:])
    joined = np.empty(total, dtype=np.uint8)  # each bucket copied in as it is decompressed
    pos = 0
    got = 0
    for blen in bucket_lengths.tolist():
        piece = mv[pos : pos + blen]
        pos += blen
        out = decompress_block(codec, piece, total - got, None, "a data bucket")
        if len(out) > total - got:  # uncompressed: not checked by decompress_block
            raise ValueError(f"its buckets hold more than its buffers' {total:,} bytes")
        joined[got : got + len(out)] = np.frombuffer(out, dtype=np.uint8)
        got += len(out)
        k = int(np.searchsorted(starts, got))
        if k >= len(starts) or int(starts[k]) != got:
            raise ValueError("a data bucket ends inside a buffer")
    if got != total:
        raise ValueError(f"its buckets hold {got:,} bytes, its buffers {total:,}")
    return joined, starts


def transposed_chunk_records(header: ChunkHeader, data: bytes | memoryview) -> tuple[bytes, np.ndarray]:
    """A transposed chunk's records: (their concatenated bytes, int64 offsets of num_records + 1).

    ValueError with what is wrong for a chunk that does not decode; RiegeliError for a limit."""
    size = header.decoded_size
    count = header.num_records
    if size > AR_CHUNK_BYTES:
        raise RiegeliError(
            too_large(f"a chunk of {count:,} records", size, AR_CHUNK_BYTES, name="AR_CHUNK_BYTES")
        )
    mv = memoryview(data)
    if not len(mv):
        raise ValueError("a chunk with no data")
    codec = mv[0]
    header_size, p = read_varint(mv, 1)
    if p + header_size > len(mv):
        raise ValueError(f"its header claims {header_size:,} bytes of {len(mv) - p:,}")
    hdr = bytes(decompress_block(codec, mv[p : p + header_size], AR_CHUNK_BYTES, None, "the header"))
    p += header_size
    c = _Cursor(hdr)
    num_buckets = c.one("the bucket count")
    num_buffers = c.one("the buffer count")
    if num_buckets == 0 and num_buffers:
        raise ValueError("buffers without buckets")
    bucket_lengths = c.many(num_buckets, "bucket lengths", bits32=False)
    buffer_lengths = c.many(num_buffers, "buffer lengths", bits32=False)
    data_bytes = _claimed(bucket_lengths, len(mv) - p, f"its buckets claim {{:,}} bytes of {len(mv) - p:,}")
    # every byte of a buffer is written out once (string, varint, fixed, non-proto bytes) but the
    # non-proto lengths (at most 5 bytes a record)
    budget = size + 5 * count + 16
    _claimed(buffer_lengths, budget, "its buffers claim {:,} bytes, more than its records can hold")
    # a step writes a byte or more, but message starts (one a record), submessage ends (each
    # matched by a start that writes 2 bytes or more) and no-ops (the writer's trees of them, for
    # nodes with more than 63 next nodes: a few for each other step)
    max_steps = 8 * (size + count) + 64
    machine = _Machine(hdr[c.pos :], num_buffers, max_steps)
    allbuf, buf_start = _buffers(codec, mv[p : p + data_bytes], buffer_lengths, bucket_lengths, budget)
    p += data_bytes
    transitions = bytes(decompress_block(codec, mv[p:], max_steps, None, "the transitions"))
    if len(transitions) > max_steps:  # uncompressed: not checked by decompress_block
        raise ValueError(f"its {len(transitions):,} transitions walk more steps than its records can need")
    walk = _walk(machine, transitions, max_steps)
    del transitions
    dec = _Decoder(machine, allbuf, buf_start, size, count)
    del allbuf  # the decoder lets it go before the output is copied out
    for seq in walk.batches(machine.is_record, _BATCH_STEPS):
        dec.batch(seq)
    del walk
    return dec.finish()


def chunk_records(header: ChunkHeader, data: bytes | memoryview) -> tuple[bytes, np.ndarray]:
    """A record chunk's records, whichever its type (simple or transposed)."""
    if header.chunk_type == ChunkType.TRANSPOSED:
        return transposed_chunk_records(header, data)
    return simple_chunk_records(header, data)


class _Decoder:
    """Writes the records a batch of steps at a time (`batch`): each batch ends where a record
    begins, so no submessage spans two, and only the buffers' read positions, the bytes written
    so far and the records' limits are carried from one to the next. The output is written from
    its end (the walk meets the last record first) into one array of the header's size."""

    def __init__(self, m: _Machine, allbuf: np.ndarray, buf_start: np.ndarray, size: int, count: int) -> None:
        self.m, self.allbuf, self.buf_start, self.size, self.count = m, allbuf, buf_start, size, count
        nbuf = len(buf_start) - 1
        self.used = np.zeros(max(nbuf, 0), dtype=np.int64)  # bytes of each buffer read so far
        self.strings_used = np.zeros(max(nbuf, 0), dtype=np.int64)
        self.buf_key = np.uint16 if nbuf < 1 << 16 else np.int64  # uint16: numpy's radix sort
        # a buffer read by string nodes alone: its strings are found once, for the whole buffer,
        # before the output is allocated (finding them takes a few bytes a byte for a while)
        self.pure = np.zeros(max(nbuf, 0), dtype=bool)
        readers = m.buffer >= 0
        self.pure[m.buffer[readers & (m.op == Op.STRING)]] = True
        self.pure[m.buffer[readers & (m.op != Op.STRING)]] = False
        self.sizes: dict[int, np.ndarray] = {}  # each pure buffer's strings' sizes, in order
        for b in np.flatnonzero(self.pure).tolist():
            chain = _string_chain(allbuf[int(buf_start[b]) : int(buf_start[b + 1])])
            step = np.diff(chain)
            top = int(step.max()) if len(step) else 0
            self.sizes[b] = step.astype(
                np.uint8 if top < 1 << 8 else np.uint16 if top < 1 << 16 else np.int64
            )
            del chain, step
        self.out = np.empty(size, dtype=np.uint8)
        self.nonproto: np.ndarray | None = None
        self.nonproto_used = 0
        self.written = 0
        self.limits: list[np.ndarray] = []
        self.records = 0

    def _nonproto_lengths(self, k: int) -> np.ndarray:
        if self.nonproto is None:
            lengths_buf = len(self.buf_start) - 2  # the last buffer holds the non-proto lengths
            if lengths_buf < 0:
                raise ValueError("non-proto records but no buffer of their lengths")
            if bool((self.m.buffer[self.m.op != Op.NONPROTO] == lengths_buf).any()):
                raise ValueError("a node reads the non-proto lengths as data")
            lo, hi = int(self.buf_start[lengths_buf]), int(self.buf_start[lengths_buf + 1])
            self.nonproto = _all_varints(self.allbuf[lo:hi])
        got = self.nonproto[self.nonproto_used : self.nonproto_used + k]
        if len(got) < k:
            raise ValueError("more non-proto records than lengths of them")
        self.nonproto_used += k
        return got.astype(np.int64)

    def _string_sizes(self, b: int, k: int) -> np.ndarray:
        """The sizes of the next `k` strings of pure-string buffer `b` (tag-less: length and
        bytes)."""
        sizes = self.sizes[b]
        u = int(self.strings_used[b])
        if u + k > len(sizes):
            raise ValueError("a field reads past the end of its buffer")
        self.strings_used[b] = u + k
        return sizes[u : u + k].astype(np.int64)

    def batch(self, seq: np.ndarray) -> None:
        m = self.m
        op = m.op[seq]
        if bool((op == Op.NOOP).any()):
            seq = seq[op != Op.NOOP]
            op = op[op != Op.NOOP]
        if not len(seq):
            return
        step_size = m.tag_len[seq]  # a copy (fancy indexing): the tag, then what is read is added
        reading, r_len, r_src = self._reads(seq, op)
        step_size[reading] += r_len.astype(np.int32)
        # --- submessages: each start (met after its fields) matched with its end (met before) ---
        sub_end = op == Op.SUB_END
        sub_start = op == Op.SUB_START
        msg = _RECORD[op]
        depth = np.cumsum(sub_end.view(np.int8) - sub_start.view(np.int8), dtype=np.int32)
        if int(depth.min()) < 0:
            raise ValueError("a submessage start without its end")
        if int(depth[-1]) != 0:
            raise ValueError("submessages still open at the chunk's end")
        if bool((depth[msg] != 0).any()):
            raise ValueError("a record begins inside an open submessage")
        pair_end, pair_start, level = _pairs(depth, sub_end, sub_start)
        del depth, sub_end, sub_start
        if len(pair_start):
            pos = _submessage_sizes(m, seq, step_size, pair_end, pair_start, level)
        else:
            pos = np.cumsum(step_size, dtype=np.int64)
        total = int(pos[-1])
        if self.written + total > self.size:
            raise ValueError(f"it decodes to more than the {self.size:,} bytes its header says")
        limits = pos[msg]
        self.records += len(limits)
        if self.records > self.count:
            raise ValueError(f"it decodes to more than the {self.count:,} records its header says")
        self.limits.append(limits + self.written)
        end = self.size - self.written  # this batch's bytes end here, in the output
        out = self.out
        _put_tags(m, seq, pos, end, out, pair_end, pair_start)
        body = end - pos[reading] + m.tag_len[seq[reading]]  # where each read's bytes go, forwards
        _copy(out, body, self.allbuf, r_src, r_len)
        # varints: their stored bytes lost their continuation bits
        var = np.flatnonzero((op[reading] == Op.VARINT) & (r_len > 1))
        at, left = body[var], r_len[var] - 1
        while len(at):
            out[at] |= 0x80
            keep = left > 1
            at, left = at[keep] + 1, left[keep] - 1
        self.written += total

    def _reads(self, seq: np.ndarray, op: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The steps that read a buffer, each read's length and where it begins in `allbuf`: each
        buffer is read from where the batch before left it, in step order."""
        m = self.m
        reading = np.flatnonzero(_READS[op])
        r_op = op[reading]
        r_buf = m.buffer[seq[reading]]
        r_len = np.zeros(len(reading), dtype=np.int64)
        r_src = np.zeros(len(reading), dtype=np.int64)
        if not len(reading):
            return reading, r_len, r_src
        nonproto = np.flatnonzero(r_op == Op.NONPROTO)
        if len(nonproto):
            r_len[nonproto] = self._nonproto_lengths(len(nonproto))
        sized = _SIZED[r_op]
        r_len[sized] = m.width[seq[reading[sized]]]
        order = np.argsort(r_buf.astype(self.buf_key), kind="stable")
        rb = r_buf[order]
        first = np.flatnonzero(np.diff(rb, prepend=-1))  # where each buffer's reads begin in `order`
        stop = np.append(first[1:], len(order))
        strings = np.flatnonzero(np.maximum.reduceat(r_op[order] == _STRING, first))
        for g in strings.tolist():
            group = order[first[g] : stop[g]]
            b = int(rb[first[g]])
            if self.pure[b]:
                r_len[group] = self._string_sizes(b, len(group))
            else:
                lo = int(self.buf_start[b] + self.used[b])
                _strings(group, r_op, r_len, self.allbuf, lo, int(self.buf_start[b + 1]))
        lens = r_len[order]
        ends = np.cumsum(lens)
        before = np.repeat(ends[first] - lens[first], stop - first)
        ends -= before  # within each buffer, from where this batch begins reading it
        gb = rb[first]
        read = ends[stop - 1]
        if bool((self.used[gb] + read > self.buf_start[gb + 1] - self.buf_start[gb]).any()):
            raise ValueError("a field reads past the end of its buffer")
        r_src[order] = np.repeat(self.buf_start[gb] + self.used[gb], stop - first) + ends - lens
        self.used[gb] += read
        if int(r_len.max()) > self.size:
            raise ValueError("a field longer than the chunk's records")
        return reading, r_len, r_src

    def finish(self) -> tuple[bytes, np.ndarray]:
        count, total = self.count, self.written
        if self.records != count:
            raise ValueError(f"it decodes to {self.records:,} records, its header says {count:,}")
        if total != self.size:
            raise ValueError(f"it decodes to {total:,} bytes, its header says {self.size:,}")
        limits = np.concatenate(self.limits) if self.limits else np.zeros(0, dtype=np.int64)
        if count and int(limits[-1]) != total:
            raise ValueError("bytes after its first record's start")
        self.allbuf = self.sizes = None  # let the buffers go before the output is copied out
        offsets = np.empty(count + 1, dtype=np.int64)
        offsets[:count] = total - limits[::-1]
        offsets[count] = total
        return self.out.tobytes(), offsets


def _all_varints(a: np.ndarray) -> np.ndarray:
    """Every whole varint in `a` (uint8), in order (uint64): the non-proto records' lengths (each a
    32-bit varint: at most 5 bytes). Bytes after the last whole one are not a length."""
    ends = np.flatnonzero(a < 0x80)
    if not len(ends):
        return np.zeros(0, dtype=np.uint64)
    starts = np.empty(len(ends), dtype=np.int64)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    if int((ends - starts).max()) >= 5:
        raise ValueError("a non-proto record's length that is not a 32-bit varint")
    return varints_at(a, starts, ends)


def _string_chain(a: np.ndarray) -> np.ndarray:
    """Where each whole length-prefixed string of buffer `a` (uint8) begins, and where the last
    ends (int64): a length that is not a 32-bit varint, or a string past the end, stops the chain.

    Each string's length is before it, so nothing tells where one begins but the one before. A
    buffer of many short strings is chained by many walkers at once (`_chain_by_blocks`); one of
    few strings string by string."""
    n_buf = len(a)
    if n_buf < _CHAIN_BLOCKS_FROM:
        return _chain_walk(a.tobytes(), 0)
    sample = _chain_walk(a[:_CHAIN_SAMPLE].tobytes(), 0)
    if len(sample) < 64 or int(sample[-1]) < _CHAIN_SAMPLE // 2:
        return _chain_walk(a.tobytes(), 0)  # long strings: few of them
    steps = np.diff(sample)
    if int(steps.max()) > 0x80:  # lengths of two bytes or more
        return _chain_walk(a.tobytes(), 0)
    return _chain_by_blocks(a, int(steps.max()))


def _chain_walk(buf: bytes, pos: int, stop: int | None = None) -> np.ndarray:
    """The chain of strings from `pos`, one by one, until `stop` (the buffer's end if None):
    where each whole string begins, then where the walk stopped (at `stop` or past it), or where
    the string that broke it begins (a length that is not a 32-bit varint, or past the end)."""
    n_buf = len(buf)
    end = n_buf if stop is None else stop
    starts = []
    add = starts.append
    while pos < end:
        n = buf[pos]
        if n < 0x80:
            nxt = pos + 1 + n
        else:
            try:
                n, q = read_varint(buf, pos)
            except ValueError:
                break
            if q - pos > 5 or n > _U32 - (q - pos):
                break
            nxt = q + n
        if nxt > n_buf:
            break
        add(pos)
        pos = nxt
    add(pos)
    return np.array(starts, dtype=np.int64)


def _run_chains(
    step: np.ndarray, pos: np.ndarray, lim: np.ndarray, seen: np.ndarray | None = None
) -> np.ndarray:
    """Walks every chain from `pos` at once (one array step per string) until it reaches its
    `lim`; returns where each stopped: at or past `lim`, or at a string whose length is not one
    byte (0 in `step`: the caller walks on from there). `seen` marks every string begun."""
    out = pos.copy()
    live = np.flatnonzero(pos < lim)
    p = pos[live]
    top = lim[live]
    while len(live):
        s = step[p]
        if seen is not None:
            seen[p[s > 0]] = True
        p += s
        done = (p >= top) | (s == 0)
        if bool(done.any()):
            out[live[done]] = p[done]
            keep = ~done
            live, p, top = live[keep], p[keep], top[keep]
    return out


def _chain_by_blocks(a: np.ndarray, widest: int) -> np.ndarray:
    """The chain found by walkers a block at a time. The chain enters a block within `widest`
    bytes (the widest string seen) of its start, at a byte that reads as a length no longer than
    that: a walker starts at each such place, and all walk at once to their block's end. Then,
    from the first block on, a block's entry is where the one before left, and its walker from
    there says where it leaves (where no walker started, or one stopped at a longer length, the
    block is walked on string by string). The walkers from the entries walk again, marking every
    string they begin."""
    n_buf = len(a)
    block = _CHAIN_BLOCK
    nblk = -(-n_buf // block)
    # each byte's step to the next string where it reads as a one-byte length, else 0
    step = a + np.uint8(1)  # 0x80-0xff wrap to 0x81-0xff and 0
    step[step > 0x80] = 0
    lim = np.minimum((np.arange(nblk, dtype=np.int64) + 1) * block, n_buf)
    cand = np.arange(nblk, dtype=np.int64)[:, None] * block + np.arange(widest, dtype=np.int64)[None, :]
    ok = cand < lim[:, None]
    ok[ok] = step[cand[ok]] <= widest
    blk = np.nonzero(ok)[0]
    cand = cand[ok]
    table = dict(zip(cand.tolist(), _run_chains(step, cand, lim[blk]).tolist(), strict=True))
    seen = np.zeros(n_buf, dtype=bool)
    lims = lim.tolist()
    buf = None
    entries = []
    entry_lim = []
    at = 0
    for j in range(nblk):
        if at >= lims[j]:  # the chain leaps over this block, or has ended
            continue
        x = table.get(at, at)
        if x > at:
            entries.append(at)
            entry_lim.append(lims[j])
        if x < lims[j]:  # walked on one by one from where no walker went
            buf = a.tobytes() if buf is None else buf
            w = _chain_walk(buf, x, lims[j])
            seen[w[:-1]] = True
            x = int(w[-1])
            if x < lims[j]:  # the chain breaks at the string beginning at w[-1]
                seen[x] = True
                at = n_buf + 1
                break
        at = x
    if entries:
        _run_chains(step, np.array(entries, dtype=np.int64), np.array(entry_lim, dtype=np.int64), seen)
    starts = np.flatnonzero(seen)
    return np.append(starts, n_buf) if at == n_buf else starts


def _strings(group, op, sizes, allbuf, lo, hi) -> None:
    """The sizes of the reads of one buffer that holds length-prefixed strings, one by one in step
    order (each string's length is before it: nothing tells where the next begins but the one
    before)."""
    buf = allbuf[lo:hi].tobytes()
    k = len(group)
    starts = [0] * k
    pos = 0
    try:
        if bool((op[group] == _STRING).all()):  # the writer's: one node, strings alone
            for i in range(k):
                starts[i] = pos
                n = buf[pos]
                if n < 0x80:
                    pos += 1 + n
                else:
                    n, q = read_varint(buf, pos)
                    if q - pos > 5 or n > _U32 - (q - pos):
                        raise ValueError("a string length that is not a 32-bit varint")
                    pos = q + n
        else:
            ops = op[group].tolist()
            known = sizes[group].tolist()
            for i, o in enumerate(ops):
                starts[i] = pos
                if o == _STRING:
                    n, q = read_varint(buf, pos)
                    if q - pos > 5 or n > _U32 - (q - pos):
                        raise ValueError("a string length that is not a 32-bit varint")
                    pos = q + n
                else:
                    pos += known[i]
    except IndexError:
        raise ValueError("a field reads past the end of its buffer") from None
    if pos > len(buf):
        raise ValueError("a field reads past the end of its buffer")
    sizes[group] = np.diff(np.array(starts, dtype=np.int64), append=pos)


def _pairs(depth, sub_end, sub_start) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each submessage end step, its start step and its nesting level (1 outermost), by level: a
    stable sort of the submessage steps (already in step order) by level pairs each end with the
    next start."""
    both = np.flatnonzero(sub_end | sub_start)
    if not len(both):
        return both, both, both
    level = depth[both] + sub_start[both]  # an end: the depth after it; a start: before it
    top = int(level.max())  # 8 or 16 bits: numpy's radix sort
    small = np.uint8 if top < 1 << 8 else np.int16 if top < 1 << 15 else np.int64
    order = np.argsort(level.astype(small), kind="stable")
    s = both[order]
    return s[0::2], s[1::2], level[order[0::2]]


def _submessage_sizes(m: _Machine, seq, step_size, pair_end, pair_start, level) -> np.ndarray:
    """A submessage start writes its tag and its length, and the length counts the starts nested
    in it: every length is first taken as one byte, then the few that are not are grown until
    nothing changes (one cumulative sum a round; lengths only grow, so a handful of rounds). A
    hostile depth is sized by a stack. Returns the steps' cumulative sizes (int64)."""
    tag = m.end_tag_len[seq[pair_end]]
    if int(level[-1]) > 32:
        _submessage_sizes_walk(step_size, pair_end, pair_start, tag)
        return np.cumsum(step_size, dtype=np.int64)
    have = (tag + 1).astype(np.int32)
    step_size[pair_start] = have
    while True:
        pos = np.cumsum(step_size, dtype=np.int64)
        length = pos[pair_start - 1] - pos[pair_end]
        if int(length.max()) > _U32:
            raise ValueError("a submessage longer than 4 GiB")
        need = (tag + _varint_len(length)).astype(np.int32)
        grow = np.flatnonzero(need != have)
        if not len(grow):
            return pos
        have[grow] = need[grow]
        step_size[pair_start[grow]] = need[grow]


def _submessage_sizes_walk(step_size, pair_end, pair_start, tag) -> None:
    """The same, by a stack over the submessage steps in order (deep nesting)."""
    start_of = {e: k for k, e in enumerate(pair_end.tolist())}
    events = np.sort(np.concatenate([pair_end, pair_start]))
    base = np.cumsum(step_size, dtype=np.int64)  # sizes of the starts added as they are found
    extra = 0
    stack: list[tuple[int, int]] = []
    for e in events.tolist():
        if e in start_of:
            stack.append((int(base[e]) + extra, start_of[e]))
        else:
            end_pos, k = stack.pop()
            length = int(base[e - 1]) + extra - end_pos
            if length > _U32:
                raise ValueError("a submessage longer than 4 GiB")
            s = int(tag[k]) + len(_varint_bytes(length))
            step_size[e] = s
            extra += s


def _put_tags(m: _Machine, seq, pos, total, out, pair_end, pair_start) -> None:
    """Each step's tag bytes at its piece's start (forwards: total - its end position); a
    submessage start's tag (its end node's) and length after it."""
    rows = np.flatnonzero(m.tag_len[seq])
    nodes = seq[rows]
    at = total - pos[rows]
    left = m.tag_len[nodes]
    j = 0
    while len(at):  # byte j of every tag that long, then only the longer ones
        out[at] = m.tag_cols[j][nodes]
        keep = left > j + 1
        at, nodes, left = at[keep] + 1, nodes[keep], left[keep]
        j += 1
    if not len(pair_start):
        return
    end_nodes = seq[pair_end]
    etl = m.end_tag_len[end_nodes]
    value = pos[pair_start - 1] - pos[pair_end]  # the bytes between the end step and the start
    at = total - pos[pair_start]
    out[at] = m.tag_cols[0][end_nodes]
    for j in range(1, int(etl.max())):
        sel = etl > j
        out[at[sel] + j] = m.tag_cols[j][end_nodes[sel]]
    at = at + etl
    j = 0
    while len(at):
        more = value >= 0x80
        out[at] = (value & 0x7F) | (more * 0x80)
        at, value = at[more] + 1, value[more] >> 7
        j += 1


def _copy(out: np.ndarray, dst: np.ndarray, src_buf: np.ndarray, src: np.ndarray, n: np.ndarray) -> None:
    """out[dst[i]:dst[i]+n[i]] = src_buf[src[i]:src[i]+n[i]] for every i. The decoder's pieces
    come last first (`dst` falling): their bytes are then gathered in output order by one
    cumulative sum and put in place by one mask over the output they span (sequential passes, no
    index array per byte of each destination); else `_copy_pieces`."""
    some = n > 0
    if not bool(some.all()):
        dst, src, n = dst[some], src[some], n[some]
    if not len(n):
        return
    if len(n) > 1 and not bool((dst[1:] < dst[:-1]).all()):
        _copy_pieces(out, dst, src_buf, src, n)
        return
    d, s, k = dst[::-1], src[::-1], n[::-1]
    if bool((d[1:] < d[:-1] + k[:-1]).any()):  # overlapping destinations: not the decoder's
        _copy_pieces(out, dst, src_buf, src, n)
        return
    lo, hi = int(d[0]), int(d[-1] + k[-1])
    idx = np.ones(int(k.sum()), dtype=np.int64)
    first = np.cumsum(k) - k  # where each piece begins among the copied bytes
    idx[0] = s[0]
    idx[first[1:]] = s[1:] - (s[:-1] + k[:-1]) + 1
    np.cumsum(idx, out=idx)
    edge = np.zeros(hi - lo + 1, dtype=np.int8)
    edge[d - lo] += 1
    edge[d + k - lo] -= 1
    out[lo:hi][np.cumsum(edge[:-1], dtype=np.int8).view(bool)] = src_buf[idx]


def _copy_pieces(
    out: np.ndarray, dst: np.ndarray, src_buf: np.ndarray, src: np.ndarray, n: np.ndarray
) -> None:
    """out[dst[i]:dst[i]+n[i]] = src_buf[src[i]:src[i]+n[i]] for any pieces: long ones by slices,
    short ones by index arrays in batches."""
    big = n >= _COPY_BIG
    for d, s, k in zip(dst[big].tolist(), src[big].tolist(), n[big].tolist(), strict=True):
        out[d : d + k] = src_buf[s : s + k]
    short = n <= _EXACT
    for k in np.unique(n[short & (n > 0)]).tolist():  # a few exact lengths: (rows, k) gathers
        rows = np.flatnonzero(n == k)
        lane = np.arange(k, dtype=np.int64)
        out[dst[rows, None] + lane] = src_buf[src[rows, None] + lane]
    small = np.flatnonzero(~big & ~short)
    if not len(small):
        return
    cum = np.cumsum(n[small])
    i = 0
    while i < len(small):
        j = int(np.searchsorted(cum, (cum[i - 1] if i else 0) + _INDEX_BATCH, side="right"))
        j = max(j, i + 1)
        rows = small[i:j]
        lens = n[rows]
        total = int(lens.sum())
        rel = np.arange(total, dtype=np.int64) - np.repeat(np.cumsum(lens) - lens, lens)
        out[np.repeat(dst[rows], lens) + rel] = src_buf[np.repeat(src[rows], lens) + rel]
        i = j
