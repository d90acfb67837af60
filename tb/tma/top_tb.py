"""cocotb testbench of the whole TMA unit ``hw.tma.Tma`` (spec tma.md §2.2, §3.6; part 1).

Around the DUT: a command driver with random gaps; a descriptor memory and an L2 model sharing one
sparse global memory (random latency, out-of-order responses, random back-pressure, junk bytes in
unrequested sectors: TMA-V11); a shared-memory model of the 16 CTAs that applies every
``smem_wr`` beat and answers ``smem_rd`` reads in order; barrier, ``err`` and ``done`` sinks with
random back-pressure; stream protocol checkers on every port.

Stimulus runs in groups. Commands inside a group touch disjoint memory (no smem row or global
line written by one command is read or written by another), so the spec's ordering assumption
(§4.11) holds; before the next group the bench waits for every ``done``/``err`` of the group.
The golden model (``golden.tma.model.TmaModel``) runs the same commands on identical initial
memories; the scoreboard then compares (TMA-V5, V6, P3, E1, F36):

* the ``err`` stream and the ``done`` order;
* the L2 requests (every field but the tag) in order, per path (READ from the request generator,
  WRITE from the store path), and their number (TMA-P3);
* the shared-memory image of every CTA and the global lines written;
* the barrier bytes per (barrier, CTA);
* the ``desc_rd`` count (§4.12: exact when every epoch has at most DC_ENTRIES descriptors);
* ``idle`` = 1 and ``outstanding`` = 0 at the end, ``outstanding`` <= TRK_ENTRIES throughout.

TMA-V10 runs the same commands and memory contents twice (no stall at all, then stressed) and
also compares the two runs' records with each other.
"""

import os
import random
from collections import Counter

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.tma.formats import (DESC_BYTES, LINE, N_CTA, SmemBeat, CmdOp, L2Op, TmaCmd,
                                cmd_fields, desc_rd_req_fields, desc_rd_resp_fields, done_fields,
                                err_fields, l2_req_fields, mbar_fields, smem_rd_req_fields,
                                smem_rd_resp_fields, smem_wr_fields)
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel
from golden.tma.params import TmaParams
from golden.tma.validate import is_cache_user, precheck
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.memory import MemoryModel, SparseMemory
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int, sim_cycle
from golden.tma import vectors as V
from tb.tma.reqgen_tb import directed_cases, im2col_cases
from tb.tma.setup_tb import Case, mutate, random_block, random_control, random_im2col, random_tile
from tb.tma.tracker_tb import L2Memory

__all__ = ["TopBench", "top_params"]

STREAMS = ("cmd", "desc_rd_req", "desc_rd_resp", "l2_req", "l2_resp", "smem_wr", "smem_rd_req",
           "smem_rd_resp", "mbar", "err", "done")
WRITE_PATH = frozenset({L2Op.WRITE} | {L2Op(8 + k) for k in range(8)})
DESC_BASE = 0xFFF0_0000            # descriptors live in their own region (below 2^40)
# a group's wait budget per golden L2 request: memory ready 0.5, and a RED costs the memory
# a READ and a WRITE (TopBench.run)
CYCLES_PER_REQUEST = 8


def top_params():
    """TmaParams of the build (the registry parameters of ``hw.tma.Tma``)."""
    return TmaParams.of_build(env.params())




def _rows(cmd_res, p):
    """(smem rows written per CTA, smem rows read per CTA, global lines read, written)."""
    wr = {(c, b.row) for b in cmd_res.beats for c in range(N_CTA) if b.mask >> c & 1}
    rd = {(cta, row) for row, cta in cmd_res.smem_reads}
    g_rd = {r.line for r in cmd_res.requests if r.op == L2Op.READ}
    g_wr = {r.line for r in cmd_res.requests if r.op in WRITE_PATH}
    return wr, rd, g_rd, g_wr


def group_commands(cases, p, gmem):
    """Split ``cases`` (in order) into groups of commands with disjoint footprints, using a golden
    run on a copy of ``gmem`` (which holds the descriptors; the footprint does not depend on the
    other memory contents)."""
    res = TmaModel(p, gmem=gmem.copy()).run([c.cmd for c in cases]).commands
    groups, cur, used = [], [], (set(), set(), set(), set())
    for case, r in zip(cases, res):
        wr, rd, g_rd, g_wr = _rows(r, p)
        clash = (wr & (used[0] | used[1]) or rd & used[0] or g_wr & (used[2] | used[3])
                 or g_rd & used[3] or case.cmd.op in (CmdOp.WAIT_ALL, CmdOp.DESC_INVAL))
        if cur and clash:
            groups.append(cur)
            cur, used = [], (set(), set(), set(), set())
        cur.append(case)
        for u, s in zip(used, (wr, rd, g_rd, g_wr)):
            u |= s
    if cur:
        groups.append(cur)
    return groups, res


