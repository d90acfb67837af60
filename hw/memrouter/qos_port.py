"""One memory port's class queues, QoS arbiter and ``mreq`` output (memrouter spec §2.3
``qos_arb``, §4.10, MR-F39..F42, MR-I3, MR-I7, MR-I8)."""

from amaranth import Module, Mux, Signal, signed
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.memrouter.formats import FAR, MIG, MREQ, NEAR
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, lt_const, nonzero
from hw.common.params import check_int
from hw.common.memfifo import MemFifo
from hw.common.regfifo import RegFifo
from hw.memrouter.beat_queues import BeatQueues
from hw.memrouter.qos import TOK_W, QosArbiter

__all__ = ["QosPort", "mreq_layout"]

CLASSES = ((NEAR, "near"), (FAR, "far"), (MIG, "mig"))


def mreq_layout():
    """The ``MReq`` payload (§3.2) at the default widths."""
    return struct_layout(MREQ)


class QosPort(wiring.Component):
    """NEAR, FAR and MIG class queues in front of one memory port, arbitrated by
    :class:`~hw.memrouter.qos.QosArbiter`.

    Each class input is an ``MReq`` beat stream (a read is 1 beat, a write ``len+1`` beats with
    the same header, ``last`` on the final beat) into its own beat queue. A request becomes the
    arbiter's head of its class only once its ``last`` beat is in the queue (from the cycle
    after that beat's transfer): the golden arbiter sees whole requests, and a write selected
    before its data arrived would stall the port in the middle of a request. Beside each beat
    queue a queue of the complete requests' ``len`` gives the head and its nb = len + 1; it is
    popped when the request is selected, so the class's next request is a head from the next
    cycle, while the selected request's beats still leave the beat queue.

    A request selected in cycle t (``sel_valid``) is presented on ``mreq`` from cycle t + 1,
    its beats in order and back to back (``mreq.valid`` comes from the arbiter's ``busy`` and
    the beat queue's level, both registers, and the payload is the head of the selected class's
    beat queue, so neither depends on ``mreq.ready`` and the payload holds until its
    transfer). The cycle in which its ``last`` beat transfers is the arbiter's next decision
    cycle (``xfer``), so a port that is always ready carries a request after another without a
    gap. Payloads pass unchanged, ``cls``
    included: the producers tag each request with its class (MR-F39); the counter hooks use
    the queue's class.

    ``last`` on the input marks the request boundary for the queues and the output alike;
    ``len`` and ``wr`` are not checked against the beat count. Requests longer than
    ``max_len`` sectors are not allowed (the router rejects them first, MR-E2).

    Parameters
    ----------
    qden : int
        QDEN (MR-C9), 1..255.
    max_len : int
        MAX_LEN (MR-C6), 1..16.
    depth : int or None
        Beats per class queue, ``max_len``..256 (a whole write must fit, or it could never
        become a head). Default ``2·max_len``: a second write can arrive while one is sent.
        Queues of up to 16 beats are registers (:class:`~hw.common.regfifo.RegFifo`), one per
        class. Deeper ones are block RAM (:class:`~hw.memrouter.beat_queues.BeatQueues`):
        the three classes in one memory with one write port, read only at the head of the
        class presented next, so the mreq payload is the memory's output. The router uses
        deep queues: the arbiter can only keep its shares while both classes have requests
        waiting (MR-P4).
    poison_collisions : bool
        Test builds of deep queues: the memory's read in a cycle that writes the slot it reads
        returns the inverted word (:class:`~hw.memrouter.beat_queues.BeatQueues`), so a
        testbench sees whether the port ever uses it.

    Members
    -------
    near, far, mig : In(stream.Signature(MReq))
        Class inputs. ``ready`` is "the queue has room", from registers; with deep queues
        the three share a write port, so ``far.ready`` is also low while ``near.valid``, and
        ``mig.ready`` while ``near.valid`` or ``far.valid``.
    mreq : Out(stream.Signature(MReq))
        To the memory port.
    mig_block : In(1)
        Hides the MIG head from the arbiter (a FENCE not yet satisfied, §4.10); a MIG request
        already selected is not affected.
    rate_n, rate_f, burst_n, burst_f, uth_en, uth, uw, mig_starve : In
        Configuration, as on :class:`~hw.memrouter.qos.QosArbiter`.
    sel_valid, sel_cls, sel_paid, sel_nb : Out
        The arbiter's selection of this cycle (combinational).
    tok_n, tok_f : Out(signed(18))
        The token buckets.
    beat_xfer : Out(1)
        An ``mreq`` beat transfers in this cycle (``valid & ready``): the strobe for the
        per-class, per-direction port beat counters (§3.3 0x300, counted at transfer).
    beat_cls : Out(2)
        The class queue that beat comes from (0 NEAR, 1 FAR, 2 MIG).
    beat_wr : Out(1)
        That beat's ``wr``.
    """

    def __init__(self, qden=24, max_len=8, depth=None, poison_collisions=False):
        self.poison_collisions = bool(poison_collisions)
        self.qden = check_int(self, "qden", qden, 1, 255)
        self.max_len = check_int(self, "max_len", max_len, 1, 16)
        self.depth = check_int(self, "depth", 2 * max_len if depth is None else depth,
                               max_len, 256)
        layout = mreq_layout()
        nbw = max_len.bit_length()
        super().__init__({
            "near": In(stream.Signature(layout)), "far": In(stream.Signature(layout)),
            "mig": In(stream.Signature(layout)), "mreq": Out(stream.Signature(layout)),
            "mig_block": In(1),
            "rate_n": In(16), "rate_f": In(16), "burst_n": In(8), "burst_f": In(8),
            "uth_en": In(1), "uth": In(16), "uw": In(16), "mig_starve": In(16),
            "sel_valid": Out(1), "sel_cls": Out(2), "sel_paid": Out(1), "sel_nb": Out(nbw),
            "tok_n": Out(signed(TOK_W)), "tok_f": Out(signed(TOK_W)),
            "beat_xfer": Out(1), "beat_cls": Out(2), "beat_wr": Out(1),
        })

    def _beat_fifos(self, m, arb, take, accept, cur, presented):
        """Shallow queues: one register FIFO per class, each input ready while it has room.
        Returns ({class: non-empty}, mreq payload, its ``wr``)."""
        size = mreq_layout().size
        some, heads = {}, {}
        for cls, name in CLASSES:
            inp = getattr(self, name)
            m.submodules[f"{name}_beats"] = beats = RegFifo(size, self.depth)
            m.d.comb += [inp.ready.eq(lt_const(beats.level, self.depth)),
                         beats.w_en.eq(accept[cls]), beats.w_data.eq(inp.payload),
                         beats.r_en.eq(take & cur[cls])]
            some[cls], heads[cls] = beats.r_rdy, beats.r_data
        wr_bit = mreq_layout()["wr"].offset
        return (some,
                # (``wr`` computed beside the payload rather than as its bit, which would be an
                # unread alias of the mreq port in a parent)
                Mux(cur[NEAR], heads[NEAR], 0) | Mux(cur[FAR], heads[FAR], 0)
                | Mux(cur[MIG], heads[MIG], 0),
                Mux(cur[NEAR], heads[NEAR][wr_bit], 0) | Mux(cur[FAR], heads[FAR][wr_bit], 0)
                | Mux(cur[MIG], heads[MIG][wr_bit], 0))

    def _beat_queues(self, m, arb, take, accept, cur, presented):
        """Deep queues in block RAM: the three classes in one :class:`BeatQueues` with one
        write port, taken by NEAR, then FAR, then MIG (the routing stage never offers NEAR and
        FAR together; the migration engine's beat waits a cycle when the routing stage offers
        one to the same port). The read port addresses the head of the class presented in the
        next cycle, so the mreq payload is the memory's output itself. Returns
        ({class: non-empty}, mreq payload, its ``wr``)."""
        size = mreq_layout().size
        m.submodules.beats = bq = BeatQueues(size, self.depth, len(CLASSES),
                                             poison_collisions=self.poison_collisions)
        near, far, mig = self.near, self.far, self.mig
        m.d.comb += [
            near.ready.eq(lt_const(bq.level[NEAR], self.depth)),
            far.ready.eq(lt_const(bq.level[FAR], self.depth) & ~near.valid),
            mig.ready.eq(lt_const(bq.level[MIG], self.depth) & ~near.valid & ~far.valid),
            bq.w_en.eq(accept[NEAR] | accept[FAR] | accept[MIG]),
            bq.w_q.eq(Mux(accept[FAR], FAR, Mux(accept[MIG], MIG, NEAR))),
            bq.w_data.eq(Mux(accept[MIG], mig.payload,
                             Mux(accept[FAR], far.payload, near.payload))),
            bq.r_en.eq(take), bq.r_q.eq(presented),
            bq.r_next.eq(Mux(arb.sel_valid, arb.sel_cls, presented)),
        ]
        # (``wr`` gated with "a request is presented", as in the shallow queues: the bare bit
        # would be an unread alias of the mreq port in a parent)
        return ({cls: nonzero(bq.level[cls]) for cls, _ in CLASSES}, bq.r_data,
                bq.r_data[mreq_layout()["wr"].offset] & (cur[NEAR] | cur[FAR] | cur[MIG]))

    def elaborate(self, platform):
        m = Module()
        m.submodules.arb = arb = QosArbiter(self.qden, self.max_len)
        for name in ("rate_n", "rate_f", "burst_n", "burst_f", "uth_en", "uth", "uw",
                     "mig_starve"):
            m.d.comb += getattr(arb, name).eq(getattr(self, name))
        m.d.comb += [self.sel_valid.eq(arb.sel_valid), self.sel_cls.eq(arb.sel_cls),
                     self.sel_paid.eq(arb.sel_paid), self.sel_nb.eq(arb.sel_nb),
                     self.tok_n.eq(arb.tok_n), self.tok_f.eq(arb.tok_f)]

        take = self.beat_xfer                    # an mreq beat transfers
        m.d.comb += take.eq(self.mreq.valid & self.mreq.ready)
        accept, cur = {}, {}
        for cls, name in CLASSES:
            inp = getattr(self, name)
            accept[cls] = Signal(name=f"{name}_accept")
            cur[cls] = Signal(name=f"{name}_cur")     # the presented request is of this class
            m.d.comb += accept[cls].eq(inp.valid & inp.ready)
        presented = Mux(cur[FAR], FAR, Mux(cur[MIG], MIG, NEAR))
        some, payload, payload_wr = (self._beat_queues if self.depth > 16
                                     else self._beat_fifos)(m, arb, take, accept, cur, presented)
        arb_inputs = {NEAR: (arb.n_valid, arb.n_nb), FAR: (arb.f_valid, arb.f_nb),
                      MIG: (arb.m_valid, arb.m_nb)}
        for cls, name in CLASSES:
            inp = getattr(self, name)
            reqs = RegFifo(4, self.depth) if self.depth <= 16 else MemFifo(4, self.depth)
            m.submodules[f"{name}_reqs"] = reqs  # len of each complete, unselected request
            sel = Signal(name=f"{name}_sel")
            m.d.comb += [
                reqs.w_en.eq(accept[cls] & inp.payload.last), reqs.w_data.eq(inp.payload.len),
                sel.eq(arb.sel_valid & eq_const(arb.sel_cls, cls)),
                reqs.r_en.eq(sel),
            ]
            with m.If(arb.sel_valid):
                m.d.sync += cur[cls].eq(sel)
            arb_valid = reqs.r_rdy & ~self.mig_block if cls == MIG else reqs.r_rdy
            m.d.comb += [arb_inputs[cls][0].eq(arb_valid),
                         arb_inputs[cls][1].eq(reqs.r_data + 1)]

        # ---- output: the head of the presented class's beat queue -----------------------------
        # (the selected request is whole in its queue, so the beat-queue term is 1 while
        # busy; it keeps a wrong ``last`` on an input from presenting an empty queue)
        m.d.comb += [
            self.mreq.payload.eq(payload),
            self.mreq.valid.eq(arb.busy & ((cur[NEAR] & some[NEAR]) | (cur[FAR] & some[FAR])
                                           | (cur[MIG] & some[MIG]))),
            arb.xfer.eq(take & self.mreq.payload.last),
            self.beat_cls.eq(presented),
            self.beat_wr.eq(payload_wr),
        ]
        return m
