"""cocotb testbench of ``MockGpc`` (hw/wdist/mock_gpc.py) against golden ``Shadow`` (one GPC).

Every response (valid, cause, speed, a[], credit) is compared bit-exactly with
``Shadow.query``, and after every operation the ``fs`` / ``f`` / ``c`` outputs with golden FS,
FS − LS and CS − LC. Every query's latency (``q`` transfer to first ``resp`` valid) is checked
against WD-P4 (and is 1 cycle for a CREDIT answer) and reported. Random back-pressure on
``resp``, random gaps between operations, protocol checkers on ``q`` and ``resp``.

- ``random_sequences``: WD_STEPS random snapshot / query / commit (cga 0 or 1) / cancel /
  reset / plain-share commit operations, small credits (credit exhaustion: CREDIT), N beyond
  the free slots (SLOTS), and Pass-I style runs of queries whose reservations accumulate until
  a RESET or a snapshot. A COMMIT or CANCEL only ever follows a valid answer, once.
- ``golden_vectors``: WD-GV3 (LB) and WD-GV6 (MC, SM_PER_TPC = 2) through the shadow (snapshot,
  query, check, cancel), the WD-GV4 iteration traces on the debug outputs, and a zero credit.
"""

import os

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.fields import Fields
from golden.wdist import vectors as gv
from golden.wdist.formats import Cause, Mode
from golden.wdist.params import WdistParams
from golden.wdist.shadow import Shadow
from hw.wdist.engine import latency_bound
from hw.wdist.mock_gpc import Op, query_fields, resp_fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamMonitor, read_int, sim_cycle


