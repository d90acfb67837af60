"""cocotb testbench of ``PlaceEngine`` (hw/wdist/engine.py) against golden ``lb_place`` /
``mc_place`` (G-A2, G-A3).

Every result field (ok, a[], speed, level, rem) is compared bit-exactly; the per-iteration debug
outputs (probe, V, verdict) are compared with golden ``level_search``'s trace for every query,
FAIL ones included; every query's latency (input transfer to first output valid, in cycles) is
checked against WD-P4 and reported. Random valid gaps on ``i`` and random back-pressure on
``o``; protocol checkers on both streams.

- ``random_queries``: random f vectors (zeros, full, small, ties), random N including FAIL
  cases, random modes (WD_QUERIES queries).
- ``golden_vectors``: WD-GV3 (a, L, R, speed), WD-GV4 rows 1-2 (iteration traces), WD-GV5
  (32 SMs, when n_sm >= 32) and WD-GV6 (MC, when sm_per_tpc = 2); vectors shorter than n_sm
  are padded with SMs of f = 0, which take nothing and change no level.
"""

import os

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.wdist import vectors as gv
from golden.wdist.formats import FAIL, Mode
from golden.wdist.multicast import mc_keys, mc_place
from golden.wdist.waterfill import lb_place, level_search, water_volume
from hw.wdist.engine import engine_in_fields, engine_out_fields, latency_bound
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int, sim_cycle


class EngineParams:
    def __init__(self):
        p = env.params()
        self.S, self.W = p["n_sm"], p["free_w"]
        self.T, self.cnt_w = p["sm_per_tpc"], p["cnt_w"]
        self.tpcs = [list(range(i, i + self.T)) for i in range(0, self.S, self.T)]
        self.fmax = (1 << self.W) - 1

    def expect(self, f, n, mode):
        """The golden result as the output fields (all 0 but ok on FAIL)."""
        if mode == Mode.LB:
            r = lb_place(f, n, self.W)
        else:
            r = mc_place(f, n, self.tpcs, self.W)
        if r is FAIL:
            return dict(ok=0, a=[0] * self.S, speed=0, level=0, rem=0), None
        return dict(ok=1, a=list(r.a), speed=r.speed, level=r.level, rem=r.rem), r

    def expect_trace(self, f, n, mode):
        """golden level_search's (L tested, V(L), V > N) per iteration, for FAIL queries too,
        and the candidate count of the final partial level at the level found."""
        if mode == Mode.LB:
            width, keys = self.W, list(f)

            def vol(level):
                return water_volume(f, level)
        else:
            width, keys = self.W + 1, mc_keys(f, self.tpcs, self.W)

            def vol(level):
                return sum(k > level for k in keys)
        steps = []

        def pred(level):
            v = vol(level)
            steps.append((level, v, v > n))
            return v > n
        level = level_search(pred, width)
        if mode == Mode.LB:
            cand = sum(k >= level for k in keys) if level >= 1 else 0
        else:
            cand = sum(k == level for k in keys) if level >= 1 else 0
        return steps, cand


