#!/usr/bin/env python3
"""spiece_mutate.py — crafted and mutated SentencePiece models (spiece.model).

  spiece_mutate.py crafted BASE OUT      one folder OUT/NAME/spiece.model per hand-made
                                         case, and OUT/cases.tsv: NAME<TAB>what the
                                         tokenizer must say ("ok": it must accept it)
  spiece_mutate.py random SEED N BASE OUT  N structured mutants OUT/0..N-1/spiece.model

BASE is a valid model (spm_train's, nmt_nfkc). Mutations are made on the
protobuf's fields, not its bytes: the normalizer spec's precompiled_charsmap
(a uint32 trie size, a Darts-clone double-array trie of 32-bit units, the
NUL-ended normalized strings) above all, whose units are picked among those a
text reaches, and the spec's other fields, the denormalizer spec, the pieces,
the trainer spec and the self-test data.
"""
import os
import random
import struct
import sys


def varint(v):
    out = bytearray()
    while True:
        c = v & 0x7F
        v >>= 7
        out.append(c | (0x80 if v else 0))
        if not v:
            return bytes(out)


def read_varint(b, i):
    v = s = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << s
        s += 7
        if not c & 0x80:
            return v, i


def fields(b):
    """[(field, wire type, value)]: a varint's int, else its bytes."""
    i, out = 0, []
    while i < len(b):
        k, i = read_varint(b, i)
        wt = k & 7
        if wt == 0:
            v, i = read_varint(b, i)
        elif wt == 2:
            n, i = read_varint(b, i)
            v, i = b[i:i + n], i + n
        else:
            n = 8 if wt == 1 else 4
            v, i = b[i:i + n], i + n
        out.append((k >> 3, wt, v))
    return out


def field_bytes(f, wt, v):
    k = varint(f << 3 | wt)
    if wt == 0:
        return k + varint(v)
    if wt == 2:
        return k + varint(len(v)) + bytes(v)
    return k + bytes(v)


def message(fs):
    return b"".join(field_bytes(*f) for f in fs)


def get(fs, f):
    return [v for g, _, v in fs if g == f][0]


def put(fs, f, v, wt=2):
    """fs with field f's (first) value replaced, or added."""
    out, done = [], False
    for g, w, x in fs:
        if g == f and not done:
            out.append((f, wt, v))
            done = True
        else:
            out.append((g, w, x))
    return out if done else out + [(f, wt, v)]