class SmemReadModel(MemoryModel):
    """``smem_rd_req`` / ``smem_rd_resp`` (TMA-I7): the row of CTA ``cta`` as it is when the read
    is accepted, answered in request order after a random latency >= 1."""

    def __init__(self, dut, clk, p, smem, rng, **kw):
        self.smem = smem
        super().__init__(dut, clk, "smem_rd_req", "smem_rd_resp", smem_rd_req_fields(p),
                         smem_rd_resp_fields(), rng=rng, names={"addr": "row", "rdata": "data"},
                         order="in_order", check_tags=False, **kw)

    def make_responses(self, req):
        data = bytes(self.smem.cta(req["cta"]).read(req["row"] << 7, LINE))
        return [{"data": int.from_bytes(data, "little")}]


class TopBench:
    """The DUT's surroundings, the golden model and the end-of-test comparison."""

    def __init__(self, dut, p, rng, ready=0.8, l2_latency=(1, 30), l2_order="random",
                 l2_ready=0.9, gaps=0.2, desc_latency=(1, 60), smem_latency=(1, 6),
                 data_rng=None, l2_model=L2Memory, req_port="l2_req"):
        """``l2_model``: the class of the model on ``l2_req`` / ``l2_resp`` (``L2Memory``'s
        constructor arguments); ``req_port``: the stream whose requests are compared with the
        golden model's (``l2_req``; a wrapper may expose the TMA's own requests under another
        name, tb/tma/redchain.py)."""
        self.dut, self.p, self.rng = dut, p, rng
        self.data_rng = data_rng or rng        # memory contents; its own stream to replay them
        clk = self.clk = dut.clk
        self.gmem = SparseMemory()
        self.smem = SharedMemory(p.SMEM_AW)
        self.g_gmem = GlobalMemory(p.ADDR_W)
        self.g_smem = SharedMemory(p.SMEM_AW)
        self.cmd = StreamDriver(dut, "cmd", clk, fields=cmd_fields(p), rng=rng, gap_prob=gaps)
        self.desc = MemoryModel(dut, clk, "desc_rd_req", "desc_rd_resp", desc_rd_req_fields(p),
                                desc_rd_resp_fields(), rng=random.Random(rng.getrandbits(32)),
                                names={"addr": "addr", "rdata": "data"}, memory=self.gmem,
                                min_latency=desc_latency[0], max_latency=desc_latency[1],
                                check_tags=False)
        self.l2 = l2_model(dut, clk, p, random.Random(rng.getrandbits(32)), memory=self.gmem,
                           min_latency=l2_latency[0], max_latency=l2_latency[1], order=l2_order,
                           req_ready_prob=l2_ready)
        self.smem_rd = SmemReadModel(dut, clk, p, self.smem, random.Random(rng.getrandbits(32)),
                                     min_latency=smem_latency[0], max_latency=smem_latency[1])
        self.wr = StreamMonitor(dut, "smem_wr", clk, fields=smem_wr_fields(p), rng=rng,
                                ready_prob=ready, callback=self._beat)
        self.mbar = StreamMonitor(dut, "mbar", clk, fields=mbar_fields(p), rng=rng,
                                  ready_prob=ready)
        self.err = StreamMonitor(dut, "err", clk, fields=err_fields(p), rng=rng, ready_prob=ready)
        self.done = StreamMonitor(dut, "done", clk, fields=done_fields(p), rng=rng,
                                  ready_prob=ready)
        self.l2_mon = StreamMonitor(dut, req_port, clk, fields=l2_req_fields(p), passive=True)
        self.cmd_mon = StreamMonitor(dut, "cmd", clk, passive=True)
        self.checkers = [StreamProtocolChecker(dut, s, clk)
                         for s in STREAMS + ((req_port,) if req_port not in STREAMS else ())]
        self.max_outstanding = 0
        self.cases = []
        self.desc_lines = {}
        # the golden model runs each batch when it is issued, on the memories as they are then
        self.golden = TmaModel(p, gmem=self.g_gmem, smem=self.g_smem, response_order="random",
                               seed=rng.getrandbits(32))
        self.golden_cmds = []
        self.golden_desc_reads = 0
        cocotb.start_soon(self._watch())

    def _beat(self, t):
        f = t.fields
        self.smem.apply_beat(SmemBeat(row=f["row"], data=f["data"].to_bytes(LINE, "little"),
                                      be=f["be"], mask=f["mask"]))

    async def _watch(self):
        while True:
            await RisingEdge(self.clk)
            await ReadOnly()
            n = read_int(self.dut.outstanding)
            self.max_outstanding = max(self.max_outstanding, n or 0)

    # -- stimulus --------------------------------------------------------------------------
    def place_descriptors(self, cases):
        """Give every distinct (descriptor, address) of a cache user its own 128-byte line in the
        descriptor region (repeats hit the cache) and store it in both global memories."""
        lines = self.desc_lines
        out = []
        for c in cases:
            if c.cmd.op < 4 and is_cache_user(c.cmd) and precheck(c.cmd) == 0:
                addr = lines.setdefault((c.desc_word, c.cmd.desc_addr),
                                        DESC_BASE + LINE * len(lines))
                c = Case(TmaCmd(**{**vars(c.cmd), "desc_addr": addr}), c.desc_word, c.name)
                data = c.desc_word.to_bytes(DESC_BYTES, "little")
                self.gmem.write(addr, data)
                self.g_gmem.write(addr, data)
            out.append(c)
        return out

    def fill_sources(self, results):
        """Random bytes in every global line read and every smem row read, in both memories."""
        for r in results:
            for req in r.requests:
                if req.op != L2Op.PREFETCH:             # READ, and the lines WRITE/RED change
                    a = req.line << 7
                    if a < DESC_BASE or a >= DESC_BASE + (1 << 20):
                        data = self.data_rng.randbytes(LINE)
                        self.gmem.write(a, data)
                        self.g_gmem.write(a, data)
            for row, cta in r.smem_reads:
                data = self.data_rng.randbytes(LINE)
                self.smem.cta(cta).write(row << 7, data)
                self.g_smem.cta(cta).write(row << 7, data)

    async def run(self, cases, timeout=200_000, grouped=True, place=True, fill=True):
        """Place, group and issue ``cases``; wait for each group's ``done``/``err``. Ungrouped
        (benchmarks), the cases go back to back: the bench's in-order memory keeps a smem row
        written twice in command order, as the golden model does. ``place=False`` keeps the
        descriptor addresses (the caller stored them), ``fill=False`` the memory contents.

        A group may take ``timeout`` cycles plus ``CYCLES_PER_REQUEST`` per golden L2 request
        it makes: a random group can make over 100,000 requests, which a slow memory serves at
        well under one a cycle (seed 1374276708 of red_chain_stress timed out on a fixed budget)."""
        p = self.p
        if place:
            cases = self.place_descriptors(cases)
        groups, blank = group_commands(cases, p, self.g_gmem)
        if not grouped:
            groups = [cases]
        if fill:
            self.fill_sources(blank)
        self.cases += cases
        res = self.golden.run([c.cmd for c in cases])
        self.golden_cmds += res.commands
        self.golden_desc_reads += len(res.desc_reads)
        want_done = len(self.done.transfers)
        want_err = len(self.err.transfers)
        first = 0
        for g in groups:
            requests = sum(len(r.requests) for r in blank[first:first + len(g)])
            first += len(g)
            budget = timeout + CYCLES_PER_REQUEST * requests
            for c in g:
                self.cmd.append(c.cmd.pack(p))
                if c.code(p):
                    want_err += 1
                else:
                    want_done += 1
            for _ in range(budget):
                if len(self.done.transfers) >= want_done and len(self.err.transfers) >= want_err:
                    break
                await RisingEdge(self.clk)
            else:
                raise AssertionError(f"group not complete after {budget} cycles ({requests} "
                                     f"golden L2 requests): done "
                                     f"{len(self.done.transfers)}/{want_done}, err "
                                     f"{len(self.err.transfers)}/{want_err}; {self.ports()}")

    def _requests(self):
        """The observed and the golden L2 request keys, in order."""
        return ([self._key(t.fields) for t in self.l2_mon.transfers],
                [r.key() for c in self.golden_cmds for r in c.requests])

    @staticmethod
    def _request_mismatch(got, want):
        """The first request that differs from the golden list on its path (read or write),
        or None: the two paths are ordered independently (TMA-V6)."""
        for path in (False, True):
            g = [k for k in got if (k[0] in WRITE_PATH) == path]
            w = [k for k in want if (k[0] in WRITE_PATH) == path]
            for i, (a, b) in enumerate(zip(g, w)):
                if a != b:
                    return (f"{'write' if path else 'read'} request {i} (op, line, sectors, "
                            f"dtype, data, be): {a[:4]} != golden {b[:4]}"
                            + ("" if a[:4] != b[:4] else " (data or be differ)"))
        return None

    def ports(self):
        """The handshake signals of every stream, ``outstanding`` and ``idle`` (for stall reports)."""
        d = self.dut
        hs = " ".join(f"{s}={read_int(getattr(d, s + '__valid'))}{read_int(getattr(d, s + '__ready'))}"
                      for s in STREAMS)
        return (f"valid/ready {hs}; outstanding={read_int(d.outstanding)} idle={read_int(d.idle)} "
                f"l2_req transfers={len(self.l2_mon.transfers)}; first request mismatch: "
                f"{self._request_mismatch(*self._requests())}")

    # -- comparison ------------------------------------------------------------------------
    async def check(self):
        p = self.p
        for _ in range(40):
            await RisingEdge(self.clk)
        cmds = self.golden_cmds
        got_err = [(t.fields["id"], t.fields["code"]) for t in self.err.transfers]
        want_err = [(r.cmd.id, r.code) for r in cmds if r.code]
        assert got_err == want_err, f"err stream {got_err[:8]}... != golden {want_err[:8]}..."
        got_done = [t.fields["id"] for t in self.done.transfers]
        want_done = [r.cmd.id for r in cmds if not r.code]
        assert got_done == want_done, "done order differs from the golden model"
        # L2 requests per path, in order (TMA-V6), and their number (TMA-P3)
        got, want = self._requests()
        assert len(got) == len(want), f"{len(got)} l2 requests, golden {len(want)} (TMA-P3)"
        problem = self._request_mismatch(got, want)
        assert problem is None, problem
        # request shape (TMA-V7): a sector at least, write enables only inside the sectors
        for k, t in enumerate(self.l2_mon.transfers):
            f = t.fields
            lanes = sum(0xFFFFFFFF << (32 * s) for s in range(4) if f["sectors"] >> s & 1)
            assert f["sectors"] != 0, f"l2 request {k} has no sector"
            if L2Op(f["op"]) in WRITE_PATH:
                assert f["be"] & ~lanes == 0, f"l2 request {k}: be outside its sectors"
        # memory images (TMA-V5)
        assert self.smem.same_as(self.g_smem), "shared memory differs from the golden model"
        for line in sorted({r.line for c in cmds for r in c.requests if r.op in WRITE_PATH}):
            a = line << 7
            assert bytes(self.gmem.read(a, LINE)) == bytes(self.g_gmem.read(a, LINE)), \
                f"global line {line:#x} differs"
        # barrier bytes per (barrier, CTA)
        got_tx, want_tx = Counter(), Counter()
        for t in self.mbar.transfers:
            f = t.fields
            for c in range(N_CTA):
                if f["mask"] >> c & 1:
                    got_tx[(f["addr"], c)] += f["tx"]
        for c in cmds:
            for u in c.mbar:
                for k in range(N_CTA):
                    if u.mask >> k & 1:
                        want_tx[(u.addr, k)] += u.tx
        assert got_tx == want_tx, "barrier byte counts differ"
        # descriptor reads (§4.12)
        n_rd, n_want = self.desc.stats["requests"], self.golden_desc_reads
        users = sum(1 for c in self.cases if c.cmd.op < 4 and is_cache_user(c.cmd)
                    and precheck(c.cmd) == 0)
        if self._exact_reads():
            assert n_rd == n_want, f"{n_rd} desc reads, golden {n_want}"
        else:
            assert n_want <= n_rd <= users, f"{n_rd} desc reads outside [{n_want}, {users}]"
        assert read_int(self.dut.idle) == 1, "not idle at the end"
        assert read_int(self.dut.outstanding) == 0, "outstanding not 0 at the end"
        assert self.max_outstanding <= p.TRK_ENTRIES
        for chk in self.checkers:
            chk.check()
        for model in (self.desc, self.l2, self.smem_rd):
            model.check_idle()
        return dict(commands=len(self.cases), rejected=len(want_err), requests=len(got),
                    golden_requests=len(want),
                    beats=len(self.wr.transfers), desc_reads=n_rd,
                    max_outstanding=self.max_outstanding, cycles=sim_cycle())

    def records(self):
        """What the run produced, without its timing: the ``err`` stream, the ``done`` order,
        the L2 requests per path in order, the barrier bytes per (barrier, CTA), every CTA's
        shared memory and the global lines written (TMA-V10 compares two runs with these)."""
        got, _ = self._requests()
        tx = Counter()
        for t in self.mbar.transfers:
            for c in range(N_CTA):
                if t.fields["mask"] >> c & 1:
                    tx[(t.fields["addr"], c)] += t.fields["tx"]
        lines = sorted({k[1] for k in got if k[0] in WRITE_PATH})
        return dict(err=[(t.fields["id"], t.fields["code"]) for t in self.err.transfers],
                    done=[t.fields["id"] for t in self.done.transfers],
                    reads=[k for k in got if k[0] not in WRITE_PATH],
                    writes=[k for k in got if k[0] in WRITE_PATH],
                    mbar=dict(tx),
                    smem=[bytes(self.smem.cta(c).read(0, 1 << self.p.SMEM_AW))
                          for c in range(N_CTA)],
                    gmem={a: bytes(self.gmem.read(a << 7, LINE)) for a in lines})

    def _exact_reads(self):
        epochs, cur = [], set()
        for c in self.cases:
            if c.cmd.op == CmdOp.DESC_INVAL and precheck(c.cmd) == 0:
                epochs.append(cur)
                cur = set()
            elif c.cmd.op < 4 and is_cache_user(c.cmd) and precheck(c.cmd) == 0:
                cur.add(c.cmd.desc_addr >> 7)
        epochs.append(cur)
        return all(len(e) <= self.p.DC_ENTRIES for e in epochs)

    @staticmethod
    def _key(f):
        op = L2Op(f["op"])
        data = f["data"].to_bytes(LINE, "little") if op in WRITE_PATH else bytes(LINE)
        be = f["be"] if op in WRITE_PATH else 0
        dtype = f["dtype"] if op in WRITE_PATH and op != L2Op.WRITE else 0
        return (int(op), f["line"], f["sectors"], dtype, data, be)


