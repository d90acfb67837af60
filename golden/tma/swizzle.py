"""Swizzle and the shared-memory writer's byte placement (spec tma.md TMA-F30, F31, F33, TMA-C8,
§4.8, Fig 9).

- :func:`default_swz_table` / :func:`check_swz_table`: the ``SWZ_TABLE`` parameter (TMA-C8), keyed
  by the Swizzle code m in {1, 2, 3}; each of its 8 rows is a permutation of the 8 16-byte chunks.
- :func:`swz` / :func:`swz_array`: ``(A & ~0x70) | (T[m][(A>>7)&7][(A>>4)&7] << 4)`` on a
  CTA-relative byte address (TMA-F31); identity for NONE.
- :func:`range_beats`: the beats that write a contiguous destination range (one response piece, a
  block copy or an S2S row): one beat per 128-byte smem row the *unswizzled* range touches
  (TMA-F33); the swizzle only moves bytes between lanes of the same row.
- :func:`scatter_beats`: the beats that write an arbitrary set of (unswizzled) addresses, one per
  smem row (used for OOB fill, TMA-F22/F23).
"""

import numpy as np

from golden.tma.formats import LINE, SmemBeat, Swizzle

__all__ = ["default_swz_table", "check_swz_table", "swz", "swz_array", "range_beats",
           "scatter_beats", "be_from_lanes"]

_MODES = (Swizzle.SW32B, Swizzle.SW64B, Swizzle.SW128B)


def default_swz_table():
    """TMA-C8 default: ``T[m][r][k] = k ^ (r & (2**m - 1))`` (row masks 1, 3, 7)."""
    return {int(m): tuple(tuple(k ^ (r & ((1 << m) - 1)) for k in range(8)) for r in range(8))
            for m in _MODES}


def check_swz_table(table):
    """``table`` normalised to ``{m: 8 tuples of 8 ints}``; ValueError unless the keys are exactly
    {1, 2, 3} and every row is a permutation of 0..7 (TMA-C8)."""
    if not hasattr(table, "keys") or {int(k) for k in table.keys()} != {1, 2, 3}:
        raise ValueError(f"SWZ_TABLE must be keyed by exactly {{1, 2, 3}}, got "
                         f"{sorted(table) if hasattr(table, 'keys') else table!r}")
    out = {}
    for m, rows in table.items():
        rows = tuple(tuple(int(k) for k in row) for row in rows)
        if len(rows) != 8:
            raise ValueError(f"SWZ_TABLE[{m}] must have 8 rows, got {len(rows)}")
        for r, row in enumerate(rows):
            if sorted(row) != list(range(8)):
                raise ValueError(f"SWZ_TABLE[{m}][{r}] = {row} is not a permutation of 0..7")
        out[int(m)] = rows
    return out


_DEFAULT = default_swz_table()


def swz(addr, mode, table=None):
    """The swizzled CTA-relative byte address of ``addr`` under Swizzle code ``mode`` (§4.8)."""
    if mode == Swizzle.NONE:
        return addr
    t = _DEFAULT if table is None else table
    return (addr & ~0x70) | (t[int(mode)][(addr >> 7) & 7][(addr >> 4) & 7] << 4)


def swz_array(addr, mode, table=None):
    """:func:`swz` on a numpy integer array."""
    addr = np.asarray(addr, dtype=np.int64)
    if mode == Swizzle.NONE:
        return addr
    t = np.asarray((_DEFAULT if table is None else table)[int(mode)], dtype=np.int64)
    return (addr & ~0x70) | (t[(addr >> 7) & 7, (addr >> 4) & 7] << 4)


def be_from_lanes(lanes):
    """128-bit byte-enable integer with bit j set for each lane j in ``lanes``."""
    bits = np.zeros(LINE, dtype=np.uint8)
    bits[np.asarray(lanes, dtype=np.int64)] = 1
    return int.from_bytes(np.packbits(bits, bitorder="little").tobytes(), "little")


def range_beats(start, data, mode, mask, table=None):
    """Beats writing ``data`` to the CTA-relative range ``[start, start + len(data))`` (before
    swizzle) of every CTA in ``mask``: one beat per 128-byte row the range touches, ``be`` exactly on
    the (swizzled) lanes written."""
    data = np.frombuffer(bytes(data), dtype=np.uint8)
    beats = []
    k = 0
    n = len(data)
    while k < n:
        a = start + k
        m = min(n - k, LINE - (a % LINE))
        addrs = swz_array(np.arange(a, a + m), mode, table)
        lanes = addrs & (LINE - 1)
        row_data = np.zeros(LINE, dtype=np.uint8)
        row_data[lanes] = data[k:k + m]
        beats.append(SmemBeat(row=a // LINE, data=row_data.tobytes(), be=be_from_lanes(lanes),
                              mask=mask))
        k += m
    return beats


def scatter_beats(addrs, data, mode, mask, table=None):
    """Beats writing ``data[i]`` to unswizzled address ``addrs[i]``, one beat per smem row that holds
    any of them, in ascending row order."""
    addrs = swz_array(addrs, mode, table)
    data = np.asarray(data, dtype=np.uint8)
    if addrs.size == 0:
        return []
    order = np.argsort(addrs, kind="stable")
    addrs, data = addrs[order], data[order]
    rows = addrs >> 7
    cuts = np.flatnonzero(np.diff(rows)) + 1
    beats = []
    for a, d in zip(np.split(addrs, cuts), np.split(data, cuts)):
        lanes = a & (LINE - 1)
        row_data = np.zeros(LINE, dtype=np.uint8)
        row_data[lanes] = d
        beats.append(SmemBeat(row=int(a[0] >> 7), data=row_data.tobytes(), be=be_from_lanes(lanes),
                              mask=mask))
    return beats
