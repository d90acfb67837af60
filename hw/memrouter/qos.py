"""The per-memory-port QoS decision core (memrouter spec §4.10, MR-F40..F42, MR-C25..C28),
cycle-exact against ``golden.memrouter.qos.QosArbiter``."""

from amaranth import C, Module, Mux, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.memrouter.formats import FAR, MIG, NEAR
from hw.common.lintops import ge, lt, nonzero
from hw.common.params import check_int

__all__ = ["QosArbiter", "TOK_W"]

TOK_W = 18          # §4.10: tok_c + RATE_c < 2^17 and tok_c >= 1 - 16·255 for every legal setting


class QosArbiter(wiring.Component):
    """One memory port's arbiter between the NEAR, FAR and MIG class queues.

    Every cycle it takes the three queue heads (valid and nb, "as of the start of the cycle")
    and ``xfer``, and makes the §4.10 decision of that cycle combinationally: when the port can
    take a request (nothing presented, or the presented request's last beat transfers now), it
    selects by the MR-F40 rules (1) near with tokens, (2) far with tokens, (3) starving MIG,
    (4) near over cap, (5) far over cap unless the UTH rule holds it back, (6) MIG. The
    selected request is to be popped from its queue in this cycle and presented from the next
    one; ``busy`` tracks that. The state updates at the clock edge exactly as golden
    ``QosArbiter.cycle``.

    The configuration inputs come from CSRs and may change at run time: RATE, BURST, UTH,
    QOS_UTH_EN and MIG_STARVE act from the cycle they change in (a lower BURST clamps the
    bucket at the next refill); a UW change acts at once, an epoch ending when its cycle
    count reaches UW.

    Reset is the §4.10 initial state, with the buckets full for the BURST inputs of the first
    cycle after reset: a ``fresh`` flag (set by reset, cleared after one cycle) makes that
    cycle read ``BURST·QDEN`` instead of the bucket registers, since a register cannot reset
    to a run-time value. The UW epoch counter restarts at 0, so the golden model's
    ``t % UW == 0`` counts cycles from the first cycle after reset.

    ``mig_wait`` saturates at 65535; only ``mig_wait >= MIG_STARVE`` with MIG_STARVE ≤ 65535
    is used, which saturation does not change. ``near_cur``/``near_prev`` are
    ``bits(65535·MAX_LEN)`` wide: at most one selection per cycle, an epoch at most 65535
    cycles.

    Parameters
    ----------
    qden : int
        QDEN (MR-C9), token units per beat, 1..255.
    max_len : int
        MAX_LEN (MR-C6), the largest nb of a head, 1..16.

    Members
    -------
    rate_n, rate_f : In(16)
        RATE_N/RATE_F (MR-C27): tokens gained per cycle.
    burst_n, burst_f : In(8)
        BURST_N/BURST_F (MR-C28), 1..255 beats: bucket caps are ``burst·qden``.
    uth_en : In(1)
        CTRL.QOS_UTH_EN (MR-C17).
    uth, uw : In(16)
        UTH and UW (MR-C26); UW 1..65535.
    mig_starve : In(16)
        MIG_STARVE (MR-C25), 0 = off.
    n_valid, f_valid, m_valid : In(1)
        A complete request heads the class queue (for MIG: and no FENCE holds it).
    n_nb, f_nb, m_nb : In(bits(max_len))
        Its sector count, 1..max_len (ignored while not valid).
    xfer : In(1)
        The last beat of the presented request transfers in this cycle (ignored while not
        ``busy``).
    sel_valid : Out(1)
        A request is selected in this cycle (combinational).
    sel_cls : Out(2)
        Its class: 0 NEAR, 1 FAR, 2 MIG (0 when none).
    sel_paid : Out(1)
        Selected with tokens (rules 1 and 2): its bucket is charged ``nb·qden``.
    sel_nb : Out(bits(max_len))
        nb of the selected head (0 when none).
    busy : Out(1)
        A selected request is presented (registered).
    tok_n, tok_f : Out(signed(18))
        The buckets as of the start of the cycle.
    """

    def __init__(self, qden=24, max_len=8):
        self.qden = check_int(self, "qden", qden, 1, 255)
        self.max_len = check_int(self, "max_len", max_len, 1, 16)
        nbw = max_len.bit_length()
        super().__init__({
            "rate_n": In(16), "rate_f": In(16), "burst_n": In(8), "burst_f": In(8),
            "uth_en": In(1), "uth": In(16), "uw": In(16), "mig_starve": In(16),
            "n_valid": In(1), "n_nb": In(nbw), "f_valid": In(1), "f_nb": In(nbw),
            "m_valid": In(1), "m_nb": In(nbw), "xfer": In(1),
            "sel_valid": Out(1), "sel_cls": Out(2), "sel_paid": Out(1), "sel_nb": Out(nbw),
            "busy": Out(1), "tok_n": Out(signed(TOK_W)), "tok_f": Out(signed(TOK_W)),
        })

    def elaborate(self, platform):
        m = Module()
        qden = self.qden
        near_w = (65535 * self.max_len).bit_length()

        fresh = Signal(init=1)                   # first cycle after reset: buckets full
        m.d.sync += fresh.eq(0)
        can = Signal()
        m.d.comb += can.eq(~self.busy | self.xfer)

        # ---- buckets: effective value, "has tokens", next value ------------------------------
        def bucket(name, tok_out, rate, burst, paid_sel, nb):
            reg = Signal(signed(TOK_W), name=f"tok_{name}_q")
            cap = Signal(16, name=f"cap_{name}")
            pos = Signal(name=f"pos_{name}")
            total = Signal(signed(TOK_W + 1), name=f"sum_{name}")
            m.d.comb += [
                cap.eq(burst * C(qden, 8)),
                tok_out.eq(Mux(fresh, cap, reg)),
                pos.eq(~tok_out[-1] & nonzero(tok_out)),
                total.eq(tok_out + rate),
            ]
            # min(tok + RATE, CAP) - charge; the charge only for a grant with tokens
            capped = Mux((total - cap)[-1], total, cap)
            m.d.sync += reg.eq(capped - Mux(paid_sel, nb * C(qden, 8), 0))
            return pos

        paid_n = Signal()
        paid_f = Signal()
        pos_n = bucket("n", self.tok_n, self.rate_n, self.burst_n, paid_n, self.n_nb)
        pos_f = bucket("f", self.tok_f, self.rate_f, self.burst_f, paid_f, self.f_nb)

        # ---- UW epoch: ep = cycles since reset mod UW; near_prev/near_cur -------------------
        ep = Signal(16)
        ep_inc = Signal(17)
        m.d.comb += ep_inc.eq(ep + 1)
        m.d.sync += ep.eq(Mux(ge(ep_inc, self.uw), 0, ep_inc))
        near_cur = Signal(near_w)
        near_prev = Signal(near_w)
        epoch_start = Signal()
        m.d.comb += epoch_start.eq(~nonzero(ep))
        with m.If(epoch_start):
            m.d.sync += near_prev.eq(near_cur)
        far_ok = Signal()                             # rule 5's UTH condition
        m.d.comb += far_ok.eq(~self.uth_en | lt(Mux(epoch_start, near_cur, near_prev), self.uth))

        # ---- MIG starvation timer -------------------------------------------------------------
        mig_wait = Signal(16)
        starving = Signal()
        m.d.comb += starving.eq(self.m_valid & nonzero(self.mig_starve)
                                & ge(mig_wait, self.mig_starve))

        # ---- the decision (MR-F40 priority order) ------------------------------------------------
        sel_n = Signal()
        sel_f = Signal()
        sel_m = Signal()
        with m.If(can):
            with m.If(self.n_valid & pos_n):
                m.d.comb += [sel_n.eq(1), paid_n.eq(1)]
            with m.Elif(self.f_valid & pos_f):
                m.d.comb += [sel_f.eq(1), paid_f.eq(1)]
            with m.Elif(starving):
                m.d.comb += sel_m.eq(1)
            with m.Elif(self.n_valid):
                m.d.comb += sel_n.eq(1)
            with m.Elif(self.f_valid & far_ok):
                m.d.comb += sel_f.eq(1)
            with m.Elif(self.m_valid):
                m.d.comb += sel_m.eq(1)
        m.d.comb += [
            self.sel_valid.eq(sel_n | sel_f | sel_m),
            self.sel_cls.eq(Mux(sel_f, FAR, Mux(sel_m, MIG, NEAR))),
            self.sel_paid.eq(paid_n | paid_f),
            self.sel_nb.eq(Mux(sel_n, self.n_nb, 0) | Mux(sel_f, self.f_nb, 0)
                           | Mux(sel_m, self.m_nb, 0)),
        ]

        m.d.sync += near_cur.eq(Mux(epoch_start, 0, near_cur) + Mux(sel_n, self.n_nb, 0))
        with m.If(~self.m_valid | sel_m):
            m.d.sync += mig_wait.eq(0)
        with m.Elif(~mig_wait.all()):
            m.d.sync += mig_wait.eq(mig_wait + 1)
        with m.If(can):
            m.d.sync += self.busy.eq(self.sel_valid)
        return m
