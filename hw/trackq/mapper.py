"""QueueMapper: {cls, warp} -> tracking queue for modes 1..4, with the TTU round-robin pointer
(spec trackq.md §4.3, TQ-F1..F6)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.trackq.formats import TTU
from hw.common.lintops import eq_const, ge, le_const, lt_const
from hw.common.params import check_int

__all__ = ["QueueMapper", "mod_small"]


def mod_small(m, value, divisor, name):
    """``value mod divisor`` for a run-time ``divisor`` (>= 1) by restoring division: one
    compare-and-subtract per bit of ``value`` (WARP_W <= 6 stages), no divider. Every stage is
    a named signal holding the whole output of one multiplexer, at the divisor's width (an
    unnamed stage would be repeated in every use of it, three per stage)."""
    width = len(divisor)                 # a remainder is below the divisor
    r = C(0, width)
    for i in reversed(range(len(value))):
        shifted = Cat(value[i], r)       # width + 1 bits
        nxt = Signal(width, name=f"{name}_r{i}")
        m.d.comb += nxt.eq(Mux(ge(shifted, divisor), (shifted - divisor)[:width],
                               shifted[:width]))
        r = nxt
    return r


class QueueMapper(wiring.Component):
    """Maps one slow TQ packet to a tracking queue (§4.3).

    - mode 1: TQ0;
    - mode 2: L/G and TEX to TQ0, TTU round-robin over TQ1..TQ(N_Q−1);
    - mode 3: L/G and TEX to TQ(warp mod W), W = ``lgq``, TTU round-robin over TQW..TQ(N_Q−1);
    - mode 4: L/G and TEX to TQ(warp mod N_Q), TTU round-robin over TQ0..TQ(N_Q−1).

    The TTU round-robin is one wrap-around pointer ``ttu_ptr`` (reset 0) shared by all modes:
    q = ttu_ptr if lo <= ttu_ptr <= hi else lo; then ttu_ptr = q + 1 if q < hi else lo. It
    advances when ``en`` is high and a TTU packet is mapped in modes 2..4. ``mode`` and ``lgq``
    are the legalised values of the cycle (TQ-E7), ``cls`` is already rewritten (TQ-E1).

    Parameters
    ----------
    n_q : int
        Number of tracking queues, 1..64.
    warp_w : int
        Width of the warp number.

    Members
    -------
    cls : In(2)
        Traffic class (0 L/G, 1 TEX, 2 TTU).
    warp : In(warp_w)
        Warp number.
    mode : In(2)
        Mode − 1.
    lgq : In(Q_W)
        W of mode 3, in 1..N_Q−1.
    en : In(1)
        A packet is mapped (inserted) this cycle.
    q : Out(Q_W)
        The queue.
    """

    def __init__(self, n_q, warp_w):
        self.n_q = check_int(self, "n_q", n_q, 1, 64)
        self.warp_w = check_int(self, "warp_w", warp_w, 1, 6)
        self.q_w = max(1, (n_q - 1).bit_length())
        super().__init__({"cls": In(2), "warp": In(warp_w), "mode": In(2),
                          "lgq": In(self.q_w), "en": In(1), "q": Out(self.q_w)})

    def elaborate(self, platform):
        m = Module()
        n_q, q_w = self.n_q, self.q_w
        ttu_ptr = Signal(q_w)
        hi = n_q - 1
        lo = Signal(q_w)
        with m.Switch(self.mode):
            with m.Case(1):
                m.d.comb += lo.eq(1 if n_q > 1 else 0)
            with m.Case(2):
                m.d.comb += lo.eq(self.lgq)
            with m.Default():
                m.d.comb += lo.eq(0)
        ttu_q = Signal(q_w)
        m.d.comb += ttu_q.eq(Mux(ge(ttu_ptr, lo) & le_const(ttu_ptr, hi), ttu_ptr, lo))
        div = Mux(eq_const(self.mode, 2), self.lgq, n_q)
        warp_mod = mod_small(m, self.warp, div, "wmod")
        is_ttu = eq_const(self.cls, TTU)
        with m.Switch(self.mode):
            with m.Case(0):
                m.d.comb += self.q.eq(0)
            with m.Case(1):
                m.d.comb += self.q.eq(Mux(is_ttu, ttu_q, 0))
            with m.Default():
                m.d.comb += self.q.eq(Mux(is_ttu, ttu_q, warp_mod))
        with m.If(self.en & is_ttu & self.mode.any()):
            m.d.sync += ttu_ptr.eq(Mux(lt_const(ttu_q, hi), ttu_q + 1, lo))
        return m

