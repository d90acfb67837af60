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
        NEAR and FAR in one memory with one write port, MIG in another, each read only at the
        head of the class presented next, so the mreq payload is one memory read and a
        2-way select. The router uses deep queues: the arbiter can only keep its shares
        while both classes have requests waiting (MR-P4).

    Members
    -------
    near, far, mig : In(stream.Signature(MReq))
        Class inputs. ``ready`` is "the queue has room", from registers; with deep queues
        ``far.ready`` is also low while ``near.valid`` (the two share a write port).
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

    def __init__(self, qden=24, max_len=8, depth=None):
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

    def _beat_fifos(self, m, arb, take, accept, cur):
        """Shallow queues: one register FIFO per class, each input ready while it has room.
        Returns {class: (non-empty, head)}."""
        size = mreq_layout().size
        out = {}
        for cls, name in CLASSES:
            inp = getattr(self, name)
            m.submodules[f"{name}_beats"] = beats = RegFifo(size, self.depth)
            m.d.comb += [inp.ready.eq(lt_const(beats.level, self.depth)),
                         beats.w_en.eq(accept[cls]), beats.w_data.eq(inp.payload),
                         beats.r_en.eq(take & cur[cls])]
            out[cls] = (beats.r_rdy, beats.r_data)
        return out

    def _beat_queues(self, m, arb, take, accept, cur):
        """Deep queues in block RAM: NEAR and FAR share one :class:`BeatQueues` (one write
        port: FAR waits while NEAR has a beat; the router's routing stage never offers both),
        MIG has its own (the migration engine writes it in the same cycles). Each memory's read
        port addresses the head of the class presented in the next cycle. Returns
        {class: (non-empty, head)}."""
        size = mreq_layout().size
        m.submodules.nf_beats = nf = BeatQueues(size, self.depth, 2)
        m.submodules.mig_beats = mg = BeatQueues(size, self.depth, 1)
        near, far, mig = self.near, self.far, self.mig
        far_next = Signal()                      # the next cycle presents FAR (if NEAR/FAR)
        m.d.comb += [
            near.ready.eq(lt_const(nf.level[0], self.depth)),
            far.ready.eq(lt_const(nf.level[1], self.depth) & ~near.valid),
            nf.w_en.eq(accept[NEAR] | accept[FAR]), nf.w_q.eq(accept[FAR]),
            nf.w_data.eq(Mux(accept[FAR], far.payload, near.payload)),
            nf.r_en.eq(take & (cur[NEAR] | cur[FAR])), nf.r_q.eq(cur[FAR]),
            far_next.eq(Mux(arb.sel_valid, eq_const(arb.sel_cls, FAR), cur[FAR])),
            nf.r_next.eq(far_next),
            mig.ready.eq(lt_const(mg.level[0], self.depth)),
            mg.w_en.eq(accept[MIG]), mg.w_data.eq(mig.payload),
            mg.r_en.eq(take & cur[MIG]),
        ]
        return {NEAR: (nonzero(nf.level[0]), nf.r_data), FAR: (nonzero(nf.level[1]), nf.r_data),
                MIG: (nonzero(mg.level[0]), mg.r_data)}

    def elaborate(self, platform):
        m = Module()
        layout = mreq_layout()
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
        beats = (self._beat_queues if self.depth > 16 else self._beat_fifos)(m, arb, take,
                                                                               accept, cur)
        heads = {}
        for cls, name in CLASSES:
            inp = getattr(self, name)
            some, data = beats[cls]
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
            heads[cls] = (reqs.r_rdy, reqs.r_data + 1, cur[cls], some, data)

        (n_rdy, n_nb, n_cur, n_some, n_data), (f_rdy, f_nb, f_cur, f_some, f_data), \
            (m_rdy, m_nb, m_cur, m_some, m_data) = heads[NEAR], heads[FAR], heads[MIG]
        m.d.comb += [
            arb.n_valid.eq(n_rdy), arb.n_nb.eq(n_nb),
            arb.f_valid.eq(f_rdy), arb.f_nb.eq(f_nb),
            arb.m_valid.eq(m_rdy & ~self.mig_block), arb.m_nb.eq(m_nb),
        ]

        # ---- output: the head of the presented class's beat queue -----------------------------
        # (the selected request is whole in its queue, so the beat-queue term is 1 while
        # busy; it keeps a wrong ``last`` on an input from presenting an empty queue)
        head = self.mreq.payload
        wr_bit = layout["wr"].offset
        m.d.comb += [
            head.eq(Mux(n_cur, n_data, 0) | Mux(f_cur, f_data, 0) | Mux(m_cur, m_data, 0)),
            self.mreq.valid.eq(arb.busy & ((n_cur & n_some) | (f_cur & f_some)
                                           | (m_cur & m_some))),
            arb.xfer.eq(take & head.last),
            self.beat_cls.eq(Mux(f_cur, FAR, Mux(m_cur, MIG, NEAR))),
            # (computed beside the payload rather than as its bit, which would be an unread
            # alias of the mreq port in a parent)
            self.beat_wr.eq(Mux(n_cur, n_data[wr_bit], 0) | Mux(f_cur, f_data[wr_bit], 0)
                            | Mux(m_cur, m_data[wr_bit], 0)),
        ]
        return m

