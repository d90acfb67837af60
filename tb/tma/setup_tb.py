"""cocotb testbench of ``hw.tma.setup.TmaSetup`` against the golden ``validate`` and
``golden.tma.jobs.golden_job`` (spec tma.md §3.4, §4.2, §4.4, §4.5, §4.6).

The DUT is the bare ``TmaSetup`` (ports ``i``, ``job``, ``err``). ``i`` is driven with random
valid gaps, ``job`` and ``err`` see random back-pressure (bursty, so the err register stays full
for long stretches: TMA-E4), every stream has a protocol checker, and two ordered scoreboards take
the golden expectation of each command in acceptance order: ``err{id, code}`` with the first
violated code (TMA-E1, E2) or the job (compared with ``job_key``: every field that ReqGen reads).
At the end nothing may be missing or left over: a rejected command produced no job.

Descriptors are packed with random garbage in their reserved bits and in every field of the
dimensions at or above the rank (TMA-E6); the golden model decodes the same bytes.

Testcases: ``error_vectors`` (TMA-GV74..GV106 and the variants of their rows, each followed by the
valid base command), ``random_commands`` (legal random tile, im2col, block and control commands
mixed with single-field mutations of them that hit every rule), ``im2col_jobs`` (the §5 im2col
vectors and random im2col commands of every tensor op: the im2col job fields of §4.6).

The stimulus helpers here (random legal commands, mutations, packing) are shared with
``tb.tma.reqgen_tb``.
"""

import random

import cocotb

from golden.tma.encode import decode_desc
from golden.tma.formats import (DESC_FIELDS, ESIZE, FLOAT_DTYPES, RED_OK, CmdOp, DType,
                                Interleave, Mode, OobFill, Swizzle, TmaCmd, TmaDesc, cmd_fields,
                                err_fields)
from golden.tma.geometry import footprint
from golden.tma.im2col import OFFSET_BITS, pack_offsets, unpack_offsets
from golden.tma.jobs import golden_job, job_fields, job_key
from golden.tma.params import TmaParams
from golden.tma.validate import IM2COL_CORNER_LIMIT, validate
from golden.tma import vectors as V
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor, finish

__all__ = ["params_from_env", "pack_input", "Case", "random_tile", "random_block",
           "random_control", "mutate", "error_vector_cases", "random_im2col"]


# ------------------------------------------------------------------------------------------------
# Stimulus
# ------------------------------------------------------------------------------------------------

def params_from_env():
    """TmaParams of the build (``addr_w``, ``smem_aw``, ``id_w``, ``nb_w`` of the top)."""
    q = env.params()
    return TmaParams(ADDR_W=q.get("addr_w", 64), SMEM_AW=q.get("smem_aw", 18),
                     ID_W=q.get("id_w", 8), NB_W=q.get("nb_w", 20))


class Case:
    """One command with its descriptor: ``cmd`` (TmaCmd), ``desc_word`` (the 1024-bit descriptor
    as driven, garbage included) and ``desc`` (its golden decoding, None for non-tensor ops)."""

    def __init__(self, cmd, desc_word=0, name=""):
        self.cmd = cmd
        self.desc_word = desc_word
        self.desc = decode_desc(desc_word) if cmd.op < 4 else None
        self.name = name

    def code(self, p):
        return int(validate(self.cmd, self.desc, p))


def pack_input(case, p):
    """The ``i`` payload of a case: ``cmd`` at bit 0, then the descriptor."""
    return case.cmd.pack(p) | case.desc_word << cmd_fields(p).width


