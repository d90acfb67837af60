"""The §3.4 rule conditions of TMA Setup as combinational logic (spec tma.md §3.4, §4.4; TMA-F10,
TMA-E1, E2, E5, E6).

:func:`rule_conditions` builds, from a command and its descriptor (views of ``cmd_fields`` and
``DESC_FIELDS``), one 1-bit value per error code 0x01..0x20: "this rule applies to this op and is
violated". Each condition already contains the gating of the rule's "Ops" column (TMA-E5: block
NOPs and control ops see only 0x01..0x03, prefetches skip 0x1D..0x1F), and reads only fields of
dimensions below the rank (TMA-E6). Conditions that a lower-numbered rule makes ill-defined (a
reserved rank, dtype or interleave) may take any value: :func:`first_code` picks the lowest
violated code, which is exactly the golden ``validate`` order (TMA-E2).

The tensor footprint rule 0x1E needs the box size (a product of up to five visit counts); Setup
evaluates it one pipeline stage later with :func:`footprint_violation` and ORs it into bit 0x1E.
"""

from amaranth import C, Cat, Mux

from golden.tma.formats import (BLOCK, FLOAT_DTYPES, RED_OK, CmdOp, DType, ErrCode, Interleave,
                                OobFill, Swizzle)
from golden.tma.jobs import es_log2
from golden.tma.validate import IM2COL_CORNER_LIMIT

__all__ = ["N_CODES", "lt", "le", "eqc", "eqv", "decode", "shl_small", "es_of", "is_float",
           "red_ok", "in_set", "rule_conditions", "footprint_violation", "first_code"]

N_CODES = max(ErrCode) + 1            # bits 0x00 (unused) .. 0x20


# Comparisons and small shifts written so that Yosys emits equal-width operands (Verilator -Wall
# flags a plain ``x < 3`` as WIDTHEXPAND): orderings are the sign of an exact Amaranth
# subtraction, equalities an XOR at full width, variable shifts a multiplexer of constant shifts.

def lt(a, b):
    """``a < b`` for any widths and signedness (ints allowed): the sign of ``a - b``."""
    return (a - b)[-1]


def le(a, b):
    return ~lt(b, a)


def eqc(x, value):
    """``x == value`` for an unsigned ``x`` and an int ``value``."""
    if not 0 <= value < 1 << len(x):
        return C(0, 1)
    return ~(x ^ C(value, len(x))).any()


def eqv(a, b):
    """``a == b`` for unsigned values of any widths."""
    w = max(len(a), len(b))
    return ~(Cat(a, C(0, w - len(a))) ^ Cat(b, C(0, w - len(b)))).any()


def decode(x, n):
    """One-hot ``n``-bit decode of ``x`` (bit k set when x == k)."""
    return Cat(*(eqc(x, k) for k in range(n)))


def shl_small(x, sh, max_sh, width):
    """``(x << sh)[:width]`` for a small variable ``sh`` in 0..max_sh."""
    opts = [Cat(C(0, k), x, C(0, max(0, width - k - len(x))))[:width] for k in range(max_sh + 1)]
    out = opts[0]
    for k in range(1, max_sh + 1):
        out = Mux(eqc(sh, k), opts[k], out)
    return out


def _any_of(x, members):
    return Cat(*(eqc(x, int(v)) for v in members), C(0, 1)).any()


def es_of(dtype):
    """log2(esize) of a 4-bit dtype value (0 for reserved codes)."""
    return Cat(_any_of(dtype, [dt for dt in range(16) if es_log2(dt) & 1]),
               _any_of(dtype, [dt for dt in range(16) if es_log2(dt) & 2]))


def is_float(dtype):
    return _any_of(dtype, FLOAT_DTYPES)


def red_ok(red_op, dtype):
    """The §4.9 RED_OK table as logic."""
    return Cat(*(eqc(red_op, int(op)) & _any_of(dtype, [dt for o, dt in RED_OK if o == op])
                 for op in sorted({o for o, _ in RED_OK}))).any()


def in_set(value, members):
    return _any_of(value, members)


def _used(rank, k):
    """1 when dimension ``k`` is used (k < rank)."""
    return lt(k, rank)


