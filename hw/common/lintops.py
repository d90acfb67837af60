"""Comparisons, selects and shifts written so that the generated Verilog lints clean.

Amaranth 0.5 hands Yosys the operands of a comparison at their own widths, and Yosys writes a
constant operand at its minimal width, so a plain ``x == 1`` or ``x >= 2`` on a wider ``x``
becomes ``x == 1'h1`` in the Verilog (``verilator -Wall``: WIDTHEXPAND), ``x == 0`` becomes a
logical NOT of a vector (WIDTHTRUNC), and a comparison that cannot fail at some parameter value
is a CMPCONST. ``bit_select``/``word_select`` by a signal become a shift assigned to a narrower
net (WIDTHTRUNC), a shift of a constant by a signal widens (WIDTHEXPAND), and an ``Array``
indexed by a value with more codes than elements is an incomplete ``case`` (CASEINCOMPLETE).
These helpers build the same functions from full-width XORs, subtractions (whose operand
extension the project waives, docs/flow.md) and multiplexers, and decide comparisons that are
constant at elaboration time in Python.

The same idioms live in ``hw.dfp.round``, ``hw.dfp.dot_ctl`` and ``hw.tma.validate`` (written
before this module); new code should use this one.
"""

from amaranth import Array, C, Cat, Mux, Signal, Value

__all__ = ["wire", "is_zero", "nonzero", "eq_const", "eq", "lt", "ge", "lt_const", "ge_const", "ge_const_bits",
           "gt_const", "le_const", "bit_at", "word_at", "select", "shift_left", "low_ones",
           "run_bits", "tree_sum", "wrap_inc"]


def _val(x):
    return Value.cast(x)


def is_zero(x):
    """``x == 0``."""
    return ~_val(x).any()


def nonzero(x):
    """``x != 0``."""
    return _val(x).any()


def eq_const(x, value):
    """``x == value`` for an unsigned ``x`` and an int ``value`` (constant 0 when out of range)."""
    x = _val(x)
    if not 0 <= value < 1 << len(x):
        return C(0, 1)
    return ~(x ^ C(value, len(x))).any()


def eq(a, b):
    """``a == b`` for unsigned values of any widths (an XOR at the common width)."""
    a, b = _val(a), _val(b)
    w = max(len(a), len(b))
    return ~(Cat(a, C(0, w - len(a))) ^ Cat(b, C(0, w - len(b)))).any()


def lt(a, b):
    """Unsigned ``a < b``: the borrow of ``a - b``."""
    return (_val(a) - _val(b))[-1]


def ge(a, b):
    """Unsigned ``a >= b``."""
    return ~lt(a, b)


def lt_const(x, value):
    """Unsigned ``x < value`` for an int ``value``; decided in Python when it cannot vary."""
    x = _val(x)
    if value <= 0:
        return C(0, 1)
    if value >= 1 << len(x):
        return C(1, 1)
    return (x - C(value, len(x)))[-1]


def ge_const(x, value):
    """Unsigned ``x >= value``."""
    return ~lt_const(x, value)


def ge_const_bits(v, n):
    """Unsigned ``v >= n`` for a constant ``n`` as AND/OR terms of the bits of ``v``, without the
    carry chain of :func:`ge_const`: for decodes that must stay shallow (a comparison with a
    constant lints badly). v >= n iff v has every bit of n, or some bit set in v and clear in n
    has all the higher bits of n set in v."""
    if n >> len(v):
        return C(0, 1)                         # beyond the range of v
    terms = []
    for b in range(len(v)):
        if not (n >> b) & 1:
            higher = [v[j] for j in range(b + 1, len(v)) if (n >> j) & 1]
            terms.append(Cat(v[b], *higher).all())
    higher_all = [v[j] for j in range(len(v)) if (n >> j) & 1]
    terms.append(Cat(*higher_all).all() if higher_all else C(1, 1))   # v has every bit of n
    return Cat(*terms).any()


def gt_const(x, value):
    """Unsigned ``x > value``."""
    return ~lt_const(x, value + 1)