async def start(dut):
    start_clock(dut)
    dut.cmd__valid.value = 0
    for s in ("desc_rd_resp", "l2_resp", "smem_rd_resp"):
        getattr(dut, f"{s}__valid").value = 0
    await reset(dut)


TENSOR_MIX = [CmdOp.TENSOR_LOAD] * 3 + [CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED,
                                         CmdOp.TENSOR_PREFETCH]


def random_cases(rng, p, n, error_rate=0.15):
    """``n`` random commands: tile and im2col loads, stores, reductions and prefetches, every
    block op (NOPs included), control ops, and commands mutated into (mostly) rejected ones."""
    out = []
    while len(out) < n:
        k = rng.random()
        if k < 0.33:
            c = random_tile(rng, p, max_rows=24, op=rng.choice(TENSOR_MIX))
        elif k < 0.45:
            c = random_im2col(rng, p, op=rng.choice(TENSOR_MIX), max_px=24, max_pieces=60)
        elif k < 0.85:
            c = random_block(rng, p, max_blocks=48)
        else:
            c = random_control(rng, p)
        if rng.random() < error_rate:
            c = mutate(c, rng, p)
        out.append(c)
    return out


@cocotb.test()
async def random_commands(dut):
    """Random commands against the golden model (TMA-V5, V6, V11, V13, V18, P3, E1, F36)."""
    p = top_params()
    rng = env.rng(1)
    await start(dut)
    bench = TopBench(dut, p, rng)
    n = int(os.environ.get("TMA_TOP_CMDS", "300"))
    await bench.run(random_cases(rng, p, n))
    figures = await bench.check()
    dut._log.info(f"figures {figures}")
    env.write_result(figures)


