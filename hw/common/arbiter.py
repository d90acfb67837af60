"""Round-robin arbiter shared by every block (trackq pop and commit pickers, memrouter ports, ...)."""

from amaranth import C, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from hw.common.onehot import onehot_to_binary
from hw.common.params import check_int

__all__ = ["RoundRobinArbiter"]


class RoundRobinArbiter(wiring.Component):
    """Rotating-priority arbiter with a one-hot grant (spec trackq §4.1, TQ-F45, TQ-I12).

    The grant goes, combinationally, to the first requester at or after ``ptr`` in cyclic order.
    When ``advance`` is high and a grant exists, ``ptr`` becomes (granted index + 1) mod n at the
    clock edge. ``ptr`` is the only state. A requester that stays asserted is granted within n
    grants.

    The grant is built as "lowest set bit of (requests at or above ptr), else lowest set bit of
    all requests", using the two's-complement isolate ``x & -x``; the index comes from a log-depth
    one-hot encoding (an OR per index bit), so there is no n-long priority chain.

    Parameters
    ----------
    n : int
        Number of requesters, 1..1024.

    Members
    -------
    req : In(n)
        Request vector, bit i = requester i.
    advance : In(1)
        Move the pointer past the current grant at the clock edge (the grant was used).
    grant : Out(n)
        One-hot grant, 0 when no request.
    grant_idx : Out(max(1, ceil_log2(n)))
        Index of the granted requester (0 when there is none). The spec gives ⌈log2 n⌉ bits; for
        n = 1 that is 0 bits, which Verilog cannot express, so the port is 1 bit wide and always 0.
    valid : Out(1)
        OR of ``req``: some requester is granted.
    """

    MAX_N = 1024

    def __init__(self, n):
        self.n = check_int(self, "n", n, 1, self.MAX_N)
        self.idx_width = max(1, ceil_log2(n))
        super().__init__({
            "req": In(n),
            "advance": In(1),
            "grant": Out(n),
            "grant_idx": Out(self.idx_width),
            "valid": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.n

        # n = 1 keeps a 1-bit ptr that stays 0, so clk, rst and advance exist for every n
        ptr = Signal(range(max(2, n)), name="ptr")
        at_or_after = Signal(n)           # requests with index >= ptr
        pick = Signal(n)
        m.d.comb += [
            at_or_after.eq(self.req & ~((C(1, n + 1) << ptr) - 1)[:n]),
            pick.eq(Mux(at_or_after.any(), at_or_after, self.req)),
            self.grant.eq((pick & -pick)[:n]),
            self.valid.eq(self.req.any()),
        ]

        m.d.comb += self.grant_idx.eq(onehot_to_binary(self.grant))

        with m.If(self.advance & self.valid):
            m.d.sync += ptr.eq(Mux(self.grant_idx == n - 1, 0, self.grant_idx + 1))
        return m
