"""Oldest: G, the oldest uncommitted slow entry, among the queue-head candidates (spec trackq.md
§4.4 STEP 1), and which candidate it is (STEP 2: ``seq == G``)."""

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, lt
from hw.common.params import check_int

__all__ = ["Oldest"]


class Oldest(wiring.Component):
    """G among ``n`` candidates (valid, seq), and a one-hot "this candidate is G".

    ``g_age`` (``seq_next − G``) comes from a compare-and-select tree; only ``req.ready`` (the
    age-span rule) needs it. The commit decision needs only ``is_g``. Up to ``PAIRWISE_MAX``
    candidates, ``is_g`` is built from all pairwise compares in parallel (one seq subtraction
    deep, instead of the tree followed by an equality), because it lies on the commit path;
    above that the pairs would grow quadratically and it is the tree's G compared for equality.

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
    g_valid, g_age : Out
        Some candidate is valid; the age of the oldest.
    is_g : Out(n)
        Candidate k is valid and is G.
    """

    PAIRWISE_MAX = 8

    def __init__(self, n, seq_w):
        self.n = check_int(self, "n", n, 2, 65)
        self.seq_w = check_int(self, "seq_w", seq_w, 4, 32)
        super().__init__({
            "valid": In(n), "seq": In(data.ArrayLayout(seq_w, n)), "seq_next": In(seq_w),
            "g_valid": Out(1), "g_age": Out(seq_w), "is_g": Out(n),
        })

    def elaborate(self, platform):
        m = Module()
        n, w = self.n, self.seq_w

        def age(k):          # not named: a named slice of the subtraction is an unread alias
            return (self.seq_next - self.seq[k])[:w]

        # the tree's last level drives the output ports themselves (no alias copies)
        items = [(self.valid[k], age(k)) for k in range(n)]
        level = 0
        while len(items) > 1:
            nxt = []
            last = len(items) == 2
            for k in range(0, len(items) - 1, 2):
                (va, aa), (vb, ab) = items[k], items[k + 1]
                v = self.g_valid if last else Signal(name=f"v{level}_{k}")
                a = self.g_age if last else Signal(w, name=f"a{level}_{k}")
                take_b = vb & (~va | lt(aa, ab))
                m.d.comb += [v.eq(va | vb), a.eq(Mux(take_b, ab, aa))]
                nxt.append((v, a))
            if len(items) % 2:
                nxt.append(items[-1])
            items = nxt
            level += 1

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
        else:
            for i in range(n):
                m.d.comb += self.is_g[i].eq(self.valid[i] & eq(age(i), self.g_age))
        return m
