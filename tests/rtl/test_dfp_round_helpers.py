"""The rounding helpers of hw/dfp/round.py in Amaranth simulation against the golden numerics:
``bitlen`` (the log-depth tree) against int.bit_length, and ``rshift_round_parts`` (q + up)
against golden.dfp.numerics.rshift_round, over exhaustive small and random wide operands.
No requirement is cited: these are parts; the converter tests prove DFP-F6..F8, F43, F47."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from golden.dfp.formats import BIASED, RNE, TRUNC
from golden.dfp.numerics import rshift_round
from hw.dfp.round import bitlen, rshift_round_parts


def _simulate(m, check):
    sim = Simulator(m)

    async def bench(ctx):
        check(ctx)

    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("width", [1, 2, 3, 5, 8, 15, 16, 17, 32, 33, 48])
def test_bitlen_tree_matches_bit_length(width, seed):
    rng = random.Random(seed)
    m = Module()
    value = Signal(width)
    out = bitlen(m, value, "bl")
    values = list(range(min(1 << width, 1 << 12))) + [(1 << width) - 1]
    values += [rng.getrandbits(width) >> rng.randrange(width) for _ in range(3000)]

    def check(ctx):
        for x in values:
            ctx.set(value, x)
            assert ctx.get(out) == x.bit_length(), f"bitlen({x:#x}) at width {width}"
    _simulate(m, check)


@pytest.mark.parametrize("width,s_max,bias_bits", [(6, 4, 1), (24, 27, 2), (33, 33, 4)])
def test_rshift_round_parts_sum_to_golden(width, s_max, bias_bits, seed):
    rng = random.Random(seed)
    m = Module()
    mag, s, mode = Signal(width), Signal(range(s_max + 1)), Signal(2)
    q, up = rshift_round_parts(m, mag, s, mode, bias_bits, s_max, "rnd")
    if width <= 6:
        cases = [(x, k, md) for x in range(1 << width) for k in range(s_max + 1)
                 for md in (TRUNC, BIASED, RNE)]
    else:
        cases = [(rng.getrandbits(width), rng.randrange(s_max + 1), rng.choice((TRUNC, BIASED, RNE)))
                 for _ in range(4000)]

    def check(ctx):
        for x, k, md in cases:
            ctx.set(mag, x)
            ctx.set(s, k)
            ctx.set(mode, md)
            got = ctx.get(q) + ctx.get(up)
            assert got == rshift_round(x, k, md, bias_bits), (x, k, md)
    _simulate(m, check)
