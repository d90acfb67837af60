"""``DfpDotUnit``: LANES-wide DFP16 dot/MAC unit with the dynamic precision manager (spec dfp)."""

from amaranth import Cat, Module, Mux, Signal, signed
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.dfp.formats import (CONFIG_FIELDS, DOT_STATS, LANES_LEGAL, op_beat_fields,
                                result_fields, stats_fields)
from hw.common.layout import struct_layout
from hw.common.params import check_int, reject
from hw.dfp.dot_ctl import wire
from hw.dfp.dot_front import DotFront
from hw.dfp.dot_mac import DotMac
from hw.dfp.dot_post import QUEUE_DEPTH, DotPost
from hw.dfp.manager import DynPrecisionManager
from hw.dfp.stats import DotStats

__all__ = ["DfpDotUnit"]

FIG20_BUBBLES = 4


class DfpDotUnit(wiring.Component):
    """DFP16 dot product unit: LANES MACs per cycle into an ACC_W accumulator, managed in one of
    four modes (NONE, PRESHIFT, CHUNK, ADAPTIVE), one result per chain (spec dfp §3.4-§3.5).

    A fully pipelined datapath without stalls; the unit only throttles ``i_op.ready``:

    ==========  ===========================================================================
    stage       work
    ==========  ===========================================================================
    A           ``i_op`` transfer: chain framing (DFP-E3/E4), cfg/metadata sampling,
                PRESHIFT ex/sa/sb (``hw.dfp.dot_front``)
    B           −32768 clamp, operand pre-shift, metadata magnitude check, CHUNK terms
    C / M1      multipliers (DSP) ‖ L_b, rc, chunk framing, PRESHIFT beat count
    M2          second multiplier register (``mul_stages`` = 2)
    T1..Tn      exact adder tree, a register every ``tree_reg_every`` levels and at the output
                ‖ ADAPTIVE r_start (``hw.dfp.manager``)
    SH          product shifter: tsh(t, r), tsh(t, r + 1) (ADAPTIVE), tsh(t, rc) (CHUNK)
    ACC         accumulate, leading-bit detector + halving + r (ADAPTIVE), WRAP/SAT
    E1          event: chunk close / chain end, headroom, Fig 20 update; ``DfpToFp32``
    E2          CHUNK chunk count and headroom; into the head register or the result queue
                (``hw.dfp.dot_post``)
    E3          head register: consumer
    OUT         ``Fp32Accumulator`` for CHUNK chunk sums; ``o_res`` register
    ==========  ===========================================================================

    With the defaults a result is valid 12 cycles after its chain's last beat is accepted
    (up to 16 for a multi-chunk CHUNK chain with ``fadd_cyc`` = 3).

    Flow control (DFP-I9). Results and chunk closes go through a head register and a result
    queue of :data:`~hw.dfp.dot_post.QUEUE_DEPTH` (32) entries to the single ``o_res``
    register, so at most 34 results are buffered. ``i_op.ready`` is a register: it is high
    while the queue holds at most 32 − (L + 4) entries, where L is the number of cycles from an
    ``i_op`` transfer to the head register (11 with the defaults, ``queue_latency``); every
    cycle of the pipeline adds at most one entry, so the queue never overflows. When ``o_res``
    stalls, ``i_op.ready`` falls before more than 34 chains have been accepted (32 with the
    defaults, measured). It also falls for :data:`FIG20_BUBBLES` (4) cycles after the last
    beat of a chain with ``eop`` that closes a Fig 20 pass with a contributing chain, so that
    the next chain starts with the updated r_cnt (DFP-P3), and while the FP32 accumulator of
    CHUNK mode lags behind short chunks (DFP-P2).

    Parameters
    ----------
    lanes : int
        Multipliers per beat: 1, 2, 4, 8 or 16 (DFP-C1).
    acc_w : int
        Accumulator width, 32..48 (DFP-C2).
    mul_stages : int
        Registers after the multipliers, 1..2 (DFP-C7).
    tree_reg_every : int
        Adder-tree levels between registers, 1..5 (DFP-C7).
    fadd_cyc : int
        Cycles per FP32 accumulation in CHUNK mode, 1..4 (DFP-C7).

    Members
    -------
    i_op : In(stream.Signature(DfpOpBeat))
        Operand beats (DFP-I2). ``ready`` is a register.
    o_res : Out(stream.Signature(DfpResult))
        One result per chain, in chain order (DFP-I3). ``valid`` and ``payload`` are registers.
    cfg : In(DfpConfig)
        Sampled on each chain's first beat (DFP-I4).
    clr : In(1)
        Strobe: r_cnt ← 0 and the open pass statistics are dropped (DFP-F39). A strobe in the
        cycle of a beat transfer acts before that beat.
    stats_clr : In(1)
        Strobe: zero the statistics; wins over events of the same cycle (DFP-F46).
    stats : Out(DfpStats)
        DFP-F46 counters. Result counters count ``o_res`` transfers, ``beats`` counts ``i_op``
        transfers, cfg_err is set when the offending chain's first beat is accepted.
    dbg_acc : Out(signed(acc_w))
        Debug (DFP-V2): the accumulator register. When ``dbg_acc_valid`` is high it holds
        the accumulator after the beat processed in the previous cycle, in stream order,
        equal to the golden model's ``acc_trace`` entry of that beat (after a CHUNK chunk
        close it still holds the closed partial; the next beat restarts from 0).
    dbg_acc_valid : Out(1)
    dbg_acc_mode : Out(2)
        Mode of the chain of that beat (so a testbench can check |acc| < 2**(ACC_W−2) after
        every ADAPTIVE beat).
    """

    def __init__(self, lanes=16, acc_w=32, mul_stages=2, tree_reg_every=2, fadd_cyc=3):
        if isinstance(lanes, bool) or lanes not in LANES_LEGAL:
            reject(self, f"lanes must be one of {', '.join(map(str, LANES_LEGAL))}, got {lanes!r}")
        self.lanes = lanes
        self.acc_w = check_int(self, "acc_w", acc_w, 32, 48)
        self.mul_stages = check_int(self, "mul_stages", mul_stages, 1, 2)
        self.tree_reg_every = check_int(self, "tree_reg_every", tree_reg_every, 1, 5)
        self.fadd_cyc = check_int(self, "fadd_cyc", fadd_cyc, 1, 4)
        probe = DotMac(lanes, mul_stages, tree_reg_every)
        probe._MustUse__silence = True
        self.mac_latency = probe.latency
        # cycles from an i_op transfer to the E3 stage (where the queue is written)
        self.queue_latency = 2 + probe.latency + 5
        self.ready_threshold = QUEUE_DEPTH - (self.queue_latency + 4)
        super().__init__({
            "i_op": In(stream.Signature(struct_layout(op_beat_fields(lanes)))),
            "o_res": Out(stream.Signature(struct_layout(result_fields(acc_w)))),
            "cfg": In(struct_layout(CONFIG_FIELDS)),
            "clr": In(1),
            "stats_clr": In(1),
            "stats": Out(struct_layout(stats_fields(DOT_STATS))),
            "dbg_acc": Out(signed(acc_w)),
            "dbg_acc_valid": Out(1),
            "dbg_acc_mode": Out(2),
        })

    def elaborate(self, platform):
        m = Module()
        front = DotFront(self.lanes, self.acc_w)
        mac = DotMac(self.lanes, self.mul_stages, self.tree_reg_every)
        # the front's ctl word is aligned with the first product register; t comes
        # mac_latency - 1 cycles later
        mgr = DynPrecisionManager(self.lanes, self.acc_w, self.mac_latency - 1)
        post = DotPost(self.acc_w, self.fadd_cyc, self.ready_threshold)
        stats = DotStats(self.acc_w)
        m.submodules.front = front
        m.submodules.mac = mac
        m.submodules.manager = mgr
        m.submodules.post = post
        m.submodules.counters = stats

        ready = self.i_op.ready                   # a register
        take = wire(m, "take", self.i_op.valid & ready)
        bubbles = Signal(range(FIG20_BUBBLES + 1))
        bubbles_next = wire(m, "bubbles_next", Mux(take & front.pass_close, FIG20_BUBBLES,
                                                   Mux(bubbles.any(), bubbles - 1, 0)))
        m.d.sync += [bubbles.eq(bubbles_next), ready.eq(~bubbles_next.any() & post.room)]

        m.d.comb += [
            front.beat.eq(self.i_op.payload), front.take.eq(take), front.cfg.eq(self.cfg),
            front.clr.eq(self.clr),
            mac.op_a.eq(front.op_a), mac.op_b.eq(front.op_b),
            mgr.t.eq(mac.t), mgr.ctl.eq(front.ctl),
            post.ev.eq(mgr.ev), post.i_valid.eq(mgr.ev_valid), post.acc.eq(mgr.ev_acc),
            post.es.eq(mgr.ev_es),
            self.dbg_acc.eq(mgr.dbg_acc), self.dbg_acc_valid.eq(mgr.dbg_acc_valid),
            self.dbg_acc_mode.eq(mgr.dbg_acc_mode),
        ]
        wiring.connect(m, wiring.flipped(self.o_res), post.o_res)
        m.d.comb += [
            stats.stats_clr.eq(self.stats_clr),
            stats.res_fire.eq(self.o_res.valid & self.o_res.ready),
            stats.res.eq(self.o_res.payload),
            stats.beat_fire.eq(take),
            stats.cfg_err_set.eq(front.cfg_err_set),
            self.stats.eq(Cat(stats.counters, mgr.r_cnt, stats.cfg_err)),
        ]
        return m
