"""Setup validation (spec tma.md §3.4, §4.4; TMA-F10, TMA-E1..E7).

:func:`validate` returns the :class:`~golden.tma.formats.ErrCode` of the first violated rule in
table order (0 = accepted), evaluating only the rules of the command's op (TMA-E5):

- every op: 0x01 reserved opcode, 0x02 multicast on a non-multicast op, 0x03 empty multicast mask;
- WAIT_ALL / DESC_INVAL: nothing else;
- block ops: a NOP (``num_blocks = 0``) nothing else; then 0x09 (BLOCK_RED dtype), 0x0B, 0x0C, 0x1C
  (BLOCK_RED), and except for BLOCK_PREFETCH 0x1D, 0x1E, 0x1F (G2S/S2S), 0x20 (S2S);
- tensor ops: 0x04 .. 0x1C on the command and its descriptor, and except for TENSOR_PREFETCH
  0x1D, 0x1E, 0x1F (TENSOR_LOAD).

Rules 0x01-0x04 need no descriptor: :func:`precheck` evaluates them alone, and
:func:`is_cache_user` tells whether a command looks its descriptor up in the cache (TMA-F4, §4.12).
:func:`check_descriptor` evaluates the descriptor-only subset, for the encoder.
"""

from golden.tma.formats import (
    BLOCK, BLOCK_OPS, BOX_MAX, CONTROL_OPS, ESIZE, FLOAT_DTYPES, LINE, MBAR_OPS, MCAST_OPS,
    RANGE_C_MAX, RANGE_NDHW_MAX, RED_OK, SLICE_BYTES, SWIZZLE_SPAN, TENSOR_OPS, TS_MAX, CmdOp,
    DType, ErrCode as E, Interleave, Mode, OobFill, Swizzle)
from golden.tma.geometry import footprint

__all__ = ["validate", "precheck", "is_cache_user", "check_descriptor", "IM2COL_CORNER_LIMIT"]

_STRIDE_LIMIT = 1 << 40
IM2COL_CORNER_LIMIT = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}     # rule 0x19: [-lim, lim)


def precheck(cmd):
    """Rules 0x01-0x04 (they need no descriptor): the error code, or 0."""
    op = cmd.op
    if not 0 <= op <= CmdOp.DESC_INVAL:
        return E.E_OPCODE
    if cmd.mcast and op not in MCAST_OPS:
        return E.E_MCAST_OP
    if cmd.mcast and cmd.cta_mask == 0:
        return E.E_MCAST_MASK
    if op in TENSOR_OPS and cmd.desc_addr % LINE:
        return E.E_DESC_ALIGN
    return E.OK


def is_cache_user(cmd):
    """TMA-F4 / §4.12: a tensor op that passes rules 0x01-0x04 (it looks its descriptor up,
    whatever later rules decide)."""
    return cmd.op in TENSOR_OPS and precheck(cmd) == E.OK


def validate(cmd, d, p):
    """§4.4: the first violated rule's code for command ``cmd`` with decoded descriptor ``d``
    (ignored, may be None, for non-tensor ops) under parameters ``p``; 0 when accepted."""
    code = precheck(cmd)
    if code or cmd.op in CONTROL_OPS:
        return code
    if cmd.op in BLOCK_OPS:
        return _validate_block(cmd, p)
    return _validate_tensor(cmd, d, p)


def _validate_block(cmd, p):
    op, nb = cmd.op, cmd.num_blocks
    if nb == 0:
        return E.OK                                                      # NOP (TMA-F50)
    if op == CmdOp.BLOCK_RED and cmd.dtype > DType.TF32_FTZ:
        return E.E_DTYPE
    if cmd.gaddr % BLOCK:
        return E.E_GADDR_ALIGN
    if cmd.gaddr + BLOCK * nb > p.ADDR_SPACE:
        return E.E_GADDR_RANGE
    if op == CmdOp.BLOCK_RED and (cmd.red_op, cmd.dtype) not in RED_OK:
        return E.E_REDOP_DTYPE
    if op == CmdOp.BLOCK_PREFETCH:
        return E.OK
    ranges = [cmd.smem_addr, cmd.smem_dst] if op == CmdOp.BLOCK_S2S else [cmd.smem_addr]
    if any(a % BLOCK for a in ranges):
        return E.E_SMEM_ALIGN
    if any(a + BLOCK * nb > p.SMEM_SIZE for a in ranges):
        return E.E_SMEM_RANGE
    if op in MBAR_OPS and cmd.mbar_addr % 8:
        return E.E_MBAR_ALIGN
    if (op == CmdOp.BLOCK_S2S and (not cmd.mcast or (cmd.cta_mask >> cmd.cta_id) & 1)
            and cmd.smem_addr != cmd.smem_dst and abs(cmd.smem_addr - cmd.smem_dst) < BLOCK * nb):
        return E.E_S2S_OVERLAP
    return E.OK


