"""hw.memrouter.flagmem.FlagMemory in Amaranth simulation against the memory it replaces (a set
port and a write port, the write winning on the same bit, read transparent to both), and its
ECP5 mapping: one block RAM, no flip-flop memory."""

import random

import pytest

from hw.memrouter.flagmem import FlagMemory
from tb.common.amaranth_sim import assert_reached, run_clocked
from tb.common.ecp5_cells import ecp5_cell_counts


def _pending_after(pend, set_a, wr_a):
    """The set left waiting after a cycle (the DUT's contract, used only to keep the stimulus
    inside it): the pending set or the new one while a write takes the port, the new one when
    the pending one takes it."""
    p = pend if pend is not None and pend != wr_a else None
    s = set_a if set_a is not None and set_a != wr_a else None
    if wr_a is not None:
        return p if p is not None else s
    if p is not None:
        return s if s is not None and s != p else None
    return None


def _run(depth, cycles, seed, p_set, p_wr):
    rng = random.Random(seed)
    dut = FlagMemory(depth)
    model = [0] * depth
    stats = dict(wait=0, cancel=0, same_cycle=0, read_set=0)

    hot_bits = rng.sample(range(depth), 3)           # most accesses collide on a few bits

    def addr():
        return rng.choice(hot_bits) if rng.random() < 0.7 else rng.randrange(depth)

    async def bench(ctx):
        pend = None
        for t in range(cycles):
            wr_a = addr() if rng.random() < p_wr else None
            set_a = addr() if rng.random() < p_set else None
            live = pend is not None and pend != wr_a
            if wr_a is not None and live and set_a is not None and set_a != pend:
                set_a = None                      # the contract: no second waiting set
            hot = [a for a in (pend, set_a, wr_a) if a is not None]
            rd_a = rng.choice(hot) if hot and rng.random() < 0.7 else rng.randrange(depth)
            wr_d = rng.getrandbits(1)
            stats["wait"] += wr_a is not None and set_a is not None and set_a != wr_a
            stats["cancel"] += pend is not None and pend == wr_a
            stats["same_cycle"] += set_a is not None and set_a == wr_a
            stats["read_set"] += set_a is not None and rd_a == set_a
            ctx.set(dut.set_en, set_a is not None)
            ctx.set(dut.set_addr, set_a or 0)
            ctx.set(dut.wr_en, wr_a is not None)
            ctx.set(dut.wr_addr, wr_a or 0)
            ctx.set(dut.wr_data, wr_d)
            ctx.set(dut.rd_addr, rd_a)
            if set_a is not None:
                model[set_a] = 1
            if wr_a is not None:
                model[wr_a] = wr_d
            pend = _pending_after(pend, set_a, wr_a)
            await ctx.tick()
            got = ctx.get(dut.rd_data)
            assert got == model[rd_a], (f"seed {seed}, cycle {t}: bit {rd_a} read {got}, the "
                                        f"two-port memory holds {model[rd_a]}")

    run_clocked(dut, bench)
    return stats


@pytest.mark.req("MR-F35", "MR-F37")
@pytest.mark.parametrize("depth,p_set,p_wr", [(4, 0.6, 0.4), (16, 0.8, 0.5), (1024, 0.5, 0.3)])
def test_flagmem_matches_two_port_memory(depth, p_set, p_wr, seed):
    """Random sets, writes and reads (reads mostly of the bits being set or written): every
    cycle's read equals the replaced memory's; sets that wait, writes that cancel a waiting set,
    a set and a write of one bit in one cycle, and reads of a bit set in the same cycle all
    occur."""
    stats = _run(depth, 4000, seed, p_set, p_wr)
    assert_reached(stats, seed)


def test_flagmem_is_one_block_ram(tmp_path):
    """ECP5 synthesis of the 1,024-bit REF / ND memory: one DP16KD and a handful of
    flip-flops (the two-write-port memory it replaces became 1,024 flip-flops)."""
    count = ecp5_cell_counts(FlagMemory(1024), "flagmem", tmp_path)
    assert count.get("DP16KD", 0) == 1, count
    assert count.get("TRELLIS_FF", 0) < 32, count
