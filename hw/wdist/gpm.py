"""``wd_gpm[g]``: one GPC's CGA ID pool, active-CTA counters and the DSMEM-flush completion path
(WD-F21, WD-F22, WD-F23, WD-I6, WD-I7, WD-I8, WD-E7, WD-E8; G-GPM) [seed ¶0227, ¶0231–0233,
¶0258].

The GPM does not know its GPC index: the parent decodes "this GPC's" from the beat's ``gpc``
and the completions' ``sm`` (:func:`in_gpc`) into the ``beat_mine`` / ``cc_mine`` / ``fd_mine``
inputs and adds the ``gpc`` field to ``flush_req`` / ``cga_complete`` when it merges the GPCs.
So every GPM of a build elaborates to the same module (one Verilog module instantiated N_GPC
times, ``sim.rtlil_dedupe``); an index constant inside would make each copy different.

Cycle-exact with ``golden.wdist.gpm.Gpm`` driven in the golden top's order (``try_alloc``,
``accept_beat``, ``flush_sent``, ``complete_sent``, ``cta_complete``, ``flush_done``, ``tick``):
the lowest ID free at the start of the cycle is allocated, a release becomes allocatable the next
cycle, and a ``cta_complete`` or ``dsmem_flush_done`` sees the effect of a beat or a ``flush_req``
transfer of its own cycle.
"""

from enum import IntEnum

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.common.fields import Fields
from golden.wdist.formats import (Err, Kind, bcast_fields, cga_complete_fields,
                                  cta_complete_fields, flush_done_fields, flush_req_fields)
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import eq, eq_const, ge_const, is_zero, lt_const, select, tree_sum
from hw.common.params import reject

__all__ = ["Gpm", "IdState", "gpm_cga_complete_fields", "gpm_flush_req_fields", "in_gpc"]


def _without_gpc(fields):
    return Fields(*[(name, w, "signed" if sgn else "unsigned") + (() if n is None else (n,))
                    for name, (w, sgn, n) in fields.shapes.items() if name != "gpc"])


def gpm_flush_req_fields(params):
    """``flush_req_fields`` without ``gpc`` (``cga_id``, ``n_ctas``): a GPM's ``flush_req``
    payload; the parent adds the GPC."""
    return _without_gpc(flush_req_fields(params))


def gpm_cga_complete_fields(params):
    """``cga_complete_fields`` without ``gpc`` (``cga_id``, ``grid_id``, ``seq``): a GPM's
    ``cga_complete`` payload; the parent adds the GPC."""
    return _without_gpc(cga_complete_fields(params))


def in_gpc(params, g, sm):
    """1 when the SM number ``sm`` (a signal) lies in GPC ``g``:
    ``base(g) <= sm < base(g) + SM_PER_GPC[g]``. The parent's ``cc_mine`` / ``fd_mine``."""
    if not isinstance(g, int) or isinstance(g, bool) or not 0 <= g < params.N_GPC:
        raise ValueError(f"in_gpc: g must be an integer in 0..{params.N_GPC - 1}, got {g!r}")
    lo = params.base(g)
    return ge_const(sm, lo) & lt_const(sm, lo + params.SM_PER_GPC[g])


class IdState(IntEnum):
    """Per-ID state (golden ``_Cga.state``, plus FREE for an ID in the pool)."""
    FREE = 0
    RUN = 1
    FLUSH_REQ = 2
    FLUSH = 3
    DONE = 4


