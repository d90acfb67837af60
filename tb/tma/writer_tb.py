"""cocotb testbench of the TMA back end's write side: ``TmaSmemWriter`` + ``TmaCompletion`` (+ a
``SwizzleMap``) on the test top of tests/rtl/test_tma_writer.py (spec tma.md TMA-F22, F30, F31,
F33..F37, TMA-C8, TMA-V4, V5, V8, P6).

Stimulus comes from the golden model: random tile loads (rank 1..4, every dtype size, traversal
strides, partly and wholly OOB boxes, every swizzle mode the box allows, ZERO/CONST/NaN fill,
unicast and multicast masks) are run through ``golden.tma.model.TmaModel`` over a sentinel-filled
shared memory. Each READ request becomes a response item (placement from the request's piece,
line from global memory with random bytes in unrequested sectors); the OOB bytes are the maximal
fill runs of ``golden.tma.jobs.golden_fills`` (ReqGen's output). Items of up to four open commands are interleaved in random
order (out-of-order responses), with random valid gaps, random ``ready`` on ``smem_wr``, ``mbar``
and ``done``, and commands of other kinds mixed in: total-0 commands (NOP / WAIT_ALL / prefetch)
and acknowledgement-counted ones (stores), whose acks the testbench pulses.

Checks: the smem image after all beats equals the golden image, sentinel intact elsewhere
(TMA-V5); the beats equal, as a multiset, the golden ``swizzle.range_beats`` of every piece and fill
job (row, data, be, mask: TMA-F30, F31, F33); the k-th ``mbar`` update belongs to the k-th beat
(same command barrier, tx = its bytes, mask) and is accepted no earlier (TMA-F35); tx per command
= box bytes = golden tx (TMA-F35, V8); ``done`` ids in open order, each after the command's last
update/ack (TMA-F36, F37); ``fault`` stays 0; ``idle`` at the end.
"""

import os
import random
from collections import Counter

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge, Timer

from golden.tma.encode import encode_desc
from golden.tma.formats import (ESIZE, FLOAT_DTYPES, LINE, SECTOR, CmdOp, Mode, OobFill,
                                SmemBeat, Swizzle, TmaCmd, done_fields, mbar_fields,
                                smem_wr_fields)
from golden.tma.geometry import geometry
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel
from golden.tma.params import TmaParams
from golden.tma.swizzle import default_swz_table, range_beats, swz
from golden.tma.tile import fill_bytes
from golden.tma import vectors as gv
from golden.tma.jobs import fill_fields, golden_fills
from hw.tma.completion import close_fields, open_fields
from hw.tma.tracker import line_fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int, sim_cycle

SENTINEL = 0xA5
STREAMS = ("resp", "fill", "smem_wr", "mbar", "open", "close", "done")


def alt_swz_table():
    """The non-default ``SWZ_TABLE`` of the ``swz_alt = 1`` build: seeded random permutations."""
    rng = random.Random(0xC8)
    table = {}
    for m in (1, 2, 3):
        rows = []
        for _ in range(8):
            perm = list(range(8))
            rng.shuffle(perm)
            rows.append(tuple(perm))
        table[m] = tuple(rows)
    return table


def tb_params():
    prm = env.params()
    table = alt_swz_table() if prm.get("swz_alt", 0) else None
    return TmaParams(SMEM_AW=prm.get("smem_aw", 18), SWZ_TABLE=table)


