"""hw.common.shiftadd.shift_add_mul in Amaranth simulation against Python's product:
exhaustive for narrow pairs, random for the wdist widths, and no ``$mul`` left for Yosys."""

import random

import pytest
from amaranth import Module, Signal
from amaranth.back import rtlil
from amaranth.sim import Simulator

from hw.common.shiftadd import shift_add_mul


def _check(na, nb, cases):
    m = Module()
    a, b, out = Signal(na), Signal(nb), Signal(na + nb)
    m.d.comb += out.eq(shift_add_mul(a, b))
    sim = Simulator(m)

    async def bench(ctx):
        for x, y in cases:
            ctx.set(a, x)
            ctx.set(b, y)
            assert ctx.get(out) == x * y, (na, nb, x, y)
    sim.add_testbench(bench)
    sim.run()
    return m, a, b, out


@pytest.mark.parametrize("na,nb", [(1, 1), (1, 5), (2, 3), (3, 6), (4, 4), (5, 2)])
def test_shift_add_mul_exhaustive(na, nb):
    _check(na, nb, [(x, y) for x in range(1 << na) for y in range(1 << nb)])


@pytest.mark.parametrize("na,nb", [(4, 9), (4, 10), (6, 16), (7, 32)])
def test_shift_add_mul_random(na, nb, seed):
    rng = random.Random(seed)
    cases = [(rng.getrandbits(na), rng.getrandbits(nb)) for _ in range(3000)]
    cases += [((1 << na) - 1, (1 << nb) - 1), (0, (1 << nb) - 1)]
    _check(na, nb, cases)


def test_shift_add_mul_leaves_no_multiplier():
    m = Module()
    a, b, out = Signal(4), Signal(10), Signal(14)
    m.d.comb += out.eq(shift_add_mul(a, b))
    text = rtlil.convert(m, ports=[a, b, out])
    assert "$mul" not in text and "$add" in text