def rule_conditions(cmd, desc, p):
    """Per error code, the violation condition of every rule except the tensor part of 0x1E.

    Parameters
    ----------
    cmd : view of ``cmd_fields(p)``
    desc : view of ``DESC_FIELDS``
    p : TmaParams

    Returns
    -------
    dict
        ``code -> Value`` (1 bit) for codes 0x01..0x20; ``"tensor_fp"`` -> 1 bit: the command is
        subject to the tensor footprint rule 0x1E (a tensor op other than TENSOR_PREFETCH).
    """
    E = ErrCode
    op = cmd.op
    tensor = ~op[2:].any()                                   # op < 4
    block = in_set(op, (CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S, CmdOp.BLOCK_RED,
                        CmdOp.BLOCK_PREFETCH))
    nb = cmd.num_blocks
    blk = block & nb.any()                                   # a block op that is not a NOP
    c = {}
    # -- every op
    c[E.E_OPCODE] = lt(CmdOp.DESC_INVAL, op)
    mcast_op = in_set(op, (CmdOp.TENSOR_LOAD, CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2S))
    c[E.E_MCAST_OP] = cmd.mcast & ~mcast_op
    c[E.E_MCAST_MASK] = cmd.mcast & ~cmd.cta_mask.any()
    # -- tensor ops
    r = desc.rank
    im2col = desc.mode
    es = es_of(desc.dtype)
    il = desc.interleave
    il_none = ~il.any()
    i32 = eqc(il, Interleave.I32B)
    c[E.E_DESC_ALIGN] = tensor & cmd.desc_addr[:7].any()
    t_rank = ~r.any() | lt(5, r)
    t_mismatch = ~eqv(cmd.rank, r)
    t_mode = cmd.mode ^ desc.mode
    t_i2c_rank = im2col & lt(r, 3)
    t_dtype = lt(DType.TF32_FTZ, desc.dtype)
    t_il = eqc(il, 3) | (~il_none & (lt(r, 3) | im2col))
    ga = desc.global_address
    t_gal = ga[:4].any() | (i32 & ga[4])
    t_grange = ga[p.ADDR_W:].any() if p.ADDR_W < 64 else C(0, 1)
    t_size = Cat(*(_used(r, k) & ~desc.tensor_size[k].any() for k in range(5))).any()
    t_stal = Cat(*(_used(r, k + 1) & (desc.tensor_stride[k][:4].any()
                                       | (i32 & desc.tensor_stride[k][4]))
                   for k in range(4))).any()
    t_strg = Cat(*(_used(r, k + 1) & desc.tensor_stride[k][40:].any() for k in range(4))).any()
    size0_bytes = shl_small(desc.tensor_size[0], es, 3, 35)
    slice_ok = Mux(eqc(il, Interleave.I16B), eqc(size0_bytes, 16), eqc(size0_bytes, 32))
    t_ilshape = ~il_none & (~slice_ok | ~eqv(desc.box_size[0], desc.tensor_size[0]))
    t_box = ~im2col & Cat(*(_used(r, k) & (~desc.box_size[k].any() | lt(256, desc.box_size[k]))
                            for k in range(5))).any()
    t_range = im2col & (~desc.range_c.any() | lt(256, desc.range_c) | ~desc.range_ndhw.any()
                        | lt(1024, desc.range_ndhw))
    inner = shl_small(Mux(im2col, desc.range_c, desc.box_size[0]), es, 3, 19)
    t_inner = il_none & inner[:4].any()
    t_ts = Cat(*(_used(r, k) & (~desc.traversal_stride[k].any()
                                 | lt(8, desc.traversal_stride[k])) for k in range(5))).any()
    swz = desc.swizzle
    span = Mux(eqc(swz, Swizzle.SW32B), C(32, 8), Mux(eqc(swz, Swizzle.SW64B), C(64, 8), C(128, 8)))
    t_swspan = swz.any() & lt(span, inner)
    t_ilswz = i32 & ~eqc(swz, Swizzle.SW32B)
    t_oob = eqc(desc.oob_fill, 3)
    t_nan = eqc(desc.oob_fill, OobFill.NAN) & ~is_float(desc.dtype)
    # im2col rules 0x19..0x1B on the used spatial dimensions s < rank - 2 (exact signed values)
    corner_bad, bbox_bad, base_bad = [], [], []
    for s in range(3):
        used = im2col & lt(s + 2, r)
        lim_bad = []
        for rank, lim in IM2COL_CORNER_LIMIT.items():
            out = Cat(*(lt(v, -lim) | ~lt(v, lim) for v in (desc.base_corner[s], desc.far_corner[s])))
            lim_bad.append(eqc(r, rank) & out.any())
        corner_bad.append(used & Cat(*lim_bad).any())
        size = desc.tensor_size[s + 1]
        lo = desc.base_corner[s]
        hi = size - 1 + desc.far_corner[s]
        bbox_bad.append(used & lt(size - lo + desc.far_corner[s], 1))
        cs = cmd.coord[s + 1]
        base_bad.append(used & (lt(cs, lo) | lt(hi, cs)))
    t_corner = Cat(*corner_bad).any()
    t_bbox = Cat(*bbox_bad).any()
    t_base = Cat(*base_bad).any()
    tensor_smem = tensor & ~eqc(op, CmdOp.TENSOR_PREFETCH)
    t_redop = eqc(op, CmdOp.TENSOR_RED) & ~red_ok(cmd.red_op, desc.dtype)
    al = Mux(swz.any(), cmd.smem_addr[:10].any(), cmd.smem_addr[:7].any())
    t_smal = tensor_smem & al
    t_mbar = eqc(op, CmdOp.TENSOR_LOAD) & cmd.mbar_addr[:3].any()
    tp = tensor & ~c[E.E_DESC_ALIGN]
    # -- block ops (num_blocks > 0)
    n16 = Cat(C(0, 4), nb)
    b_red = eqc(op, CmdOp.BLOCK_RED)
    b_dtype = b_red & lt(DType.TF32_FTZ, cmd.dtype)
    b_gal = cmd.gaddr[:4].any()
    b_grange = lt(1 << p.ADDR_W, cmd.gaddr + n16)
    b_redop = b_red & ~red_ok(cmd.red_op, cmd.dtype)
    b_smem = blk & ~eqc(op, CmdOp.BLOCK_PREFETCH)
    s2s = eqc(op, CmdOp.BLOCK_S2S)
    b_smal = cmd.smem_addr[:4].any() | (s2s & cmd.smem_dst[:4].any())
    space = 1 << p.SMEM_AW
    b_smrg = lt(space, cmd.smem_addr + n16) | (s2s & lt(space, cmd.smem_dst + n16))
    b_mbar = in_set(op, (CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2S)) & cmd.mbar_addr[:3].any()
    src_dst = ~cmd.mcast | (cmd.cta_mask & decode(cmd.cta_id, 16)).any()
    diff = cmd.smem_addr - cmd.smem_dst
    b_s2s = (s2s & src_dst & ~eqv(cmd.smem_addr, cmd.smem_dst)
             & lt(diff, n16) & lt(0 - n16, diff))          # |diff| < 16 nb

    c[E.E_RANK] = tp & t_rank
    c[E.E_RANK_MISMATCH] = tp & t_mismatch
    c[E.E_MODE_MISMATCH] = tp & t_mode
    c[E.E_IM2COL_RANK] = tp & t_i2c_rank
    c[E.E_DTYPE] = (tp & t_dtype) | (blk & b_dtype)
    c[E.E_INTERLEAVE] = tp & t_il
    c[E.E_GADDR_ALIGN] = (tp & t_gal) | (blk & b_gal)
    c[E.E_GADDR_RANGE] = (tp & t_grange) | (blk & b_grange)
    c[E.E_SIZE] = tp & t_size
    c[E.E_STRIDE_ALIGN] = tp & t_stal
    c[E.E_STRIDE_RANGE] = tp & t_strg
    c[E.E_INTERLEAVE_SHAPE] = tp & t_ilshape
    c[E.E_BOX_RANGE] = tp & t_box
    c[E.E_IM2COL_RANGE] = tp & t_range
    c[E.E_BOX_INNER] = tp & t_inner
    c[E.E_TS_RANGE] = tp & t_ts
    c[E.E_SWIZZLE_SPAN] = tp & t_swspan
    c[E.E_INTERLEAVE_SWIZZLE] = tp & t_ilswz
    c[E.E_OOB_MODE] = tp & t_oob
    c[E.E_OOB_NAN_DTYPE] = tp & t_nan
    c[E.E_IM2COL_CORNER] = tp & t_corner
    c[E.E_IM2COL_BBOX] = tp & t_bbox
    c[E.E_IM2COL_BASE] = tp & t_base
    c[E.E_REDOP_DTYPE] = (tp & t_redop) | (blk & b_redop)
    c[E.E_SMEM_ALIGN] = (tp & t_smal) | (b_smem & b_smal)
    c[E.E_SMEM_RANGE] = b_smem & b_smrg
    c[E.E_MBAR_ALIGN] = (tp & t_mbar) | (b_smem & b_mbar)
    c[E.E_S2S_OVERLAP] = b_smem & b_s2s
    c["tensor_fp"] = tp & ~eqc(op, CmdOp.TENSOR_PREFETCH)
    assert all(int(k) in c for k in ErrCode if k)
    return c


def footprint_violation(box_bytes, swizzle, smem_addr, smem_aw):
    """Tensor rule 0x1E: ``smem_addr + footprint > 2^SMEM_AW``, the footprint being the box bytes
    rounded up to 128 when swizzled."""
    rounded = Cat(C(0, 7), (box_bytes + 127)[7:])
    fp = Mux(swizzle.any(), rounded, box_bytes)
    return lt(1 << smem_aw, smem_addr + fp)


def first_code(bits):
    """The lowest set code of ``bits`` (a dict code -> 1-bit value, codes 1..0x20), 0 if none
    (an 8-bit value)."""
    code = C(0, 8)
    for k in sorted(bits, reverse=True):
        code = Mux(bits[k], C(k, 8), code)
    return code


assert BLOCK == 16
