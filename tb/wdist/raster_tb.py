"""cocotb testbench of ``RasterArray`` (hw/wdist/raster_array.py): every SM's ``wd_raster``
behind one lock-step fork, against ``golden.wdist.raster.raster_reference`` (the direct G-RAST
formula).

- ``random_streams``: random beat streams of every level (PLAIN, GPC, GPU, GPU_FLAT, CPC and
  legacy LAUNCH_ID grids), random valid gaps, random back-pressure on every ``cta_id[s]``; every
  record equals G-RAST in per-SM order, every complete grid's ``ctaid`` are a permutation of the
  grid (WD-V8), and the folds of a small DELTA_W build are exercised (WD-F26).
- ``golden_vectors``: WD-GV2, GV9, GV10 and GV11 replayed as beat streams.
- ``id_rate``: WD-P5 — CTA_SLOTS CTAs in one beat leave on consecutive cycles, the first within
  DELTA_W + 4 cycles of the beat, while other beats arrive every cycle.
"""

import random

import cocotb

from golden.wdist import vectors as gv
from golden.wdist.formats import (Beat, CtaRecord, Kind, Level, cta_id_fields, lin2xyz,
                                  raster_beat_fields)
from golden.wdist.params import WdistParams
from golden.wdist.raster import raster_reference
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor, finish

LEVELS = (Level.PLAIN, Level.GPC, Level.GPU, Level.GPU_FLAT, Level.CPC)


def build_params():
    return WdistParams(**env.params())


def beat_item(p, b):
    """The ``raster_beat_fields`` dict of a golden ``Beat`` (unit dims from its grid)."""
    d = dict(kind=int(b.kind), grid_id=b.grid_id, level=int(b.level), mode=int(b.mode),
             grid_x=b.grid[0], grid_y=b.grid[1], grid_z=b.grid[2],
             in_x=b.inner[0], in_y=b.inner[1], in_z=b.inner[2],
             out_x=b.outer[0], out_y=b.outer[1], out_z=b.outer[2],
             seq=b.seq, gpc=b.gpc, cnt=list(b.cnt) or [0] * p.S_MAX, first_rank=b.first_rank,
             is_cga=b.is_cga, gcga_first=b.gcga_first, gcga_last=b.gcga_last,
             end_of_cga=b.end_of_cga, cga_id=b.cga_id, ctaid_x=b.ctaid[0], ctaid_y=b.ctaid[1],
             ctaid_z=b.ctaid[2], cga_cta_id=b.cga_cta_id, unit_x=0, unit_y=0)
    if b.kind == Kind.GRID:
        o = b.outer if b.level in (Level.GPU, Level.CPC) else (1, 1, 1)
        if b.level == Level.PLAIN:
            d["unit_x"], d["unit_y"] = b.grid[0], b.grid[1]
        else:
            d["unit_x"] = b.grid[0] // (o[0] * b.inner[0])
            d["unit_y"] = b.grid[1] // (o[1] * b.inner[1])
    return d


def record(d):
    return CtaRecord(d["grid_id"], d["seq"], (d["ctaid_x"], d["ctaid_y"], d["ctaid_z"]),
                     d["is_cga"], d["cga_cta_id"], d["cga_id"])


class RasterBench:
    """Driver on ``beat``, a monitor with back-pressure and a scoreboard per ``cta_id[s]``."""

    def __init__(self, dut, p, gap_prob=0.3, ready_prob=0.7, rng=None):
        self.dut, self.p = dut, p
        rng = rng or env.rng(1)
        dut.ext_ready.value = 1
        self.driver = StreamDriver(dut, "beat", dut.clk, raster_beat_fields(p),
                                   rng=random.Random(rng.getrandbits(32)), gap_prob=gap_prob)
        self.sbs, self.mons, self.checkers = [], [], []
        for s in range(p.N_SM):
            sb = Scoreboard(f"cta_id[{s}]")
            self.sbs.append(sb)
            self.mons.append(StreamMonitor(
                dut, f"cta_id_{s}", dut.clk, cta_id_fields(p),
                rng=random.Random(rng.getrandbits(32)), ready_prob=ready_prob,
                callback=lambda t, sb=sb: sb.observe(record(t.fields), t.cycle)))
            self.checkers.append(StreamProtocolChecker(dut, f"cta_id_{s}", dut.clk))
        self.checkers.append(StreamProtocolChecker(dut, "beat", dut.clk))
        self.beats = []

    def send(self, beats):
        self.beats.extend(beats)
        for b in beats:
            self.driver.append(beat_item(self.p, b))

    async def finish(self, timeout=20_000):
        ref = raster_reference(self.p, self.beats)
        for s in range(self.p.N_SM):
            self.sbs[s].expect_all(ref[s])
        await finish(self.dut.clk, self.driver, self.sbs, self.checkers, timeout)
        assert self.dut.idle.value == 1, "rasterizers not idle after the stream"
        return ref