# --- the charsmap's trie, as sentencepiece's Normalizer reads it
def units_of(cm):
    n = struct.unpack_from("<I", cm)[0]
    return list(struct.unpack_from("<%dI" % (n // 4), cm, 4)), cm[4 + n:]


def charsmap(units, strings, size=None):
    size = 4 * len(units) if size is None else size
    return struct.pack("<I", size) + struct.pack("<%dI" % len(units), *units) + strings


def offset(u):
    return (u >> 10) << ((u & (1 << 9)) >> 6)


def label(u):
    return u & ((1 << 31) | 0xFF)


def reachable(units):
    """[(child unit, next base, has leaf)] of every transition a text can take."""
    seen, todo, out = set(), [offset(units[0])], []
    while todo:
        base = todo.pop()
        if base in seen or (base | 0xFF) >= len(units):
            continue
        seen.add(base)
        for c in range(256):
            child = base ^ c
            if label(units[child]) == c:
                nxt = child ^ offset(units[child])
                out.append((child, nxt, (units[child] >> 8) & 1))
                todo.append(nxt)
    return out


def walk(units, text):
    """[(child unit, next base, has leaf)] of the transitions text takes from the root."""
    base, out = offset(units[0]), []
    for c in text:
        child = base ^ c
        if label(units[child]) != c:
            break
        base = child ^ offset(units[child])
        out.append((child, base, (units[child] >> 8) & 1))
    return out


def with_offset(u, off):
    """u with its offset set to off (exact when off < 2^21, else shifted by 8)."""
    if off < (1 << 21):
        return (u & 0x1FF) | off << 10
    return (u & 0x1FF) | 1 << 9 | ((off >> 8) & 0x1FFFFF) << 10


def chain_trie(depth):
    """A trie that maps "a" * k (k <= depth) to "x": depth matches on one text."""
    units = [(i & 0xFF) ^ 1 for i in range(256 * (depth + 2))]  # unused units: a label no byte matches there
    units[0] = with_offset(0, 256)  # root: base 256
    for i in range(depth):
        base, nxt = 256 * (i + 1), 256 * (i + 2)
        child = base ^ ord("a")
        units[child] = with_offset(ord("a") | 1 << 8, child ^ nxt)
        units[nxt] = 0 | 1 << 31  # the leaf: value 0 ("x")
    return charsmap(units, b"x\0")


# --- the model
class Model:
    def __init__(self, path):
        self.top = fields(open(path, "rb").read())
        self.norm = fields(get(self.top, 3))
        self.units, self.strings = units_of(get(self.norm, 2))

    def bytes(self, norm=None, top=None, cm=None):
        norm = list(self.norm if norm is None else norm)
        if cm is not None:
            norm = put(norm, 2, cm)
        return message(put(list(self.top if top is None else top), 3, message(norm)))


def crafted(base, out):
    m = Model(base)
    u, s = m.units, m.strings
    reach = reachable(u)
    # the units a prompt with "Ｆ" (full-width F: nmt_nfkc maps it to "F") reaches, so that
    # sentencepiece itself would read the units changed below
    full = walk(u, "Ｆ".encode())
    assert len(full) == 3 and full[2][2], "BASE's normalizer does not map U+FF26 (want nmt_nfkc)"
    child, leaf = full[0][0], full[2]
    cm = get(m.norm, 2)
    cases = []

    def case(name, data, want):
        os.makedirs(os.path.join(out, name), exist_ok=True)
        open(os.path.join(out, name, "spiece.model"), "wb").write(data)
        cases.append((name, want))

    N = "normalizer_spec.precompiled_charsmap: "
    past = ((len(cm) - 4) // 4 + 1) * 4
    case("size-past-end", m.bytes(cm=charsmap(u, s, size=past)), N + "trie size %d bytes is more than the %d bytes that follow it" % (past, len(cm) - 4))
    case("size-huge", m.bytes(cm=charsmap(u, s, size=0xFFFFFFFC)), N + "trie size 4294967292 bytes is more than")
    case("size-no-strings", m.bytes(cm=charsmap(u, b"")), N + "the normalized strings (0 bytes after the trie) do not end with a NUL byte")
    case("size-odd", m.bytes(cm=charsmap(u, s, size=4 * len(u) + 1)), N + "trie size %d bytes: not a positive multiple of 4" % (4 * len(u) + 1))
    case("size-zero", m.bytes(cm=charsmap(u, s, size=0)), N + "trie size 0 bytes: not a positive multiple of 4")
    case("charsmap-3-bytes", m.bytes(cm=cm[:3]), N + "3 bytes, shorter than its 4-byte trie size")
    case("strings-no-nul", m.bytes(cm=charsmap(u, s[:-1] + b"x")), N + "the normalized strings (%d bytes after the trie) do not end with a NUL byte" % len(s))
    case("root-offset-outside", m.bytes(cm=charsmap([with_offset(u[0], len(u) + 4096)] + u[1:], s)), N + "trie unit 0 leads to unit")
    v = list(u)
    v[child] = with_offset(u[child], child ^ (len(u) + 512))
    case("unit-offset-outside", m.bytes(cm=charsmap(v, s)), N + "trie unit %d (byte 0x%02x) leads to unit %d, outside the trie's %d units" % (child, child ^ offset(u[0]), len(u) + 512, len(u)))
    v = list(u)
    v[child] = with_offset(u[child], child ^ (0x7FFFFF00))   # past 2^31 with the shift: a negative int in Darts
    case("unit-offset-shifted", m.bytes(cm=charsmap(v, s)), N + "trie unit %d (byte" % child)
    v = list(u)
    v[leaf[1]] = 1 << 31 | (len(s) + 5)
    case("value-past-strings", m.bytes(cm=charsmap(v, s)), N + "trie unit %d's value %d points past the %d bytes" % (leaf[1], len(s) + 5, len(s)))
    v = list(u)
    v[leaf[1]] = 1 << 31 | ((1 << 31) - 1)
    case("value-max", m.bytes(cm=charsmap(v, s)), N + "trie unit %d's value 2147483647 points past the" % leaf[1])
    v = list(u)
    inner = [r for r in reach if not r[2]][0][0]
    v[inner] = with_offset(u[inner], inner ^ offset(u[0]))   # back to the root's base
    case("loop", m.bytes(cm=charsmap(v, s)), "leads back to a unit before it: a loop")
    case("chain-32", m.bytes(cm=chain_trie(32)), "ok")
    case("chain-33", m.bytes(cm=chain_trie(33)), N + "the trie matches more than 32 prefixes of one text")
    case("denormalizer-bad", message(m.top + [(5, 2, message(put(m.norm, 2, charsmap(u, s, size=len(cm)))))]),
         "denormalizer_spec.precompiled_charsmap: trie size")
    case("denormalizer-ok", message(m.top + [(5, 2, message(m.norm))]), "ok")
    case("add-dummy-prefix-7", m.bytes(norm=put(m.norm, 3, 7, 0)), "normalizer_spec.add_dummy_prefix: 7, not a bool (0 or 1)")
    case("escape-whitespaces-bytes", m.bytes(norm=put(m.norm, 5, b"\x01")), "normalizer_spec.escape_whitespaces: wire type 2, not a bool (0)")
    case("name-varint", m.bytes(norm=put(m.norm, 1, 5, 0)), "normalizer_spec.name: wire type 0, not bytes (2)")
    case("charsmap-fixed32", m.bytes(norm=put(m.norm, 2, b"\0\0\0\0", 5)), "normalizer_spec.precompiled_charsmap: wire type 5, not bytes (2)")
    case("normalizer-cut-inside", message(put(m.top, 3, message(m.norm) + b"\x12\x7f")), "normalizer_spec: cut short")
    case("normalizer-twice", message(m.top + [(3, 2, message([(2, 2, charsmap(u, s[:-1] + b"y"))]))]), N + "the normalized strings")
    case("normalizer-varint", message([f for f in m.top if f[0] != 3] + [(3, 0, 1)]), "normalizer_spec: wire type 0, not a message (2)")
    case("identity", m.bytes(cm=b""), "ok")
    open(os.path.join(out, "cases.tsv"), "w").write("".join("%s\t%s\n" % c for c in cases))


def mutate_units(rng, u, s, reach):
    v = list(u)
    for _ in range(rng.randint(1, 4)):
        k = rng.choice(reach)[rng.choice((0, 1))] if reach and rng.random() < 0.8 else rng.randrange(len(v))
        k %= len(v)
        x = v[k]
        r = rng.randrange(8)
        if r == 0:
            x = rng.getrandbits(32)
        elif r == 1:
            x ^= 1 << rng.randrange(32)
        elif r == 2:
            x = with_offset(x, rng.choice((rng.randrange(1 << 21), rng.randrange(1 << 29), len(v) ^ k, (len(v) - rng.randrange(300)) ^ k)))
        elif r == 3:
            x ^= 1 << 8  # has_leaf
        elif r == 4:
            x = 1 << 31 | rng.choice((len(s) - 1, len(s), len(s) + rng.randrange(100), rng.getrandbits(31)))
        elif r == 5:
            x = (x & ~0xFF) | rng.randrange(256)  # label
        elif r == 6:
            x ^= 1 << 9  # the offset's shift
        else:
            x = with_offset(x, k ^ rng.choice([b for _, b, _ in reach] or [0]))  # to another base: loops, sharing
        v[k] = x & 0xFFFFFFFF
    return v


def mutate(rng, m, reach):
    norm, top = list(m.norm), list(m.top)
    u, s = m.units, m.strings
    cm = get(norm, 2)
    for _ in range(rng.randint(1, 3)):
        r = rng.randrange(14)
        if r <= 3:
            cm = charsmap(mutate_units(rng, u, s, reach), s)
        elif r == 4:
            size = rng.choice((len(cm) - 4, len(cm) - 3, len(cm) - 1, len(cm), 4 * len(u) + rng.randrange(1, 4),
                               4 * len(u) - 4 * rng.randrange(1, 300), rng.getrandbits(32), 0, 4))
            cm = struct.pack("<I", size & 0xFFFFFFFF) + cm[4:]
        elif r == 5:
            cm = cm[:rng.randrange(len(cm) + 1)]
        elif r == 6:
            cm = cm[:-1] + bytes([rng.randrange(1, 256)]) if cm else cm
        elif r == 7:
            cm = cm + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 9)))
        elif r == 8:  # another field of the spec: odd values, wrong wire types, repeats, unknown fields
            f = rng.randrange(1, 9)
            norm.insert(rng.randrange(len(norm) + 1), rng.choice(((f, 0, rng.choice((0, 1, 2, 255, 1 << 40))), (f, 2, os.urandom(rng.randrange(6))),
                                                                 (f, 5, os.urandom(4)), (f, 1, os.urandom(8)))))
        elif r == 9:  # a denormalizer spec: the charsmap as mutated so far, or a fresh mutant
            top.append((5, 2, message(put(norm, 2, charsmap(mutate_units(rng, u, s, reach), s) if rng.random() < 0.5 else cm))))
        elif r == 10:  # the trainer spec: a field with an odd value
            ts = fields(get(top, 2))
            f = rng.choice((3, 4, 5, 6, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 40, 41, 42, 43, 44, 45, 46, 47, 48))
            ts.insert(rng.randrange(len(ts) + 1), (f, 0, rng.choice((0, 1, 2, 3, 4, 5, 99, 1 << 31, (1 << 64) - 1))))
            top = put(top, 2, message(ts))
        elif r == 11:  # a piece: empty, odd type, odd score, huge
            i = rng.randrange(len(top))
            if top[i][0] == 1:
                p = fields(top[i][2])
                p = put(p, rng.choice((1, 2, 3)), rng.choice((b"", b"\xff\xfe", b"\xe2\x96\x81" * 50, os.urandom(4))), 2) if rng.random() < 0.5 \
                    else put(p, 3, rng.choice((0, 2, 3, 4, 5, 6, 7, 99)), 0)
                top[i] = (1, 2, message(p))
        elif r == 12:  # self-test samples (sentencepiece encodes them while loading)
            inp = rng.choice((b"a cat", "ﬁ Ｆｕｌｌ".encode(), b"\xff\xfe", b"a\0b", b"a" * 40, os.urandom(8)))
            top.append((4, 2, message([(1, 2, message([(1, 2, inp), (2, 2, b"x")]))])))
        else:
            dup = rng.randrange(len(top))
            top.insert(rng.randrange(len(top) + 1), top[dup])
    data = m.bytes(norm=put(norm, 2, cm), top=top)
    if rng.random() < 0.1:  # and now and then a few bytes flipped anywhere
        b = bytearray(data)
        for _ in range(rng.randint(1, 4)):
            b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
        data = bytes(b)
    return data


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "crafted":
        return crafted(sys.argv[2], sys.argv[3])
    if len(sys.argv) != 6 or sys.argv[1] != "random":
        sys.exit(__doc__)
    seed, n, base, out = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5]
    m = Model(base)
    reach = reachable(m.units)
    rng = random.Random(seed)
    for k in range(n):
        os.makedirs(os.path.join(out, str(k)), exist_ok=True)
        open(os.path.join(out, str(k), "spiece.model"), "wb").write(mutate(rng, m, reach))


main()