class GpcEnv:
    def __init__(self, dut, ready_prob=0.6):
        p = env.params()
        self.dut = dut
        self.S, self.W, self.T, self.cnt_w = p["n_sm"], p["free_w"], p["sm_per_tpc"], p["cnt_w"]
        self.fmax = (1 << self.W) - 1
        self.gp = WdistParams(N_GPC=1, SM_PER_GPC=(self.S,), SM_PER_TPC=self.T,
                              CTA_SLOTS=self.fmax)
        assert self.gp.FREE_W == self.W
        self.shadow = Shadow(self.gp)
        self.qf = query_fields(self.S, self.W)
        self.rf = resp_fields(self.S, self.W, self.cnt_w)
        self.vec = Fields(("v", self.W, "unsigned", self.S))
        self.avec = Fields(("v", self.cnt_w, "unsigned", self.S))
        self.monitor = StreamMonitor(dut, "resp", dut.clk, fields=self.rf, ready_prob=ready_prob)
        self.checkers = [StreamProtocolChecker(dut, "q", dut.clk),
                         StreamProtocolChecker(dut, "resp", dut.clk)]
        self.rng = env.rng(7)
        self.last_a = None
        self.causes = {c: 0 for c in Cause}
        self.latency = {}                  # (mode, cause) -> [cycles]
        self.ops = 0
        self.traces = []
        self._task = cocotb.start_soon(self._watch())

    async def _watch(self):
        dut = self.dut
        prev_step = 0
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            step = read_int(dut.dbg_step)
            if step:
                if not prev_step:
                    self.traces.append([])
                self.traces[-1].append((read_int(dut.dbg_probe), read_int(dut.dbg_vol),
                                        bool(read_int(dut.dbg_more))))
            prev_step = step

    # ---- operations (each starts just after a rising edge) -------------------------------
    async def gap(self, cycles):
        for _ in range(cycles):
            await RisingEdge(self.dut.clk)

    async def snap(self, free, credit):
        dut = self.dut
        await RisingEdge(dut.clk)
        dut.snap.value = 1
        dut.snap_free.value = self.vec.pack(v=list(free))
        dut.snap_credit.value = credit
        await RisingEdge(dut.clk)
        dut.snap.value = 0
        dut.snap_free.value = self.rng.getrandbits(len(dut.snap_free))
        self.shadow.snapshot(list(free), [credit], 0)
        self.last_a = None
        await self.check_state("snapshot")

    async def op(self, kind, cga=0, a=None):
        dut = self.dut
        await RisingEdge(dut.clk)
        dut.op.value = 1
        dut.op_kind.value = int(kind)
        dut.op_cga.value = cga
        dut.op_a.value = self.avec.pack(v=list(a)) if a is not None else \
            self.rng.getrandbits(len(dut.op_a))
        await RisingEdge(dut.clk)
        dut.op.value = 0
        dut.op_kind.value = self.rng.getrandbits(2)
        sh = self.shadow
        if kind == Op.COMMIT:
            sh.commit(0, self.last_a, cga=bool(cga))
            self.last_a = None
        elif kind == Op.CANCEL:
            sh.cancel(0, self.last_a)
            self.last_a = None
        elif kind == Op.RESET:
            sh.reset()
            self.last_a = None
        else:
            sh.reserve(0, a, count=0)
            sh.commit(0, a, cga=False)
        self.ops += 1
        await self.check_state(f"op {Op(kind).name}")

    async def query(self, n, mode):
        """One query; returns the response fields (already checked against golden)."""
        dut = self.dut
        await RisingEdge(dut.clk)
        dut.q__valid.value = 1
        dut.q__payload.value = self.qf.pack(n=n, mode=int(mode))
        while True:
            await ReadOnly()
            if read_int(dut.q__ready) == 1:
                start = sim_cycle()
                break
            await RisingEdge(dut.clk)
        first = True
        while True:                               # the first cycle with resp.valid
            await RisingEdge(dut.clk)
            if first:
                dut.q__valid.value = 0
                dut.q__payload.value = self.rng.getrandbits(len(dut.q__payload))
                first = False
            await ReadOnly()
            if read_int(dut.resp__valid) == 1:
                lat = sim_cycle() - start
                break
        transfer = await self.monitor.recv()
        got = transfer.fields
        want = self.shadow.query(0, n, mode)
        want_f = dict(valid=want.valid, cause=int(want.cause), speed=want.speed,
                      a=list(want.a) if want.a else [0] * self.S, credit=want.credit)
        f_before = self.shadow.f(0)
        assert got == want_f, (f"query N={n} {Mode(mode).name} on f={f_before}: got {got}, "
                               f"golden {want_f} (seed {env.seed()})")
        cause = Cause(want.cause)
        self.causes[cause] += 1
        bound = 1 if cause == Cause.CREDIT else latency_bound(self.S, self.W, mode)
        assert lat <= bound, f"query N={n} {Mode(mode).name} {cause.name}: latency {lat} > {bound}"
        self.latency.setdefault((Mode(mode).name, cause.name), []).append(lat)
        self.last_a = list(want.a) if want.valid else None
        await RisingEdge(dut.clk)                 # the reservation lands at this edge
        await self.check_state("query")
        return got

    async def check_state(self, what):
        await ReadOnly()
        dut, sh = self.dut, self.shadow
        got = (self.vec.unpack(int(dut.fs.value))["v"], self.vec.unpack(int(dut.f.value))["v"],
               int(dut.c.value), int(dut.busy.value))
        want = (sh.fs(0), sh.f(0), sh.c(0), 0)
        assert got == want, f"after {what}: (fs, f, c, busy) {got}, golden {want}"

    def report(self, name):
        for (mode, cause), lats in sorted(self.latency.items()):
            bound = 1 if cause == "CREDIT" else latency_bound(self.S, self.W, Mode[mode])
            self.dut._log.info("%s: %s %s latency min %d max %d over %d queries (bound %d), "
                               "n_sm=%d", name, mode, cause, min(lats), max(lats), len(lats),
                               bound, self.S)

    def finish(self):
        assert self.monitor.count == sum(self.causes.values())
        for checker in self.checkers:
            checker.check()


async def _start(dut):
    start_clock(dut)
    for name in ("q__valid", "snap", "op", "resp__ready"):
        getattr(dut, name).value = 0
    await reset(dut)


def _random_free(e, rng):
    style = rng.random()
    if style < 0.1:
        return [0] * e.S
    if style < 0.2:
        return [rng.randint(0, e.fmax)] * e.S
    pz = rng.choice((0.0, 0.2, 0.5))
    return [0 if rng.random() < pz else rng.choice((e.fmax, rng.randint(1, min(3, e.fmax)),
                                                    rng.randint(0, e.fmax)))
            for _ in range(e.S)]


