"""``hw.memrouter.route.lowest_run`` (the routing stage's fill and write-back runs, the engine's
write-out runs) against a Python reference, in Amaranth's simulator: every vector of 10 bits,
and random and directed 128-bit vectors (the default NS) with the MAX_LEN limit 8."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from hw.memrouter.route import lowest_run


def reference(vec, n, limit):
    """(start, length): the lowest set bit, and the run of ones from it, at most ``limit``."""
    if vec == 0:
        return 0, 0
    start = (vec & -vec).bit_length() - 1
    length = 0
    while start + length < n and vec >> (start + length) & 1 and length < limit:
        length += 1
    return start, length


def _check(n, limit, vectors):
    m = Module()
    vec = Signal(n)
    start, length = lowest_run(m, vec, "t", limit)
    bad = []

    async def bench(ctx):
        for v in vectors:
            ctx.set(vec, v)
            got = (ctx.get(start), ctx.get(length))
            if got != reference(v, n, limit):
                bad.append((hex(v), got, reference(v, n, limit)))

    sim = Simulator(m)
    sim.add_testbench(bench)
    sim.run()
    assert not bad, f"{len(bad)} of {len(vectors)} wrong, first {bad[:3]}"


@pytest.mark.req("MR-F12")
def test_lowest_run_every_10_bit_vector():
    _check(10, 4, range(1 << 10))


@pytest.mark.req("MR-F12")
def test_lowest_run_128_bit_vectors(seed):
    rng = random.Random(seed)
    n, limit = 128, 8
    directed = [0, (1 << n) - 1, 1, 1 << (n - 1), 0b11 << (n - 2), ((1 << 9) - 1) << 100,
                ((1 << 7) - 1) << 121, ((1 << 8) - 1) << 120, 0b1011 << 60]
    runs = []
    for _ in range(3000):
        v = 0
        for _ in range(rng.randrange(4)):
            a = rng.randrange(n)
            v |= ((1 << rng.randint(1, 12)) - 1) << a
        runs.append(v & ((1 << n) - 1))
    _check(n, limit, directed + runs + [rng.getrandbits(n) for _ in range(1000)])