def _id_queue(m, name, width, pushes, pop, nonempty):
    """An in-order queue of distinct IDs (each ID at most once in it) as a linked list over the
    ID space: one ``next`` register per ID plus head, tail and a count. Up to two IDs are
    appended per cycle, ``pushes[0]`` before ``pushes[1]``; ``pop`` removes the head.

    Written here rather than with :class:`~hw.common.regfifo.RegFifo` because the queue must
    hold up to 2^GPC_CGA_ID_W = 256 entries (RegFifo stops at 64) and take two appends in one
    cycle. ``nonempty`` (a 1-bit signal, the output stream's ``valid``) is driven here.
    Returns ``head``.
    """
    n = 1 << width
    (p1_en, p1_id), (p2_en, p2_id) = pushes
    head = Signal(width, name=f"{name}_head")
    tail = Signal(width, name=f"{name}_tail")
    count = Signal(width + 1, name=f"{name}_count")
    nxt = [Signal(width, name=f"{name}_next{k}") for k in range(n)]
    e1 = Signal(name=f"{name}_e1")
    e2 = Signal(name=f"{name}_e2")
    id1 = Signal(width, name=f"{name}_id1")
    # normalize: the first append in slot 1
    m.d.comb += [nonempty.eq(count.any()), e1.eq(p1_en | p2_en), e2.eq(p1_en & p2_en),
                 id1.eq(Mux(p1_en, p1_id, p2_id))]
    id2 = p2_id
    for k in range(n):
        with m.If(e1 & nonempty & eq_const(tail, k)):
            m.d.sync += nxt[k].eq(id1)
        with m.If(e2 & eq_const(id1, k)):
            m.d.sync += nxt[k].eq(id2)
    with m.If(e2):
        m.d.sync += tail.eq(id2)
    with m.Elif(e1):
        m.d.sync += tail.eq(id1)
    with m.If(~nonempty | (pop & eq_const(count, 1))):
        with m.If(e1):
            m.d.sync += head.eq(id1)
    with m.Elif(pop):
        m.d.sync += head.eq(select(nxt, head))
    m.d.sync += count.eq(count + e1 + e2 - pop)
    return head


