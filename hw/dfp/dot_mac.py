"""LANES signed 16×16 multipliers and the exact adder tree of ``DfpDotUnit`` (DFP-F21, F22).

Each product is a plain ``a * b`` of two 16-bit signed registers written into a register, so
synthesis maps it to a DSP multiplier (ECP5 ``MULT18X18D``); ``mul_stages`` registers follow
the multiplier. The tree adds pairs exactly, one bit wider per level (31 + clog2(LANES) bits
at the root), and registers its partial sums after every ``tree_reg_every`` levels and always
at its output (also for LANES = 1, where the "tree" is that one output register). Fully
pipelined with a fixed latency and no handshake; the slot control word travels beside it in
a delay line of the top (``DfpDotUnit``).
"""

from amaranth import Module, Signal, signed
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from hw.dfp.dot_ctl import wire

__all__ = ["DotMac"]


class DotMac(wiring.Component):
    """Multipliers + exact adder tree.

    Parameters
    ----------
    lanes : int
    mul_stages : int
        Registers after the multipliers (1 or 2); the first holds the products.
    tree_reg_every : int
        Adder-tree levels between registers; the tree output is always registered.

    Attributes
    ----------
    latency : int
        Cycles from ``op_a``/``op_b`` to ``t`` (mul_stages + tree registers).

    Members
    -------
    op_a, op_b : In(16 * lanes)
        Operands, lane i in bits 16i..16i+15 (registers of the front).
    t : Out(signed(31 + clog2(lanes)))
        Beat sum Σ a·b, a register.
    """

    def __init__(self, lanes=16, mul_stages=2, tree_reg_every=2):
        self.lanes, self.mul_stages, self.tree_reg_every = lanes, mul_stages, tree_reg_every
        self.levels = ceil_log2(lanes)
        self.tree_regs = len(self._reg_levels())
        self.tw = 31 + self.levels
        self.latency = mul_stages + self.tree_regs
        super().__init__({
            "op_a": In(16 * lanes),
            "op_b": In(16 * lanes),
            "t": Out(signed(self.tw)),
        })

    def _reg_levels(self):
        """Tree levels (1-based; 0 = the products themselves) followed by a register."""
        if self.levels == 0:
            return [0]
        regs = [k for k in range(1, self.levels + 1) if k % self.tree_reg_every == 0]
        if self.levels not in regs:
            regs.append(self.levels)
        return regs

    def elaborate(self, platform):
        m = Module()
        row = []
        for i in range(self.lanes):
            a = self.op_a[16 * i:16 * (i + 1)].as_signed()
            b = self.op_b[16 * i:16 * (i + 1)].as_signed()
            p = Signal(signed(31), name=f"prod{i}")      # |a*b| <= 32767**2 < 2**30
            m.d.sync += p.eq(a * b)
            for s in range(1, self.mul_stages):
                q = Signal(signed(31), name=f"prod{i}_s{s}")
                m.d.sync += q.eq(p)
                p = q
            row.append(p)

        reg_levels = self._reg_levels()
        if self.levels == 0:                      # LANES = 1: register the single product
            m.d.sync += self.t.eq(row[0])
            return m
        for level in range(1, self.levels + 1):
            nxt = []
            for j in range(0, len(row), 2):
                s = wire(m, f"sum_l{level}_{j // 2}", row[j] + row[j + 1])
                if level == self.levels:
                    m.d.sync += self.t.eq(s)
                    s = self.t
                elif level in reg_levels:
                    q = Signal(signed(31 + level), name=f"sum_l{level}_{j // 2}_q")
                    m.d.sync += q.eq(s)
                    s = q
                nxt.append(s)
            row = nxt
        return m
