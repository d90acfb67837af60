"""Tensor stores, reductions and prefetches (spec tma.md §4.7 request lists, §4.9, §4.10;
TMA-F32, F39..F41, F45, F46, F52).

A TENSOR_STORE or TENSOR_RED walks the same rows and pieces as the load with the same descriptor
(tile or im2col). Each piece becomes one WRITE (or RED_<red_op> with ``dtype`` = the descriptor's
element type) whose lane bytes are read from CTA ``cta_id`` at the swizzled addresses a load would
write, ``swz(smem_addr + dense + k)`` (TMA-F32). OOB elements are never written and a row without
in-bounds bytes makes no request (TMA-F40). Aliased rows (TMA-F52) keep their own requests; the
memory applies them in acceptance order (:func:`apply_to_memory`).

A TENSOR_PREFETCH issues the load's pieces as PREFETCH requests with ``sectors = 0xF``, dropping
a request whose line equals the previous request's line of the same command (TMA-F45); a
BLOCK_PREFETCH issues one per 128-byte line of ``[gaddr, gaddr + 16 * num_blocks)`` (TMA-F46).
Prefetches take no tag and get no response.
"""

import numpy as np

from golden.tma.copy import block_span_pieces, smem_rows
from golden.tma.formats import LINE, CmdOp, L2Op, L2Req
from golden.tma.l2req import row_pieces, write_requests
from golden.tma.reduce import red_line
from golden.tma.swizzle import swz_array

__all__ = ["store_requests", "block_red_requests", "prefetch_requests",
           "block_prefetch_requests", "apply_to_memory", "is_red"]


def is_red(op):
    """True for an ``L2Op`` RED_<op> code."""
    return int(op) >= L2Op.RED_ADD


def _smem_source(smem, cta, base, swizzle, table):
    """``source(piece)`` for :func:`write_requests`: the piece's bytes read from CTA ``cta`` at
    ``swz(base + dense + k)``. The swizzle keeps every byte in its 128-byte row, so the rows of
    the dense range are read once and indexed."""
    def source(p):
        start = base + p.dense
        lo = start // LINE * LINE
        rows = smem.read(cta, lo, (start + p.nbytes - 1) // LINE * LINE + LINE - lo)
        return rows[swz_array(start + np.arange(p.nbytes), swizzle, table) - lo].tobytes()
    return source


def _reads(cmd, ps):
    return [(row, cmd.cta_id) for p in ps for row in smem_rows(cmd.smem_addr + p.dense, p.nbytes)]


def store_requests(cmd, d, rows, smem, table=None, addr_w=64):
    """TENSOR_STORE / TENSOR_RED: ``(requests, smem_reads)``. One WRITE, or RED_<red_op> with
    ``dtype`` = the descriptor's, per piece of ``rows`` (the load's rows, §4.7), its bytes read
    from CTA ``cta_id`` at ``swz(smem_addr + dense + k)`` (TMA-F32, F39, F41); ``smem_reads``
    are the ``(row, cta)`` 128-byte rows those bytes lie in."""
    if cmd.op == CmdOp.TENSOR_RED:
        op, dtype = L2Op.RED_ADD + cmd.red_op, d.dtype
    else:
        op, dtype = L2Op.WRITE, 0
    ps = row_pieces(rows, addr_w)
    source = _smem_source(smem, cmd.cta_id, cmd.smem_addr, d.swizzle, table)
    return write_requests(ps, source, op=op, dtype=dtype), _reads(cmd, ps)


def block_red_requests(cmd, smem, addr_w=64):
    """BLOCK_RED: the BLOCK_S2G requests with ``op = RED_<red_op>`` and ``dtype = cmd.dtype``
    (TMA-F41), and their smem reads."""
    ps = block_span_pieces(cmd, addr_w)
    source = _smem_source(smem, cmd.cta_id, cmd.smem_addr, 0, None)
    return (write_requests(ps, source, op=L2Op.RED_ADD + cmd.red_op, dtype=cmd.dtype),
            _reads(cmd, ps))


def prefetch_requests(rows, addr_w=64):
    """TENSOR_PREFETCH: the load's pieces as PREFETCH requests (``sectors = 0xF``), a request
    dropped when its line equals the previous request's (TMA-F45)."""
    out = []
    for p in row_pieces(rows, addr_w):
        if out and out[-1].line == p.line:
            continue
        out.append(L2Req(op=L2Op.PREFETCH, line=p.line, sectors=0xF))
    return out


def block_prefetch_requests(cmd):
    """BLOCK_PREFETCH: one PREFETCH per 128-byte line of ``[gaddr, gaddr + 16 * num_blocks)``,
    ascending (TMA-F46)."""
    return [L2Req(op=L2Op.PREFETCH, line=p.line, sectors=0xF) for p in block_span_pieces(cmd)]


def apply_to_memory(gmem, req):
    """What the memory does with an accepted WRITE or RED request, in acceptance order
    (TMA-I4): a WRITE stores its enabled lanes; a RED applies ``red_apply`` to each enabled
    element of the line (§4.9, TmaRedUnit)."""
    base = req.line * LINE
    if req.op == L2Op.WRITE:
        gmem.write_masked(base, req.data, req.be)
    elif is_red(req.op):
        old = gmem.read(base, LINE).tobytes()
        new = red_line(int(req.op) - L2Op.RED_ADD, req.dtype, old, req.data, req.be)
        gmem.write_masked(base, new, req.be)
