#!/usr/bin/env python3
"""gen_bincode_seeds.py: writes the fuzz_bincode seeds (fuzz/corpus/bincode/): a selector byte
(see fuzz/fuzz_bincode.c) then a well-formed bincode blob with random canonical values, laid
out as docs/formats.md ("Vanilla proofs (bincode)") says. Deterministic."""
import random
import struct
import sys

random.seed(7)


def fr():
    return random.getrandbits(250).to_bytes(32, 'little')


def u32(v):
    return struct.pack('<I', v)


def u64(v):
    return struct.pack('<Q', v)


def path(arities):
    out = u64(len(arities))
    for a in arities:
        out += u64(a - 1) + b''.join(fr() for _ in range(a - 1)) + u64(random.randrange(a))
    return out


def merkle(base, nb, sub, top):
    if not sub:
        return u32(0) + fr() + fr() + path([base] * nb)
    o = u32(2 if top else 1) + path([base] * nb) + path([sub])
    if top:
        o += path([top])
    return o + fr() + fr()


def post(n, shape):
    return (u64(random.getrandbits(64)) + fr() + u64(1) + u64(n) +
            b''.join(merkle(*shape) for _ in range(n)) + fr() + fr())


def snap(a, k, levels, shape):
    o = fr() + u64(a) + b''.join(fr() for _ in range(a)) + u64(k)
    for _ in range(k):
        o += merkle(*shape) + merkle(2, levels, 0, 0) + merkle(*shape)
    return o


d = (sys.argv[1] if len(sys.argv) > 1 else 'fuzz/corpus/bincode') + '/'
seeds = [('post-window-2k', 0, post(10, (8, 2, 0, 0))),
         ('post-winning-2k', 1, post(66, (8, 2, 0, 0))),
         ('post-window-32g', 2, post(10, (8, 9, 8, 0))),
         ('post-window-64g', 3, post(10, (8, 9, 8, 2))),
         ('snap-2k', 4, snap(8, 10, 6, (8, 2, 0, 0))),
         ('snap-8m', 5, snap(128, 10, 18, (8, 6, 0, 0)))]
for name, sel, blob in seeds:
    with open(d + name, 'wb') as f:
        f.write(bytes([sel]) + blob)