def _validate_tensor(cmd, d, p):
    r = d.rank
    if not 1 <= r <= 5:
        return E.E_RANK
    if cmd.rank != r:
        return E.E_RANK_MISMATCH
    if cmd.mode != d.mode:
        return E.E_MODE_MISMATCH
    code = check_descriptor(d, p, cmd)
    if code:
        return code
    if cmd.op == CmdOp.TENSOR_RED and (cmd.red_op, d.dtype) not in RED_OK:
        return E.E_REDOP_DTYPE
    if cmd.op == CmdOp.TENSOR_PREFETCH:
        return E.OK
    align = 1024 if d.swizzle != Swizzle.NONE else LINE
    if cmd.smem_addr % align:
        return E.E_SMEM_ALIGN
    if cmd.smem_addr + footprint(d) > p.SMEM_SIZE:
        return E.E_SMEM_RANGE
    if cmd.op == CmdOp.TENSOR_LOAD and cmd.mbar_addr % 8:
        return E.E_MBAR_ALIGN
    return E.OK


def check_descriptor(d, p, cmd=None):
    """Rules 0x05 and 0x08 .. 0x1B that concern the descriptor, in table order; the command enters
    only through rule 0x1B (im2col base coordinates), skipped when ``cmd`` is None. Rules 0x06/0x07
    (command against descriptor) and 0x1C onwards are not evaluated here."""
    r = d.rank
    if not 1 <= r <= 5:
        return E.E_RANK
    if d.mode == Mode.IM2COL and r < 3:
        return E.E_IM2COL_RANK
    if d.dtype > DType.TF32_FTZ:
        return E.E_DTYPE
    es = ESIZE[DType(d.dtype)]
    if d.interleave == 3 or (d.interleave != Interleave.NONE and (r < 3 or d.mode == Mode.IM2COL)):
        return E.E_INTERLEAVE
    align = 32 if d.interleave == Interleave.I32B else 16
    if d.global_address % align:
        return E.E_GADDR_ALIGN
    if d.global_address >= p.ADDR_SPACE:
        return E.E_GADDR_RANGE
    if any(d.tensor_size[k] == 0 for k in range(r)):
        return E.E_SIZE
    if any(d.tensor_stride[k] % align for k in range(r - 1)):
        return E.E_STRIDE_ALIGN
    if any(d.tensor_stride[k] >= _STRIDE_LIMIT for k in range(r - 1)):
        return E.E_STRIDE_RANGE
    if d.interleave != Interleave.NONE and (
            d.tensor_size[0] * es != SLICE_BYTES[Interleave(d.interleave)]
            or d.box_size[0] != d.tensor_size[0]):
        return E.E_INTERLEAVE_SHAPE
    if d.mode == Mode.TILE and any(not 1 <= d.box_size[k] <= BOX_MAX for k in range(r)):
        return E.E_BOX_RANGE
    if d.mode == Mode.IM2COL and not (1 <= d.range_c <= RANGE_C_MAX
                                      and 1 <= d.range_ndhw <= RANGE_NDHW_MAX):
        return E.E_IM2COL_RANGE
    inner = (d.box_size[0] if d.mode == Mode.TILE else d.range_c) * es
    if d.interleave == Interleave.NONE and inner % 16:
        return E.E_BOX_INNER
    if any(not 1 <= d.traversal_stride[k] <= TS_MAX for k in range(r)):
        return E.E_TS_RANGE
    if d.swizzle != Swizzle.NONE and inner > SWIZZLE_SPAN[Swizzle(d.swizzle)]:
        return E.E_SWIZZLE_SPAN
    if d.interleave == Interleave.I32B and d.swizzle != Swizzle.SW32B:
        return E.E_INTERLEAVE_SWIZZLE
    if d.oob_fill == 3:
        return E.E_OOB_MODE
    if d.oob_fill == OobFill.NAN and d.dtype not in FLOAT_DTYPES:
        return E.E_OOB_NAN_DTYPE
    if d.mode == Mode.IM2COL:
        spatial = r - 2
        lim = IM2COL_CORNER_LIMIT[r]
        if any(not -lim <= v < lim for s in range(spatial)
               for v in (d.base_corner[s], d.far_corner[s])):
            return E.E_IM2COL_CORNER
        if any(d.tensor_size[s + 1] - d.base_corner[s] + d.far_corner[s] < 1
               for s in range(spatial)):
            return E.E_IM2COL_BBOX
        if cmd is not None and any(
                not d.base_corner[s] <= cmd.coord[s + 1] <= d.tensor_size[s + 1] - 1 + d.far_corner[s]
                for s in range(spatial)):
            return E.E_IM2COL_BASE
    return E.OK