# ---------------- random beat streams --------------------------------------------------------

def _split(rng, n, parts_max):
    """n >= 1 split into 1..parts_max positive parts."""
    k = rng.randint(1, min(n, parts_max))
    cuts = sorted(rng.sample(range(1, n), k - 1))
    return [b - a for a, b in zip([0] + cuts, cuts + [n])]


def _cnt(rng, p, g, n):
    """A cnt vector for GPC g with n CTAs, at most CTA_SLOTS per SM."""
    cnt = [0] * p.S_MAX
    sms = p.SM_PER_GPC[g]
    for _ in range(n):
        i = rng.randrange(sms)
        while cnt[i] >= p.CTA_SLOTS:
            i = (i + 1) % sms
        cnt[i] += 1
    return tuple(cnt)


def random_grid(rng, p, grid_id, seq):
    """One grid's beats (GRID first) and the next seq: a random level, shape and split."""
    beats = []
    if rng.random() < 0.15:                               # legacy LAUNCH_ID grid
        gx, gy = rng.randint(1, 6), rng.randint(1, 3)
        beats.append(Beat(Kind.GRID, grid_id, level=Level.PLAIN, grid=(gx, gy, 1)))
        for k in range(gx * gy):
            g = rng.randrange(p.N_GPC)
            cnt = [0] * p.S_MAX
            cnt[rng.randrange(p.SM_PER_GPC[g])] = 1
            beats.append(Beat(Kind.LAUNCH_ID, grid_id, seq=seq, gpc=g, cnt=tuple(cnt),
                              end_of_cga=1, ctaid=lin2xyz(k, gx, gy)))
            seq = (seq + 1) % (1 << p.SEQ_W)
        return beats, seq
    if rng.random() < 0.2:                                # long runs away from GPC 0: folds
        return long_grid(rng, p, grid_id, seq)
    level = rng.choice(LEVELS)
    cap = p.CTA_SLOTS * p.S_MAX
    if level == Level.PLAIN:
        grid = (rng.randint(1, 12), rng.randint(1, 4), rng.randint(1, 3))
        beats.append(Beat(Kind.GRID, grid_id, level=level, grid=grid))
        left = grid[0] * grid[1] * grid[2]
        while left:
            n = rng.randint(1, min(left, cap))
            g = rng.randrange(p.N_GPC)
            n = min(n, p.CTA_SLOTS * p.SM_PER_GPC[g])
            beats.append(Beat(Kind.LAUNCH, grid_id, seq=seq, gpc=g, cnt=_cnt(rng, p, g, n),
                              end_of_cga=int(left == n)))
            left -= n
            seq = (seq + 1) % (1 << p.SEQ_W)
        return beats, seq
    inner = (rng.randint(1, 3), rng.randint(1, 2), rng.randint(1, 2))
    outer = (rng.randint(1, 3), rng.randint(1, 2), 1) if level in (Level.GPU, Level.CPC) \
        else (1, 1, 1)
    units = (rng.randint(1, 3), rng.randint(1, 3), rng.randint(1, 2))
    grid = tuple(units[i] * outer[i] * inner[i] for i in range(3))
    beats.append(Beat(Kind.GRID, grid_id, level=level, grid=grid, inner=inner, outer=outer))
    isz = inner[0] * inner[1] * inner[2]
    size = isz * outer[0] * outer[1] * outer[2]
    is_cga = int(level in (Level.GPC, Level.GPU, Level.CPC))
    for _ in range(units[0] * units[1] * units[2]):
        rho = 0
        small = p.CTA_SLOTS * min(p.SM_PER_GPC)          # a beat that fits any GPC
        parts = [q for n in _split(rng, size, 6) for q in [small] * (n // small) + [n % small]
                 if q]
        for j, n in enumerate(parts):
            g = rng.randrange(p.N_GPC)
            beats.append(Beat(Kind.LAUNCH, grid_id, seq=seq, gpc=g, cnt=_cnt(rng, p, g, n),
                              first_rank=rho, is_cga=is_cga,
                              cga_id=rng.randrange(1 << p.GPC_CGA_ID_W) * is_cga,
                              end_of_cga=int(j == len(parts) - 1)))
            rho += n
        seq = (seq + 1) % (1 << p.SEQ_W)
    return beats, seq


def long_grid(rng, p, grid_id, seq):
    """A PLAIN grid of 150..300 CTAs or a GPC-level grid of 100 one-CTA CGAs whose first 80 %
    avoid GPC 0, so GPC 0's rasterizers count deltas past 2**DELTA_W at small DELTA_W
    (WD-F26)."""
    last = p.N_GPC - 1
    if rng.random() < 0.5:
        grid = (rng.randint(50, 100), rng.randint(1, 3), 1)
        total = grid[0] * grid[1]
        beats = [Beat(Kind.GRID, grid_id, level=Level.PLAIN, grid=grid)]
        left = total
        while left:
            g = last if left > total // 5 else rng.randrange(p.N_GPC)
            n = rng.randint(1, min(left, p.CTA_SLOTS * p.SM_PER_GPC[g]))
            beats.append(Beat(Kind.LAUNCH, grid_id, seq=seq, gpc=g, cnt=_cnt(rng, p, g, n),
                              end_of_cga=int(left == n)))
            left -= n
            seq = (seq + 1) % (1 << p.SEQ_W)
        return beats, seq
    beats = [Beat(Kind.GRID, grid_id, level=Level.GPC, grid=(10, 10, 1))]
    for u in range(100):
        g = last if u < 80 else rng.randrange(p.N_GPC)
        beats.append(Beat(Kind.LAUNCH, grid_id, seq=seq, gpc=g, cnt=_cnt(rng, p, g, 1),
                          is_cga=1, end_of_cga=1))
        seq = (seq + 1) % (1 << p.SEQ_W)
    return beats, seq


def _check_permutation(p, beats, ref):
    """WD-V8: each grid's ctaid multiset is the grid, each coordinate once (grid_ids distinct)."""
    ids = {}
    for s in range(p.N_SM):
        for rec in ref[s]:
            ids.setdefault(rec.grid_id, []).append(rec.ctaid)
    for b in beats:
        if b.kind == Kind.GRID:
            gx, gy, gz = b.grid
            want = sorted((x, y, z) for z in range(gz) for y in range(gy) for x in range(gx))
            assert sorted(ids.get(b.grid_id, [])) == want, \
                f"grid {b.grid_id}: ctaid are not a permutation of {b.grid}"


@cocotb.test()
async def random_streams(dut):
    """Random streams of every level with gaps and back-pressure (WD-F25..F27, WD-V8, WD-V15)."""
    start_clock(dut)
    await reset(dut)
    p = build_params()
    rng = env.rng(0)
    bench = RasterBench(dut, p, gap_prob=rng.choice((0.0, 0.3)), ready_prob=rng.choice((0.5, 0.9)),
                        rng=rng)
    beats, seq = [], 0
    for grid_id in range(int(env.params().get("GRIDS", 0)) or 24):
        grid_beats, seq = random_grid(rng, p, grid_id % (1 << p.GRID_ID_W), seq)
        beats.extend(grid_beats)
    bench.send(beats)
    ref = await bench.finish(timeout=40 * len(beats) + 2000)
    _check_permutation(p, beats, ref)
    folds = _fold_count(p, beats)
    dut._log.info("random_streams: %d beats, %d records, %d delta folds by the golden "
                  "hardware form (seed %d)", len(beats), sum(map(len, ref.values())), folds,
                  env.seed())


def _fold_count(p, beats):
    from golden.wdist.raster import Rasterizer as GoldenRaster
    total = 0
    for s in range(p.N_SM):
        r = GoldenRaster(p, s)
        for b in beats:
            r.beat(b)
        total += r.folds
    return total


# ---------------- golden vectors -------------------------------------------------------------

def _plain_run(p, grid, owner):
    """A PLAIN grid where CTA k goes to global SM owner(k), one beat per CTA."""
    beats = [Beat(Kind.GRID, 1, level=Level.PLAIN, grid=grid)]
    for k in range(grid[0] * grid[1] * grid[2]):
        g, i = p.gpc_of(owner(k))
        cnt = [0] * p.S_MAX
        cnt[i] = 1
        beats.append(Beat(Kind.LAUNCH, 1, seq=k % (1 << p.SEQ_W), gpc=g, cnt=tuple(cnt),
                          end_of_cga=1))
    return beats


def _cga_unit_beats(p, grid_id, u_count, size, target, rho, level):
    """Units 0..u_count-1 of ``size`` CTAs each go elsewhere; unit u_count puts rank ``rho``
    on global SM ``target`` (the rest of that unit elsewhere)."""
    g_t, i_t = p.gpc_of(target)
    other = (target + 1) % p.N_SM
    g_o, i_o = p.gpc_of(other)
    is_cga = int(level in (Level.GPC, Level.GPU, Level.CPC))

    def beat(g, i, first, n, end):
        cnt = [0] * p.S_MAX
        cnt[i] = n
        return Beat(Kind.LAUNCH, grid_id, gpc=g, cnt=tuple(cnt), first_rank=first,
                    is_cga=is_cga, end_of_cga=end)
    out = []
    for _ in range(u_count):
        for first in range(0, size, p.CTA_SLOTS):
            n = min(p.CTA_SLOTS, size - first)
            out.append(beat(g_o, i_o, first, n, int(first + n == size)))
    if rho:
        for first in range(0, rho, p.CTA_SLOTS):
            out.append(beat(g_o, i_o, first, min(p.CTA_SLOTS, rho - first), 0))
    out.append(beat(g_t, i_t, rho, 1, int(rho + 1 == size)))
    if rho + 1 < size:
        for first in range(rho + 1, size, p.CTA_SLOTS):
            n = min(p.CTA_SLOTS, size - first)
            out.append(beat(g_o, i_o, first, n, int(first + n == size)))
    return out


@cocotb.test()
async def golden_vectors(dut):
    """WD-GV2, GV9, GV10, GV11 as beat streams; the records equal G-RAST (scoreboard) and the
    vectors' printed values."""
    start_clock(dut)
    await reset(dut)
    p = build_params()
    bench = RasterBench(dut, p)
    # GV10 (2 GPCs x 2 SMs; SM (g, i) is global base(g) + i), grid_id 10
    v10 = gv.GV10
    bench.send([Beat(Kind.GRID, 10, level=Level.PLAIN, grid=v10["grid"])] + [
        Beat(Kind.LAUNCH, 10, gpc=g, cnt=tuple(cnt) + (0,) * (p.S_MAX - len(cnt)), end_of_cga=1)
        for g, cnt in v10["beats"]])
    # GV9: each row a PLAIN grid (grid_id 1); SM 0 takes CTAs lin(start) and lin(start) + delta
    for grid, start, delta, _, _, result, lin in gv.GV9:
        k0 = start[0] + grid[0] * (start[1] + grid[1] * start[2])
        assert k0 + delta == lin
        bench.send(_plain_run(p, grid, lambda k, k0=k0, lin=lin: 0 if k in (k0, lin) else 1))
    # GV2 and GV11 GPU / FLAT (grid_id 2): one CTA of a CGA grid on SM 0
    cga_rows = (
        ("GV2", Level.GPC, gv.GV2["grid"], gv.GV2["inner"], (1, 1, 1), gv.GV2["u"],
         gv.GV2["r"], gv.GV2["ctaid"], gv.GV2["r"]),
        ("GV11_GPU", Level.GPU, gv.GV11_GPU["grid"], gv.GV11_GPU["inner"],
         gv.GV11_GPU["outer"], gv.GV11_GPU["u"], gv.GV11_GPU["rho"], gv.GV11_GPU["ctaid"],
         gv.GV11_GPU["cga_cta_id"]),
        ("GV11_FLAT", Level.GPU_FLAT, gv.GV11_FLAT["grid"], gv.GV11_FLAT["inner"], (1, 1, 1),
         gv.GV11_FLAT["u"], gv.GV11_FLAT["rho"], gv.GV11_FLAT["ctaid"], gv.GV11_FLAT["rho"]))
    for _, level, grid, inner, outer, u, rho, _, _ in cga_rows:
        size = inner[0] * inner[1] * inner[2] * outer[0] * outer[1] * outer[2]
        bench.send([Beat(Kind.GRID, 2, level=level, grid=grid, inner=inner, outer=outer)]
                   + _cga_unit_beats(p, 2, u, size, 0, rho, level))
    # GV11 GPC (grid_id 3): one CGA of 3x2x1 on GPC 0 with cnt [2, 1, 0, 3]
    g11 = gv.GV11_GPC
    bench.send([Beat(Kind.GRID, 3, level=Level.GPC, grid=g11["grid"], inner=g11["inner"])] + [
        Beat(Kind.LAUNCH, 3, seq=u, gpc=0, cnt=tuple(g11["cnt"]) + (0,) * (p.S_MAX - 4),
             is_cga=1, gcga_first=1, gcga_last=1, end_of_cga=1) for u in (0, 1)])
    got = await bench.finish()                # the scoreboards proved RTL == G-RAST

    def ids(s, grid_id):
        return [r for r in got[s] if r.grid_id == grid_id]
    seen = {2 * g + i: [r.ctaid for r in ids(p.base(g) + i, 10)] for g in (0, 1) for i in (0, 1)}
    assert seen == {k: list(w) for k, w in v10["ids"].items()}, f"GV10: {seen}"
    sm0 = ids(0, 1)
    for n, (grid, start, _, _, _, result, _) in enumerate(gv.GV9):
        assert (sm0[2 * n].ctaid, sm0[2 * n + 1].ctaid) == (start, result), f"GV9 {grid}"
    for rec, (name, *_, ctaid, cci) in zip(ids(0, 2), cga_rows, strict=True):
        assert rec.ctaid == tuple(ctaid) and rec.cga_cta_id == cci, f"{name}: {rec}"
    for u in (0, 1):                          # unit u's CTAs in SM order = rank order
        got_xy = [r.ctaid[:2] for s in range(4) for r in ids(p.base(0) + s, 3) if r.seq == u]
        assert got_xy == [tuple(t) for t in g11["ids"][u]], f"GV11 GPC unit {u}: {got_xy}"
    assert [r.cga_cta_id for r in ids(p.base(0) + 3, 3) if r.seq == 0] == [3, 4, 5]
    dut._log.info("golden vectors GV2, GV9 (4 rows), GV10, GV11 (GPC, GPU, FLAT) pass")


# ---------------- WD-P5 --------------------------------------------------------------------

@cocotb.test()
async def id_rate(dut):
    """WD-P5: CTA_SLOTS CTAs in one beat on SM 0, other beats every cycle, all ready."""
    start_clock(dut)
    await reset(dut)
    p = build_params()
    bench = RasterBench(dut, p, gap_prob=0.0, ready_prob=1.0)
    n = p.CTA_SLOTS
    beats = [Beat(Kind.GRID, 5, level=Level.PLAIN, grid=(n * 5, 1, 1))]
    # SM 1 takes n, SM 0 takes n, then SMs 2, 3, 4 (each SM one run, so no FIFO fills)
    for j, sm in enumerate((1, 0, 2, 3, 4)):
        g, i = p.gpc_of(sm % p.N_SM)
        cnt = [0] * p.S_MAX
        cnt[i] = n
        beats.append(Beat(Kind.LAUNCH, 5, seq=j, gpc=g, cnt=tuple(cnt), end_of_cga=int(j == 4)))
    bench.send(beats)
    await bench.finish()
    own = bench.mons[0].transfers
    beat_cycle = bench.driver.transfers[2].cycle       # GRID, other, mine
    cycles = [t.cycle for t in own]
    first = cycles[0] - beat_cycle
    consecutive = all(b - a == 1 for a, b in zip(cycles, cycles[1:]))
    dut._log.info("WD-P5: first ID %d cycles after the beat (bound DELTA_W + 4 = %d), %d IDs "
                  "in %d cycles", first, p.DELTA_W + 4, len(cycles), cycles[-1] - cycles[0] + 1)
    assert len(cycles) == n
    assert consecutive, f"IDs not on consecutive cycles: {cycles}"
    assert first <= p.DELTA_W + 4, f"first ID {first} cycles after the beat"
    # the beats behind kept flowing one per cycle
    beat_cycles = [t.cycle for t in bench.driver.transfers]
    assert all(b - a == 1 for a, b in zip(beat_cycles, beat_cycles[1:])), beat_cycles