# TMA-V10: the same commands and memory contents, once without any stall, once stressed
V10_ZERO_STALL = dict(ready=1.0, l2_latency=(1, 1), l2_order="in_order", l2_ready=1.0, gaps=0.0,
                      desc_latency=(1, 1), smem_latency=(1, 1))
V10_STRESS = dict(ready=0.6, l2_latency=(1, 64), l2_order="random", l2_ready=0.7, gaps=0.4,
                  desc_latency=(1, 64), smem_latency=(1, 64))
_zero_stall_records = {}


async def _v10_run(dut, stalls, stream):
    p = top_params()
    await start(dut)
    bench = TopBench(dut, p, env.rng(stream), data_rng=env.rng(101), **stalls)
    n = int(os.environ.get("TMA_V10_CMDS", "150"))
    await bench.run(random_cases(env.rng(100), p, n))
    figures = await bench.check()           # each run equals the golden model ...
    return bench, figures


@cocotb.test()
async def zero_stall_reference(dut):
    """TMA-V10, first half: random part-1 commands with every latency 1, no gap, no
    back-pressure; checked against the golden model, its records kept for the stressed run."""
    bench, figures = await _v10_run(dut, V10_ZERO_STALL, 102)
    _zero_stall_records.update(bench.records(), cycles=figures["cycles"])


