"""Blocked DFP (Fig 21A-D, spec dfp.md DFP-F49): a 2-D tensor split into BR x BC blocks, each
with its own shared exponent and a 16-bit metadata record (DFP-F47), and a blocked GEMM whose
chains switch exponents at block boundaries in blocked CHUNK mode (DFP-F48)."""

from dataclasses import dataclass

import numpy as np

from golden.dfp.dot import DotUnit
from golden.dfp.formats import BIASED, CHUNK, Config
from golden.dfp.quant import dequant, quant_block

__all__ = ["BlockedTensor", "tile", "quant_blocked", "dequant_blocked", "blocked_gemm"]


@dataclass
class BlockedTensor:
    """Quantized blocked tensor: int16 elements in the tensor's shape, per-block sf_b, bl and
    metadata arrays of shape (rows / BR, cols / BC)."""
    I: np.ndarray
    sf_b: np.ndarray
    bl: np.ndarray
    meta: np.ndarray
    br: int
    bc: int


def tile(x, br=32, bc=32):
    """Blocks of ``x`` in row-major block order: [(block row, block col, elements row-major)].
    The shape must be a multiple of (br, bc) (a 64 x 64 tensor gives four 32 x 32 blocks)."""
    x = np.asarray(x)
    rows, cols = x.shape
    if rows % br or cols % bc:
        raise ValueError(f"shape {x.shape} is not a multiple of the block shape ({br}, {bc})")
    return [(p, q, x[p * br:(p + 1) * br, q * bc:(q + 1) * bc].reshape(-1))
            for p in range(rows // br) for q in range(cols // bc)]


def quant_blocked(x, br=32, bc=32, round_mode=BIASED, bias_bits=1):
    """Quantize every block with ``quant_block`` (its own exponent and metadata record)."""
    x = np.asarray(x, dtype=np.float32)
    out = np.zeros(x.shape, np.int64)
    shape = (x.shape[0] // br, x.shape[1] // bc) if x.ndim == 2 else (0, 0)
    sf_b, bl, meta = (np.zeros(shape, np.int64) for _ in range(3))
    for p, q, elements in tile(x, br, bc):
        block = quant_block(elements.view(np.uint32), round_mode, bias_bits)
        out[p * br:(p + 1) * br, q * bc:(q + 1) * bc] = np.array(block.I).reshape(br, bc)
        sf_b[p, q], bl[p, q], meta[p, q] = block.sf_b, block.bl, block.meta
    return BlockedTensor(out, sf_b, bl, meta, br, bc)


def dequant_blocked(bt):
    """FP32 values of a blocked tensor (each element with its block's exponent)."""
    out = np.zeros(bt.I.shape, np.uint32)
    for (r, c), i in np.ndenumerate(bt.I):
        out[r, c] = dequant(int(i), int(bt.sf_b[r // bt.br, c // bt.bc]))
    return out.view(np.float32)


def blocked_gemm(a, b, bm=32, bk=32, bn=32, lanes=16, acc_w=32, round_mode=BIASED, cfg=None):
    """C = A @ B with A in bm x bk blocks and B in bk x bn blocks (DFP-F49).

    C[i, j] is one chain over K in blocked CHUNK mode: the beats of k-block kb carry A block
    (i // bm, kb) and B block (kb, j // bn); the first beat of every k-block after the first
    is a ``blk`` beat that reloads es_a, es_b, bl_a and bl_b (DFP-F48). bk must be a multiple
    of LANES. Returns (C as float32, the quantized A and B).
    """
    if bk % lanes:
        raise ValueError(f"bk = {bk} must be a multiple of lanes = {lanes}")
    cfg = cfg or Config(mode=CHUNK)
    if cfg.mode != CHUNK:
        raise ValueError("blocked_gemm runs blocked CHUNK mode")
    qa = quant_blocked(a, bm, bk, round_mode)
    qb = quant_blocked(b, bk, bn, round_mode)
    m_rows, k = qa.I.shape
    n_cols = qb.I.shape[1]
    unit = DotUnit(lanes, acc_w)
    beats_per_block = bk // lanes
    c = np.zeros((m_rows, n_cols), np.uint32)
    for i in range(m_rows):
        for j in range(n_cols):
            segments = [(int(qa.sf_b[i // bm, kb]) - 141, int(qb.sf_b[kb, j // bn]) - 141,
                         int(qa.bl[i // bm, kb]), int(qb.bl[kb, j // bn])) for kb in range(k // bk)]
            es_a, es_b, bl_a, bl_b = segments[0]
            blk = {kb * beats_per_block: seg for kb, seg in enumerate(segments) if kb}
            res = unit.chain(qa.I[i], qb.I[:, j], es_a, es_b, cfg, bl_a=bl_a, bl_b=bl_b, blk=blk)
            c[i, j] = res["fp32"]
    return c.view(np.float32), qa, qb