def desc_word(desc, rng=None):
    """Pack a TmaDesc; with ``rng``, fill the reserved bits and every field of the dimensions at or
    above the rank (and the fields the mode leaves unused) with random values (TMA-E6)."""
    v = {k: (list(x) if isinstance(x, tuple) else int(x)) for k, x in desc.as_dict().items()}
    v.update(ctrl_reserved=0, reserved_4f=0, reserved_68=0)
    if rng is not None:
        r = desc.rank
        for k in range(r, 5):
            v["tensor_size"][k] = rng.getrandbits(32)
            v["box_size"][k] = rng.getrandbits(16)
            v["traversal_stride"][k] = rng.getrandbits(8)
        for k in range(max(r - 1, 0), 4):
            v["tensor_stride"][k] = rng.getrandbits(64)
        v["traversal_stride"][0] = rng.randint(1, 8)           # range-checked, otherwise ignored
        if desc.mode == Mode.TILE:
            v["range_c"], v["range_ndhw"] = rng.getrandbits(16), rng.getrandbits(16)
            v["base_corner"] = [rng.randint(-2 ** 15, 2 ** 15 - 1) for _ in range(3)]
            v["far_corner"] = [rng.randint(-2 ** 15, 2 ** 15 - 1) for _ in range(3)]
        else:
            v["box_size"] = [rng.getrandbits(16) for _ in range(5)]
            for s in range(max(r - 2, 0), 3):
                v["base_corner"][s] = rng.randint(-2 ** 15, 2 ** 15 - 1)
                v["far_corner"][s] = rng.randint(-2 ** 15, 2 ** 15 - 1)
        if desc.oob_fill != OobFill.CONST:
            v["oob_const"] = rng.getrandbits(64)
        v.update(ctrl_reserved=rng.getrandbits(18), reserved_4f=rng.getrandbits(8),
                 reserved_68=rng.getrandbits(192))
    return DESC_FIELDS.pack(**v)


def _pick_small(rng, hi, small=8):
    return rng.randint(1, min(hi, small)) if rng.random() < 0.7 else rng.randint(1, hi)