@cocotb.test()
async def stress_matches_zero_stall(dut):
    """TMA-V10, second half: the same commands and memory contents with random 1-64-cycle
    memory latency, out-of-order L2 responses, random ready on every output and random command
    gaps; equal to the golden model and to the zero-stall run, record by record."""
    assert _zero_stall_records, "run zero_stall_reference first (same simulator run)"
    start_cycle = sim_cycle()
    bench, figures = await _v10_run(dut, V10_STRESS, 103)
    got = bench.records()                   # ... and the two runs equal each other
    want = {k: v for k, v in _zero_stall_records.items() if k != "cycles"}
    for key in want:
        assert got[key] == want[key], f"stressed run differs from the zero-stall run in {key}"
    figures.update(zero_stall_cycles=_zero_stall_records["cycles"],
                   stress_cycles=figures["cycles"] - start_cycle)
    dut._log.info(f"figures {figures}")
    env.write_result(figures)


@cocotb.test()
async def directed_vectors(dut):
    """Every §5 vector of the request generator's directed lists (Fig 8D/8E/8H/8K tile loads,
    the im2col vectors of Fig 8B..8K also as stores, reductions and prefetches, OOB fill modes,
    multicast, the Fig 9 swizzle example, line splits, stores, prefetches, block copies, NOPs,
    extreme coordinates, BM-I2C) through the whole unit, compared with the golden model; GV24's
    16-byte units are checked at their printed smem addresses."""
    p = top_params()
    rng = env.rng(2)
    await start(dut)
    bench = TopBench(dut, p, rng)
    cases = [(name, case) for name, case, _ in directed_cases(p) + im2col_cases(p)]
    for name, case in cases:
        await bench.run([case])
        if name == "GV24":
            src = V.GV24_DESC["global_address"]
            cta = case.cmd.cta_id
            for unit, _h, _w, _k, _p, _slot, byte in V.GV24:
                got = bytes(bench.smem.cta(cta).read(case.cmd.smem_addr + byte, 16))
                assert got == bytes(bench.gmem.read(src + 16 * unit, 16)), f"GV24 unit {unit}"
    figures = await bench.check()
    figures["vectors"] = [name for name, _ in cases]
    env.write_result(figures)


