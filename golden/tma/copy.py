"""Descriptor-less block copies (spec tma.md §4.10, §4.7 block row; TMA-F47..F50; seed ¶161-162).

A block op moves ``16 * num_blocks`` bytes as a single row ``[gaddr, gaddr + 16 * num_blocks)``
(dense offset = offset from ``gaddr``), split into pieces at 128-byte global lines. Block copies are
never swizzled; smem addresses need only 16-byte alignment, so beats are counted on the smem rows of
``smem_addr + dense`` (TMA-F33, §6 item 44). ``num_blocks = 0`` is a NOP (TMA-F50).

- BLOCK_G2S: one READ per piece; each response writes its bytes to ``smem_addr + dense`` of every
  destination CTA (``dest_mask``), with barrier tx summing to ``16 * num_blocks``.
- BLOCK_S2G: one WRITE per piece, data taken from CTA ``cta_id`` at ``smem_addr + dense``, ``be``
  exactly on the piece's lanes.
- BLOCK_S2S: no L2 traffic; smem rows of CTA ``cta_id`` are read and written to ``smem_dst`` of every
  destination CTA, one beat per destination row; rule 0x20 guarantees identical or disjoint ranges
  when the source CTA is a destination, so a snapshot copy is exact.

BLOCK_RED and BLOCK_PREFETCH (part 2) reuse :func:`block_span_pieces`.
"""

from golden.tma.formats import BLOCK, LINE, Swizzle
from golden.tma.l2req import block_pieces, write_requests
from golden.tma.swizzle import range_beats

__all__ = ["block_bytes", "block_span_pieces", "g2s_pieces", "s2g_requests", "s2s_plan",
           "smem_rows"]


def block_bytes(cmd):
    return BLOCK * cmd.num_blocks


def block_span_pieces(cmd, addr_w=64):
    """The pieces of a block op's row (TMA-F47, F48; §4.7 "Block ops")."""
    return block_pieces(cmd.gaddr, block_bytes(cmd), addr_w)


def g2s_pieces(cmd, addr_w=64):
    """BLOCK_G2S: the READ pieces; each lands unswizzled at ``smem_addr + dense``."""
    return block_span_pieces(cmd, addr_w)


def smem_rows(start, nbytes):
    """The 128-byte smem rows that ``[start, start + nbytes)`` touches, ascending."""
    if nbytes <= 0:
        return []
    return list(range(start // LINE, (start + nbytes - 1) // LINE + 1))


def s2g_requests(cmd, smem, addr_w=64):
    """BLOCK_S2G: ``(requests, smem_reads)``: one WRITE per piece with the piece's source bytes from
    CTA ``cta_id`` at ``smem_addr + dense``, and the ``(row, cta)`` smem reads that fetch them."""
    ps = block_span_pieces(cmd, addr_w)
    reads = []
    for p in ps:
        reads.extend((row, cmd.cta_id) for row in smem_rows(cmd.smem_addr + p.dense, p.nbytes))
    reqs = write_requests(ps, lambda p: smem.read(cmd.cta_id, cmd.smem_addr + p.dense, p.nbytes))
    return reqs, reads


def s2s_plan(cmd, smem):
    """BLOCK_S2S: ``(beats, smem_reads)``: the source range of CTA ``cta_id`` read row by row and
    written to ``smem_dst`` of every CTA in ``dest_mask``, one beat per destination row."""
    n = block_bytes(cmd)
    data = smem.read(cmd.cta_id, cmd.smem_addr, n)
    reads = [(row, cmd.cta_id) for row in smem_rows(cmd.smem_addr, n)]
    beats = range_beats(cmd.smem_dst, data.tobytes(), Swizzle.NONE, cmd.dest_mask)
    return beats, reads
