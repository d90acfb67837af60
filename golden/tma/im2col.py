"""im2col traversal (spec tma.md §4.6, §4.7 rows; TMA-F15..F21).

An im2col command loads ``range_ndhw`` pixels x ``range_c`` channels of a rank 3..5 tensor with
dimensions (C, W, N), (C, W, H, N) or (C, W, H, D, N), innermost first (TMA-F16). With S = rank - 2
spatial dimensions s = 0 (W), 1 (H), 2 (D):

- the bounding box of s is ``[lo_s, hi_s] = [base_corner[s], tensor_size[s+1] - 1 + far_corner[s]]``
  (TMA-F17);
- pixel base positions start at the command's spatial coordinates ``coord[1..S]`` and image
  ``n = coord[rank-1]``, and advance W fastest by ``traversal_stride[1]``, then H by ``[2]``, then D
  by ``[3]``; a position passing ``hi_s`` restarts at ``lo_s`` and carries, and a carry out of the
  last spatial dimension increments n (TMA-F19). A base off the stride grid is legal: the first
  wrap brings it back to ``lo_s``;
- the pixel read for base position p is ``p + off`` with ``off`` unpacked from the 16-bit
  ``im2col_off`` (:func:`unpack_offsets`; TMA-F20);
- pixel i holds channels ``coord[0] .. coord[0] + range_c - 1`` at dense offsets
  ``(i * range_c + j) * esize`` (TMA-F18, F21); a channel is in bounds iff its pixel is (n and every
  spatial coordinate inside the tensor) and ``0 <= c < tensor_size[0]`` (TMA-F15);
- every coordinate is an exact Python integer (no wrapping, §4.5 "Arithmetic"); byte addresses
  are taken modulo 2^ADDR_W (TMA-F13). ``traversal_stride[0]`` and ``[rank-1]`` are unused.

:func:`im2col_elements` is the §4.6 enumeration element by element, :func:`im2col_rows` the same
walk one pixel (= one row, §4.7) at a time as :class:`golden.tma.tile.Row` objects, which is what
``golden.tma.tile.rows`` (and hence the model's load path and the request lists of §4.7) uses for
an im2col descriptor. :func:`im2col_pixels` is the walk itself, shared by both.
"""

from dataclasses import dataclass

from golden.tma.geometry import geometry
from golden.tma.tile import Row

__all__ = ["OFFSET_BITS", "unpack_offsets", "pack_offsets", "Pixel", "Im2colBox", "im2col_box",
           "im2col_pixels", "im2col_elements", "im2col_rows"]

# §4.6 / §6 item 13: per rank, the widths of the packed unsigned offsets (W lowest)
OFFSET_BITS = {3: (16,), 4: (8, 8), 5: (5, 5, 5)}


def unpack_offsets(v, rank):
    """§4.6 ``unpack_offsets``: the per-spatial-dimension offsets [w, (h, (d))] of the 16-bit
    ``im2col_off`` ``v`` (rank 3: 1 x 16 bits; rank 4: 2 x 8; rank 5: 3 x 5, bit 15 ignored)."""
    if rank == 3:
        return [v & 0xFFFF]
    if rank == 4:
        return [v & 0xFF, (v >> 8) & 0xFF]
    if rank == 5:
        return [v & 0x1F, (v >> 5) & 0x1F, (v >> 10) & 0x1F]
    raise ValueError(f"im2col rank must be 3..5, got {rank}")


def pack_offsets(offsets, rank):
    """Inverse of :func:`unpack_offsets` (bit 15 = 0 at rank 5): offsets (w, h, d) -> 16 bits.
    Raises ``ValueError`` when an offset does not fit its field."""
    bits = OFFSET_BITS.get(rank)
    if bits is None:
        raise ValueError(f"im2col rank must be 3..5, got {rank}")
    if len(offsets) != len(bits):
        raise ValueError(f"rank {rank} takes {len(bits)} offsets, got {len(offsets)}")
    v, shift = 0, 0
    for o, b in zip(offsets, bits):
        if not 0 <= o < 1 << b:
            raise ValueError(f"offset {o} outside [0, {(1 << b) - 1}] at rank {rank}")
        v |= o << shift
        shift += b
    return v