def le_const(x, value):
    """Unsigned ``x <= value``."""
    return lt_const(x, value + 1)


def bit_at(vector, index):
    """``vector.bit_select(index, 1)`` as bit 0 of a full-width right shift."""
    return (_val(vector) >> index)[0]


def word_at(vector, index, width):
    """``vector.word_select(index, width)`` for a power-of-two ``width``: a full-width right
    shift by ``index`` followed by zeros, then the low ``width`` bits."""
    assert width & (width - 1) == 0, "word_at needs a power-of-two width"
    shift = Cat(C(0, width.bit_length() - 1), index) if width > 1 else index
    return (_val(vector) >> shift)[:width]


def select(items, index):
    """``Array(items)[index]`` with the array padded to every code of ``index`` (repeating the
    last item), so the generated ``case`` is complete."""
    items = list(items)
    index = _val(index)
    codes = 1 << len(index)
    if len(items) > codes:
        items = items[:codes]
    items = items + [items[-1]] * (codes - len(items))
    if len(items) == 1:
        return _val(items[0])
    return Array(items)[index]


def wire(m, name, value):
    """A named combinational copy of ``value``, which must be the whole output of one operator
    (a multiplexer, a logic operation, an add or subtract at its full width): a name on a slice
    or on another signal would be an unread alias in the Verilog, which lint flags. Naming stops
    Amaranth from repeating the logic for every use of an unnamed expression."""
    value = Value.cast(value)
    sig = Signal(value.shape(), name=name)
    m.d.comb += sig.eq(value)
    return sig


def shift_left(m, value, amount, width, unit=1, name="shl"):
    """``(value << (amount * unit))[:width]`` as one 2:1 multiplexer level per bit of
    ``amount``, every level ``width`` bits wide and a named signal of ``m`` (a plain ``<<`` by
    a signal widens its result; unnamed levels made Amaranth's netlist time grow with
    width x 2^levels: 43 s for one 2048-bit one-hot decode). The levels are driven under the
    ``m.If`` blocks open where it is called, so the result is valid only there."""
    value = _val(value)
    cur = Cat(value, C(0, max(0, width - len(value))))[:width]
    for k in range(len(_val(amount))):
        s = unit << k
        shifted = Cat(C(0, s), cur[:width - s]) if s < width else C(0, width)
        level = Signal(width, name=f"{name}{k}")
        m.d.comb += level.eq(Mux(amount[k], shifted, cur))
        cur = level
    return cur


def wrap_inc(p, depth):
    """``p + 1`` wrapping to 0 after ``depth - 1``, at the width of ``p`` (a ring pointer; no
    compare when ``depth`` is ``2 ** len(p)``)."""
    p = _val(p)
    step = (p + 1)[:len(p)]
    if depth == 1 << len(p):
        return step
    return Mux(eq_const(p, depth - 1), C(0, len(p)), step)


def low_ones(m, n, width, name="ones"):
    """``width`` bits whose low ``n`` are set (all of them when ``n`` >= ``width``). An
    expression: a signal naming the slice would be an unread alias in the Verilog."""
    return (shift_left(m, C(1, 1), n, width + 1, name=name) - 1)[:width]


def run_bits(m, start, n, limit, width, name="run"):
    """``n`` (at most ``limit``) set bits from bit ``start`` of a ``width``-bit vector: a run
    of sectors to mark."""
    return shift_left(m, low_ones(m, n, limit, name=f"{name}_n"), start, width, name=name)


def tree_sum(values):
    """Sum of ``values`` (e.g. the bits of a vector, for a population count) as a balanced
    tree of adders, each as wide as its operands plus one (a chained ``sum()`` makes a deep
    chain of full-width adders)."""
    values = [_val(v) for v in values]
    if not values:
        return C(0, 1)
    while len(values) > 1:
        values = [values[k] + values[k + 1] if k + 1 < len(values) else values[k]
                  for k in range(0, len(values), 2)]
    return values[0]
