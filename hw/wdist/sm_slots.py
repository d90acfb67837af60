"""``wd_sm_slots``: one SM's capacity registers, used counters and G-A1 free slots (WD-F1, WD-F2,
WD-F29).

The resource tracker holds one per SM. Every SM's copy is the same module (the tracker decides
which SM a ``cfg`` write or a completion is for), so the Verilog has one ``wd_sm_slots`` however
many SMs the build has.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from golden.common.fields import Fields
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import ge, lt
from hw.common.params import reject
from hw.common.shiftadd import shift_add_mul

__all__ = ["SmSlots", "shape_fields", "resource_widths"]

RESOURCES = ("regs", "smem", "warps", "slots")


def shape_fields():
    """A CTA's demand as ``cmd`` carries it (WD-I1): ``regs_g`` 9, ``smem_g`` 10, ``warps`` 7."""
    return Fields(("regs_g", 9), ("smem_g", 10), ("warps", 7))


def _bits(n):
    return max(1, n.bit_length())


def _min2(m, a, b, width, name):
    node = Signal(width, name=name)
    m.d.comb += node.eq(Mux(lt(a, b), a, b))
    return node


def _sat_sub(m, a, b, width, name):
    """max(0, a − b) in ``width`` bits (a ≥ b whenever the controller is correct)."""
    diff = Signal(max(len(a), len(b)) + 1, name=f"{name}_d")
    m.d.comb += diff.eq(a - b)
    node = Signal(width, name=name)
    m.d.comb += node.eq(Mux(diff[-1], 0, diff[:width]))
    return node


def _step(m, rem, bit, divisor, name, last):
    """:func:`hw.common.serialdiv.div_step` for a combinational chain: the same restoring step,
    with the next remainder a named signal that is the whole output of its multiplexer (none
    after the ``last`` step). ``div_step`` returns the remainder as a slice of an unnamed
    multiplexer: chained in one cycle, Amaranth 0.5 re-emits it and the subtraction behind it
    at every use (about ten times the Verilog at 32 SMs), and a name on the slice is an unread
    alias that ``verilator -Wall`` rejects (docs/flow.md). Returns (quotient bit, remainder)."""
    shifted = Cat(bit, rem)
    q = ge(shifted, divisor)
    if last:
        return q, None
    nxt = Signal(len(rem), name=name)
    m.d.comb += nxt.eq(Mux(q, (shifted - divisor)[:len(rem)], shifted[:len(rem)]))
    return q, nxt


def _quotient(m, dividend, divisor, qw, name):
    """min(dividend // divisor, 2**qw − 1) by ``qw`` chained restoring-division steps;
    2**qw − 1 when ``divisor`` is 0 (a resource with zero demand does not constrain, G-A1).

    The quotient saturates exactly when dividend ≥ divisor · 2**qw (which includes divisor 0).
    Otherwise the top bits ``dividend >> qw`` are already below the divisor and form the
    initial partial remainder (as wide as the divisor), and the low ``qw`` bits are shifted in,
    one step each.
    """
    n, dw = len(dividend), len(divisor)
    sat = ge(dividend, Cat(C(0, qw), divisor))
    low = Cat(dividend, C(0, qw))[:qw] if n < qw else dividend[:qw]
    if n > qw:
        high = dividend[qw:]
        rem = Cat(high, C(0, dw))[:dw] if len(high) < dw else high[:dw]
    else:
        rem = C(0, dw)
    qbits = []
    for i in reversed(range(qw)):
        q, rem = _step(m, rem, low[i], divisor, f"{name}_r{i}", i == 0)
        qbits.append(q)
    node = Signal(qw, name=name)
    m.d.comb += node.eq(Mux(sat, C((1 << qw) - 1, qw), Cat(*reversed(qbits))))
    return node


def resource_widths(p):
    """Register widths (regs_g, smem_g, warps, slots): the bits of each parameter maximum."""
    return (_bits(p.REG_CAP_G), _bits(p.SMEM_CAP_G), _bits(p.WARP_CAP), p.FREE_W)