# -- stimulus ----------------------------------------------------------------------------------
def random_load(rng, p, smem_addr, mbar, cta_id, gaddr, max_box=2048):
    """(descriptor fields, command fields, tensor bytes, footprint) of a random legal tile load."""
    while True:
        rank = rng.randint(1, 4)
        dtype = rng.choice(sorted(ESIZE))
        es = ESIZE[dtype]
        unit = max(1, 16 // es)
        box0 = unit * rng.randint(1, max(1, 64 // (unit * es)))
        box = [box0] + [rng.randint(1, 5) for _ in range(rank - 1)]
        ts = [1] + [rng.choice((1, 1, 2, 3)) for _ in range(rank - 1)]
        n = [box[0]] + [-(-box[k] // ts[k]) for k in range(1, rank)]
        bb = es
        for v in n:
            bb *= v
        if bb <= max_box:
            break
    size = [rng.randint(1, 2 * box0 + 3)] + [rng.randint(1, 8) for _ in range(rank - 1)]
    stride, prev = [], -(-size[0] * es // 16) * 16
    for k in range(1, rank):
        stride.append(prev + 16 * rng.choice((0, 1)))
        prev = stride[-1] * size[k]
    coord = [rng.randint(-box[k] * ts[k] - 1, size[k] + 1) if rng.random() < 0.5
             else rng.randint(0, max(0, size[k] - 1)) for k in range(rank)]
    if rng.random() < 0.05:
        coord[0] = size[0] + 3                                   # wholly OOB box
    fills = [OobFill.ZERO, OobFill.CONST] + ([OobFill.NAN] if dtype in FLOAT_DTYPES else [])
    inner = box0 * es
    swizzles = [Swizzle.NONE] + [m for m, span in ((1, 32), (2, 64), (3, 128)) if inner <= span]
    swizzle = rng.choice(swizzles)
    fp = -(-bb // 128) * 128
    desc = dict(global_address=gaddr, tensor_size=size, tensor_stride=stride, rank=rank,
                mode=Mode.TILE, dtype=dtype, swizzle=swizzle, oob_fill=rng.choice(fills),
                box_size=box, traversal_stride=ts, oob_const=rng.getrandbits(64))
    mcast = rng.random() < 0.3
    cmd = dict(op=CmdOp.TENSOR_LOAD, rank=rank, coord=coord, smem_addr=smem_addr,
               mbar_addr=mbar, cta_id=cta_id, mcast=int(mcast),
               cta_mask=rng.randrange(1, 1 << 16) if mcast else 0)
    extent = es * size[0] + sum((size[k] - 1) * stride[k - 1] for k in range(1, rank))
    return desc, cmd, rng.randbytes(max(extent, 1)), fp


class Command:
    """One command as the write side sees it: ``items`` (("resp"|"fill", dict)), ``total`` units,
    ``acks`` to pulse, golden expectations."""

    def __init__(self, seq, cmd_id, total=0, acks=0):
        self.seq, self.id, self.total, self.acks = seq, cmd_id, total, acks
        self.items = []
        self.beats = []
        self.mbar = None
        self.mask = 0
        self.tx = 0
        self.rows = set()


def load_command(seq, cmd_id, res, p, gmem, rng):
    """A :class:`Command` from a golden ``CmdResult`` of a tile load."""
    c = Command(seq, cmd_id, total=res.box_bytes)
    cmd, d = res.cmd, res.desc
    c.mbar, c.mask = cmd.mbar_addr, cmd.dest_mask
    c.tx = {cta: res.tx[cta] for cta in range(16) if c.mask >> cta & 1}
    es = geometry(d).esize
    base = cmd.smem_addr
    for q in res.requests:
        line = bytearray(gmem.read(q.line * LINE, LINE).tobytes())
        for s in range(LINE // SECTOR):
            if not q.sectors >> s & 1:
                line[SECTOR * s:SECTOR * (s + 1)] = rng.randbytes(SECTOR)
        item = dict(seq=seq, dst=base + q.dense, lane=q.lane, nbytes=q.nbytes, swizzle=d.swizzle,
                    mask=c.mask, mbar=c.mbar, data=int.from_bytes(line, "little"))
        c.items.append(("resp", item))
        c.beats += range_beats(base + q.dense, line[q.lane:q.lane + q.nbytes], d.swizzle, c.mask,
                               p.SWZ_TABLE)
    fb = fill_bytes(d, p.NAN_PATTERN)
    for item in golden_fills(cmd, d, p, seq):            # ReqGen's maximal OOB runs
        c.items.append(("fill", item))
        lo = item["dst"] - base
        c.beats += range_beats(item["dst"], bytes(fb[o % es] for o in range(lo, lo + item["nbytes"])),
                               d.swizzle, c.mask, p.SWZ_TABLE)
    rng.shuffle(c.items)
    c.rows = {b.row for b in c.beats}
    return c


def golden_loads(rng, p, count, smem=None):
    """``count`` random tile loads run through the golden model: (commands' results, gmem, smem)."""
    gmem = GlobalMemory(p.ADDR_W)
    smem = smem or SharedMemory(p.SMEM_AW, default=SENTINEL)
    cmds, addr, gaddr = [], 0, 0x100000
    for k in range(count):
        desc, cmd, buf, fp = random_load(rng, p, 0, 8 * (k + 1), rng.randrange(16), gaddr)
        align = 1024 if desc["swizzle"] else 128
        addr = -(-addr // align) * align
        if addr + fp > p.SMEM_SIZE:
            break
        cmd["smem_addr"] = addr
        addr += fp
        daddr = 0x8000 + 128 * k
        gmem.write(daddr, encode_desc(**desc))
        gmem.write(gaddr, buf)
        gaddr += -(-len(buf) // 4096) * 4096 + 4096
        cmds.append(TmaCmd(desc_addr=daddr, **cmd))
    model = TmaModel(p, gmem, smem)
    run = model.run(cmds)
    assert not run.errs, f"golden rejected a generated command: {run.errs}"
    return run.commands, model


# -- environment -------------------------------------------------------------------------------
class WriterEnv:
    def __init__(self, dut, rng, gaps=True, ready=0.7):
        self.dut, self.rng = dut, rng
        self.p = p = tb_params()
        clk = dut.clk
        gap = 0.25 if gaps else 0.0
        self.resp = StreamDriver(dut, "resp", clk, fields=line_fields(p), rng=rng, gap_prob=gap)
        self.fill = StreamDriver(dut, "fill", clk, fields=fill_fields(p), rng=rng, gap_prob=gap)
        self.open = StreamDriver(dut, "open", clk, fields=open_fields(p), rng=rng, gap_prob=gap)
        self.close = StreamDriver(dut, "close", clk, fields=close_fields(p), rng=rng,
                                  gap_prob=gap)
        self.wr = StreamMonitor(dut, "smem_wr", clk, fields=smem_wr_fields(p), rng=rng,
                                ready_prob=ready)
        self.mbar = StreamMonitor(dut, "mbar", clk, fields=mbar_fields(p), rng=rng,
                                  ready_prob=ready)
        self.done = StreamMonitor(dut, "done", clk, fields=done_fields(p), rng=rng,
                                  ready_prob=ready)
        self.checkers = [StreamProtocolChecker(dut, s, clk) for s in STREAMS]
        self.ack_cycles = {}
        self.pending_acks = []

    async def pulse_acks(self):
        """Pulse ``ack_valid`` for random pending acknowledgements of open commands."""
        dut = self.dut
        while True:
            await RisingEdge(dut.clk)
            if self.pending_acks and self.rng.random() < 0.3:
                c = self.pending_acks.pop(self.rng.randrange(len(self.pending_acks)))
                dut.ack_valid.value = 1
                dut.ack_seq.value = c.seq
                self.ack_cycles.setdefault(c.seq, []).append(sim_cycle())
            else:
                dut.ack_valid.value = 0

    async def run(self, commands, window=4):
        """Open the commands in order; keep the items of up to ``window`` open commands mixed."""
        rng = self.rng
        cocotb.start_soon(self.pulse_acks())
        pool, late_close = [], {}
        cocotb.start_soon(self._progress(lambda: (len(pool), self.open.sent, self.done.count,
                                                  self.wr.count)))
        k = 0
        opening = []                                   # open sent, handshake not yet seen
        base = self.open.sent
        while k < len(commands) or pool or opening:
            while opening and self.open.sent > base + opening[0][0]:
                _, c = opening.pop(0)                   # open accepted: its work may start
                pool += [(c, it) for it in c.items]
                self.pending_acks += [c] * c.acks
                if rng.random() < 0.5 or not c.items:
                    self.close.append(dict(seq=c.seq, total=c.total))
                else:
                    late_close[c.seq] = c
            busy_cmds = len({id(c) for c, _ in pool}) + len(opening)
            if k < len(commands) and busy_cmds < window and self.open.count() == 0:
                opening.append((k, commands[k]))
                self.open.append(dict(seq=commands[k].seq, id=commands[k].id))
                k += 1
            if self.resp.count() + self.fill.count() < 4 and pool:
                c, (kind, item) = pool.pop(rng.randrange(len(pool)))
                (self.resp if kind == "resp" else self.fill).append(item)
                if c.seq in late_close and not any(x is c for x, _ in pool):
                    self.close.append(dict(seq=c.seq, total=late_close.pop(c.seq).total))
            else:
                await RisingEdge(self.dut.clk)
        for c in late_close.values():
            self.close.append(dict(seq=c.seq, total=c.total))
        await self.done.wait_for(len(commands), timeout_cycles=20_000)
        for _ in range(20):
            await RisingEdge(self.dut.clk)

    async def _progress(self, state):
        """Log progress every 2000 cycles (helps to locate a stall)."""
        while True:
            for _ in range(2000):
                await RisingEdge(self.dut.clk)
            self.dut._log.info(f"cycle {sim_cycle()}: pool, opened, done, beats = {state()}, "
                               f"fault {read_int(self.dut.fault)}")

    def check(self, commands, golden_smem):
        p = self.p
        beats = [SmemBeat(row=t.fields["row"], data=t.fields["data"].to_bytes(LINE, "little"),
                          be=t.fields["be"], mask=t.fields["mask"]) for t in self.wr.transfers]
        # TMA-V5: image bit-exact, sentinel intact outside the footprints
        smem = SharedMemory(p.SMEM_AW, default=SENTINEL)
        for b in beats:
            smem.apply_beat(b)
        assert smem.same_as(golden_smem), "smem image differs from the golden model"
        # TMA-F30/F31/F33: the beats are exactly the golden range_beats of every range
        want = Counter((b.row, b.data, b.be, b.mask) for c in commands for b in c.beats)
        got = Counter((b.row, b.data, b.be, b.mask) for b in beats)
        assert got == want, (f"beats differ: {sum((got - want).values())} unexpected, "
                             f"{sum((want - got).values())} missing")
        # TMA-F35: k-th update <-> k-th beat, no earlier, same barrier and bytes
        row_cmd = {row: c for c in commands for row in c.rows}
        ups = self.mbar.transfers
        assert len(ups) == len(beats), f"{len(ups)} mbar updates for {len(beats)} beats"
        last = {}
        sums = Counter()
        for k, (u, bt, b) in enumerate(zip(ups, self.wr.transfers, beats)):
            c = row_cmd[b.row]
            f = u.fields
            assert (f["addr"], f["tx"], f["mask"]) == (c.mbar, b.nbytes, b.mask), \
                f"mbar {k}: {f} for a beat of {b.nbytes} bytes of command {c.seq}"
            assert u.cycle >= bt.cycle, f"mbar {k} in cycle {u.cycle} before its beat {bt.cycle}"
            last[c.seq] = u.cycle
            sums[c.seq] += f["tx"]
        for c in commands:
            if c.mbar is not None:
                assert sums[c.seq] == c.total, f"command {c.seq}: tx {sums[c.seq]} != {c.total}"
                assert all(v == c.total for v in c.tx.values()), "golden tx differs"
        # TMA-F36/F37: done in order, after the last side effect
        done = self.done.transfers
        assert [t.fields["id"] for t in done] == [c.id for c in commands], "done order differs"
        for t, c in zip(done, commands):
            after = max([last.get(c.seq, -1)] + self.ack_cycles.get(c.seq, []))
            assert t.cycle > after, f"done of {c.id} in cycle {t.cycle}, side effect in {after}"
        assert read_int(self.dut.fault) == 0, "completion fault flag raised"
        assert read_int(self.dut.idle) == 1, "not idle at the end"
        for chk in self.checkers:
            chk.check()


async def start(dut):
    dut._log.info(f"seed {env.seed()} params {env.params()}")
    start_clock(dut)
    for name in ("resp__valid", "fill__valid", "open__valid", "close__valid", "smem_wr__ready",
                 "mbar__ready", "done__ready", "ack_valid", "busy"):
        getattr(dut, name).value = 0
    dut.ack_seq.value = 0
    dut.swz_addr.value = 0
    dut.swz_mode.value = 0
    await reset(dut)
    return env.rng(2)


def mixed_commands(rng, results, model_p, gmem):
    """Load commands from golden results with total-0 and ack-counted commands mixed in."""
    out, seq = [], 0
    for res in results:
        while rng.random() < 0.3:
            kind = rng.random()
            c = Command(seq % 256, rng.randrange(256),
                        total=0 if kind < 0.5 else rng.randint(1, 6))
            c.acks = c.total
            out.append(c)
            seq += rng.choice((1, 1, 2))                    # a rejected command skips a number
        out.append(load_command(seq % 256, rng.randrange(256), res, model_p, gmem, rng))
        seq += 1
    return out


@cocotb.test()
async def random_loads(dut):
    """Random tile loads, fills and other commands through writer and completion (V5, F30..F37)."""
    rng = await start(dut)
    e = WriterEnv(dut, rng)
    results, model = golden_loads(rng, e.p, int(os.environ.get("TMA_WR_CMDS", "45")))
    commands = mixed_commands(rng, results, e.p, model.gmem)
    await e.run(commands)
    await ReadOnly()
    e.check(commands, model.smem)
    dut._log.info(f"{len(commands)} commands, {e.wr.count} beats, {e.mbar.count} mbar updates")


@cocotb.test()
async def gv24_fig9(dut):
    """TMA-GV24 (Fig 9 SWIZZLE_128B placement) and GV25 statistics through the writer."""
    rng = await start(dut)
    e = WriterEnv(dut, rng)
    if env.params().get("swz_alt", 0):
        dut._log.info("non-default SWZ_TABLE build: GV24 assumes the default table; skipped")
        return
    p = e.p
    data = bytes(random.Random(24).randbytes(12800))
    gmem = GlobalMemory(p.ADDR_W)
    gmem.write(gv.FIG8_DESC_ADDR, encode_desc(**gv.GV24_DESC))
    gmem.write(gv.GV24_DESC["global_address"], data)
    model = TmaModel(p, gmem, SharedMemory(p.SMEM_AW, default=SENTINEL))
    cmd = TmaCmd(op=CmdOp.TENSOR_LOAD, rank=4, coord=(0, 0, 0, 0), desc_addr=gv.FIG8_DESC_ADDR,
                 smem_addr=0, mbar_addr=gv.FIG8_MBAR)
    res = model.run([cmd]).commands[0]
    c = load_command(0, 0x24, res, p, gmem, rng)
    await e.run([c])
    await ReadOnly()
    e.check([c], model.smem)
    image = SharedMemory(p.SMEM_AW, default=SENTINEL)
    for t in e.wr.transfers:
        image.apply_beat(SmemBeat(t.fields["row"], t.fields["data"].to_bytes(LINE, "little"),
                                  t.fields["be"], t.fields["mask"]))
    for unit, _h, _w, _k, _p, _slot, byte in gv.GV24:
        assert bytes(image.read(0, byte, 16)) == data[16 * unit:16 * unit + 16], f"GV24 unit {unit}"
    assert e.wr.count == gv.GV25["beats"] and sum(t.fields["tx"] for t in e.mbar.transfers) \
        == gv.GV25["tx"]


@cocotb.test()
async def swizzle_map(dut):
    """SwizzleMap against golden swz on every address below 4 KiB and random ones, all modes;
    GV26 and the GV23 table with the default table (TMA-F31, V4, C8)."""
    await start(dut)
    p = tb_params()
    rng = env.rng(3)
    addrs = list(range(4096)) + [rng.randrange(p.SMEM_SIZE) for _ in range(1000)]
    default = p.SWZ_TABLE == default_swz_table()
    for mode in range(4):
        for a in addrs:
            dut.swz_addr.value = a
            dut.swz_mode.value = mode
            await Timer(1, "ns")
            want = swz(a, mode, p.SWZ_TABLE)
            if default:
                assert want == (a if mode == 0 else a ^ ((a >> 3) & (((1 << mode) - 1) << 4))), a
            assert read_int(dut.swz_out) == want, f"swz({a:#x}, {mode}) = {read_int(dut.swz_out):#x}, want {want:#x}"
    if default:
        for a, *modes in gv.GV26:
            if a < p.SMEM_SIZE:
                for mode, want in zip((1, 2, 3), modes):
                    dut.swz_addr.value = a
                    dut.swz_mode.value = mode
                    await Timer(1, "ns")
                    assert read_int(dut.swz_out) == want, f"GV26 {a:#x} mode {mode}"
        for r, row in enumerate(gv.GV23):
            for k, slot in enumerate(row):
                dut.swz_addr.value = 128 * r + 16 * k
                dut.swz_mode.value = 3
                await Timer(1, "ns")
                assert (read_int(dut.swz_out) >> 4) & 7 == slot, f"GV23 row {r} chunk {k}"


@cocotb.test()
async def throughput(dut):
    """BM-WR / BM-FILL shapes with always-ready outputs, no input gaps: beats per write-window
    cycle, unswizzled vs SW128B (TMA-P5, P6)."""
    rng = await start(dut)
    e = WriterEnv(dut, rng, gaps=False, ready=1.0)
    figures = {}
    seq = 0
    for name, swizzle, fill in (("wr_none", 0, False), ("wr_sw128", 3, False),
                                ("fill_none", 0, True), ("fill_sw128", 3, True)):
        c = Command(seq, seq, total=512 * LINE)
        c.mbar, c.mask = 8, 1
        if fill:                                             # BM-FILL: one 64 KiB OOB run
            c.items.append(("fill", dict(seq=seq, dst=0, nbytes=512 * LINE,
                                         pattern=0x1122334455667788, swizzle=swizzle, mask=1,
                                         mbar=8)))
        for i in range(0 if fill else 512):
            c.items.append(("resp", dict(seq=seq, dst=LINE * i, lane=0, nbytes=LINE,
                                         swizzle=swizzle, mask=1, mbar=8,
                                         data=rng.getrandbits(8 * LINE))))
        first = e.wr.count
        await e.open.send(dict(seq=c.seq, id=c.id))
        e.close.append(dict(seq=c.seq, total=c.total))
        for kind, item in c.items:
            (e.resp if kind == "resp" else e.fill).append(item)
        await e.done.wait_for(seq + 1)
        window = e.wr.transfers[first:]
        cycles = window[-1].cycle - window[0].cycle + 1
        figures[name] = dict(beats=len(window), window_cycles=cycles,
                             beats_per_cycle=round(len(window) / cycles, 4))
        dut._log.info(f"{name}: {figures[name]}")
        seq += 1
    env.write_result(figures)
    for name, f in figures.items():
        assert f["beats"] == 512 and f["beats_per_cycle"] >= 0.98, (name, f)
    a, b = figures["wr_none"]["window_cycles"], figures["wr_sw128"]["window_cycles"]
    assert abs(a - b) <= 0.01 * a, f"swizzled window {b} vs unswizzled {a}"
