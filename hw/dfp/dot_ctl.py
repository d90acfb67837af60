"""Internal layouts and small helpers of the ``DfpDotUnit`` pipeline (spec dfp §4.7-§4.9).

The front (``hw.dfp.dot_front``) attaches a :data:`BEAT_CTL` word to every pipeline slot; it
travels beside the products through the multiplier and adder tree to the precision manager
(``hw.dfp.manager``), which turns accumulator states into :func:`event_layout` records for the
result path (``hw.dfp.dot_post``). Every slot carries its ``clr`` marker, so the ``clr`` strobe
stays ordered with the beats around it.
"""

from amaranth import Cat, Const, Mux, Signal, Value, signed
from amaranth.lib import data

__all__ = ["BEAT_CTL", "event_layout", "entry_layout", "tsh", "wire", "lt", "gt", "eq_const",
           "max_u", "min_u", "below_mask", "tsh_parts", "gt_bits"]

# One pipeline slot: the beat's control bits and its chain/segment values (DFP-I2, §4.7).
BEAT_CTL = data.StructLayout({
    "valid": 1,          # a beat occupies the slot
    "clr": 1,            # clr strobe, ordered before this slot's beat (DFP-F39)
    "start": 1,          # the beat starts a chain (first = 1, or DFP-E3)
    "end_prev": 1,       # the beat cuts an open chain (DFP-E4): end it before this beat
    "close_prev": 1,     # CHUNK: close the open chunk before this beat (blk beat or DFP-E4)
    "restart": 1,        # the accumulator restarts from 0 (chain start or new chunk/segment)
    "chunk_end": 1,      # CHUNK: this beat fills its chunk (n_in = L_b)
    "last": 1,
    "eop": 1,
    "mode": 2,
    "ovf_sat": 1,
    "fig20_en": 1,
    "t_lo": 6,
    "t_hi": 6,
    "rbase": 6,          # max(cfg.r0, R0_MIN)
    "es_ab": signed(11),  # es_a + es_b of the beat's segment
    "rfix": 6,           # r of a NONE (0), PRESHIFT (ex) or CHUNK (rc) result
    "op_err": 1,
    "meta_err": 1,
    "proto_err": 1,      # the chain this beat starts is a DFP-E3 chain
})


def event_layout(acc_w):
    """One accumulator event (a CHUNK chunk close and/or a chain end) for the result path. Its
    valid bit, accumulator and exponent travel as separate whole ports (they feed the FP32
    converter directly)."""
    return data.StructLayout({
        "close": 1, "end": 1, "headroom": 6,
        "r": 6, "shifts": 6, "ovf": 1, "sat_cnt": 16, "mode": 2,
        "op_err": 1, "meta_err": 1, "proto_err": 1,
    })


def entry_layout(acc_w):
    """An event after FP32 conversion: the entry of the result queue (``hw.dfp.dot_post``)."""
    return data.StructLayout({
        "close": 1, "end": 1, "first_close": 1, "part": 32,
        "acc": signed(acc_w), "es_out": signed(12), "r": 6, "shifts": 6, "ovf": 1,
        "sat_cnt": 16, "headroom": 6, "chunks": 16, "mode": 2,
        "op_err": 1, "meta_err": 1, "proto_err": 1,
    })


def wire(m, name, value):
    """A named combinational copy of ``value``, which must be the whole output of one operator
    (so the Verilog has no unread alias of it; see ``hw.dfp.fp32._wire``)."""
    value = Value.cast(value)
    sig = Signal(value.shape(), name=name)
    m.d.comb += sig.eq(value)
    return sig


def lt(a, b):
    """Unsigned ``a < b`` as the sign of a − b (a comparison of unequal widths, or with a
    constant, lints badly; a subtraction does not). ``b`` is a Value or an int."""
    a = Value.cast(a)
    if isinstance(b, int):
        if b <= 0:
            return Const(0, 1)
        if b >= 1 << len(a):
            return Const(1, 1)
        b = Const(b, len(a))
    return (a - b)[-1]


def gt(a, b):
    """Unsigned ``a > b``, see :func:`lt`."""
    a = Value.cast(a)
    if isinstance(b, int):
        if b < 0:
            return Const(1, 1)
        if b >= (1 << len(a)) - 1:
            return Const(0, 1)
        b = Const(b, len(a))
    return (b - a)[-1]


def eq_const(v, k):
    """``v == k`` for an unsigned Value and a constant, as an AND of (inverted) bits."""
    if not 0 <= k < (1 << len(v)):
        return Const(0, 1)
    return Cat(*[v[i] if (k >> i) & 1 else ~v[i] for i in range(len(v))]).all()


def max_u(a, b):
    return Mux(gt(a, b), a, b)


def min_u(a, b):
    return Mux(lt(a, b), a, b)


def gt_bits(v, k):
    """Unsigned ``v > k`` for a constant ``k`` as plain AND/OR logic on v's bits (LUTs, no
    comparator chain): from the top bit down, v wins at the first bit where v is 1 and k 0."""
    if k < 0:
        return Const(1, 1)
    if k >= (1 << len(v)) - 1:
        return Const(0, 1)
    terms, equal = [], []
    for j in reversed(range(len(v))):
        if not (k >> j) & 1:
            terms.append(Cat(v[j], *equal).all())
        equal.append(v[j] if (k >> j) & 1 else ~v[j])
    return Cat(*terms).any()


def below_mask(s, w):
    """``w`` bits, bit i set when i < s: the bits a right shift by ``s`` drops (LUT logic)."""
    return Cat(*[gt_bits(s, i) for i in range(w)])


def tsh_parts(m, x, s, name):
    """(floor, sticky) of tsh(x, s) for a signed ``x`` and unsigned ``s``: floor = x >> s
    (arithmetic) and sticky = a set bit is shifted out. tsh(x, s) = floor + (x < 0 & sticky)."""
    floor = wire(m, f"{name}_floor", x >> s)
    sticky = (x.as_unsigned() & below_mask(s, len(x))).any()
    return floor, sticky


def tsh(m, x, s, name):
    """tsh(x, s) of §4.1 for a signed value ``x`` and an unsigned shift ``s``: the floor shift
    plus one when a negative ``x`` loses set bits (one shifter and one increment)."""
    floor, sticky = tsh_parts(m, x, s, name)
    return (floor + (x[-1] & sticky))[:len(x)].as_signed()