def random_tile(rng, p, op=None, max_rows=40, max_row_pieces=None):
    """A random legal tile-mode tensor command (TENSOR_LOAD unless ``op``) with its descriptor:
    rank 1..5, every dtype, random sizes (sometimes up to 2^32 - 1), strides (multiples of
    16 below 2^40, sometimes 0), boxes, traversal strides, swizzles, fill modes, negative and
    beyond-size coordinates (sometimes near +-2^31), at most ``max_rows`` rows."""
    for _ in range(1000):
        op = CmdOp.TENSOR_LOAD if op is None else op
        r = rng.randint(1, 5)
        dtype = rng.choice(list(DType))
        if op == CmdOp.TENSOR_RED:
            red_op, dtype = rng.choice(sorted(RED_OK))
        else:
            red_op = rng.randrange(8)
        es = ESIZE[dtype]
        unit = 16 // es
        interleave = Interleave.NONE
        if r >= 3 and rng.random() < 0.1:
            interleave = rng.choice([Interleave.I16B, Interleave.I32B])
        if interleave == Interleave.NONE:
            box0 = unit * _pick_small(rng, 256 // unit, 4)
        else:
            box0 = (16 if interleave == Interleave.I16B else 32) // es
        inner = box0 * es
        swz = [s for s in Swizzle if s == Swizzle.NONE or inner <= 32 << (int(s) - 1)]
        swizzle = Swizzle.SW32B if interleave == Interleave.I32B else rng.choice(swz)
        align = 32 if interleave == Interleave.I32B else 16
        box = [box0] + [_pick_small(rng, 256, 6) for _ in range(1, r)]
        ts = [rng.randint(1, 8)] + [rng.choice([1, 1, 1, 2, 3, 5, 8]) for _ in range(1, r)]
        rows = 1
        for k in range(1, r):
            rows *= -(-box[k] // ts[k])
        if rows > max_rows:
            continue
        size = []
        for k in range(r):
            if interleave != Interleave.NONE and k == 0:
                size.append(box0)
            elif rng.random() < 0.08:
                size.append(rng.choice([0xFFFFFFFF, 2 ** 31 + rng.randrange(1000), 2 ** 31 - 1]))
            else:
                size.append(rng.randint(1, 3 * box[k] + 2))
        stride = []
        for k in range(r - 1):
            x = rng.random()
            if x < 0.08:
                stride.append(0)
            elif x < 0.15:
                stride.append(rng.randrange(1, 2 ** 40 // align) * align)
            else:
                need = size[0] * es if k == 0 else stride[-1] * size[k]
                stride.append(min(2 ** 40 - align, -(-max(need, 1) // align) * align
                                  + align * rng.randrange(3)))
        coord = []
        for k in range(r):
            x = rng.random()
            if x < 0.05:
                coord.append(rng.choice([-2 ** 31, 2 ** 31 - 1 - rng.randrange(300)]))
            elif x < 0.1 and size[k] > 2 ** 31:
                coord.append(2 ** 31 - 1 - rng.randrange(300))
            else:
                coord.append(rng.randint(-box[k] - 3, min(size[k], 2 ** 20) + 2))
        if rng.random() < 0.1:
            ga = (2 ** p.ADDR_W - align * rng.randint(1, 40)) % 2 ** p.ADDR_W
        else:
            ga = rng.randrange(0, 2 ** min(p.ADDR_W, 48), align)
        fills = [OobFill.ZERO, OobFill.CONST] + ([OobFill.NAN] if dtype in FLOAT_DTYPES else [])
        d = TmaDesc.make(global_address=ga, tensor_stride=stride, tensor_size=size, rank=r,
                         mode=Mode.TILE, dtype=dtype, interleave=interleave, swizzle=swizzle,
                         oob_fill=rng.choice(fills), box_size=box, traversal_stride=ts,
                         oob_const=rng.getrandbits(64))
        fp = footprint(d)
        al = 1024 if swizzle != Swizzle.NONE else 128
        if fp > p.SMEM_SIZE:
            continue
        smem = rng.randrange(0, p.SMEM_SIZE - fp + 1, al) if p.SMEM_SIZE - fp >= 0 else 0
        mcast = int(op == CmdOp.TENSOR_LOAD and rng.random() < 0.2)
        cmd = TmaCmd(id=rng.getrandbits(p.ID_W), op=op, mode=Mode.TILE, rank=r, red_op=red_op,
                     dtype=rng.randrange(16), desc_addr=rng.randrange(0, 2 ** min(p.ADDR_W, 40), 128),
                     coord=coord, im2col_off=rng.getrandbits(16), gaddr=rng.getrandbits(p.ADDR_W),
                     num_blocks=rng.getrandbits(p.NB_W), smem_addr=smem,
                     smem_dst=rng.getrandbits(p.SMEM_AW),
                     mbar_addr=rng.randrange(0, p.SMEM_SIZE, 8), cta_id=rng.randrange(16),
                     mcast=mcast, cta_mask=rng.randrange(1, 2 ** 16) if mcast else rng.getrandbits(16))
        case = Case(cmd, desc_word(d, rng), "tile")
        if case.code(p) == 0:
            return case
    raise RuntimeError("no legal random tile command found")


def _im2col_spatial(rng, lim, huge):
    """(size, base corner, far corner, start coordinate) of one im2col spatial dimension, or
    None: mostly small sizes (so walks wrap and cross images), sometimes sizes near 2^31..2^32 - 1
    with starts near 2^31 (TMA-F15); corners at the rank's limits now and then; starts anywhere
    in [lo, hi] (off the stride grid as often as on it), at lo, or near the top."""
    if huge:
        size = rng.choice([0xFFFFFFFF, 2 ** 31 + rng.randrange(1000), 2 ** 31 - 1])
    else:
        size = rng.randint(1, 12) if rng.random() < 0.8 else rng.randint(1, 300)
    x = rng.random()
    if x < 0.06:
        base, far = rng.choice([-lim, lim - 1]), rng.choice([-lim, lim - 1])
    elif x < 0.4:
        base = rng.randint(-min(lim, 4), min(lim - 1, 3))
        far = rng.randint(-min(lim, 4), min(lim - 1, 3))
    else:
        base, far = rng.randint(-2, 0), rng.randint(-2, 1)
    lo, hi = base, size - 1 + far
    hi32 = min(hi, 2 ** 31 - 1)
    if size - base + far < 1 or lo > hi32:
        return None
    x = rng.random()
    if x < 0.1 or (huge and x < 0.7):
        start = hi32 - rng.randrange(min(20, hi32 - lo + 1))
    elif x < 0.25:
        start = lo
    else:
        start = rng.randint(lo, min(hi32, lo + 40))
    return size, base, far, start


def random_im2col(rng, p, op=None, max_px=1024, max_pieces=3000):
    """A random legal im2col tensor command (TENSOR_LOAD unless ``op``; TENSOR_STORE, TENSOR_RED
    and TENSOR_PREFETCH take the same pieces) with its descriptor: rank 3..5, every dtype and
    swizzle, ``range_c`` of 1..2048 bytes with channel ranges partly or wholly outside the tensor
    (``coord[0]`` negative, beyond ``tensor_size[0]``, near +-2^31), small spatial grids (so the
    walk restarts at lo, off the stride grid, and crosses into the next, possibly OOB, image;
    n negative or beyond N), traversal strides 1..8, negative corners (at the rank's limits now
    and then), random packed offsets (bit 15 garbage at rank 5), sizes up to 2^32 - 1 with
    pixels beyond 2^31, strides of 0 or up to 2^40, and global addresses near 2^ADDR_W (spans
    that wrap, TMA-GV107). At most ``max_px`` pixels and about ``max_pieces`` pieces."""
    for _ in range(1000):
        o = CmdOp.TENSOR_LOAD if op is None else op
        r = rng.randint(3, 5)
        S = r - 2
        lim = IM2COL_CORNER_LIMIT[r]
        dtype = rng.choice(list(DType))
        if o == CmdOp.TENSOR_RED:
            red_op, dtype = rng.choice(sorted(RED_OK))
        else:
            red_op = rng.randrange(8)
        es = ESIZE[dtype]
        unit = 16 // es
        range_c = unit * _pick_small(rng, 256 // unit, 4)
        inner = range_c * es
        swizzle = rng.choice([s for s in Swizzle
                              if s == Swizzle.NONE or inner <= 32 << (int(s) - 1)])
        # channels
        if rng.random() < 0.08:
            csize = rng.choice([0xFFFFFFFF, 2 ** 31 + rng.randrange(1000)])
        else:
            csize = rng.randint(1, 3 * range_c + 2)
        x = rng.random()
        if x < 0.05:
            c0 = rng.choice([-2 ** 31, 2 ** 31 - 1 - rng.randrange(300)])
        elif x < 0.1 and csize > 2 ** 31:
            c0 = 2 ** 31 - 1 - rng.randrange(300)
        elif x < 0.35:
            c0 = rng.randint(-range_c - 3, min(csize, 2 ** 20) + 2)
        else:
            c0 = rng.randint(max(-3, -range_c), max(0, min(csize - range_c, 2 ** 20)) + 3)
        huge = rng.random() < 0.1
        dims = [_im2col_spatial(rng, lim, huge and rng.random() < 0.7) for _ in range(S)]
        if None in dims:
            continue
        # images
        nsize = rng.choice([0xFFFFFFFF, 2 ** 31 + 5]) if huge else rng.randint(1, 6)
        x = rng.random()
        if x < 0.05:
            n = rng.choice([-2 ** 31, 2 ** 31 - 1 - rng.randrange(3)])
        else:
            n = rng.randint(-1, min(nsize, 2 ** 31 - 1)) if x < 0.4 else \
                rng.randint(0, min(nsize, 2 ** 31) - 1)
        size = [csize] + [dm[0] for dm in dims] + [nsize]
        # strides: packed, padded, 0 or anything below 2^40
        stride = []
        for k in range(r - 1):
            x = rng.random()
            if x < 0.08:
                stride.append(0)
            elif x < 0.18:
                stride.append(rng.randrange(1, 2 ** 40 // 16) * 16)
            else:
                need = min(size[0], 4096) * es if k == 0 else stride[-1] * min(size[k], 64)
                stride.append(min(2 ** 40 - 16,
                                  -(-max(need, 1) // 16) * 16 + 16 * rng.randrange(3)))
        x = rng.random()
        if x < 0.3:
            off = 0
        elif x < 0.4:
            off = rng.getrandbits(16)
        else:
            off = pack_offsets([rng.randrange(min(4, 1 << b)) for b in OFFSET_BITS[r]], r) \
                | (rng.getrandbits(1) << 15 if r == 5 else 0)
        x = rng.random()
        if x < 0.15:
            # the first pixel's span just below 2^ADDR_W: it (or a later one) wraps to 0
            offv = unpack_offsets(off, r)
            first = (sum((dims[s][3] + offv[s]) * stride[s] for s in range(S))
                     + n * stride[r - 2] + max(c0, 0) * es)
            ga = (2 ** p.ADDR_W - first - 16 * rng.randint(0, inner // 16)) % 2 ** p.ADDR_W
            ga -= ga % 16
        else:
            ga = rng.randrange(0, 2 ** min(p.ADDR_W, 48), 16)
        ts = [rng.randint(1, 8) for _ in range(r)]
        if rng.random() < 0.4:
            ts[1:r - 1] = [1] * S
        npx = _pick_small(rng, max_px, 48)
        if npx * (inner // 128 + 2) > max_pieces:
            npx = max(1, max_pieces // (inner // 128 + 2))
        fills = [OobFill.ZERO, OobFill.CONST] + ([OobFill.NAN] if dtype in FLOAT_DTYPES else [])
        d = TmaDesc.make(global_address=ga, rank=r, mode=Mode.IM2COL, dtype=dtype,
                         tensor_size=size, tensor_stride=stride, traversal_stride=ts,
                         range_c=range_c, range_ndhw=npx, base_corner=[dm[1] for dm in dims],
                         far_corner=[dm[2] for dm in dims], swizzle=swizzle,
                         oob_fill=rng.choice(fills), oob_const=rng.getrandbits(64))
        fp = footprint(d)
        if fp > p.SMEM_SIZE:
            continue
        al = 1024 if swizzle != Swizzle.NONE else 128
        mcast = int(o == CmdOp.TENSOR_LOAD and rng.random() < 0.2)
        coord = [c0] + [dm[3] for dm in dims] + [n]
        cmd = TmaCmd(id=rng.getrandbits(p.ID_W), op=o, mode=Mode.IM2COL, rank=r, red_op=red_op,
                     dtype=rng.randrange(16),
                     desc_addr=rng.randrange(0, 2 ** min(p.ADDR_W, 40), 128),
                     coord=coord, im2col_off=off, gaddr=rng.getrandbits(p.ADDR_W),
                     num_blocks=rng.getrandbits(p.NB_W),
                     smem_addr=rng.randrange(0, p.SMEM_SIZE - fp + 1, al),
                     smem_dst=rng.getrandbits(p.SMEM_AW),
                     mbar_addr=rng.randrange(0, p.SMEM_SIZE, 8), cta_id=rng.randrange(16),
                     mcast=mcast,
                     cta_mask=rng.randrange(1, 2 ** 16) if mcast else rng.getrandbits(16))
        case = Case(cmd, desc_word(d, rng), "im2col")
        if case.code(p) == 0:
            return case
    raise RuntimeError("no legal random im2col command found")


def random_block(rng, p, op=None, max_blocks=40):
    """A random legal block op (NOPs included) with random don't-care fields."""
    ops = [CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S, CmdOp.BLOCK_RED,
           CmdOp.BLOCK_PREFETCH]
    for _ in range(1000):
        o = rng.choice(ops) if op is None else op
        nb = 0 if rng.random() < 0.08 else rng.randint(1, min(max_blocks, 2 ** p.NB_W - 1))
        n = 16 * nb
        if rng.random() < 0.1:
            gaddr = (2 ** p.ADDR_W - n - 16 * rng.randrange(4)) % 2 ** p.ADDR_W
        else:
            gaddr = 16 * rng.randrange(2 ** min(p.ADDR_W - 4, 36))
        if n > p.SMEM_SIZE:
            continue
        red_op, dtype = rng.choice(sorted(RED_OK))
        mcast = int(o in (CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2S) and rng.random() < 0.3)
        cmd = TmaCmd(id=rng.getrandbits(p.ID_W), op=o, red_op=red_op, dtype=dtype,
                     desc_addr=rng.getrandbits(p.ADDR_W), coord=[rng.randint(-9, 9)] * 5,
                     gaddr=gaddr, num_blocks=nb,
                     smem_addr=16 * rng.randrange((p.SMEM_SIZE - max(n, 16)) // 16 + 1),
                     smem_dst=16 * rng.randrange((p.SMEM_SIZE - max(n, 16)) // 16 + 1),
                     mbar_addr=8 * rng.randrange(p.SMEM_SIZE // 8), cta_id=rng.randrange(16),
                     mcast=mcast, cta_mask=rng.randrange(1, 2 ** 16) if mcast else rng.getrandbits(16))
        case = Case(cmd, 0, "block")
        if case.code(p) == 0:
            return case
    raise RuntimeError("no legal random block command found")


def random_control(rng, p):
    op = rng.choice([CmdOp.WAIT_ALL, CmdOp.DESC_INVAL])
    return Case(TmaCmd(id=rng.getrandbits(p.ID_W), op=op, desc_addr=rng.getrandbits(p.ADDR_W),
                       smem_addr=rng.getrandbits(p.SMEM_AW)), 0, "control")


def mutate(case, rng, p):
    """``case`` with one command or descriptor field set to a random, often illegal, value."""
    cmd, d = case.cmd, case.desc
    cf = {}
    df = {}
    pick = rng.randrange(27)
    if pick == 0:
        cf["op"] = rng.randrange(16)
    elif pick == 1:
        cf.update(mcast=1, cta_mask=rng.choice([0, rng.getrandbits(16)]))
    elif pick == 2:
        cf["desc_addr"] = cmd.desc_addr | rng.choice([0x40, 0x8, 0x1])
    elif pick == 3:
        if d is not None:
            df["rank"] = rng.randrange(8)
        cf["rank"] = rng.randrange(8) if rng.random() < 0.5 else cmd.rank
    elif pick == 4:
        cf["mode"] = 1 - cmd.mode
        if rng.random() < 0.5 and d is not None:
            df["mode"] = 1 - d.mode
    elif pick == 5:
        df["dtype"] = rng.randrange(16)
        cf["dtype"] = rng.randrange(16)
    elif pick == 6:
        df["interleave"] = rng.randrange(4)
    elif pick == 7:
        df["global_address"] = rng.getrandbits(64) if rng.random() < 0.3 else (
            (d.global_address + 16 * rng.randrange(3) + rng.choice([0, 8, 16])) % 2 ** 64
            if d else 0)
        cf["gaddr"] = rng.getrandbits(p.ADDR_W) if rng.random() < 0.5 else cmd.gaddr | 8
    elif pick == 8 and d is not None:
        s = list(d.tensor_size)
        s[rng.randrange(5)] = rng.choice([0, 1, rng.getrandbits(32)])
        df["tensor_size"] = s
    elif pick == 9 and d is not None:
        s = list(d.tensor_stride)
        s[rng.randrange(4)] = rng.choice([s[0] + 8, 2 ** 40, rng.getrandbits(64), 2 ** 40 - 16])
        df["tensor_stride"] = s
    elif pick == 10 and d is not None:
        b = list(d.box_size)
        b[rng.randrange(5)] = rng.choice([0, 257, rng.getrandbits(16), 1, 3])
        df["box_size"] = b
    elif pick == 11 and d is not None:
        df.update(range_c=rng.choice([0, 257, rng.randrange(300)]),
                  range_ndhw=rng.choice([0, 1025, rng.randrange(1100)]))
    elif pick == 12 and d is not None:
        t = list(d.traversal_stride)
        t[rng.randrange(5)] = rng.choice([0, 9, rng.getrandbits(8)])
        df["traversal_stride"] = t
    elif pick == 13:
        df["swizzle"] = rng.randrange(4)
    elif pick == 14:
        df["oob_fill"] = rng.randrange(4)
    elif pick == 15 and d is not None:
        df.update(base_corner=[rng.randint(-200, 200) for _ in range(3)],
                  far_corner=[rng.randint(-200, 200) for _ in range(3)])
    elif pick == 16:
        cf["coord"] = [max(-2 ** 31, min(2 ** 31 - 1, c + rng.randint(-3, 3) * rng.choice([1, 100])))
                       for c in cmd.coord]
    elif pick == 17:
        cf.update(red_op=rng.randrange(8), op=rng.choice([CmdOp.TENSOR_RED, CmdOp.BLOCK_RED]))
    elif pick == 18:
        cf["smem_addr"] = rng.getrandbits(p.SMEM_AW)
    elif pick == 19:
        cf["smem_addr"] = (p.SMEM_SIZE - rng.randrange(0, 4096, 128)) % p.SMEM_SIZE
    elif pick == 20:
        cf["mbar_addr"] = rng.getrandbits(p.SMEM_AW)
    elif pick == 21:
        cf["num_blocks"] = rng.choice([0, 1, rng.getrandbits(p.NB_W)])
    elif pick == 22:
        cf.update(smem_dst=(cmd.smem_addr + 16 * rng.randint(-4, 4)) % p.SMEM_SIZE,
                  op=CmdOp.BLOCK_S2S, mcast=rng.randrange(2), num_blocks=rng.randint(1, 8))
    elif pick == 23 and d is not None:
        df.update(rng.choice([
            dict(box_size=[max(1, d.box_size[0] - 1)] + list(d.box_size[1:])),          # 0x13
            dict(interleave=Interleave.I32B, swizzle=rng.choice([0, 2, 3])),            # 0x16
            dict(tensor_stride=[2 ** 40 + 16 * rng.randrange(4)] * 4)]))                # 0x0F
    elif pick == 24:
        cf.update(coord=[cmd.coord[0]] + [rng.randint(-300, 300) for _ in range(3)]
                  + [cmd.coord[4]])                                                    # 0x1B
    elif pick == 25:
        cf.update(gaddr=2 ** p.ADDR_W - 16 * rng.randint(1, 4), num_blocks=rng.randint(1, 8))
    else:
        cf["op"] = rng.choice(list(CmdOp))
    new_cmd = cmd.replace(**cf)
    if new_cmd.op >= 4:
        return Case(new_cmd, 0, "mutant")
    if d is None:
        d = TmaDesc.make(rank=1, tensor_size=(64,), box_size=(16,), global_address=0x1000)
    elif not df:
        return Case(new_cmd, case.desc_word, "mutant")
    return Case(new_cmd, desc_word(d.replace(**df), rng), "mutant")


def error_vector_cases(p):
    """TMA-GV74..GV106 (and the variants of their rows) as (GV id, Case, expected code)."""
    out = []
    rows = [(gv, *row) for gv, row in V.ERRORS.items()] + list(V.ERROR_VARIANTS)
    for gv, base, cmd_changes, desc_changes, code in rows:
        desc_fields, cmd_fields_ = V.ERROR_BASES[base]
        cmd = TmaCmd(**{**cmd_fields_, **cmd_changes})
        word = 0
        if desc_fields is not None:
            d = TmaDesc.make(**{**desc_fields, **desc_changes})
            word = desc_word(d)
        out.append((gv, Case(cmd, word, gv), code))
    return out


# ------------------------------------------------------------------------------------------------
# Bench
# ------------------------------------------------------------------------------------------------

class SetupBench:
    """Driver, monitors, protocol checkers and scoreboards around ``TmaSetup``."""

    def __init__(self, dut, p, gap_prob=0.3, job_ready=0.6, err_ready=0.5, burst=4.0):
        self.dut, self.p = dut, p
        self.clk = dut.clk
        self.seq = 0
        self.jobs = Scoreboard("job")
        self.errs = Scoreboard("err")
        self.checks = [StreamProtocolChecker(dut, s, self.clk) for s in ("i", "job", "err")]
        self.driver = StreamDriver(dut, "i", self.clk, rng=env.rng(11), gap_prob=gap_prob,
                                   burst=burst)
        jf, ef = job_fields(p), err_fields(p)
        self.job_mon = StreamMonitor(dut, "job", self.clk, fields=jf, rng=env.rng(12),
                                     ready_prob=job_ready, burst=burst,
                                     callback=lambda t: self.jobs.observe(job_key(t.fields), t.cycle))
        self.err_mon = StreamMonitor(dut, "err", self.clk, fields=ef, rng=env.rng(13),
                                     ready_prob=err_ready, burst=burst,
                                     callback=lambda t: self.errs.observe(t.fields, t.cycle))

    def send(self, case, expect_code=None):
        p = self.p
        code = case.code(p)
        if expect_code is not None:
            assert code == expect_code, f"{case.name}: golden code {code:#x} != {expect_code:#x}"
        if code:
            self.errs.expect(dict(id=case.cmd.id, code=code))
        else:
            self.jobs.expect(job_key(golden_job(case.cmd, case.desc, p, self.seq)))
        self.seq += 1
        self.driver.append(pack_input(case, p))
        return code

    async def finish(self, timeout=200_000):
        await finish(self.clk, self.driver, [self.jobs, self.errs], self.checks, timeout)


async def _start(dut):
    start_clock(dut)
    dut.i__valid.value = 0
    dut.job__ready.value = 0
    dut.err__ready.value = 0
    await reset(dut)


@cocotb.test()
async def error_vectors(dut):
    """TMA-GV74..GV106: exact code, no job; the valid base command after each gets its job."""
    p = params_from_env()
    await _start(dut)
    bench = SetupBench(dut, p)
    bases = {}
    for key, (desc_fields, cmd_fields_) in V.ERROR_BASES.items():
        word = desc_word(TmaDesc.make(**desc_fields)) if desc_fields is not None else 0
        bases[key] = Case(TmaCmd(**cmd_fields_), word, f"base {key}")
    seen = set()
    for gv, case, code in error_vector_cases(p):
        bench.send(case, code)
        seen.add(gv)
        base = {"GV81": "I", "GV91": "I", "GV98": "I", "GV99": "I", "GV100": "I",
                "GV85": "B", "GV106": "S"}.get(gv, "T")
        bench.send(bases[base], 0)
    assert len(seen) == 33, sorted(seen)
    await bench.finish()
    dut._log.info("error vectors: %d errors, %d jobs checked", bench.errs.matched,
                  bench.jobs.matched)


@cocotb.test()
async def random_commands(dut):
    """Random legal commands of every kind and single-field mutations of them."""
    p = params_from_env()
    rng = random.Random(env.seed() * 7 + 1)
    dut._log.info("seed %d", env.seed())
    await _start(dut)
    bench = SetupBench(dut, p)
    codes = {}
    vectors = [case for _, case, _ in error_vector_cases(p)]      # every code at least once
    for k in range(2000):
        if k % 50 == 25 and vectors:
            code = bench.send(vectors.pop())
            codes[code] = codes.get(code, 0) + 1
        x = rng.random()
        if x < 0.25:
            case = random_tile(rng, p, op=rng.choice([CmdOp.TENSOR_LOAD] * 3 + [
                CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED, CmdOp.TENSOR_PREFETCH]))
        elif x < 0.32:
            case = random_im2col(rng, p)
        elif x < 0.42:
            case = random_block(rng, p)
        elif x < 0.45:
            case = random_control(rng, p)
        else:
            src = rng.choice([random_tile, random_tile, random_im2col, random_block])
            case = mutate(src(rng, p), rng, p)
        code = bench.send(case)
        codes[code] = codes.get(code, 0) + 1
    await bench.finish()
    dut._log.info("codes seen: %s", {f"{k:#04x}": v for k, v in sorted(codes.items())})
    missing = [k for k in range(0x21) if k not in codes]
    assert not missing, f"codes never exercised: {missing}"


@cocotb.test()
async def im2col_jobs(dut):
    """im2col jobs (§4.6): the §5 im2col vectors and random legal im2col commands of every tensor
    op, rank 3..5, with mutations; every job field bit-exact with ``golden_job``."""
    p = params_from_env()
    rng = random.Random(env.seed() * 11 + 2)
    dut._log.info("seed %d", env.seed())
    await _start(dut)
    bench = SetupBench(dut, p)
    for key, v in V.IM2COL.items():
        desc = V.fig8_desc(v["tensor"], mode=Mode.IM2COL, range_c=v["range_c"],
                           range_ndhw=v["range_ndhw"], base_corner=v["base"], far_corner=v["far"],
                           traversal_stride=(1,) + tuple(v["ts"]) + (1,))
        cmd = TmaCmd(**V.fig8_cmd(mode=Mode.IM2COL, coord=v["coord"], im2col_off=v["off"]))
        cmd = cmd.replace(mbar_addr=cmd.mbar_addr % p.SMEM_SIZE)
        case = Case(cmd, desc_word(TmaDesc.make(**desc), rng), key)
        if case.code(p) == 0:
            bench.send(case)
    ops = [CmdOp.TENSOR_LOAD, CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED, CmdOp.TENSOR_PREFETCH]
    ranks = {}
    for k in range(1500):
        if rng.random() < 0.15:
            case = mutate(random_im2col(rng, p), rng, p)
        else:
            case = random_im2col(rng, p, op=rng.choice(ops))
            ranks[case.desc.rank] = ranks.get(case.desc.rank, 0) + 1
        bench.send(case)
    await bench.finish()
    dut._log.info("im2col jobs by rank %s; %d jobs, %d errors", dict(sorted(ranks.items())),
                  bench.jobs.matched, bench.errs.matched)