class EngineEnv:
    """Driver, monitor, protocol checkers, and a watcher of the debug trace and output valid."""

    def __init__(self, dut, p, gap_prob=0.3, ready_prob=0.7):
        self.dut, self.p = dut, p
        self.inf = engine_in_fields(p.S, p.W)
        self.outf = engine_out_fields(p.S, p.W, p.cnt_w)
        self.driver = StreamDriver(dut, "i", dut.clk, fields=self.inf, gap_prob=gap_prob)
        self.monitor = StreamMonitor(dut, "o", dut.clk, fields=self.outf, ready_prob=ready_prob)
        self.checkers = [StreamProtocolChecker(dut, "i", dut.clk),
                         StreamProtocolChecker(dut, "o", dut.clk)]
        self.traces = []                 # one list of (probe, V, verdict) per query
        self.rises = []                  # cycles in which o.valid rose
        self.cands = []                  # dbg_cand in each final cycle
        self.queries = []                # (f, n, mode, expected fields, golden result)
        self.latency = {int(Mode.LB): [], int(Mode.MC): []}
        self._task = cocotb.start_soon(self._watch())

    async def _watch(self):
        dut = self.dut
        prev_step, prev_valid = 0, 0
        while True:
            await RisingEdge(dut.clk)
            await ReadOnly()
            step = read_int(dut.dbg_step)
            if prev_step and not step:                     # the final cycle
                self.cands.append(read_int(dut.dbg_cand))
            if step:
                if not prev_step:
                    self.traces.append([])
                self.traces[-1].append((read_int(dut.dbg_probe), read_int(dut.dbg_vol),
                                        bool(read_int(dut.dbg_more))))
            valid = read_int(dut.o__valid)
            if valid and not prev_valid:
                self.rises.append(sim_cycle())
            prev_step, prev_valid = step, valid

    def send(self, f, n, mode, want=None):
        """Queue one query; ``want`` overrides the golden result (n = 0, which golden rejects)."""
        want, golden = (want, None) if want is not None else self.p.expect(f, n, mode)
        self.queries.append((list(f), n, int(mode), want, golden))
        self.driver.append(dict(f=list(f), n=n, mode=int(mode)))

    async def check(self):
        """Wait for every answer, then compare results, traces and latencies."""
        count = len(self.queries)
        await self.driver.idle(200 * count + 1000)
        await self.monitor.wait_for(count, 200 * count + 1000)
        for _ in range(20):
            await RisingEdge(self.dut.clk)
        assert self.monitor.count == count, f"{self.monitor.count} results for {count} queries"
        errors = []
        for k, (f, n, mode, want, golden) in enumerate(self.queries):
            got = self.monitor.transfers[k].fields
            tag = f"query {k}: f={f} N={n} mode={Mode(mode).name}"
            if got != want:
                errors.append(f"{tag}: got {got}, golden {want}")
            trace, cand = self.p.expect_trace(f, n, mode)
            if golden is not None:
                assert trace == list(golden.trace)
                assert mode == Mode.MC or cand == golden.candidates
            if self.traces[k] != trace:
                errors.append(f"{tag}: trace {self.traces[k]}, golden {trace}")
            if self.cands[k] != cand:
                errors.append(f"{tag}: {self.cands[k]} candidates, golden {cand}")
            lat = self.rises[k] - self.driver.transfers[k].cycle
            bound = latency_bound(self.p.S, self.p.W, mode)
            self.latency[mode].append(lat)
            if lat > bound:
                errors.append(f"{tag}: latency {lat} > WD-P4 bound {bound}")
        assert not errors, (f"{len(errors)} mismatches (seed {env.seed()}):\n"
                            + "\n".join(errors[:20]))
        for checker in self.checkers:
            checker.check()
        assert len(self.traces) == count, f"{len(self.traces)} searches for {count} queries"

    def report(self, name):
        for mode, lats in self.latency.items():
            if lats:
                self.dut._log.info(
                    "%s: %s latency min %d max %d cycles over %d queries (WD-P4 bound %d), "
                    "n_sm=%d free_w=%d", name, Mode(mode).name, min(lats), max(lats), len(lats),
                    latency_bound(self.p.S, self.p.W, mode), self.p.S, self.p.W)


async def _start(dut):
    start_clock(dut)
    dut.i__valid.value = 0
    dut.o__ready.value = 0
    await reset(dut)


def _random_f(p, rng):
    style = rng.random()
    if style < 0.1:
        return [0] * p.S
    if style < 0.2:
        value = rng.randrange(p.fmax + 1)
        return [value] * p.S                                     # all tied
    pz = rng.choice((0.0, 0.2, 0.5, 0.8))
    out = []
    for _ in range(p.S):
        r = rng.random()
        if r < pz:
            out.append(0)
        elif r < pz + 0.15:
            out.append(p.fmax)
        elif r < pz + 0.45:
            out.append(rng.randint(1, min(3, p.fmax)))
        else:
            out.append(rng.randint(0, p.fmax))
    return out


def _random_n(p, rng, f, mode, n_max):
    cap = sum(f) if mode == Mode.LB else sum(x > 0 for x in f)
    r = rng.random()
    if r < 0.15 or cap == 0:
        n = cap + rng.randint(1, 3)                              # FAIL
    elif r < 0.25:
        n = cap                                                  # exact fill
    elif r < 0.45:
        n = rng.randint(1, min(cap, 4))
    else:
        n = rng.randint(1, cap)
    return max(1, min(n, n_max))