def _popcount(x):
    return bin(x).count("1")


async def wait_idle(bench, timeout=100_000):
    for _ in range(timeout):
        await RisingEdge(bench.clk)
        await ReadOnly()
        if read_int(bench.dut.idle) == 1 and bench.cmd.count() == 0:
            return
    raise AssertionError("unit not idle")


async def measure(bench, cases, warm=None):
    """Run ``warm`` (descriptor warm-up) and wait for idle, then ``cases``; the TMA-P12 figures
    of the request and write windows (handshake cycles, inclusive) and the latency from the
    first ``cmd`` handshake to the first ``l2_req``."""
    if warm:
        await bench.run(warm)
        await wait_idle(bench)
    n0, w0, c0 = len(bench.l2_mon.transfers), len(bench.wr.transfers), len(bench.cmd_mon.transfers)
    await bench.run(cases, grouped=False)
    await wait_idle(bench)
    reqs, beats = bench.l2_mon.transfers[n0:], bench.wr.transfers[w0:]
    out = {}
    for name, ts, nbytes in (
            ("request", reqs, sum(32 * _popcount(t.fields["sectors"]) if t.fields["op"] == L2Op.READ
                                  else _popcount(t.fields["be"]) for t in reqs)),
            ("write", beats, sum(_popcount(t.fields["be"]) for t in beats))):
        window = ts[-1].cycle - ts[0].cycle + 1 if ts else 0
        out[name] = dict(count=len(ts), bytes=nbytes, window_cycles=window,
                         per_cycle=round(len(ts) / window, 4) if window else None,
                         bytes_per_cycle=round(nbytes / window, 2) if window else None,
                         line_fraction=round(nbytes / window / LINE, 4) if window else None)
    first_cmd = bench.cmd_mon.transfers[c0].cycle
    out["first_req_latency"] = reqs[0].cycle - first_cmd if reqs else None
    out["cmd_cycles"] = [t.cycle for t in bench.cmd_mon.transfers[c0:]]
    return out, reqs


def _tensor_case(desc, cmd, name, desc_addr=0x8000):
    from golden.tma.formats import TmaDesc
    from tb.tma.setup_tb import desc_word
    d = TmaDesc.make(**desc)
    c = TmaCmd(**{**dict(op=CmdOp.TENSOR_LOAD, mode=d.mode, rank=d.rank, desc_addr=desc_addr,
                         smem_addr=0, mbar_addr=0x20000), **cmd})
    return Case(c, desc_word(d), name)


def bm_swz(swizzle):
    """BM-SWZ (TMA-P5): U32 rank 3, sizes {32, 256, 4}, strides {128, 32768}, box {32, 256, 2}."""
    from golden.tma.formats import DType
    return _tensor_case(dict(global_address=0x100000, tensor_size=(32, 256, 4),
                             tensor_stride=(128, 32768), rank=3, dtype=DType.U32,
                             box_size=(32, 256, 2), swizzle=swizzle),
                        dict(coord=(0, 0, 0)), f"BM-SWZ {swizzle}")