@cocotb.test()
async def random_sequences(dut):
    await _start(dut)
    rng = env.rng(3)
    e = GpcEnv(dut, ready_prob=rng.choice((0.3, 0.7, 1.0)))
    steps = int(os.environ.get("WD_STEPS", "300"))
    passes = 0
    await e.snap(_random_free(e, rng), rng.choice((0, 1, 2, 3, e.S)))
    for _ in range(steps):
        r = rng.random()
        if r < 0.55:
            f = e.shadow.f(0)
            mode = Mode(rng.randrange(2))
            cap = sum(f) if mode == Mode.LB else sum(x > 0 for x in f)
            n = rng.randint(1, cap + 2) if rng.random() < 0.8 or cap == 0 else cap
            n = min(n, (1 << e.qf.widths["n"]) - 1)
            got = await e.query(n, mode)
            if got["valid"]:
                choice = rng.random()
                await e.gap(rng.choice((0, 0, 1, 3)))
                if choice < 0.35:
                    await e.op(Op.COMMIT, cga=int(rng.random() < 0.75))
                elif choice < 0.6:
                    await e.op(Op.CANCEL)
                else:
                    passes += 1                    # Pass I: the reservation stays outstanding
        elif r < 0.65:
            await e.op(Op.RESET)
        elif r < 0.75:
            await e.snap(_random_free(e, rng), rng.choice((0, 1, 2, 3, e.S, 255)))
        elif r < 0.82:
            f = e.shadow.f(0)
            await e.op(Op.COMMIT_A, a=[rng.randint(0, x) for x in f])
        else:
            await e.gap(rng.randint(1, 4))
        if rng.random() < 0.05:
            e.monitor.set_ready_prob(rng.choice((0.2, 0.6, 1.0)))
    await e.gap(5)
    e.finish()
    assert all(e.causes.values()), f"causes seen {e.causes}: stimulus lacks variety"
    dut._log.info("random_sequences: %d queries (%s), %d ops, %d reservations left "
                  "outstanding (Pass I style); seed %d", e.monitor.count,
                  ", ".join(f"{c.name} {k}" for c, k in e.causes.items()), e.ops, passes,
                  env.seed())
    e.report("random_sequences")


@cocotb.test()
async def golden_vectors(dut):
    await _start(dut)
    e = GpcEnv(dut, ready_prob=0.5)
    done = []

    def pad(v):
        return list(v) + [0] * (e.S - len(v))

    def fits(f):
        return len(f) <= e.S and max(f) <= e.fmax

    for k, (f, n, a, level, rem, speed) in enumerate(gv.GV3):
        if fits(f):
            await e.snap(pad(f), 8)
            got = await e.query(n, Mode.LB)
            want = (dict(valid=0, cause=int(Cause.SLOTS), speed=0, a=[0] * e.S, credit=8)
                    if a is None else
                    dict(valid=1, cause=int(Cause.OK), speed=speed, a=pad(a), credit=8))
            assert got == want, f"GV3 row {k + 1}: got {got}, vector {want}"
            if a is not None:
                await e.op(Op.CANCEL)
            done.append(f"GV3 row {k + 1}")
    if e.W == 6:
        for k, (f, n, trace, level) in enumerate(gv.GV4):
            if fits(f):
                await e.snap(pad(f), 8)
                before = len(e.traces)
                await e.query(n, Mode.LB)
                assert len(e.traces) == before + 1
                assert e.traces[-1] == [(x, y, bool(z)) for x, y, z in trace], \
                    f"GV4 row {k + 1}: trace {e.traces[-1]}, vector {trace}"
                await e.op(Op.RESET)
                done.append(f"GV4 row {k + 1}")
    if e.T == 2:
        for k, (f, n, _class_a, a, speed) in enumerate(gv.GV6):
            if fits(f):
                await e.snap(pad(f), 8)
                got = await e.query(n, Mode.MC)
                if a is None:
                    assert (got["valid"], got["cause"]) == (0, Cause.SLOTS), f"GV6 row {k + 1}"
                else:
                    assert (got["valid"], got["a"], got["speed"]) == (1, pad(a), speed), \
                        f"GV6 row {k + 1}: got {got}, vector a={a} speed={speed}"
                    await e.op(Op.COMMIT, cga=1)
                done.append(f"GV6 row {k + 1}")
    await e.snap([1] * e.S, 0)                          # WD-F11: credit before slots
    got = await e.query(1, Mode.LB)
    assert (got["valid"], got["cause"]) == (0, Cause.CREDIT)
    done.append("credit 0")
    e.finish()
    dut._log.info("golden vectors: %s", ", ".join(done))
    e.report("golden_vectors")
