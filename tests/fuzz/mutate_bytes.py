"""mutate_bytes.py — the byte-wise mutation the JSON fuzzers share (fuzz_records.py,
fuzz_model.py): bytes flipped, JSON punctuation inserted, runs cut, the tail cut."""


def mutate_bytes(rng, b, rounds):
    b = bytearray(b)
    for _ in range(rounds):
        if not b: break
        i = rng.randrange(len(b))
        op = rng.randrange(4)
        if op == 0: b[i] = rng.randrange(256)
        elif op == 1: b.insert(i, rng.choice(b'{}[],:"\\0-e.9'))
        elif op == 2: del b[i:i + rng.randrange(1, 40)]
        else: del b[i:]
    return bytes(b)