@cocotb.test()
async def benchmarks(dut):
    """The TMA-P benchmarks under the spec's benchmark memory model: L2 always ready,
    every READ/WRITE answered exactly 20 cycles after its handshake in request order, every
    output ready, smem_rd latency 2, desc_rd latency 50, descriptors warmed up."""
    from golden.tma.formats import Swizzle
    from tb.tma.reqgen_tb import _fig8, bm_i2c, bm_tile
    p = top_params()
    rng = env.rng(3)
    await start(dut)
    bench = TopBench(dut, p, rng, ready=1.0, l2_latency=(20, 20), l2_order="in_order",
                     l2_ready=1.0, gaps=0.0, desc_latency=(50, 50), smem_latency=(2, 2))
    res = {}
    res["bm_tile"], _ = await measure(bench, [bm_tile()], warm=[bm_tile()])
    res["bm_tile8"], _ = await measure(bench, [bm_tile(128 * k, 0x10000 * (k & 1))
                                               for k in range(8)])
    res["bm_lat"], _ = await measure(bench, [_fig8("GV10")], warm=[_fig8("GV10")])
    swz = {}
    for mode in (Swizzle.SW128B, Swizzle.NONE):
        swz[mode], _ = await measure(bench, [bm_swz(mode)], warm=[bm_swz(mode)])
    res["bm_swz_128b"], res["bm_swz_none"] = swz[Swizzle.SW128B], swz[Swizzle.NONE]
    fill = bm_tile()
    fill = Case(TmaCmd(**{**vars(fill.cmd), "coord": (2048, 0)}), fill.desc_word, "BM-FILL")
    res["bm_fill"], _ = await measure(bench, [fill])
    cold = bm_tile()
    cold = Case(TmaCmd(**{**vars(cold.cmd), "desc_addr": 0x9000}), cold.desc_word, "cold")
    out, reqs = await measure(bench, [bm_tile(), cold])
    gaps = [b.cycle - a.cycle for a, b in zip(reqs, reqs[1:])]
    res["bm_dmiss"] = dict(out, gap_cycles=gaps[511] if len(gaps) > 511 else None)
    blk = Case(TmaCmd(op=CmdOp.BLOCK_G2S, gaddr=0x100000, num_blocks=4096, smem_addr=0,
                      mbar_addr=0x20000), 0, "BM-BLK")
    res["bm_blk"], _ = await measure(bench, [blk])
    res["bm_8d"], _ = await measure(bench, [_fig8("GV9")], warm=[_fig8("GV9")])
    # part 2: BM-ST (TMA-P9), the same with TENSOR_RED ADD (U32), and BM-TILE multicast to all
    # 16 CTAs (smem_wr beats times destinations per write-window cycle)
    for key, fields in (("bm_st", dict(op=CmdOp.TENSOR_STORE)),
                        ("bm_red", dict(op=CmdOp.TENSOR_RED, red_op=0)),
                        ("bm_mcast", dict(mcast=1, cta_mask=0xFFFF))):
        base = bm_tile()
        case = Case(TmaCmd(**{**vars(base.cmd), **fields}), base.desc_word, key)
        res[key], _ = await measure(bench, [case], warm=[bm_tile()])
    res["bm_i2c"], _ = await measure(bench, [bm_i2c()], warm=[bm_i2c()])
    w = res["bm_mcast"]["write"]
    w["dest_writes_per_cycle"] = round(16 * w["count"] / w["window_cycles"], 4)
    res["check"] = await bench.check()
    for key, value in res.items():
        dut._log.info("%s: %s", key, value)
    env.write_result(res)


@cocotb.test()
async def wait_all_order(dut):
    """TMA-V17: a slow BM-TILE load (L2 latency 200..300), a WAIT_ALL and a small load behind it,
    back to back. WAIT_ALL's ``done`` follows the load's, the load behind it issues requests
    before that ``done`` (WAIT_ALL holds nothing back but its own ``done``), and every ``done``
    stays in command order; the images equal the golden model's."""
    from tb.tma.reqgen_tb import _fig8, bm_tile
    p = top_params()
    rng = env.rng(5)
    await start(dut)
    bench = TopBench(dut, p, rng, ready=1.0, l2_latency=(200, 300), gaps=0.0)
    slow = bm_tile()
    wait = Case(TmaCmd(id=1, op=CmdOp.WAIT_ALL), 0, "WAIT_ALL")
    later = _fig8("GV10", smem_addr=0x30000, id=2)
    await bench.run([slow, wait, later], grouped=False)
    await wait_idle(bench)
    done = {t.fields["id"]: t.cycle for t in bench.done.transfers}
    assert [t.fields["id"] for t in bench.done.transfers] == [0, 1, 2]
    reqs = bench.l2_mon.transfers
    n_slow = 512
    assert len(reqs) > n_slow, "the load behind WAIT_ALL issued nothing"
    assert done[0] <= done[1] <= done[2]
    assert reqs[n_slow].cycle < done[1], (f"first request behind WAIT_ALL in cycle "
                                          f"{reqs[n_slow].cycle}, WAIT_ALL done in {done[1]}")
    figures = await bench.check()
    figures.update(wait_done=done[1] - done[0], later_first_request=reqs[n_slow].cycle - done[1])
    env.write_result(figures)