class SmSlots(wiring.Component):
    """One SM's real resource state and its free slots for the head grid's shape (G-A1).

    Parameters
    ----------
    params : WdistParams

    Members
    -------
    cfg_we : In(1)
        Write ``cap`` and ``enable`` this cycle (a legal ``cfg`` for this SM, WD-I2).
    cap : In(StructLayout(regs, smem, warps, slots)), enable : In(1)
        The capacities (register widths, ``resource_widths``) and the enable bit to write.
    commit : In(1), commit_k : In(CNT_W), commit_shape : In(shape_fields)
        A commit adds ``commit_k`` CTAs of ``commit_shape`` (and ``commit_k`` slots).
    complete : In(1), complete_shape : In(shape_fields)
        A completion on this SM subtracts one CTA of ``complete_shape`` (and one slot); the
        tracker checked it does not underflow (WD-E6). Both in one cycle both land.
    shape : In(shape_fields)
        The head grid's CTA shape.
    used : Out(StructLayout(regs, smem, warps, slots))
        The used counters (registers; reset 0).
    free : Out(FREE_W)
        G-A1: min(slots left, regs left // regs_g, smem left // smem_g, warps left // warps)
        (a zero demand does not constrain), 0 while disabled; combinational from the registers.
    """

    def __init__(self, params):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {type(params).__name__}")
        self.p = params
        widths = resource_widths(params)
        regs = data.StructLayout(dict(zip(RESOURCES, widths)))
        shape = struct_layout(shape_fields())
        super().__init__({
            "cfg_we": In(1), "cap": In(regs), "enable": In(1),
            "commit": In(1), "commit_k": In(params.CNT_W), "commit_shape": In(shape),
            "complete": In(1), "complete_shape": In(shape),
            "shape": In(shape),
            "used": Out(regs),
            "free": Out(params.FREE_W),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        FW = p.FREE_W
        widths = resource_widths(p)
        maxima = (p.REG_CAP_G, p.SMEM_CAP_G, p.WARP_CAP, p.CTA_SLOTS)
        cap = [Signal(w, init=mx, name=f"cap_{n}") for n, w, mx in zip(RESOURCES, widths, maxima)]
        enable = Signal(init=1)
        used = [self.used[n] for n in RESOURCES]

        with m.If(self.cfg_we):
            m.d.sync += [enable.eq(self.enable)]
            m.d.sync += [cap[r].eq(self.cap[n]) for r, n in enumerate(RESOURCES)]

        # used counters: commit adds, completion subtracts (WD-F1); one assignment, so a commit
        # and a completion in one cycle both land
        cs, cc = self.commit_shape, self.complete_shape
        add_shape = (cs.regs_g, cs.smem_g, cs.warps)
        sub_shape = (cc.regs_g, cc.smem_g, cc.warps)
        k = self.commit_k
        for r in range(4):
            w = widths[r]
            if r < 3:
                prod, sub = shift_add_mul(k, add_shape[r])[:w], sub_shape[r]
            else:
                prod, sub = k, C(1, 1)
            m.d.sync += used[r].eq(
                (used[r] + Mux(self.commit, prod, 0) - Mux(self.complete, sub, 0))[:w])

        # free slots (WD-F2, WD-F29, G-A1)
        sh = self.shape
        demand = (sh.regs_g, sh.smem_g, sh.warps)
        rem = [_sat_sub(m, cap[r], used[r], widths[r], f"left_{RESOURCES[r]}") for r in range(4)]
        qs = [_quotient(m, rem[r], demand[r], FW, f"q_{RESOURCES[r]}") for r in range(3)]
        a = _min2(m, rem[3], qs[2], FW, "fmin_a")
        b = _min2(m, qs[0], qs[1], FW, "fmin_b")
        m.d.comb += self.free.eq(Mux(enable, Mux(lt(a, b), a, b), 0))
        return m
