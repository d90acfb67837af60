"""Tile-mode box traversal, the mode dispatch and OOB fill values (spec tma.md §4.5, §4.7 rows,
§4.8 ``fill``; TMA-F12..F15, F22, F51).

- :func:`tile_elements` is the §4.5 enumeration verbatim: every visited element as
  ``(dense_offset, in_bounds, global_address)`` in visit order (dimension 0 innermost, positions
  ``c_d = coord[d] + i_d * ts[d]``, ``ts[0]`` = 1, exact integer coordinates, addresses modulo
  2^ADDR_W).
- :func:`tile_rows` gives the same traversal one row at a time (a row = the ``n[0]`` elements that
  share ``i1..i4``), with the row's in-bounds span: the in-bounds elements of a row are contiguous in
  index and in address (``ts[0]`` = 1, ``pitch[0]`` = esize), so a row is described by where its
  span starts in dense and in global space and how many bytes it has (§4.7).
- :func:`elements` / :func:`rows` dispatch on the descriptor mode: tile mode here, im2col mode to
  :func:`golden.tma.im2col.im2col_elements` / :func:`~golden.tma.im2col.im2col_rows` (§4.6), which
  yield the same ``(dense_offset, in_bounds, global_address)`` triples and :class:`Row` objects
  (an im2col row is one pixel of ``range_c`` elements).
- :func:`fill_bytes` is the esize-byte OOB fill pattern (ZERO, CONST, NAN).

Interleaved tensors (TMA-F51) need nothing special: their descriptor already describes dimension 0
as one 16/32-byte channel slice and the sliced C coordinate as an outer dimension.
"""

import itertools
from dataclasses import dataclass

from golden.tma.formats import DType, Mode, OobFill
from golden.tma.geometry import geometry

__all__ = ["Row", "tile_elements", "tile_rows", "elements", "rows", "fill_bytes"]


def _coords(d, cmd):
    return [cmd.coord[k] if k < d.rank else 0 for k in range(5)]


def tile_elements(d, cmd, addr_w=64):
    """§4.5 ``tile_elements``: yields ``(dense_off, in_bounds, gaddr)`` in visit order."""
    g = geometry(d)
    es, r = g.esize, g.rank
    co = _coords(d, cmd)
    space = 1 << addr_w
    lin = 0
    for i4, i3, i2, i1, i0 in itertools.product(*(range(g.n[k]) for k in (4, 3, 2, 1, 0))):
        i = (i0, i1, i2, i3, i4)
        c = [co[k] + i[k] * g.ts[k] for k in range(5)]
        ib = all(0 <= c[k] < g.size[k] for k in range(r))
        ga = (d.global_address + sum(c[k] * g.pitch[k] for k in range(r))) % space
        yield lin * es, ib, ga
        lin += 1


@dataclass(frozen=True)
class Row:
    """One row of a box (§4.7): ``row_elems`` consecutive visited elements (tile mode: the elements
    sharing i1..i4; im2col mode: one pixel of ``range_c`` channels).

    ``index``      position in visit order;
    ``dense``      dense byte offset of the row's first element;
    ``nbytes``     bytes of the whole row (in bounds or not);
    ``span_dense`` dense offset of the first in-bounds byte;
    ``span_bytes`` in-bounds bytes (0 for a wholly OOB row);
    ``addr``       global address of the first in-bounds byte, modulo 2^ADDR_W (None if none);
    ``coord``      coordinates c_0..c_4 of the row's first element (exact integers).
    """
    index: int
    dense: int
    nbytes: int
    span_dense: int
    span_bytes: int
    addr: object
    coord: tuple

    def oob_ranges(self):
        """Dense byte ranges ``[lo, hi)`` of the row's OOB elements (at most two)."""
        if not self.span_bytes:
            return [(self.dense, self.dense + self.nbytes)]
        out = []
        if self.span_dense > self.dense:
            out.append((self.dense, self.span_dense))
        end, row_end = self.span_dense + self.span_bytes, self.dense + self.nbytes
        if end < row_end:
            out.append((end, row_end))
        return out


def tile_rows(d, cmd, addr_w=64):
    """The rows of a tile-mode command in visit order (see :class:`Row`)."""
    g = geometry(d)
    es, r = g.esize, g.rank
    co = _coords(d, cmd)
    space = 1 << addr_w
    # dimension 0: the in-bounds index interval [lo0, hi0) of a row (ts[0] = 1)
    n0 = g.n[0]
    lo0 = max(0, -co[0])
    hi0 = min(n0, g.size[0] - co[0])
    span = max(0, hi0 - lo0)
    base = d.global_address + (co[0] + lo0) * es
    # outer dimensions: per position (coordinate, in bounds, byte contribution)
    outer = []
    for k in (4, 3, 2, 1):
        col = []
        for i in range(g.n[k]):
            c = co[k] + i * g.ts[k]
            inb = k >= r or 0 <= c < g.size[k]
            col.append((c, inb, c * g.pitch[k] if k < r else 0))
        outer.append(col)
    out = []
    row_bytes = n0 * es
    for index, (p4, p3, p2, p1) in enumerate(itertools.product(*outer)):
        dense = index * row_bytes
        coord = (co[0], p1[0], p2[0], p3[0], p4[0])
        if span and p1[1] and p2[1] and p3[1] and p4[1]:
            addr = (base + p1[2] + p2[2] + p3[2] + p4[2]) % space
            out.append(Row(index, dense, row_bytes, dense + lo0 * es, span * es, addr, coord))
        else:
            out.append(Row(index, dense, row_bytes, dense + row_bytes, 0, None, coord))
    return out


def elements(d, cmd, addr_w=64):
    """§4.5/§4.6 enumeration of a tensor command's box: ``(dense_off, in_bounds, gaddr)`` in visit
    order."""
    if d.mode == Mode.TILE:
        return tile_elements(d, cmd, addr_w)
    from golden.tma.im2col import im2col_elements      # im2col imports Row from this module
    return im2col_elements(d, cmd, addr_w)


def rows(d, cmd, addr_w=64):
    """The rows of a tensor command's box, in visit order (:class:`Row`)."""
    if d.mode == Mode.TILE:
        return tile_rows(d, cmd, addr_w)
    from golden.tma.im2col import im2col_rows
    return im2col_rows(d, cmd, addr_w)


def fill_bytes(d, nan_pattern):
    """The esize bytes written for an OOB element (§4.8 ``fill``; TMA-F22): zeros, the low esize
    bytes of ``oob_const`` little-endian, or ``nan_pattern[dtype]`` (TMA-C9)."""
    es = geometry(d).esize
    if d.oob_fill == OobFill.ZERO:
        return bytes(es)
    if d.oob_fill == OobFill.CONST:
        return (d.oob_const & ((1 << (8 * es)) - 1)).to_bytes(es, "little")
    if d.oob_fill == OobFill.NAN:
        return nan_pattern[DType(d.dtype)].to_bytes(es, "little")
    raise ValueError(f"oob_fill {d.oob_fill} is reserved (rule 0x17)")
