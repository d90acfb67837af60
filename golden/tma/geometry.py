"""Setup precomputation (spec tma.md §4.5 ``geometry``, TMA-F9; footprint of rule 0x1E).

:func:`geometry` derives, from a decoded descriptor, the per-dimension sizes, byte pitches,
traversal strides, box extents and visit counts with the entries of dimensions >= rank replaced
(sizes 1, boxes 1, strides 1), so unused descriptor fields never matter (TMA-E6). It assumes the
descriptor passed validation up to the rules it relies on (rank, dtype).
"""

from dataclasses import dataclass

from golden.tma.formats import ESIZE, LINE, DType, Mode, Swizzle

__all__ = ["Geometry", "geometry", "box_bytes", "footprint", "ceil_div", "roundup"]


def ceil_div(a, b):
    return -(-a // b)


def roundup(a, b):
    return ceil_div(a, b) * b


@dataclass(frozen=True)
class Geometry:
    """§4.5 ``geometry(d)``: 5-entry lists, dimension 0 innermost.

    ``size[k]``  elements of dimension k (1 for k >= rank);
    ``pitch[k]`` bytes per unit of dimension k: ``esize`` for k = 0, ``tensor_stride[k-1]`` above;
    ``ts[k]``    traversal stride (tile mode; ``ts[0]`` = 1, entries >= rank 1);
    ``box[k]``   box extent (tile mode; entries >= rank 1);
    ``n[k]``     positions visited, ``ceil(box[k] / ts[k])`` (tile mode);
    ``row_elems`` / ``n_rows`` elements per row and rows (im2col: range_c / range_ndhw);
    ``box_bytes`` ``row_elems * n_rows * esize`` (im2col: range_c x range_ndhw x esize).

    In im2col mode ``ts``, ``box`` and ``n`` are None: the walk (§4.6,
    :mod:`golden.tma.im2col`) reads the traversal strides of the spatial dimensions itself and
    ``box_size`` is unused (TMA-F16).
    """
    rank: int
    mode: int
    esize: int
    size: tuple
    pitch: tuple
    ts: tuple
    box: tuple
    n: tuple
    row_elems: int
    n_rows: int
    box_bytes: int

    @property
    def row_bytes(self):
        return self.row_elems * self.esize


def geometry(d):
    """The §4.5 setup parameters of descriptor ``d`` (a :class:`~golden.tma.formats.TmaDesc`)."""
    r = d.rank
    es = ESIZE[DType(d.dtype)]
    size = tuple(d.tensor_size[k] if k < r else 1 for k in range(5))
    pitch = (es,) + tuple(d.tensor_stride[k] for k in range(4))
    if d.mode == Mode.TILE:
        ts = (1,) + tuple(d.traversal_stride[k] if k < r else 1 for k in range(1, 5))
        box = tuple(d.box_size[k] if k < r else 1 for k in range(5))
        n = tuple(ceil_div(box[k], ts[k]) for k in range(5))
        row_elems = n[0]
        n_rows = n[1] * n[2] * n[3] * n[4]
    else:
        ts = box = n = None
        row_elems, n_rows = d.range_c, d.range_ndhw
    return Geometry(rank=r, mode=d.mode, esize=es, size=size, pitch=pitch, ts=ts, box=box, n=n,
                    row_elems=row_elems, n_rows=n_rows, box_bytes=row_elems * n_rows * es)


def box_bytes(d):
    """Bytes a tile or im2col command moves (OOB fill included)."""
    return geometry(d).box_bytes


def footprint(d):
    """smem bytes reserved by a tensor command (rule 0x1E): box bytes, rounded up to 128 when
    swizzled."""
    b = box_bytes(d)
    return b if d.swizzle == Swizzle.NONE else roundup(b, LINE)
