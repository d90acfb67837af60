"""Reduction arithmetic of the memory-side reduction unit (spec tma.md §4.9; TMA-F41, F44).

:func:`red_apply` combines one element of memory (``old``) with one element of shared-memory
source data (``b``), both little-endian byte strings of the dtype's esize, for every
(op, dtype) pair of ``RED_OK``:

=============  ==============================================================================
ADD            integers: ``(old + b) mod 2^(8 es)``; F32: ``ftz(rne32(ftz(old) + ftz(b)))``,
               NaN result -> 0x7FFFFFFF; F16 / BF16: ``rne(old + b)`` with subnormals kept,
               NaN result -> 0x7FFF
MIN / MAX      signed compare for S32 / S64, unsigned for U32 / U64; F16 / BF16: -0 < +0, one
               NaN operand -> the other operand, both NaN -> 0x7FFF
INC (U32)      ``0 if old >= b else old + 1``
DEC (U32)      ``b if (old == 0 or old > b) else old - 1``
AND / OR / XOR bitwise
=============  ==============================================================================

Float additions are done exactly: both operands are decoded to integers ``m * 2^e``, added as
integers and the exact sum is rounded once to the target format, round to nearest, ties to even,
overflow to the infinity of the sum's sign. This equals §4.9's "float64 add, then one RNE
rounding", which is the same value because that double rounding is innocuous (53 >= 2p + 2). An
exact zero sum is +0 unless both addends are -0 (IEEE 754 §6.3, round to nearest). ``ftz`` keeps
only the sign bit of a value whose exponent field is 0.

:func:`red_line` is what the memory does with one RED request on a 128-byte line: ``red_apply``
on every es-aligned element whose byte enables are set; the golden TMA model
(``golden.tma.store``) and the testbenches' memory models call it.
"""

from golden.tma.formats import ESIZE, LINE, RED_OK, DType, RedOp

__all__ = ["red_apply", "red_line", "float_add", "float_minmax", "FLOAT_FORMATS", "RED_NAN"]

# (exponent bits, fraction bits) of the float dtypes that reductions use
FLOAT_FORMATS = {DType.F32: (8, 23), DType.F16: (5, 10), DType.BF16: (8, 7)}
# canonical NaN results of §4.9
RED_NAN = {DType.F32: 0x7FFFFFFF, DType.F16: 0x7FFF, DType.BF16: 0x7FFF}
_SIGNED = (DType.S32, DType.S64)


def _check_pair(op, dtype):
    try:
        op, dtype = RedOp(int(op)), DType(int(dtype))
    except ValueError:
        raise ValueError(f"red_apply: ({op!r}, {dtype!r}) is not a reduction op and dtype") \
            from None
    if (op, dtype) not in RED_OK:
        raise ValueError(f"red_apply: ({op.name}, {dtype.name}) is not a supported reduction "
                         f"pair (§4.9 RED_OK)")
    return op, dtype


# ---------------------------------------------------------------------------------------------
# Float helpers on bit patterns
def _fields(bits, ew, fw):
    return bits >> (ew + fw) & 1, bits >> fw & ((1 << ew) - 1), bits & ((1 << fw) - 1)


def _is_nan(bits, ew, fw):
    _, e, f = _fields(bits, ew, fw)
    return e == (1 << ew) - 1 and f != 0


def _decode_finite(bits, ew, fw):
    """(sign, m, e) with value ``(-1)^sign * m * 2^e`` of a finite pattern (m may be 0)."""
    s, e, f = _fields(bits, ew, fw)
    bias = (1 << (ew - 1)) - 1
    if e == 0:
        return s, f, 1 - bias - fw
    return s, f | 1 << fw, e - bias - fw


def _round_rne(sign, m, e, ew, fw):
    """Bit pattern of ``(-1)^sign * m * 2^e`` (m > 0) rounded to nearest even; overflow -> inf."""
    bias = (1 << (ew - 1)) - 1
    emin = 1 - bias
    top = m.bit_length() - 1 + e                       # floor(log2 |value|)
    q = max(top, emin) - fw                             # exponent of the result's last place
    shift = q - e
    if shift > 0:
        r = m >> shift
        rem = m - (r << shift)
        half = 1 << (shift - 1)
        if rem > half or (rem == half and r & 1):
            r += 1
    else:
        r = m << -shift
    if r >> (fw + 1):                                   # rounding carried into a new binade
        r >>= 1
        q += 1
    if r >> fw:                                         # normal
        efield = q + fw + bias
        if efield >= (1 << ew) - 1:
            return sign << (ew + fw) | ((1 << ew) - 1) << fw
        return sign << (ew + fw) | efield << fw | (r & ((1 << fw) - 1))
    return sign << (ew + fw) | r                        # subnormal (q = emin - fw)


def _ftz(bits, ew, fw):
    s, e, _ = _fields(bits, ew, fw)
    return s << (ew + fw) if e == 0 else bits