@dataclass(frozen=True)
class Pixel:
    """One pixel of an im2col walk: index ``i``, image ``n``, base position ``base`` and pixel
    ``pix`` = base + off (tuples over s = W, H, D), ``in_bounds`` (n and every spatial coordinate
    inside the tensor; channels not considered) and ``addr``, the exact (unreduced) byte address
    of channel 0 of the pixel."""
    i: int
    n: int
    base: tuple
    pix: tuple
    in_bounds: bool
    addr: int


@dataclass(frozen=True)
class Im2colBox:
    """The per-command walk parameters of §4.6 for the S = rank - 2 spatial dimensions (W, H,
    D): offsets ``off``, bounding box ``[lo, hi]`` (TMA-F17), traversal strides ``ts`` and the
    starting base positions ``pos``; shared by the enumeration and Setup's golden job."""
    S: int
    off: tuple
    lo: tuple
    hi: tuple
    ts: tuple
    pos: tuple


def im2col_box(d, cmd):
    """:class:`Im2colBox` of an im2col command."""
    r = d.rank
    S = r - 2
    return Im2colBox(S, tuple(unpack_offsets(cmd.im2col_off, r)),
                     tuple(d.base_corner[s] for s in range(S)),
                     tuple(d.tensor_size[s + 1] - 1 + d.far_corner[s] for s in range(S)),
                     tuple(d.traversal_stride[s + 1] for s in range(S)),
                     tuple(cmd.coord[s + 1] for s in range(S)))


def im2col_pixels(d, cmd):
    """The ``range_ndhw`` pixels of an im2col command in visit order (TMA-F17..F20)."""
    r = d.rank
    b = im2col_box(d, cmd)
    S, off, lo, hi, ts = b.S, b.off, b.lo, b.hi, b.ts
    pos = list(b.pos)
    n = cmd.coord[r - 1]
    n_size = d.tensor_size[r - 1]
    for i in range(d.range_ndhw):
        pix = tuple(pos[s] + off[s] for s in range(S))
        pin = 0 <= n < n_size and all(0 <= pix[s] < d.tensor_size[s + 1] for s in range(S))
        addr = (d.global_address + sum(pix[s] * d.tensor_stride[s] for s in range(S))
                + n * d.tensor_stride[r - 2])
        yield Pixel(i, n, tuple(pos), pix, pin, addr)
        s = 0                                                   # advance, W fastest
        while True:
            pos[s] += ts[s]
            if pos[s] <= hi[s]:
                break
            pos[s] = lo[s]
            s += 1
            if s == S:
                n += 1
                break


def im2col_elements(d, cmd, addr_w=64):
    """§4.6 ``im2col_elements``: yields ``(dense_off, in_bounds, gaddr)`` for channel j of pixel i,
    i outer, in visit order; ``gaddr`` modulo 2^``addr_w``."""
    es = geometry(d).esize
    space = 1 << addr_w
    c0, rc, csize = cmd.coord[0], d.range_c, d.tensor_size[0]
    for p in im2col_pixels(d, cmd):
        for j in range(rc):
            c = c0 + j
            yield (p.i * rc + j) * es, p.in_bounds and 0 <= c < csize, (p.addr + c * es) % space


def im2col_rows(d, cmd, addr_w=64):
    """The rows of an im2col command (one per pixel, ``range_c`` elements each, §4.7) as
    :class:`~golden.tma.tile.Row` objects, in visit order. ``Row.coord`` holds the coordinates
    c_0..c_4 of the row's first element: ``(coord[0], pixel w, (h, (d,)) n)`` padded with 0."""
    g = geometry(d)
    es, r = g.esize, d.rank
    space = 1 << addr_w
    c0, rc = cmd.coord[0], d.range_c
    # channels: the in-bounds index interval [lo, hi) of every row
    lo = max(0, -c0)
    hi = min(rc, d.tensor_size[0] - c0)
    span = max(0, hi - lo)
    row_bytes = rc * es
    out = []
    for p in im2col_pixels(d, cmd):
        dense = p.i * row_bytes
        coord = ((c0,) + p.pix + (p.n,) + (0,) * (5 - r))
        if span and p.in_bounds:
            out.append(Row(p.i, dense, row_bytes, dense + lo * es, span * es,
                           (p.addr + (c0 + lo) * es) % space, coord))
        else:
            out.append(Row(p.i, dense, row_bytes, dense + row_bytes, 0, None, coord))
    return out