class Gpm(wiring.Component):
    """The GPM of one GPC (``wd_gpm[g]``, G-GPM). The same module for every GPC: which GPC it
    serves comes in on ``beat_mine``, ``cc_mine`` and ``fd_mine`` (decoded by the parent), and
    its ``flush_req`` / ``cga_complete`` carry no ``gpc`` (the parent adds it).

    **Beats.** The beat at the head of the broadcast is offered on ``beat_valid`` / ``beat``
    before the lock-step fork. It is this GPC's when its ``kind`` is not GRID and ``beat_mine``
    (the parent's ``beat.gpc == g``) is 1. ``beat_cga_id`` is the ID it will carry: for
    ``gcga_first`` the lowest ID free at the start of the cycle, for a later beat of the same
    GPC CGA the open CGA's ID, 0 when ``is_cga = 0``. ``beat_stall`` is 1 for a ``gcga_first``
    beat of this GPC while the pool is empty (WAIT_CGA_ID, WD-F21): the fork must not take it.
    ``beat_take`` says the beat transferred this cycle: the ID is allocated (state RUN), the
    beat's CTA total sum(cnt) is added to its active counter and its total, and ``gcga_last``
    is noted. The beat's ``grid_id`` and ``seq`` of the ``gcga_first`` beat are kept for
    ``cga_complete``.

    **Completions.** ``cta_complete`` and ``dsmem_flush_done`` are always ready; the top
    delivers every one and this GPM acts on those whose ``sm`` lies in its GPC (``cc_mine`` /
    ``fd_mine``: the parent's ``base(g) <= sm < base(g) + SM_PER_GPC[g]``, :func:`in_gpc`),
    and for ``cta_complete`` only with ``is_cga``. A bad ``cta_complete`` (WD-E7: the ID is not
    allocated, its counter is already 0, or it is not in RUN, as golden
    ``cta_complete_error``) raises ``cc_bad_cga``; with ``cc_underflow`` (WD-E6, from the
    resource tracker) the completion is ignored entirely and nothing is reported here;
    otherwise the counter is decremented. When a counter reaches 0 after the ``gcga_last`` beat
    (WD-F22), ``flush_req{id, n_ctas = total}`` is queued (WD-F23, WD-I7). After its transfer the ID counts ``n_ctas`` ``dsmem_flush_done``
    (counter reused as the pending count); one for an ID not waiting for a flush, or one too
    many, is ignored and reported (WD-E8). The ``n_ctas``-th queues
    ``cga_complete{id, grid_id, seq}`` (WD-I8); its transfer frees the ID (allocatable from
    the next cycle) and pulses ``credit_ret``.

    **Order.** ``flush_req`` and ``cga_complete`` are each issued in the order their events
    happened (a beat's before a ``cta_complete``'s in the same cycle), which is the order of
    golden ``Gpm``'s ``flush_q`` / ``complete_q`` restricted to this GPC. An event of cycle t
    is offered from cycle t+1. A ``cta_complete`` sees the beat taken in its own cycle, and a
    ``dsmem_flush_done`` the ``flush_req`` transferred in its own cycle (golden order).

    Precondition (as golden): a non-``gcga_first`` ``is_cga`` beat of this GPC only follows a
    ``gcga_first`` one whose ``gcga_last`` has not passed.

    Parameters
    ----------
    params : WdistParams
        The build parameters (GPC_CGA_ID_W, RANK_W, S_MAX and the payload widths).

    Members
    -------
    beat_valid : In(1)
        A beat is offered.
    beat : In(struct_layout(bcast_fields(params)))
        The beat (its ``kind``, ``cnt``, ``is_cga``, ``gcga_first``, ``gcga_last``,
        ``grid_id`` and ``seq`` are used).
    beat_mine : In(1)
        The beat's ``gpc`` is this GPM's GPC (combinational from ``beat.gpc`` in the parent;
        ignored while ``beat_valid`` is 0 or the beat is GRID).
    beat_take : In(1)
        The beat transferred this cycle (the fork accepted it).
    beat_cga_id : Out(GPC_CGA_ID_W)
        The ``cga_id`` the beat carries (valid while it is this GPC's).
    beat_stall : Out(1)
        WAIT_CGA_ID for this beat.
    cta_complete : In(stream.Signature(struct_layout(cta_complete_fields(params))))
        Always ready (its ``is_cga`` and ``cga_id`` are used).
    cc_mine : In(1)
        ``cta_complete.payload.sm`` lies in this GPM's GPC (ignored while not valid).
    cc_underflow : In(1)
        The resource tracker rejects this cycle's ``cta_complete`` (WD-E6).
    cc_bad_cga : Out(1)
        Combinational: ``cta_complete`` valid, ``is_cga``, ``cc_mine``, and the ID fails
        WD-E7. Independent of ``cc_underflow``.
    dsmem_flush_done : In(stream.Signature(struct_layout(flush_done_fields(params))))
        Always ready (its ``cga_id`` is used).
    fd_mine : In(1)
        ``dsmem_flush_done.payload.sm`` lies in this GPM's GPC (ignored while not valid).
    flush_req : Out(stream.Signature(struct_layout(gpm_flush_req_fields(params))))
        ``flush_req`` without ``gpc`` (``cga_id``, ``n_ctas``).
    cga_complete : Out(stream.Signature(struct_layout(gpm_cga_complete_fields(params))))
        ``cga_complete`` without ``gpc`` (``cga_id``, ``grid_id``, ``seq``).
    credit_ret : Out(1)
        ``cga_complete`` transfers this cycle (credit back, ``dirty``).
    err_cc_valid : Out(1)
        Combinational strobe of WD-E7 (code 7, COMPLETE_BAD_CGA) for this cycle's
        ``cta_complete`` (``cc_bad_cga & ~cc_underflow``); the top reports ``info`` = ``cga_id``.
    err_fd_valid : Out(1)
        Combinational strobe of WD-E8 (code 8, FLUSH_UNEXPECTED) for this cycle's
        ``dsmem_flush_done``; ``info`` = ``cga_id``, formed by the top. Both strobes may be
        high in one cycle;
        golden order puts the E7 report first.
    free_ids : Out(GPC_CGA_ID_W + 1)
        IDs in the pool (dbg sel 5), a register.
    alloc_ids : Out(GPC_CGA_ID_W + 1)
        2^GPC_CGA_ID_W − ``free_ids`` (dbg sel 6).
    idle : Out(1)
        The pool is full (then no CGA is running, flushing or completing): WD-F31's share.
    """

    ERR_CC = Err.COMPLETE_BAD_CGA
    ERR_FD = Err.FLUSH_UNEXPECTED

    def __init__(self, params):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        self.p = params
        p = params
        self.id_w = p.GPC_CGA_ID_W
        self.n_ids = 1 << self.id_w
        self.cnt_w = p.RANK_W + 1
        super().__init__({
            "beat_valid": In(1),
            "beat": In(struct_layout(bcast_fields(p))),
            "beat_mine": In(1),
            "beat_take": In(1),
            "beat_cga_id": Out(self.id_w),
            "beat_stall": Out(1),
            "cta_complete": In(stream.Signature(struct_layout(cta_complete_fields(p)))),
            "cc_mine": In(1),
            "cc_underflow": In(1),
            "cc_bad_cga": Out(1),
            "dsmem_flush_done": In(stream.Signature(struct_layout(flush_done_fields(p)))),
            "fd_mine": In(1),
            "flush_req": Out(stream.Signature(struct_layout(gpm_flush_req_fields(p)))),
            "cga_complete": Out(stream.Signature(struct_layout(gpm_cga_complete_fields(p)))),
            "credit_ret": Out(1),
            "err_cc_valid": Out(1),
            "err_fd_valid": Out(1),
            "free_ids": Out(self.id_w + 1, init=self.n_ids),
            "alloc_ids": Out(self.id_w + 1),
            "idle": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p, W, N, CW = self.p, self.id_w, self.n_ids, self.cnt_w

        # per-ID storage
        st = [Signal(3, name=f"st{i}") for i in range(N)]
        cnt = [Signal(CW, name=f"cnt{i}") for i in range(N)]      # active, then flush pending
        tot = [Signal(CW, name=f"tot{i}") for i in range(N)]
        last = [Signal(name=f"last{i}") for i in range(N)]
        grid = [Signal(p.GRID_ID_W, name=f"grid{i}") for i in range(N)]
        seq = [Signal(p.SEQ_W, name=f"seq{i}") for i in range(N)]
        open_id = Signal(W)

        # ---- beat: lowest free ID at the start of the cycle (WD-F21) -----------------------
        free_bits = [Signal(name=f"free{i}") for i in range(N)]     # the pool's free vector
        m.d.comb += [free_bits[i].eq(eq_const(st[i], IdState.FREE)) for i in range(N)]
        free_vec = Cat(*free_bits)
        chain = C(N - 1, W)
        for i in reversed(range(N - 1)):
            chain = Mux(free_vec[i], C(i, W), chain)
        lowest = Signal(W)
        pool_empty = Signal()
        m.d.comb += [lowest.eq(chain), pool_empty.eq(~free_vec.any())]
        b = self.beat
        mine = Signal()
        m.d.comb += mine.eq(self.beat_valid & ~eq_const(b.kind, Kind.GRID) & self.beat_mine)
        first, blast = b.gcga_first, b.gcga_last
        cid = self.beat_cga_id
        m.d.comb += cid.eq(Mux(b.is_cga, Mux(first, lowest, open_id), 0))
        m.d.comb += self.beat_stall.eq(mine & b.is_cga & first & pool_empty)
        beat_ok = Signal()
        m.d.comb += beat_ok.eq(self.beat_take & mine & b.is_cga & ~self.beat_stall)
        total = tree_sum([b.cnt[k] for k in range(p.S_MAX)])
        bsum = Signal(len(total))                                 # the beat's CTAs
        m.d.comb += bsum.eq(total)
        with m.If(beat_ok & first):
            m.d.sync += open_id.eq(lowest)
        act_beat_e = Mux(first, 0, select(cnt, open_id)) + bsum
        act_beat = Signal(len(act_beat_e))                        # the counter after the beat
        beat_done = Signal()
        m.d.comb += [act_beat.eq(act_beat_e), beat_done.eq(beat_ok & blast & is_zero(act_beat))]

        # ---- cta_complete (WD-F22, WD-E7), after the beat of its cycle ---------------------
        cc = self.cta_complete.payload
        m.d.comb += self.cta_complete.ready.eq(1)
        cc_id = cc.cga_id
        cc_sel = self.cta_complete.valid & cc.is_cga & self.cc_mine
        hit = Signal()
        hit_first = Signal()
        m.d.comb += [hit.eq(beat_ok & eq(cid, cc_id)), hit_first.eq(hit & first)]
        run_eff = eq_const(select(st, cc_id), IdState.RUN) | hit_first
        act_eff_e = Mux(hit_first, 0, select(cnt, cc_id)) + Mux(hit, bsum, 0)
        act_eff = Signal(len(act_eff_e))
        m.d.comb += act_eff.eq(act_eff_e)
        last_c = select(last, cc_id)
        last_eff = Mux(hit, Mux(first, 0, last_c) | blast, last_c)
        bad = Signal()
        m.d.comb += bad.eq(~run_eff | is_zero(act_eff))
        m.d.comb += self.cc_bad_cga.eq(cc_sel & bad)
        cc_apply = Signal()
        m.d.comb += cc_apply.eq(cc_sel & ~bad & ~self.cc_underflow)
        cc_done = Signal()
        m.d.comb += cc_done.eq(cc_apply & last_eff & eq_const(act_eff, 1))
        m.d.comb += self.err_cc_valid.eq(cc_sel & bad & ~self.cc_underflow)

        # ---- flush_req queue (WD-F23, WD-I7) -------------------------------------------------
        fr = self.flush_req
        fr_xfer = Signal()
        m.d.comb += fr_xfer.eq(fr.valid & fr.ready)
        head_f = _id_queue(m, "fq", W, [(beat_done, cid), (cc_done, cc_id)], fr_xfer, fr.valid)
        m.d.comb += [fr.payload.cga_id.eq(head_f),
                     fr.payload.n_ctas.eq(select(tot, head_f))]

        # ---- dsmem_flush_done (WD-E8), after the flush_req transfer of its cycle -----------
        fd = self.dsmem_flush_done.payload
        m.d.comb += self.dsmem_flush_done.ready.eq(1)
        fd_id = fd.cga_id
        fd_sel = self.dsmem_flush_done.valid & self.fd_mine
        fs_hit = Signal()
        m.d.comb += fs_hit.eq(fr_xfer & eq(head_f, fd_id))
        pend = Signal(CW)
        m.d.comb += pend.eq(Mux(fs_hit, select(tot, fd_id), select(cnt, fd_id)))
        fd_ok = Signal()
        m.d.comb += fd_ok.eq((eq_const(select(st, fd_id), IdState.FLUSH) | fs_hit) & pend.any())
        fd_apply = Signal()
        m.d.comb += fd_apply.eq(fd_sel & fd_ok)
        fd_done = Signal()
        m.d.comb += fd_done.eq(fd_apply & eq_const(pend, 1))
        m.d.comb += self.err_fd_valid.eq(fd_sel & ~fd_ok)

        # ---- cga_complete queue (WD-I8) -------------------------------------------------------
        cq = self.cga_complete
        cq_xfer = self.credit_ret
        m.d.comb += cq_xfer.eq(cq.valid & cq.ready)
        head_c = _id_queue(m, "cq", W, [(fd_done, fd_id), (C(0, 1), C(0, W))], cq_xfer,
                           cq.valid)
        m.d.comb += [cq.payload.cga_id.eq(head_c),
                     cq.payload.grid_id.eq(select(grid, head_c)),
                     cq.payload.seq.eq(select(seq, head_c))]

        # ---- per-ID update -------------------------------------------------------------------
        for i in range(N):
            bh = beat_ok & eq_const(cid, i)
            bf = bh & first
            ca = cc_apply & eq_const(cc_id, i)
            fh = fr_xfer & eq_const(head_f, i)
            fa = fd_apply & eq_const(fd_id, i)
            ch = cq_xfer & eq_const(head_c, i)
            with m.If(bh | ca | fh | fa):
                m.d.sync += cnt[i].eq(Mux(fh, tot[i], cnt[i] + Mux(bh, bsum, 0)) - ca - fa)
            with m.If(bh):
                m.d.sync += [tot[i].eq(Mux(first, 0, tot[i]) + bsum),
                             last[i].eq(Mux(first, 0, last[i]) | blast)]
            with m.If(bf):
                m.d.sync += [grid[i].eq(b.grid_id), seq[i].eq(b.seq), st[i].eq(IdState.RUN)]
            with m.If((beat_done & bh) | (cc_done & ca)):
                m.d.sync += st[i].eq(IdState.FLUSH_REQ)
            with m.If(fh):
                m.d.sync += st[i].eq(IdState.FLUSH)
            with m.If(fd_done & fa):
                m.d.sync += st[i].eq(IdState.DONE)
            with m.If(ch):
                m.d.sync += st[i].eq(IdState.FREE)

        # ---- pool count (dbg sel 5 / 6), WD-F31 share ----------------------------------------
        m.d.sync += self.free_ids.eq(self.free_ids - (beat_ok & first) + cq_xfer)
        m.d.comb += [self.alloc_ids.eq(N - self.free_ids),
                     self.idle.eq(eq_const(self.free_ids, N))]
        return m