def float_add(a, b, ew, fw, nan, ftz=False):
    """IEEE 754 addition of bit patterns ``a`` and ``b`` (1 + ``ew`` + ``fw`` bits), round to
    nearest even, NaN results replaced by ``nan``; ``ftz`` flushes inputs and the result."""
    if ftz:
        a, b = _ftz(a, ew, fw), _ftz(b, ew, fw)
    emax = (1 << ew) - 1
    sa, ea, fa = _fields(a, ew, fw)
    sb, eb, fb = _fields(b, ew, fw)
    if (ea == emax and fa) or (eb == emax and fb):
        return nan
    if ea == emax or eb == emax:
        if ea == emax and eb == emax and sa != sb:
            return nan                                  # inf - inf
        return a if ea == emax else b
    sa, ma, xa = _decode_finite(a, ew, fw)
    sb, mb, xb = _decode_finite(b, ew, fw)
    x = min(xa, xb)
    total = (-1) ** sa * (ma << (xa - x)) + (-1) ** sb * (mb << (xb - x))
    if total == 0:
        return (sa & sb) << (ew + fw)                   # -0 only for (-0) + (-0)
    out = _round_rne(int(total < 0), abs(total), x, ew, fw)
    return _ftz(out, ew, fw) if ftz else out


def float_minmax(a, b, ew, fw, nan, want_max):
    """§4.9 MIN / MAX of two float bit patterns: -0 < +0; one NaN -> the other operand; both
    NaN -> ``nan``."""
    a_nan, b_nan = _is_nan(a, ew, fw), _is_nan(b, ew, fw)
    if a_nan and b_nan:
        return nan
    if a_nan:
        return b
    if b_nan:
        return a
    sign = 1 << (ew + fw)
    mask = (sign << 1) - 1

    def key(v):                                         # total order of sign-magnitude values
        return v ^ mask if v & sign else v | sign

    pick_a = key(a) > key(b) if want_max else key(a) < key(b)
    return a if pick_a else b


# ---------------------------------------------------------------------------------------------
def _apply_int(op, dtype, old, b, bits):
    mask = (1 << bits) - 1
    if op == RedOp.ADD:
        return (old + b) & mask
    if op in (RedOp.MIN, RedOp.MAX):
        if dtype in _SIGNED:
            ko, kb = old - ((old >> (bits - 1)) << bits), b - ((b >> (bits - 1)) << bits)
        else:
            ko, kb = old, b
        if op == RedOp.MIN:
            return old if ko <= kb else b
        return old if ko >= kb else b
    if op == RedOp.INC:
        return 0 if old >= b else old + 1
    if op == RedOp.DEC:
        return b if (old == 0 or old > b) else old - 1
    if op == RedOp.AND:
        return old & b
    if op == RedOp.OR:
        return old | b
    return old ^ b                                      # XOR


def red_apply(op, dtype, old, b):
    """§4.9 ``red_apply``: the new memory element for reduction ``op`` (RedOp) of type ``dtype``
    (DType), memory value ``old`` and source ``b`` (little-endian bytes of ESIZE[dtype] each).

    Returns ``bytes`` of the same length. ``ValueError`` for a pair outside ``RED_OK`` or operands
    of the wrong length.
    """
    op, dtype = _check_pair(op, dtype)
    es = ESIZE[dtype]
    old, b = bytes(old), bytes(b)
    if len(old) != es or len(b) != es:
        raise ValueError(f"red_apply: {dtype.name} operands are {es} bytes, got {len(old)} and "
                         f"{len(b)}")
    x, y = int.from_bytes(old, "little"), int.from_bytes(b, "little")
    if dtype in FLOAT_FORMATS:
        ew, fw = FLOAT_FORMATS[dtype]
        if op == RedOp.ADD:
            r = float_add(x, y, ew, fw, RED_NAN[dtype], ftz=dtype == DType.F32)
        else:
            r = float_minmax(x, y, ew, fw, RED_NAN[dtype], op == RedOp.MAX)
    else:
        r = _apply_int(op, dtype, x, y, 8 * es)
    return r.to_bytes(es, "little")


def red_line(op, dtype, old_line, data, be):
    """The 128-byte line the memory holds after a RED request: ``red_apply(op, dtype, old, b)``
    on every ESIZE[dtype]-aligned element of ``old_line`` whose byte enables in ``be`` (bit j =
    lane j) are set, with ``b`` the same lanes of ``data``; bytes whose enable is clear keep
    their old value.

    The TMA never sends a partially enabled element (§4.9). Should one arrive, its enabled bytes
    get the corresponding bytes of the element's result, which is what ``TmaRedUnit`` (and a
    byte-masked write of the result line) does. ``ValueError`` for a pair outside ``RED_OK`` or
    lines that are not 128 bytes.
    """
    op, dtype = _check_pair(op, dtype)
    old_line, data = bytes(old_line), bytes(data)
    if len(old_line) != LINE or len(data) != LINE:
        raise ValueError(f"red_line: lines are {LINE} bytes, got {len(old_line)} and {len(data)}")
    be = int(be)
    if not 0 <= be < 1 << LINE:
        raise ValueError(f"red_line: be must be a {LINE}-bit mask, got {be:#x}")
    es = ESIZE[dtype]
    out = bytearray(old_line)
    for k in range(0, LINE, es):
        enables = be >> k & ((1 << es) - 1)
        if not enables:
            continue
        new = red_apply(op, dtype, old_line[k:k + es], data[k:k + es])
        for j in range(es):
            if enables >> j & 1:
                out[k + j] = new[j]
    return bytes(out)