@cocotb.test()
async def multicast_masks(dut):
    """TMA-V14: one tile load (Fig 8 GV9, CTA 3) multicast with the mask 0xFFFF, a one-hot mask
    and a mask without CTA 3, into separate smem windows with separate barriers: every CTA of the
    mask holds the same rows and the same barrier bytes, every other CTA is untouched (its rows
    stay zero, its barrier sees nothing); images equal the golden model's."""
    from tb.tma.reqgen_tb import _fig8
    p = top_params()
    await start(dut)
    bench = TopBench(dut, p, env.rng(6))
    masks = (0xFFFF, 1 << 9, 0xA050)          # all, one-hot, CTAs 4, 6, 13, 15 (not 3)
    cases = [_fig8("GV9", smem_addr=k << 14, mbar_addr=(k << 14) + 0x3F00, cta_id=3, mcast=1,
                   cta_mask=mask, id=k) for k, mask in enumerate(masks)]
    await bench.run(cases)
    figures = await bench.check()
    tx = bench.records()["mbar"]
    for res, mask in zip(bench.golden_cmds, masks):
        rows = sorted({b.row for b in res.beats})
        assert rows, "the load wrote nothing"
        members = [c for c in range(N_CTA) if mask >> c & 1]
        image = [bytes(bench.smem.cta(members[0]).read(r << 7, LINE)) for r in rows]
        assert any(any(row) for row in image), "multicast rows hold only zeros"
        (mbar,) = {u.addr for u in res.mbar}
        for c in range(N_CTA):
            got = [bytes(bench.smem.cta(c).read(r << 7, LINE)) for r in rows]
            if c in members:
                assert got == image, f"mask {mask:#06x}: CTA {c} differs from CTA {members[0]}"
                assert tx.get((mbar, c), 0) == tx[(mbar, members[0])] > 0, f"CTA {c} tx"
            else:
                assert not any(any(row) for row in got), f"mask {mask:#06x}: CTA {c} written"
                assert (mbar, c) not in tx, f"mask {mask:#06x}: CTA {c} barrier updated"
    figures["masks"] = list(masks)
    env.write_result(figures)


@cocotb.test()
async def convolution(dut):
    """TMA-V3 on the RTL: the four GV73 convolutions (padding, dilation 2, stride 2, valid), one
    im2col TENSOR_LOAD per filter tap through the unit (random latencies and back-pressure),
    then the tap matrices read from the RTL's shared memory and multiplied with the weights
    (``golden.tma.conv``). The result (with the activations and weights) is written out; the
    pytest side compares it with a direct numpy convolution. Every load is also compared with
    the golden model."""
    import numpy as np
    from golden.tma import conv
    from golden.tma.encode import encode_desc
    p = top_params()
    rng = env.rng(6)
    nrng = np.random.default_rng(rng.getrandbits(32))
    await start(dut)
    bench = TopBench(dut, p, rng)
    sh = V.GV73_SHAPE
    lo, hi = sh["value_range"]
    out = {}
    for k, ((pad, dil, stride), ndhw) in enumerate(V.GV73):
        case = conv.ConvCase(sh["N"], sh["H"], sh["W"], sh["C"], sh["R"], sh["S"], sh["K"], pad,
                             dil, stride, sh["dtype"])
        x = nrng.integers(lo, hi, (case.N, case.H, case.W, case.C), dtype=np.int32)
        w = nrng.integers(lo, hi, (case.R, case.S, case.C, case.K), dtype=np.int32)
        gaddr = 0x10000 + 0x10000 * k
        desc = conv.conv_descriptor(case, gaddr)
        word = int.from_bytes(encode_desc(**desc), "little")
        data = np.ascontiguousarray(x.astype(conv.NUMPY_DTYPE[sh["dtype"]])).view(np.uint8)
        bench.gmem.write(gaddr, data.tobytes())
        bench.g_gmem.write(gaddr, data.ravel())
        taps = conv.tap_commands(case, DESC_BASE, first_id=16 * k)
        cases = [Case(cmd, word, f"GV73 {k} tap {rs}") for rs, cmd, _ in taps]
        await bench.run(cases, fill=False)
        await wait_idle(bench)
        mats = conv.tap_matrices(lambda a, n: bench.smem.cta(0).read(a, n), case, taps)
        got = conv.conv_from_taps(case, mats, w)
        assert got.shape[0] * got.shape[1] * got.shape[2] == ndhw
        out[f"{pad},{dil},{stride}"] = dict(x=x.tolist(), w=w.tolist(), out=got.tolist())
    figures = await bench.check()
    figures["convolutions"] = out
    env.write_result(figures)
