"""Oldest: G, the oldest uncommitted slow entry, among the queue-head candidates (spec trackq.md
§4.4 STEP 1), and which candidate it is (STEP 2: ``seq == G``)."""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, lt
from hw.common.params import check_int

__all__ = ["Oldest"]


class Oldest(wiring.Component):
    """Which of ``n`` candidates (valid, seq) is G, and whether G keeps the age-span rule.

    ``is_g`` feeds the commit decision and ``span_ok`` (``req.ready``'s age-span rule: no
    candidate, or G's age ``seq_next − G`` below 2^(seq_w−2)) the request path, so both are
    built for depth. Up to ``PAIRWISE_MAX`` candidates, ``is_g`` comes from all pairwise
    compares in parallel (one seq subtraction deep) and ``span_ok`` from ``is_g`` and every
    candidate's own age (subtracted in parallel), with no compare-and-select tree of ages. Above
    that the pairs would grow quadratically, and G's age comes from such a tree (``is_g``: the
    candidate whose age equals it).

    Seqs of live entries lie within 2^(seq_w−2) of ``seq_next`` (the age-span rule), so "a is
    not younger than b" is the sign of ``b − a`` modulo 2^seq_w, the same order as the ages.
    Live seqs are distinct, so exactly one valid candidate is G when any is valid.

    Parameters
    ----------
    n : int
        Number of candidates, 2..65 (N_Q tracking queues and the status queue).
    seq_w : int
        Sequence-number width.

    Members
    -------
    valid : In(n)
        Candidate k exists.
    seq : In(ArrayLayout(seq_w, n))
        Candidate k's seq.
    seq_next : In(seq_w)
        The next sequence number (ages are ``seq_next − seq``).
    is_g : Out(n)
        Candidate k is valid and is G.
    span_ok : Out(1)
        No candidate is valid, or G's age is below 2^(seq_w−2).
    """

    PAIRWISE_MAX = 8

    def __init__(self, n, seq_w):
        self.n = check_int(self, "n", n, 2, 65)
        self.seq_w = check_int(self, "seq_w", seq_w, 4, 32)
        super().__init__({
            "valid": In(n), "seq": In(data.ArrayLayout(seq_w, n)), "seq_next": In(seq_w),
            "is_g": Out(n), "span_ok": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, w = self.n, self.seq_w

        def age(k):          # not named: a named slice of the subtraction is an unread alias
            return (self.seq_next - self.seq[k])[:w]

        def in_span(a):      # a < 2^(w-2)
            return ~a[w - 2:].any()

        if n <= self.PAIRWISE_MAX:
            # not_younger[(i, j)]: seq i is not younger than seq j (sign of seq j − seq i)
            not_younger = {}
            for i in range(n):
                for j in range(i + 1, n):
                    younger = (self.seq[j] - self.seq[i])[w - 1]
                    not_younger[(i, j)] = ~younger
                    not_younger[(j, i)] = younger
            for i in range(n):
                ok = self.valid[i]
                for j in range(n):
                    if j != i:
                        ok = ok & (~self.valid[j] | not_younger[(i, j)])
                m.d.comb += self.is_g[i].eq(ok)
            m.d.comb += self.span_ok.eq(~self.valid.any() | Cat(
                *[self.is_g[k] & in_span(age(k)) for k in range(n)]).any())
            return m

        items = [(self.valid[k], age(k)) for k in range(n)]
        level = 0
        while len(items) > 1:
            nxt = []
            for k in range(0, len(items) - 1, 2):
                (va, aa), (vb, ab) = items[k], items[k + 1]
                v = Signal(name=f"v{level}_{k}")
                a = Signal(w, name=f"a{level}_{k}")
                take_b = vb & (~va | lt(aa, ab))
                m.d.comb += [v.eq(va | vb), a.eq(Mux(take_b, ab, aa))]
                nxt.append((v, a))
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
            level += 1
        g_valid, g_age = items[0]
        for i in range(n):
            m.d.comb += self.is_g[i].eq(self.valid[i] & eq(age(i), g_age))
        m.d.comb += self.span_ok.eq(~g_valid | in_span(g_age))
        return m