@cocotb.test()
async def random_queries(dut):
    p = EngineParams()
    rng = env.rng(1)
    count = int(os.environ.get("WD_QUERIES", "300"))
    await _start(dut)
    e = EngineEnv(dut, p, gap_prob=rng.choice((0.0, 0.3, 0.7)),
                  ready_prob=rng.choice((0.3, 0.7, 1.0)))
    n_max = (1 << e.inf.widths["n"]) - 1
    fails = 0
    for _ in range(count):
        f = _random_f(p, rng)
        mode = Mode(rng.randrange(2))
        n = _random_n(p, rng, f, mode, n_max)
        e.send(f, n, mode)
        fails += e.queries[-1][3]["ok"] == 0
        if rng.random() < 0.05:                       # change the back-pressure now and then
            e.monitor.set_ready_prob(rng.choice((0.2, 0.6, 1.0)))
    await e.check()
    assert 0 < fails < count, f"{fails} FAIL results of {count}: stimulus lacks variety"
    dut._log.info("random_queries: %d queries (%d FAIL) match golden, seed %d", count, fails,
                  env.seed())
    e.report("random_queries")


def _pad(p, f):
    return list(f) + [0] * (p.S - len(f))


@cocotb.test()
async def golden_vectors(dut):
    p = EngineParams()
    await _start(dut)
    e = EngineEnv(dut, p, gap_prob=0.3, ready_prob=0.5)
    rows = []                                          # (name, index into queries, check fn)

    def fits(f):
        return len(f) <= p.S and max(f) <= p.fmax

    for k, (f, n, a, level, rem, speed) in enumerate(gv.GV3):
        if fits(f):
            e.send(_pad(p, f), n, Mode.LB)
            want = (dict(ok=0, a=[0] * p.S, speed=0, level=0, rem=0) if a is None else
                    dict(ok=1, a=_pad(p, a), speed=speed, level=level, rem=rem))
            rows.append((f"GV3 row {k + 1}", len(e.queries) - 1, want, None))
    if p.W == 6:                                       # GV4 traces are for W = 6
        for k, (f, n, trace, level) in enumerate(gv.GV4):
            if fits(f):
                e.send(_pad(p, f), n, Mode.LB)
                rows.append((f"GV4 row {k + 1}", len(e.queries) - 1, None, (trace, level)))
    g5 = gv.GV5
    if fits(g5["f"]) and p.W == 6:
        e.send(_pad(p, g5["f"]), g5["N"], Mode.LB)
        rows.append(("GV5", len(e.queries) - 1,
                     dict(ok=1, a=_pad(p, g5["a"]), speed=g5["speed"], level=g5["L"],
                          rem=g5["R"]), (g5["trace"], g5["L"])))
    if p.T == 2:
        for k, (f, n, _class_a, a, speed) in enumerate(gv.GV6):
            if fits(f):
                e.send(_pad(p, f), n, Mode.MC)
                want = (dict(ok=0, a=[0] * p.S, speed=0, level=0, rem=0) if a is None else
                        ("a_speed", _pad(p, a), speed))        # GV6 gives no T or R
                rows.append((f"GV6 row {k + 1}", len(e.queries) - 1, want, None))
    fail = dict(ok=0, a=[0] * p.S, speed=0, level=0, rem=0)
    for mode in Mode:                                  # n = 0 is no legal query: FAIL
        e.send([p.fmax] * p.S, 0, mode, want=fail)
        rows.append((f"N=0 {mode.name}", len(e.queries) - 1, fail, None))
    await e.check()                                   # everything also equals golden
    done = []
    for name, k, want, trace in rows:
        got = e.monitor.transfers[k].fields
        if isinstance(want, tuple):
            assert (got["ok"], got["a"], got["speed"]) == (1, want[1], want[2]), \
                f"{name}: got {got}, vector a={want[1]} speed={want[2]}"
        elif want is not None:
            assert got == want, f"{name}: got {got}, vector {want}"
        if trace is not None:
            steps, level = trace
            assert e.traces[k] == [(a, b, bool(c)) for a, b, c in steps], \
                f"{name}: trace {e.traces[k]}, vector {steps}"
            assert got["level"] == level, f"{name}: level {got['level']}, vector {level}"
        done.append(name)
    assert done, "no golden vector fits this build"
    dut._log.info("golden vectors: %s", ", ".join(done))
    e.report("golden_vectors")
