"""hw.common.bram: the registered read of a ``no_rw_check`` memory in Amaranth simulation (old
data, or the inverted word on a collision with ``poison``), and its ECP5 mapping: block RAM
without the per-bit registers Yosys adds for an ordinary synchronous read port."""

import random

import pytest
from amaranth import Elaboratable, Module, Signal
from amaranth.lib.memory import Memory

from hw.common.bram import collision_free_memory, registered_read
from hw.memrouter.beat_queues import BeatQueues
from tb.common.amaranth_sim import assert_reached, run_clocked
from tb.common.ecp5_cells import ecp5_cell_counts

WIDTH, DEPTH = 8, 16


class _ReadWrite(Elaboratable):
    """One write port and one registered read of a collision-free memory."""

    def __init__(self, poison):
        self.poison = poison
        self.w_en, self.w_addr, self.w_data = Signal(), Signal(4), Signal(WIDTH)
        self.r_en, self.r_addr, self.r_data = Signal(), Signal(4), Signal(WIDTH)

    def elaborate(self, platform):
        m = Module()
        m.submodules.mem = mem = collision_free_memory(shape=WIDTH, depth=DEPTH)
        wp = mem.write_port()
        wp.addr, wp.data = self.w_addr, self.w_data
        m.d.comb += [wp.en.eq(self.w_en),
                     self.r_data.eq(registered_read(m, mem, self.r_addr, write_port=wp,
                                                    poison=self.poison, en=self.r_en))]
        return m


@pytest.mark.parametrize("poison", [False, True])
def test_registered_read_is_old_data(poison, seed):
    """Random writes and reads, mostly of two hot addresses: each cycle's read is the word at the
    previous cycle's address before that cycle's write (inverted when that write hit it and
    ``poison``), held while ``r_en`` is 0; collisions and holds both occur."""
    rng = random.Random(seed)
    dut = _ReadWrite(poison)
    model = [0] * DEPTH
    stats = dict(collision=0, hold=0)

    async def bench(ctx):
        expect = 0
        for t in range(3000):
            w_en, r_en = rng.random() < 0.6, rng.random() < 0.8
            w_addr = rng.choice((3, 9)) if rng.random() < 0.7 else rng.randrange(DEPTH)
            r_addr = rng.choice((3, 9)) if rng.random() < 0.7 else rng.randrange(DEPTH)
            w_data = rng.getrandbits(WIDTH)
            for sig, val in ((dut.w_en, w_en), (dut.w_addr, w_addr), (dut.w_data, w_data),
                             (dut.r_en, r_en), (dut.r_addr, r_addr)):
                ctx.set(sig, val)
            collide = w_en and w_addr == r_addr
            stats["collision"] += collide and r_en
            stats["hold"] += not r_en
            if r_en:
                expect = model[r_addr] ^ ((1 << WIDTH) - 1 if poison and collide else 0)
            if w_en:
                model[w_addr] = w_data
            await ctx.tick()
            got = ctx.get(dut.r_data)
            assert got == expect, f"seed {seed}, cycle {t}: read {got:#x}, expected {expect:#x}"

    run_clocked(dut, bench)
    assert_reached(stats, seed)


def test_poison_needs_the_write_port():
    m = Module()
    mem = Memory(shape=4, depth=4, init=[])
    with pytest.raises(ValueError, match="poison needs the write port"):
        registered_read(m, mem, 0, poison=True)


def test_beat_queues_map_to_block_ram_without_emulation(tmp_path):
    """A QoS port's three 328-bit beat queues of 64: 10 DP16KD and only the pointer and level
    registers (an ordinary synchronous read port costs a register per bit of the write data
    and address, about 690 flip-flops, and a multiplexer per read bit)."""
    count = ecp5_cell_counts(BeatQueues(328, 64, 3), "bq", tmp_path)
    assert count.get("DP16KD", 0) == 10, count
    assert count.get("TRELLIS_FF", 0) < 80, count
