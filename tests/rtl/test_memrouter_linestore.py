"""hw.memrouter.linestore: the valid-sector count each line keeps beside its valid vector
(LINE_STATUS[15:4], which MR-V7 reads, and the count §4.7's triggers use) against a Python
model of the vectors, under random fills, poisoned fills, writes and allocations that often
meet on one line and one sector."""

import random

import pytest

from golden.memrouter.params import MemrouterParams
from hw.memrouter.linestore import LineStore
from tb.common.amaranth_sim import assert_reached, run_clocked

PW = 16


@pytest.mark.parametrize("log2g", [9, 12])
def test_valid_count_follows_the_vectors(log2g, seed):
    rng = random.Random(seed)
    p = MemrouterParams(LOG2G=log2g)
    nl, ns = p.NUM_LINES, p.NS
    dut = LineStore(p, PW)
    valid = [0] * nl
    stats = dict(same_new=0, fill_again=0, alloc_and_fill=0, full_line=0)

    def sector(line):
        """Mostly one the line lacks, else any, else one of the first four."""
        empty = [k for k in range(ns) if not valid[line] >> k & 1]
        if empty and rng.random() < 0.5:
            return rng.choice(empty)
        return rng.randrange(ns) if rng.random() < 0.6 else rng.randrange(4)

    async def bench(ctx):
        for t in range(3000):
            cur = rng.randrange(2) if rng.random() < 0.7 else rng.randrange(nl)
            f_line = rng.randrange(nl)
            if rng.random() < 0.5:
                f_line = cur
            f_sect = sector(f_line)
            w_sect = f_sect if rng.random() < 0.3 else sector(cur)
            f_en, poison = rng.random() < 0.7, rng.random() < 0.1
            # allocations in bursts, so that lines also fill up in between
            wset, alloc = rng.random() < 0.5, rng.random() < (0.05 if t % 1000 >= 900 else 0)
            e_line = rng.randrange(nl)
            for sig, val in ((dut.cur, cur), (dut.f_en, f_en), (dut.f_poison, poison),
                             (dut.f_addr, f_line * ns + f_sect), (dut.op_wset, wset),
                             (dut.op_sect, w_sect), (dut.op_alloc, alloc),
                             (dut.op_ppn, rng.getrandbits(PW)), (dut.e_line, e_line)):
                ctx.set(sig, val)
            assert ctx.get(dut.cur_valid) == valid[cur], f"seed {seed}, cycle {t}: model"
            got = ctx.get(dut.cur_vcount)
            assert got == bin(valid[cur]).count("1"), \
                f"seed {seed}, cycle {t}: line {cur} counts {got}, has {valid[cur]:#x}"
            for i in range(nl):
                ctx.set(dut.status_line, i)
                status = ctx.get(dut.status)
                if status & 1:
                    assert (status >> 4) & 0xFFF == bin(valid[i]).count("1"), \
                        f"seed {seed}, cycle {t}: LINE_STATUS {i} {status:#x}, has {valid[i]:#x}"
            f_hit = f_en and not poison
            old = valid[f_line] >> f_sect & 1
            stats["fill_again"] += f_hit and old and not (alloc and f_line == cur)
            stats["same_new"] += (f_hit and wset and f_line == cur and f_sect == w_sect
                                  and not old)
            stats["alloc_and_fill"] += f_hit and alloc and f_line == cur
            if alloc:
                valid[cur] = 0
            if f_hit:
                valid[f_line] |= 1 << f_sect
            if wset:
                valid[cur] |= 1 << w_sect
            stats["full_line"] += valid[cur] == (1 << ns) - 1
            await ctx.tick()

    run_clocked(dut, bench)
    assert_reached(stats, seed)


def test_one_read_port_serves_the_owner_first(seed):
    """The sector memory's one read port: the owner's address when ``rd_en``, else the
    engine's, the word one cycle later (a fill or write in the read's cycle is seen:
    transparent), and ``rd2_ok`` says the engine's address was the one read. Random traffic
    on a few sectors, so reads meet fills and writes of their own sector."""
    rng = random.Random(seed)
    p = MemrouterParams(LOG2G=9)
    nl, ns = p.NUM_LINES, p.NS
    dut = LineStore(p, PW)
    words = {}
    stats = dict(owner=0, engine=0, read_filled=0, read_written=0)

    def addr():
        return rng.randrange(4) if rng.random() < 0.7 else rng.randrange(nl * ns)

    async def bench(ctx):
        expect = None                                  # (word, engine's) read last cycle
        for t in range(2000):
            rd_en, rd, rd2 = rng.random() < 0.5, addr(), addr()
            f_en, poison, f_addr = rng.random() < 0.4, rng.random() < 0.2, addr()
            wr_en, wr_addr = rng.random() < 0.4, addr()
            f_data, wr_data = rng.getrandbits(256), rng.getrandbits(256)
            for sig, val in ((dut.rd_en, rd_en), (dut.rd_addr, rd), (dut.rd2_addr, rd2),
                             (dut.f_en, f_en), (dut.f_poison, poison), (dut.f_addr, f_addr),
                             (dut.f_data, f_data), (dut.wr_en, wr_en), (dut.wr_addr, wr_addr),
                             (dut.wr_data, wr_data)):
                ctx.set(sig, val)
            if expect is not None:
                word, engine = expect
                assert ctx.get(dut.rd2_ok) == engine, f"seed {seed}, cycle {t}: rd2_ok"
                assert ctx.get(dut.rd_data) == word, \
                    f"seed {seed}, cycle {t}: read {'engine' if engine else 'owner'}"
            assert ctx.get(dut.wr_ok) == (not f_en)
            if f_en and not poison:
                words[f_addr] = f_data
            elif wr_en and not f_en:
                words[wr_addr] = wr_data
            read = rd if rd_en else rd2
            stats["owner" if rd_en else "engine"] += 1
            stats["read_filled"] += f_en and not poison and f_addr == read
            stats["read_written"] += wr_en and not f_en and wr_addr == read
            expect = (words.get(read, 0), not rd_en)
            await ctx.tick()

    run_clocked(dut, bench)
    assert_reached(stats, seed)
