"""L2 request generation: rows split into pieces at 128-byte lines, and the golden request list
(spec tma.md §4.7; TMA-F23..F26, TMA-P3).

A row's in-bounds bytes form one span ``[a0, a0 + n)`` modulo 2^ADDR_W. :func:`pieces` splits it
only at 128-byte global line boundaries (2^ADDR_W being one of them), never merging spans of
different rows; each piece is one request, with ``line = address >> 7`` and ``sectors`` the 32-byte
sectors it intersects (bit s <-> line bytes 32s .. 32s+31). Requests follow traversal order: rows in
visit order, a row's pieces in span order (ascending address, continuing at 0 after the top).

A wholly OOB row gives no piece, so no request ever carries only OOB bytes (TMA-F23).
"""

from dataclasses import dataclass

from golden.tma.formats import LINE, SECTOR, L2Op, L2Req

__all__ = ["Piece", "sectors_of", "pieces", "row_pieces", "block_pieces", "read_requests",
           "write_requests"]


def sectors_of(lane, nbytes):
    """4-bit mask of the sectors that line bytes ``[lane, lane + nbytes)`` intersect."""
    return sum(1 << s for s in range(LINE // SECTOR)
               if lane < SECTOR * (s + 1) and lane + nbytes > SECTOR * s)


@dataclass(frozen=True)
class Piece:
    """The part of one row's span inside one 128-byte line: ``nbytes`` bytes at line lane
    ``lane``, destined for dense offset ``dense``; ``row`` is the row's visit index."""
    line: int
    sectors: int
    lane: int
    nbytes: int
    dense: int
    row: int = 0

    @property
    def addr(self):
        return self.line * LINE + self.lane


def pieces(addr, nbytes, dense, addr_w=64, row=0):
    """§4.7 ``pieces``: the span of ``nbytes`` bytes from global ``addr`` (dense offset ``dense``)
    split at 128-byte lines, wrapping to 0 after ``2**addr_w - 1``."""
    space = 1 << addr_w
    out = []
    k = 0
    while k < nbytes:
        a = (addr + k) % space
        lane = a % LINE
        m = min(nbytes - k, LINE - lane)
        out.append(Piece(line=(a - lane) >> 7, sectors=sectors_of(lane, m), lane=lane, nbytes=m,
                         dense=dense + k, row=row))
        k += m
    return out


def row_pieces(rows, addr_w=64):
    """All pieces of the rows of a tensor command (:class:`golden.tma.tile.Row`), in request order."""
    out = []
    for r in rows:
        if r.span_bytes:
            out.extend(pieces(r.addr, r.span_bytes, r.span_dense, addr_w, r.index))
    return out


def block_pieces(gaddr, nbytes, addr_w=64):
    """The pieces of a block op's single row ``[gaddr, gaddr + nbytes)`` (dense = offset from
    ``gaddr``; rule 0x0C keeps it below 2^ADDR_W)."""
    return pieces(gaddr, nbytes, 0, addr_w, 0)


def read_requests(ps):
    """READ requests, one per piece (tags are assigned by the tracker)."""
    return [L2Req(op=L2Op.READ, line=p.line, sectors=p.sectors, lane=p.lane, nbytes=p.nbytes,
                  dense=p.dense) for p in ps]


def write_requests(ps, source, op=L2Op.WRITE, dtype=0):
    """WRITE (or, in part 2, RED_*) requests, one per piece: ``data[lane + k]`` = ``source(p)[k]``
    (the piece's bytes), ``be`` = lanes ``[lane, lane + nbytes)``, ``sectors`` = the sectors holding
    ``be`` bits (TMA-F39, F48)."""
    out = []
    for p in ps:
        src = bytes(source(p))
        if len(src) != p.nbytes:
            raise ValueError(f"piece of {p.nbytes} bytes got {len(src)} source bytes")
        data = bytearray(LINE)
        data[p.lane:p.lane + p.nbytes] = src
        be = ((1 << p.nbytes) - 1) << p.lane
        out.append(L2Req(op=op, line=p.line, sectors=sectors_of(p.lane, p.nbytes), dtype=dtype,
                         data=bytes(data), be=be, lane=p.lane, nbytes=p.nbytes, dense=p.dense))
    return out
