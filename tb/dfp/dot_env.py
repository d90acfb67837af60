"""cocotb harness of ``DfpDotUnit``: stream driver with cfg/clr/stats_clr, golden model in
lockstep with the accepted beats, scoreboard, protocol checkers, debug-port trace, DFP-V2
shadow sums and an event-level model of the statistics port.

Ordering convention (the unit's, documented on ``DfpDotUnit``): a ``clr`` or ``stats_clr``
strobe in cycle c acts before an ``i_op`` transfer in the same cycle. The driver therefore
calls the golden model's ``clr()`` when it raises the strobe, before any later beat.
"""

from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from golden.dfp.dot import DotUnit
from golden.dfp.formats import (ADAPTIVE, CHUNK, DOT_STATS, NONE, op_beat_fields, result_fields,
                                stats_fields)
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamMonitor, read_int, sim_cycle
from tb.dfp.dot_stim import junk_cfg

__all__ = ["DotHarness", "signed_value"]

COUNTER_MAX = (1 << 32) - 1


def signed_value(raw, width):
    return raw - (1 << width) if raw >> (width - 1) else raw


def _clamp(x):
    return -32767 if x == -32768 else x


class DotHarness:
    """Everything a ``DfpDotUnit`` testcase needs.

    Parameters
    ----------
    dut : the cocotb top.
    gap_prob : float
        Probability of an idle cycle before a beat (``i_op.valid`` low).
    ready_prob : float
        Long-run fraction of cycles with ``o_res.ready`` high.
    burst : float
        Correlation length of gaps and back-pressure (``RandomGate``).
    """

    def __init__(self, dut, gap_prob=0.0, ready_prob=1.0, burst=1.0, salt=0):
        self.dut = dut
        p = env.params()
        self.lanes, self.acc_w = p["lanes"], p["acc_w"]
        self.params = p
        self.beat_fields = op_beat_fields(self.lanes)
        self.res_fields = result_fields(self.acc_w)
        self.stats_fields = stats_fields(DOT_STATS)
        self.rng = env.rng(100 + salt)
        self.gate = RandomGate(1.0 - gap_prob, env.rng(200 + salt), burst)
        self.ready_prob, self.burst, self.salt = ready_prob, burst, salt
        self.model = DotUnit(self.lanes, self.acc_w)
        self.sb = Scoreboard("o_res")
        self.items = deque()
        self.current = None
        self.idle_left = 0
        self.accepted = []          # (cycle, beat dict)
        self.trace_exp = []         # golden accumulator after every accepted beat
        self.trace_dut = []         # (cycle, dbg_acc, mode) for every processed beat
        self.expected = []          # golden results in order
        self.observed = []          # Transfer records of o_res
        self.shadow = []            # per finished chain: (mode, exact prefix left the range)
        self._shadow_cur = None
        self.stat_events = []       # (cycle, kind, data) for the event-level stats model
        self.v2_errors = []
        self.valid_since = None     # first cycle i_op.valid was high in the current run
        self.stats_clr_hook = None  # callable -> True to strobe stats_clr in the coming cycle

    # -- set-up ---------------------------------------------------------------------------
    async def start(self, cfg=None):
        dut = self.dut
        dut.i_op__valid.value = 0
        dut.i_op__payload.value = 0
        dut.o_res__ready.value = 0
        dut.clr.value = 0
        dut.stats_clr.value = 0
        dut.cfg.value = 0
        start_clock(dut)
        await reset(dut)
        clk = dut.clk
        self.check_i = StreamProtocolChecker(dut, "i_op", clk)
        self.check_o = StreamProtocolChecker(dut, "o_res", clk)
        self.monitor = StreamMonitor(dut, "o_res", clk, fields=self.res_fields,
                                     rng=env.rng(300 + self.salt), ready_prob=self.ready_prob,
                                     burst=self.burst, callback=self._on_result)
        self._tasks = [cocotb.start_soon(self._drive()), cocotb.start_soon(self._watch())]

    def set_ready(self, prob, burst=1.0):
        self.monitor.set_ready_prob(prob, burst)

    def set_gap(self, gap_prob, burst=1.0):
        self.gate = RandomGate(1.0 - gap_prob, env.rng(201 + self.salt), burst)

    # -- stimulus ---------------------------------------------------------------------------
    def queue(self, items):
        self.items.extend(items)

    async def drain(self, timeout=200_000):
        """Wait until every queued item went in and every expected result came out."""
        clk = self.dut.clk
        for _ in range(timeout):
            if not self.items and self.current is None and self.idle_left == 0 \
                    and len(self.observed) >= len(self.expected):
                break
            await RisingEdge(clk)
        else:
            raise AssertionError(f"drain timeout: {len(self.items)} items queued, "
                                 f"{len(self.observed)} of {len(self.expected)} results")
        for _ in range(20):                  # anything extra would show up here
            await RisingEdge(clk)

    def _feed_model(self, bt, cfg):
        """The golden model and the V2 shadow for one accepted beat."""
        m = self.model
        if bt["first"] and m.open is not None:
            self._end_shadow()
        if m.open is None or bt["first"]:
            rbase = max(cfg.r0, m.r0_min)
            r_start = {ADAPTIVE: max(rbase, m.r_cnt) if cfg.fig20_en else rbase}.get(cfg.mode)
            self._shadow_cur = {"mode": cfg.mode, "prefix": 0, "out": False, "r_start": r_start,
                                "es_ab": bt["es_a"] + bt["es_b"]}
            if cfg.mode == CHUNK and cfg.chunk_len == 0:
                self.stat_events.append((sim_cycle(), "cfg_err", None))
        elif self._shadow_cur["mode"] == CHUNK and bt["blk"]:
            self._shadow_cur["es_ab"] = bt["es_a"] + bt["es_b"]        # DFP-F48 reload
        t = sum(_clamp(x) * _clamp(y) for x, y in zip(bt["a"], bt["b"]))
        sh = self._shadow_cur
        sh["prefix"] += t
        if not -(1 << (self.acc_w - 1)) <= sh["prefix"] <= (1 << (self.acc_w - 1)) - 1:
            sh["out"] = True
        results = m.beat(bt, cfg)
        self.trace_exp.append(m.acc_trace[-1])
        if bt["last"]:
            self._end_shadow()
        for res in results:
            self.expected.append(res)
            self.sb.expect(res, sim_cycle())
        return results

    def _end_shadow(self):
        self.shadow.append(self._shadow_cur)
        self._shadow_cur = None

    async def _drive(self):
        dut, clk = self.dut, self.dut.clk
        rng = self.rng
        while True:
            await RisingEdge(clk)
            dut.clr.value = 0
            dut.stats_clr.value = 0
            if self.current is None and self.idle_left == 0:
                while self.items and self.items[0][0] in ("clr", "stats_clr", "idle"):
                    item = self.items.popleft()
                    if item[0] == "clr":
                        dut.clr.value = 1
                        self.model.clr()
                    elif item[0] == "stats_clr":
                        dut.stats_clr.value = 1
                        self.stat_events.append((sim_cycle(), "stats_clr", None))
                    else:
                        self.idle_left = item[1]
                        break
            if self.stats_clr_hook is not None and self.stats_clr_hook():
                dut.stats_clr.value = 1
                self.stat_events.append((sim_cycle(), "stats_clr", None))
            if self.idle_left:
                self.idle_left -= 1
            elif self.current is None and self.items and self.gate.next():
                self.current = self.items.popleft()
            if self.current is not None:
                _, bt, cfg = self.current
                dut.i_op__payload.value = self.beat_fields.pack(**bt)
                dut.cfg.value = cfg.pack()
                dut.i_op__valid.value = 1
                if self.valid_since is None:
                    self.valid_since = sim_cycle() + 1
            else:
                dut.i_op__valid.value = 0
                dut.i_op__payload.value = rng.getrandbits(self.beat_fields.width)
                dut.cfg.value = junk_cfg(rng).pack()
            await ReadOnly()
            if self.current is not None and read_int(dut.i_op__ready) == 1:
                _, bt, cfg = self.current
                self.accepted.append((sim_cycle(), bt))
                self.stat_events.append((sim_cycle(), "beat", None))
                self._feed_model(bt, cfg)
                self.current = None

    async def _watch(self):
        dut, clk = self.dut, self.dut.clk
        w = self.acc_w
        while True:
            await RisingEdge(clk)
            await ReadOnly()
            if read_int(dut.rst) == 0 and read_int(dut.dbg_acc_valid) == 1:
                acc = signed_value(int(dut.dbg_acc.value), w)
                mode = int(dut.dbg_acc_mode.value)
                self.trace_dut.append((sim_cycle(), acc, mode))
                if mode == ADAPTIVE and not abs(acc) < 1 << (w - 2):
                    self.v2_errors.append(f"cycle {sim_cycle()}: ADAPTIVE |acc| = {abs(acc)} "
                                          f">= 2**{w - 2}")

    def _on_result(self, transfer):
        self.observed.append(transfer)
        self.sb.observe(transfer.fields, transfer.cycle)
        self.stat_events.append((transfer.cycle, "res", transfer.fields))

    # -- checks -----------------------------------------------------------------------------
    def check(self, trace=True, v2=True):
        """Scoreboard, protocol, debug trace, DFP-V2 (call after :meth:`drain`)."""
        self.sb.check_done()
        self.check_i.check()
        self.check_o.check()
        if trace:
            got = [acc for _, acc, _ in self.trace_dut]
            assert len(got) == len(self.trace_exp), \
                f"debug port saw {len(got)} beats, {len(self.trace_exp)} were accepted"
            bad = [(k, e, g) for k, (e, g) in enumerate(zip(self.trace_exp, got)) if e != g]
            assert not bad, f"accumulator trace differs from the golden acc_trace at " \
                            f"(beat, golden, dut): {bad[:10]}"
        if v2:
            self.check_v2()

    def check_v2(self):
        """DFP-V2: NONE ovf iff an exact prefix left the range; managed modes with meta_err = 0
        never overflow; ADAPTIVE |acc| < 2**(ACC_W-2) after every beat. DFP-V6: es_out =
        es_a + es_b + r (final segment), and in ADAPTIVE r - shifts = r_start <= r."""
        errors = list(self.v2_errors)
        results = [t.fields for t in self.observed]
        assert len(results) == len(self.shadow), (len(results), len(self.shadow))
        for k, (res, sh) in enumerate(zip(results, self.shadow)):
            if res["es_out"] != sh["es_ab"] + res["r"]:
                errors.append(f"chain {k}: es_out {res['es_out']} != es_a + es_b + r = "
                              f"{sh['es_ab']} + {res['r']}")
            if sh["mode"] == ADAPTIVE and res["r"] - res["shifts"] != sh["r_start"]:
                errors.append(f"chain {k}: ADAPTIVE r {res['r']} - shifts {res['shifts']} "
                              f"!= r_start {sh['r_start']}")
            if sh["mode"] == NONE and res["ovf"] != int(sh["out"]):
                errors.append(f"chain {k} NONE: ovf {res['ovf']} but exact prefix out of "
                              f"range = {sh['out']}")
            if sh["mode"] != NONE and res["meta_err"] == 0 and res["ovf"]:
                errors.append(f"chain {k} mode {sh['mode']}: ovf with meta_err 0")
        assert not errors, "DFP-V2 violations:\n  " + "\n  ".join(errors[:20])

    def read_stats(self):
        return self.stats_fields.unpack(int(self.dut.stats.value))

    def expected_stats_events(self):
        """Statistics from the observed events with the unit's timing: result counters at the
        ``o_res`` transfer, beats at the ``i_op`` transfer, cfg_err at the chain's first beat,
        a ``stats_clr`` wins over the events of its own cycle."""
        s = {n: 0 for n in DOT_STATS}
        s["h_min"] = self.acc_w - 1
        clr_cycles = {c for c, kind, _ in self.stat_events if kind == "stats_clr"}
        for cycle, kind, res in sorted(self.stat_events, key=lambda e: e[0]):
            if cycle in clr_cycles:
                s = {n: 0 for n in DOT_STATS}
                s["h_min"] = self.acc_w - 1
                continue
            if kind == "beat":
                s["beats"] = min(COUNTER_MAX, s["beats"] + 1)
            elif kind == "cfg_err":
                s["cfg_err"] = 1
            elif kind == "res":
                for name, inc in (("chains", 1), ("ovf_chains", res["ovf"]),
                                  ("sat_events", res["sat_cnt"]),
                                  ("adaptive_shifts", res["shifts"]),
                                  ("chunk_closes", res["chunks"]),
                                  ("err_chains",
                                   res["op_err"] | res["meta_err"] | res["proto_err"])):
                    s[name] = min(COUNTER_MAX, s[name] + inc)
                s["r_max"] = max(s["r_max"], res["r"])
                s["h_min"] = min(s["h_min"], res["headroom"])
        s["r_cnt"] = self.model.r_cnt
        return s

    def check_stats_golden(self):
        """``stats`` port against the golden model's ``stats`` (no stats_clr in the run)."""
        got = self.read_stats()
        want = dict(self.model.stats)
        assert got == want, f"stats: got {got}, golden {want}"
        return got

    def stop(self):
        for task in self._tasks:
            task.cancel()
        self.monitor.stop()
        self.check_i.stop()
        self.check_o.stop()

