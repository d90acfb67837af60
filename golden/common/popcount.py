"""Golden model of the exclusive prefix popcount (spec wdist WD-F9, G-A2's "rank").

Two forms of the same function: :func:`prefix_popcount`, the plain running count that defines
it, and :func:`blelloch_prefix_popcount`, the work-efficient up-sweep / down-sweep scan that
the hardware (``hw.common.popcount``) is built as, so that the scan's structure is checked
against the definition in Python before it is checked in RTL.
"""

__all__ = ["count_width", "prefix_popcount", "blelloch_prefix_popcount", "pack", "unpack"]

MAX_N = 1024


def _check(bits, n):
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= MAX_N:
        raise ValueError(f"prefix_popcount: n must be an integer in 1..{MAX_N}, got {n!r}")
    if not isinstance(bits, int) or not 0 <= bits < (1 << n):
        raise ValueError(f"prefix_popcount: bits must be an integer in 0..2**{n}-1, got {bits!r}")


def count_width(n):
    """Bits of one prefix count and of the total: enough for 0..n, i.e. ceil(log2(n + 1))."""
    return n.bit_length()


def prefix_popcount(bits, n):
    """[popcount(bits[0:k]) for k in range(n)]: o[0] = 0, bit 0 counted first."""
    _check(bits, n)
    out = []
    rank = 0
    for k in range(n):
        out.append(rank)
        rank += (bits >> k) & 1
    return out


def blelloch_prefix_popcount(bits, n, trace=None):
    """The same result as :func:`prefix_popcount`, computed as a Blelloch scan.

    The bits are padded with zeros to P = 2**L leaves (L = ceil(log2 n)).

    * Up-sweep, d = 1..L: ``x[p] += x[p - 2**(d-1)]`` for p = 2**d - 1, 2**(d+1) - 1, ...;
      afterwards x[p] holds the count of the 2**d bits ending at p, and x[P-1] the total.
    * Down-sweep: x[P-1] = 0, then for d = L-1..0 and the same p as level d+1:
      ``t = x[p - 2**d]; x[p - 2**d] = x[p]; x[p] += t``. Afterwards x[k] is the exclusive
      prefix count of bit k.

    Returns ``(prefix, total)``. When ``trace`` is a list, one ``(phase, d, adds)`` tuple per level
    is appended (``adds`` = additions that level performs), giving the scan's depth (levels) and
    work (additions).
    """
    _check(bits, n)
    levels = (n - 1).bit_length()
    size = 1 << levels
    x = [(bits >> k) & 1 if k < n else 0 for k in range(size)]
    for d in range(1, levels + 1):
        step, half = 1 << d, 1 << (d - 1)
        adds = 0
        for p in range(step - 1, size, step):
            x[p] += x[p - half]
            adds += 1
        if trace is not None:
            trace.append(("up", d, adds))
    total = x[size - 1]
    x[size - 1] = 0
    for d in reversed(range(levels)):
        step, half = 1 << (d + 1), 1 << d
        adds = 0
        for p in range(step - 1, size, step):
            t = x[p - half]
            x[p - half] = x[p]
            x[p] += t
            adds += 1
        if trace is not None:
            trace.append(("down", d, adds))
    return x[:n], total


def pack(counts, n):
    """The flat ``o`` port value of ``PrefixPopcount(n)``: counts[k] at bits k*w .. k*w+w-1."""
    w = count_width(n)
    value = 0
    for k, c in enumerate(counts):
        value |= c << (k * w)
    return value


def unpack(value, n):
    """Inverse of :func:`pack`: the n counts held in a flat ``o`` port value."""
    w = count_width(n)
    mask = (1 << w) - 1
    return [(value >> (k * w)) & mask for k in range(n)]
