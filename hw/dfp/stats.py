"""Statistics counters of the DFP16 units (spec dfp DFP-F46).

:func:`saturating_count` is the building block for every dfp statistics port: it makes a
register a counter that adds a per-cycle increment, sticks at its maximum, and clears on a
strobe that wins over the same cycle's increment (:class:`SaturatingCounter` wraps it as a
component). :class:`StatsCounters` drives the ``stats`` ports of the quantizer and the
down-converter; :class:`DotStats` is the ``stats`` port of ``DfpDotUnit``.
"""

from amaranth import Module, Mux
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.dfp.formats import DOT_STATS, result_fields, stats_fields
from hw.common.layout import struct_layout
from hw.common.params import check_int
from hw.dfp.dot_ctl import gt, lt, wire

__all__ = ["saturating_count", "SaturatingCounter", "StatsCounters", "DotStats"]


def saturating_count(m, value, inc, clear, name):
    """Make register ``value`` a saturating counter: ``value ← 0`` when ``clear`` (the increment
    of that cycle is dropped), else ``value ← min(value + inc, 2**len(value) − 1)``.

    The sum is one bit wider than ``value``; its carry selects the all-ones maximum. Every dfp
    statistics port uses this (``inc`` may be a 1-bit event or a multi-bit amount)."""
    total = wire(m, f"{name}_sum", value + inc)
    with m.If(clear):
        m.d.sync += value.eq(0)
    with m.Else():
        m.d.sync += value.eq(Mux(total[-1], (1 << len(value)) - 1, total[:len(value)]))


class SaturatingCounter(wiring.Component):
    """A stand-alone :func:`saturating_count` register.

    Parameters
    ----------
    width : int
        Counter width, 1..64.
    inc_width : int
        Width of the increment, 1..width.

    Members
    -------
    clear : In(1)
        Synchronous clear; wins over ``inc``.
    inc : In(inc_width)
        Amount added this cycle (0 for no event).
    value : Out(width)
        The counter, a register.
    """

    def __init__(self, width=32, inc_width=1):
        self.width = check_int(self, "width", width, 1, 64)
        self.inc_width = check_int(self, "inc_width", inc_width, 1, width)
        super().__init__({"clear": In(1), "inc": In(inc_width), "value": Out(width)})

    def elaborate(self, platform):
        m = Module()
        saturating_count(m, self.value, self.inc, self.clear, "count")
        return m


class StatsCounters:
    """Glue for a ``stats`` port of saturating counters plus a sticky ``cfg_err``.

    ``add(name, delta, when)`` counts ``delta`` when ``when`` is high; ``set_cfg_err(when)``
    sets the sticky flag. ``stats_clr`` zeroes everything and wins over same-cycle events
    (DFP-F46). The counters are the ``stats`` port's own fields (registers).
    """

    def __init__(self, m, stats, stats_clr):
        self.m = m
        self.stats = stats
        self.stats_clr = stats_clr

    def add(self, name, delta, when):
        saturating_count(self.m, getattr(self.stats, name), Mux(when, delta, 0),
                         self.stats_clr, name)

    def set_cfg_err(self, when):
        with self.m.If(self.stats_clr):
            self.m.d.sync += self.stats.cfg_err.eq(0)
        with self.m.Elif(when):
            self.m.d.sync += self.stats.cfg_err.eq(1)


class DotStats(wiring.Component):
    """The ``stats`` port of ``DfpDotUnit`` (DFP-F46, DFP-I5).

    Result counters (chains, ovf_chains, sat_events, adaptive_shifts, chunk_closes, err_chains)
    and the r_max / h_min extremes are updated in the cycle a result transfers on ``o_res``
    (``res_fire``); ``beats`` counts ``i_op`` transfers; ``cfg_err`` is set when a CHUNK chain
    with chunk_len = 0 is sampled (DFP-E6). All counters are 32-bit saturating. ``stats_clr``
    zeroes everything (r_max 0, h_min ACC_W − 1, cfg_err 0) and wins over events of the same
    cycle.

    Parameters
    ----------
    acc_w : int
        Accumulator width (the reset value of h_min is acc_w − 1).

    Members
    -------
    stats_clr : In(1)
    res_fire : In(1)
        A result transfers on ``o_res`` this cycle.
    res : In(DfpResult layout)
        That result's payload.
    beat_fire : In(1)
        An operand beat transfers on ``i_op`` this cycle.
    cfg_err_set : In(1)
        A chain start with CHUNK and chunk_len = 0 is accepted this cycle.
    counters : Out(layout of the DfpStats fields up to h_min)
        Registers; the top appends r_cnt (from the manager) and ``cfg_err``.
    cfg_err : Out(1)
        Sticky DFP-E6 flag.
    """

    COUNTERS = tuple(n for n in DOT_STATS if n not in ("r_cnt", "cfg_err"))

    def __init__(self, acc_w=32):
        self.acc_w = check_int(self, "acc_w", acc_w, 32, 48)
        super().__init__({
            "stats_clr": In(1),
            "res_fire": In(1),
            "res": In(struct_layout(result_fields(acc_w))),
            "beat_fire": In(1),
            "cfg_err_set": In(1),
            "counters": Out(struct_layout(stats_fields(self.COUNTERS)),
                            init={"h_min": acc_w - 1}),
            "cfg_err": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        res, fire, clr, st = self.res, self.res_fire, self.stats_clr, self.counters
        incs = {
            "chains": fire,
            "beats": self.beat_fire,
            "ovf_chains": fire & res.ovf,
            "sat_events": Mux(fire, res.sat_cnt, 0),
            "adaptive_shifts": Mux(fire, res.shifts, 0),
            "chunk_closes": Mux(fire, res.chunks, 0),
            "err_chains": fire & (res.op_err | res.meta_err | res.proto_err),
        }
        for name, inc in incs.items():
            saturating_count(m, getattr(st, name), inc, clr, name)

        r_max, h_min, cfg_err = st.r_max, st.h_min, self.cfg_err
        with m.If(clr):
            m.d.sync += [r_max.eq(0), h_min.eq(self.acc_w - 1), cfg_err.eq(0)]
        with m.Else():
            with m.If(fire & gt(res.r, r_max)):
                m.d.sync += r_max.eq(res.r)
            with m.If(fire & lt(res.headroom, h_min)):
                m.d.sync += h_min.eq(res.headroom)
            with m.If(self.cfg_err_set):
                m.d.sync += cfg_err.eq(1)
        return m
