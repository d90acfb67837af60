"""Result path of ``DfpDotUnit``: DFP→FP32 conversion 1954, CHUNK FP32 accumulation 1956, the
result queue and the ``o_res`` register (spec dfp §4.8, DFP-F33, F34, F40, F41, I9).

* **E1**: the event register of the manager feeds ``DfpToFp32`` (acc, es) → part.
* **E2**: per-chain CHUNK bookkeeping in event order (chunks, minimum chunk headroom, first
  close of the chain) forms the entry. It goes into the head register (E3) when that is free
  and the queue is empty, else into the result queue of :data:`QUEUE_DEPTH` entries (a
  memory), which refills the head register in order.
* **Consumer** (on the head register): takes entries in order. A chunk close issues ``fadd32(facc, part)`` into
  ``Fp32Accumulator`` (S = +0 on the chain's first close, ``first``; the next add waits
  ``fadd_cyc`` cycles). A chain end fills the single ``o_res`` register: NONE/PRESHIFT/ADAPTIVE
  with fp32 = part; a CHUNK chain with one chunk with fadd32(+0, part) (−0 becomes +0, no add
  needed); any other CHUNK chain with the accumulator sum once its last add has landed.

``o_res.valid`` and ``o_res.payload`` come from registers (the FP32 sum of a waiting CHUNK
result is the accumulator's ``sum`` register, latched in the cycle it becomes valid), so there
is no combinational path from ``o_res.ready`` to ``o_res.valid``.
"""

from amaranth import Cat, Module, Mux, Signal, signed
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.dfp.formats import CHUNK, result_fields
from hw.common.layout import struct_layout
from hw.dfp.dot_ctl import entry_layout, eq_const, event_layout, gt, lt, wire
from hw.dfp.fp32 import DfpToFp32, Fp32Accumulator

__all__ = ["DotPost", "QUEUE_DEPTH"]

QUEUE_DEPTH = 32


class DotPost(wiring.Component):
    """Conversion, CHUNK accumulation, result queue and output register.

    Parameters
    ----------
    acc_w : int
    fadd_cyc : int
        Cycles per FP32 accumulation (1..4).
    threshold : int
        ``room`` is high while the queue holds at most this many entries.

    Members
    -------
    ev : In(event_layout(acc_w))
    i_valid : In(1)
    acc : In(signed(acc_w))
    es : In(signed(12))
        Event register E1 of the manager: the event, its valid bit, accumulator and exponent.
        The last three feed ``DfpToFp32`` directly and carry its port names (a port forwarded
        to a submodule takes the submodule's port name in the Verilog).
    o_res : Out(stream.Signature(DfpResult layout))
    room : Out(1)
        The result queue holds at most ``threshold`` entries (the input credit of the top).
    """

    def __init__(self, acc_w=32, fadd_cyc=3, threshold=QUEUE_DEPTH // 2):
        self.acc_w, self.fadd_cyc, self.threshold = acc_w, fadd_cyc, threshold
        self.conv_latency = 1
        super().__init__({
            "ev": In(event_layout(acc_w)),
            "i_valid": In(1),
            "acc": In(signed(acc_w)),
            "es": In(signed(12)),
            "o_res": Out(stream.Signature(struct_layout(result_fields(acc_w)))),
            "room": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        w, f = self.acc_w, self.fadd_cyc

        # ---------------- E1 -> E2: conversion ---------------------------------------------
        conv = DfpToFp32(acc_w=w, stages=self.conv_latency)
        m.submodules.to_fp32 = conv
        m.d.comb += [conv.i_valid.eq(self.i_valid), conv.acc.eq(self.acc), conv.es.eq(self.es)]
        e2_raw = Cat(self.ev.as_value(), self.acc, self.es)
        for k in range(conv.latency):
            d = Signal(len(e2_raw), name=f"e2_d{k}")
            m.d.sync += d.eq(e2_raw)
            e2_raw = d
        evw = len(self.ev.as_value())
        e2 = event_layout(w)(e2_raw[:evw])
        e2_acc = e2_raw[evw:evw + w]
        e2_es = e2_raw[evw + w:]
        e2_valid = conv.o_valid

        # ---------------- E2: per-chain CHUNK bookkeeping ----------------------------------
        fresh = Signal(init=1)                 # no chunk closed yet in the current chain
        chunks = Signal(16)
        hmin = Signal(6, init=w - 1)
        close = e2_valid & e2.close
        ch_base = Mux(fresh, 0, chunks)
        ch_new = (ch_base + (close & ~ch_base.all()))[:16]
        hm_base = wire(m, "hm_base", Mux(fresh, w - 1, hmin))
        hm_new = wire(m, "hm_new", Mux(close & lt(e2.headroom, hm_base), e2.headroom, hm_base))
        with m.If(e2_valid & e2.end):
            m.d.sync += [fresh.eq(1), chunks.eq(0), hmin.eq(w - 1)]
        with m.Elif(close):
            m.d.sync += [fresh.eq(0), chunks.eq(ch_new), hmin.eq(hm_new)]

        is_chunk_e2 = eq_const(e2.mode, CHUNK)
        el = entry_layout(w)
        entry = Cat(*[{
            "close": e2.close, "end": e2.end, "first_close": close & fresh, "part": conv.fp32,
            "acc": e2_acc, "es_out": e2_es, "r": e2.r, "shifts": e2.shifts, "ovf": e2.ovf,
            "sat_cnt": e2.sat_cnt,
            "headroom": Mux(is_chunk_e2, hm_new, e2.headroom),
            "chunks": Mux(is_chunk_e2, ch_new, 0), "mode": e2.mode,
            "op_err": e2.op_err, "meta_err": e2.meta_err, "proto_err": e2.proto_err,
        }[name] for name in el.members])

        # ---------------- E3: head register + result queue ---------------------------------
        # The consumer works on the head register (oldest entry). It is loaded when empty or
        # consumed: from the queue memory if it holds entries, else straight from E2 (no
        # extra latency); an E2 entry that cannot go to the head goes to the memory.
        depth = QUEUE_DEPTH
        head_raw = Signal(len(entry), name="head")
        head_valid = Signal(name="head_valid")
        head = el(head_raw)
        mem = Memory(shape=len(entry), depth=depth, init=[])
        m.submodules.queue = mem
        wp = mem.write_port()
        rp = mem.read_port(domain="comb")
        level = Signal(range(depth + 1))
        from_queue = level.any()
        m.d.comb += self.room.eq(~gt(level, self.threshold))

        # ---------------- consumer, FP32 accumulator, o_res register ------------------------
        facc = Fp32Accumulator(fadd_cyc=f)
        m.submodules.facc = facc
        cd = Signal(range(max(f, 2)))          # cycles until facc.sum shows the last add
        sum_ready = Signal(init=1)             # cd == 0, registered: o_res.valid and the issue
                                               # logic start at a flip-flop (DFP-P9 timing)
        rl = struct_layout(result_fields(w))
        pend = Signal(len(self.o_res.payload.as_value()))   # the waiting result, whole word
        pend_valid = Signal()
        pend_wait = Signal()                   # CHUNK result waiting for facc.sum
        fp_off = rl["fp32"].offset
        o_valid = self.o_res.valid
        m.d.comb += [
            o_valid.eq(pend_valid & (~pend_wait | sum_ready)),
            self.o_res.payload.eq(Mux(pend_wait,
                                      Cat(pend[:fp_off], facc.sum, pend[fp_off + 32:]), pend)),
        ]
        pend_free = ~pend_valid | (o_valid & self.o_res.ready)
        head_chunk = eq_const(head.mode, CHUNK)
        single = head.close & head.first_close & head.end        # one-chunk CHUNK chain
        needs_add = head.close & ~single
        # cd = 0 implies fadd_cyc cycles since the last add, so facc.busy is low; it is still
        # ANDed in (fadd_cyc = 1 has no busy output at all)
        add_ok = sum_ready & ~facc.busy if f > 1 else sum_ready
        fire = wire(m, "fire", head_valid & (~needs_add | add_ok) & (~head.end | pend_free))
        load = wire(m, "load", ~head_valid | fire)
        take_q = load & from_queue
        direct = load & ~from_queue & e2_valid          # E2 entry straight into the head
        put_q = e2_valid & ~direct
        with m.If(load):
            m.d.sync += [head_raw.eq(Mux(from_queue, rp.data, entry)),
                         head_valid.eq(from_queue | e2_valid)]
        m.d.comb += [
            wp.data.eq(Mux(e2_valid, entry, 0)),          # one operator: no alias wire
            wp.en.eq(put_q),
            facc.add_valid.eq(fire & needs_add),
            facc.x.eq(head.part),
            # from head register bits only: the issue logic (fire) stays off the adder's
            # operand path, the critical path of the unit on ECP5 when it drove ``clear``
            facc.first.eq(needs_add & head.first_close),
        ]
        with m.If(put_q):
            m.d.sync += wp.addr.eq(wp.addr + 1)
        with m.If(take_q):
            m.d.sync += rp.addr.eq(rp.addr + 1)
        # level +/- 1 come from the register alone; the handshakes only select (DFP-P9: the
        # adder after the consumer control was the unit's critical path on ECP5)
        with m.If(put_q & ~take_q):
            m.d.sync += level.eq(level + 1)
        with m.Elif(take_q & ~put_q):
            m.d.sync += level.eq(level - 1)
        with m.If(fire & needs_add):
            m.d.sync += [cd.eq(f - 1), sum_ready.eq(f == 1)]
        with m.Elif(~sum_ready):
            m.d.sync += [cd.eq(cd - 1), sum_ready.eq(eq_const(cd, 1))]

        canon = Mux(eq_const(head.part, 0x80000000), 0, head.part)   # fadd32(+0, part)
        with m.If(pend_valid & pend_wait & sum_ready):
            m.d.sync += [pend[fp_off:fp_off + 32].eq(facc.sum), pend_wait.eq(0)]
        with m.If(o_valid & self.o_res.ready):
            m.d.sync += pend_valid.eq(0)
        with m.If(fire & head.end):
            word = Cat(*[Mux(head_chunk, canon, head.part) if name == "fp32"
                         else getattr(head, name) for name in rl.members])
            m.d.sync += [pend_valid.eq(1), pend_wait.eq(head_chunk & ~single), pend.eq(word)]
        return m
