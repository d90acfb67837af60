"""Independent references and helpers for the TMA golden tests (imported by the other
``test_tma_*`` modules), plus the checks of the references themselves.

Nothing here uses the golden model's traversal, splitting or swizzle code: the references are
numpy slicing of a strided view of the tensor bytes (TMA-V1), the closed-form swizzle (TMA-V4) and
brute-force enumerations of touched lines and sectors.
"""

import itertools

import numpy as np
import pytest

from golden.tma.encode import encode_desc
from golden.tma.formats import CmdOp, DType, Mode, OobFill, Swizzle, TmaCmd
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import TmaModel
from golden.tma.params import TmaParams

# Written out again from spec §4.1 / TMA-C9, not imported from the model
ESIZE = {0: 1, 1: 2, 2: 4, 3: 4, 4: 8, 5: 8, 6: 2, 7: 4, 8: 8, 9: 2, 10: 4, 11: 4, 12: 4}
FLOATS = {6, 7, 8, 9, 10, 11, 12}
NAN_FILL = {6: 0x7FFF, 9: 0x7FFF, 7: 0x7FFFFFFF, 10: 0x7FFFFFFF, 11: 0x7FFFFFFF,
            12: 0x7FFFFFFF, 8: 0x7FFFFFFFFFFFFFFF}
SWZ_MASK = {1: 0x10, 2: 0x30, 3: 0x70}
SENTINEL = 0xA5
DESC_ADDR = 0x8000


def swz_closed(x, mode):
    """TMA-V4 closed form ``x ^ ((x >> 3) & mask)`` (mask 0x10/0x30/0x70); identity for NONE."""
    if mode == 0:
        return x
    return x ^ ((x >> 3) & SWZ_MASK[mode])


def fill_value(dtype, oob_fill, oob_const=0):
    """The OOB fill as an integer of the element's width (TMA-F22)."""
    es = ESIZE[dtype]
    if oob_fill == OobFill.ZERO:
        return 0
    if oob_fill == OobFill.CONST:
        return oob_const & ((1 << (8 * es)) - 1)
    return NAN_FILL[dtype]


def extent(size, stride, es):
    """Bytes spanned by a tensor from its base."""
    return size[0] * es + sum((size[d] - 1) * stride[d - 1] for d in range(1, len(size)))


def tensor_view(buf, size, stride, es):
    """The logical tensor (axes reversed: dim rank-1 first) of a byte buffer, as unsigned integers
    of width es, through numpy strides — the independent layout reference."""
    r = len(size)
    arr = np.frombuffer(bytes(buf), dtype=np.dtype(f"<u{es}") if es > 1 else np.uint8)
    shape = tuple(size[d] for d in reversed(range(r)))
    strides = tuple(stride[d - 1] for d in reversed(range(1, r))) + (es,)
    return np.lib.stride_tricks.as_strided(arr, shape=shape, strides=strides, writeable=False).copy()


def ref_tile_dense(tensor, coord, box, ts, fill, es):
    """TMA-V1 reference: pad every axis with the fill value by ``before = max(0, -coord)`` and
    ``after = max(0, coord + box - size)``, slice ``[start : start + box : ts]`` (step 1 on dim 0)
    with ``start = coord + before``, ravel, little-endian bytes."""
    r = tensor.ndim
    pads, slices = [], []
    for axis in range(r):
        d = r - 1 - axis
        size = tensor.shape[axis]
        before = max(0, -coord[d])
        after = max(0, coord[d] + box[d] - size)
        pads.append((before, after))
        start = coord[d] + before
        slices.append(slice(start, start + box[d], 1 if d == 0 else ts[d]))
    padded = np.pad(tensor, pads, mode="constant", constant_values=np.array(fill, dtype=tensor.dtype))
    out = padded[tuple(slices)].ravel()
    return out.astype(f"<u{es}" if es > 1 else np.uint8).tobytes()


def element_grid(coord, box, ts, rank):
    """Brute force: the visited coordinates of a tile box, one row per (i1..i4), as a list of
    rows, each a list of coordinate tuples c_0..c_{rank-1}."""
    n = [-(-box[d] // (ts[d] if d else 1)) for d in range(rank)]
    rows = []
    outer = [range(n[d]) for d in reversed(range(1, rank))]
    for idx in itertools.product(*outer):
        i = (0,) + tuple(reversed(idx))
        rows.append([tuple([coord[0] + i0] + [coord[d] + i[d] * ts[d] for d in range(1, rank)])
                     for i0 in range(n[0])])
    return rows


def brute_requests(d, coord, addr_w=64):
    """Brute force of §4.7 for a tile load: per row, every in-bounds (element, byte) address;
    then the touched lines in span order with the sectors touched in each. Returns
    ``(requests [(line, sectors)], byte_map {dense: address})``."""
    r, es = d["rank"], ESIZE[d["dtype"]]
    size, stride = d["tensor_size"], d["tensor_stride"]
    ts = d.get("traversal_stride", (1,) * 5)
    space = 1 << addr_w
    reqs, byte_map = [], {}
    dense = 0
    for row in element_grid(coord, d["box_size"], ts, r):
        addrs = []
        for c in row:
            if all(0 <= c[k] < size[k] for k in range(r)):
                a = d["global_address"] + c[0] * es + sum(c[k] * stride[k - 1] for k in range(1, r))
                for b in range(es):
                    addrs.append((a + b) % space)
                    byte_map[dense + b] = (a + b) % space
            dense += es
        order = []
        touched = {}
        for a in addrs:
            line = a >> 7
            if line not in touched:
                order.append(line)
                touched[line] = 0
            touched[line] |= 1 << ((a & 127) >> 5)
        reqs.extend((line, touched[line]) for line in order)
    return reqs, byte_map


def load_setup(desc_fields, cmd_fields, tensor_bytes=None, params=None, rng=None, smem_default=0,
               **model_kw):
    """A TmaModel with the descriptor at DESC_ADDR and (optionally) the tensor's bytes at its global
    address; returns (model, cmd)."""
    p = params or TmaParams()
    gmem = GlobalMemory(p.ADDR_W)
    smem = SharedMemory(p.SMEM_AW, default=smem_default)
    if desc_fields is not None:
        gmem.write(DESC_ADDR, encode_desc(**desc_fields))
    if tensor_bytes is not None:
        gmem.write(desc_fields["global_address"], tensor_bytes)
    cmd = dict(cmd_fields)
    cmd.setdefault("desc_addr", DESC_ADDR)
    model = TmaModel(p, gmem, smem, **model_kw)
    return model, TmaCmd(**cmd)


def random_tile_case(rng, max_box_bytes=4096, allow_alias=True):
    """A random legal tile-load case: (descriptor fields, command fields, tensor buffer)."""
    while True:
        rank = rng.randint(1, 5)
        dtype = rng.choice(sorted(ESIZE))
        es = ESIZE[dtype]
        unit = 16 // es if es < 16 else 1
        box0 = unit * rng.randint(1, max(1, min(256 // unit, 64 // es)))
        box = [box0] + [rng.randint(1, 6) for _ in range(rank - 1)]
        ts = [rng.randint(1, 8)] + [rng.randint(1, 4) if rng.random() < 0.6 else rng.randint(1, 8)
                                    for _ in range(rank - 1)]
        n = [box[0]] + [-(-box[k] // ts[k]) for k in range(1, rank)]
        bb = es * int(np.prod(n))
        if bb <= max_box_bytes:
            break
    size = [rng.randint(1, box0 * 2 + 3)] + [rng.randint(1, 9) for _ in range(rank - 1)]
    stride = []
    prev = -(-size[0] * es // 16) * 16
    for k in range(1, rank):
        if allow_alias and rng.random() < 0.05:
            s = 16 * rng.randint(0, 2)                          # aliasing rows (TMA-F52)
        else:
            s = prev + 16 * rng.choice((0, 0, 1, 3))
        stride.append(s)
        prev = s * size[k]
    coord = [rng.randint(-box[k] * (ts[k] if k else 1) - 2, size[k] + 2) for k in range(rank)]
    fills = [OobFill.ZERO, OobFill.CONST] + ([OobFill.NAN] if dtype in FLOATS else [])
    oob_fill = rng.choice(fills)
    inner = box0 * es
    swizzles = [Swizzle.NONE] + [m for m, span in ((1, 32), (2, 64), (3, 128)) if inner <= span]
    swizzle = rng.choice(swizzles)
    fp = bb if swizzle == 0 else -(-bb // 128) * 128
    align = 1024 if swizzle else 128
    smem_addr = align * rng.randint(0, ((1 << 18) - fp) // align)
    gaddr = 16 * rng.randint(0x1000, 0x100000)            # above the descriptor at 0x8000
    desc = dict(global_address=gaddr, tensor_size=size, tensor_stride=stride, rank=rank,
                mode=Mode.TILE, dtype=dtype, swizzle=swizzle, oob_fill=oob_fill, box_size=box,
                traversal_stride=ts, oob_const=rng.getrandbits(64))
    cmd = dict(op=CmdOp.TENSOR_LOAD, rank=rank, coord=coord, smem_addr=smem_addr,
               mbar_addr=8 * rng.randint(0, 1000), cta_id=rng.randint(0, 15))
    buf = rng.randbytes(extent(size, stride, es))
    return desc, cmd, buf


# -- checks of the references themselves ---------------------------------------------------------
def test_reference_tile_slicing_on_a_hand_case():
    """The V1 reference on a 2-D U8 tensor with a negative coordinate and ts 2."""
    t = np.arange(12, dtype=np.uint8).reshape(3, 4)           # size {4, 3}
    out = ref_tile_dense(t, coord=(-1, 1), box=(3, 3), ts=(1, 2), fill=0xEE, es=1)
    assert list(out) == [0xEE, 4, 5, 0xEE, 0xEE, 0xEE]


def test_reference_strided_view():
    buf = bytes(range(64))
    v = tensor_view(buf, size=(2, 3), stride=(16,), es=4)
    assert v.shape == (3, 2) and v[1, 1] == int.from_bytes(bytes(range(20, 24)), "little")


def test_closed_form_swizzle_examples():
    assert swz_closed(0x3FF, 3) == 0x38F and swz_closed(0x3FF, 0) == 0x3FF


def test_brute_requests_on_a_line_crossing_row():
    d = dict(rank=1, dtype=DType.U8, tensor_size=(1000,), tensor_stride=(), global_address=0x1000,
             box_size=(256,))
    reqs, _ = brute_requests(d, (100,))
    assert reqs == [(0x1000 >> 7, 0x8), (0x1080 >> 7, 0xF), (0x1100 >> 7, 0xF)]


@pytest.mark.parametrize("k", range(3))
def test_random_case_generator_is_legal(k):
    import random
    from golden.tma.encode import decode_desc
    from golden.tma.validate import validate
    rng = random.Random(k)
    for _ in range(50):
        desc, cmd, _ = random_tile_case(rng)
        d = decode_desc(encode_desc(**desc))
        assert validate(TmaCmd(desc_addr=DESC_ADDR, **cmd), d, TmaParams()) == 0


# -- im2col (TMA-V2) -------------------------------------------------------------------------------
# Written out again from spec §4.6 / §6 item 13 and rule 0x19, not imported from the model:
# packed offset field widths per rank (W in the lowest bits) and corner limits [-lim, lim).
I2C_OFF_BITS = {3: (16,), 4: (8, 8), 5: (5, 5, 5)}
I2C_CORNER_LIM = {3: 1 << 15, 4: 1 << 7, 5: 1 << 4}


def pack_i2c_offsets(offs, rank):
    """Offsets (w, h, d) packed into 16 bits, W lowest (test-side packing)."""
    v, shift = 0, 0
    for o, bits in zip(offs, I2C_OFF_BITS[rank], strict=True):
        assert 0 <= o < 1 << bits
        v |= o << shift
        shift += bits
    return v


def unpack_i2c_offsets(v, rank):
    """The offsets (w, h, d) of a packed ``im2col_off`` (unused high bits ignored)."""
    out, shift = [], 0
    for bits in I2C_OFF_BITS[rank]:
        out.append((v >> shift) % (1 << bits))
        shift += bits
    return out


def i2c_base_positions(lo, hi, ts, start, n0, count):
    """Independent reference of the TMA-F19 walk, written as a set rather than a loop.

    ``lo``/``hi``/``ts``/``start`` are per spatial dimension (W, H, D order). The walk visits, in
    increasing lexicographic order of (n, d, h, w), the tuples with n >= n0 in which each spatial
    coordinate s lies on the start's own (possibly off-grid) tail ``start_s, start_s + ts_s, ...
    <= hi_s`` while all coordinates above s equal the start's, and on the grid ``lo_s, lo_s + ts_s,
    ... <= hi_s`` otherwise. Returns the first ``count`` tuples ``(n, [d,] [h,] w)``."""
    S = len(lo)
    grid = [set(range(lo[s], hi[s] + 1, ts[s])) for s in range(S)]
    tail = [set(range(start[s], hi[s] + 1, ts[s])) for s in range(S)]
    per_image = int(np.prod([len(g) for g in grid]))
    first = (n0,) + tuple(start[s] for s in reversed(range(S)))
    cands = [sorted(grid[s] | tail[s]) for s in reversed(range(S))]           # outermost first
    out = []
    for n in range(n0, n0 + count // per_image + 2):
        for t in itertools.product(*cands):
            full = (n,) + t
            ok = True
            for a in range(1, S + 1):                   # tuple position a <-> spatial s = S - a
                s = S - a
                v = full[a]
                if v not in (tail[s] if full[:a] == first[:a] else grid[s]):
                    ok = False
                    break
            if ok:
                out.append(full)
                if len(out) == count:
                    return out
    raise AssertionError("not enough positions")            # pragma: no cover


def i2c_bbox(desc):
    """Per spatial dimension (W, H, D): (lo, hi) of the bounding box (TMA-F17), from the
    descriptor fields."""
    S = desc["rank"] - 2
    return [(desc["base_corner"][s], desc["tensor_size"][s + 1] - 1 + desc["far_corner"][s])
            for s in range(S)]


def ref_im2col_dense(tensor, desc, coord, im2col_off, fill):
    """TMA-V2 reference: the im2col box built with ``sliding_window_view``.

    ``tensor`` is the logical tensor with axes reversed (N, [D,] [H,] W, C), e.g. from
    :func:`tensor_view`. The spatial axes are padded with the fill value by P = max |corner| + max
    offset on both sides (the channel axis by what the channel range needs), windows of extent
    ``off_s + 1`` are taken over the spatial axes, and row i is the window at base position pos_i
    (the i-th tuple of :func:`i2c_base_positions`) read at tap ``off``, channels c .. c+range_c-1;
    rows whose image n is outside [0, N) are all fill. Returns the little-endian bytes."""
    r = tensor.ndim
    S = r - 2
    es = tensor.dtype.itemsize
    N, C = tensor.shape[0], tensor.shape[-1]
    rc, c0 = desc["range_c"], coord[0]
    offs = unpack_i2c_offsets(im2col_off, r)
    bbox = i2c_bbox(desc)
    corners = [desc["base_corner"][s] for s in range(S)] + [desc["far_corner"][s] for s in range(S)]
    P = max(abs(v) for v in corners) + max(offs)
    cb, ca = max(0, -c0), max(0, c0 + rc - C)
    fill_arr = np.array(fill, dtype=tensor.dtype)
    padded = np.pad(tensor, [(0, 0)] + [(P, P)] * S + [(cb, ca)], mode="constant",
                    constant_values=fill_arr)
    axes = tuple(range(1, S + 1))                                        # (D,) (H,) W
    window = tuple(offs[S - a] + 1 for a in axes)
    view = np.lib.stride_tricks.sliding_window_view(padded, window, axis=axes)
    tap = tuple(offs[S - a] for a in axes)
    positions = i2c_base_positions([b[0] for b in bbox], [b[1] for b in bbox],
                                   [desc["traversal_stride"][s + 1] for s in range(S)],
                                   [coord[s + 1] for s in range(S)], coord[r - 1],
                                   desc["range_ndhw"])
    out = np.empty((len(positions), rc), dtype=tensor.dtype)
    for i, (n, *pos) in enumerate(positions):
        if 0 <= n < N:
            idx = (n,) + tuple(p + P for p in pos) + (slice(c0 + cb, c0 + cb + rc),) + tap
            out[i] = view[idx]
        else:
            out[i] = fill_arr
    return out.astype(f"<u{es}" if es > 1 else np.uint8).tobytes()


def brute_im2col_requests(desc, coord, im2col_off, addr_w=64):
    """Brute force of §4.7 for an im2col load: per pixel (from :func:`i2c_base_positions`), every
    in-bounds (element, byte) address; then the lines in span order with their sectors. Returns
    ``(requests [(line, sectors)], byte_map {dense: address})``."""
    r, es = desc["rank"], ESIZE[desc["dtype"]]
    S = r - 2
    size, stride = desc["tensor_size"], desc["tensor_stride"]
    rc = desc["range_c"]
    offs = unpack_i2c_offsets(im2col_off, r)
    bbox = i2c_bbox(desc)
    positions = i2c_base_positions([b[0] for b in bbox], [b[1] for b in bbox],
                                   [desc["traversal_stride"][s + 1] for s in range(S)],
                                   [coord[s + 1] for s in range(S)], coord[r - 1],
                                   desc["range_ndhw"])
    space = 1 << addr_w
    reqs, byte_map = [], {}
    for i, (n, *pos) in enumerate(positions):
        pix = [pos[S - 1 - s] + offs[s] for s in range(S)]                  # W, H, D order
        inside = 0 <= n < size[r - 1] and all(0 <= pix[s] < size[s + 1] for s in range(S))
        addrs = []
        for j in range(rc):
            c = coord[0] + j
            if inside and 0 <= c < size[0]:
                a = (desc["global_address"] + c * es + sum(pix[s] * stride[s] for s in range(S))
                     + n * stride[r - 2])
                for b in range(es):
                    addrs.append((a + b) % space)
                    byte_map[(i * rc + j) * es + b] = (a + b) % space
        order, touched = [], {}
        for a in addrs:
            if a >> 7 not in touched:
                order.append(a >> 7)
                touched[a >> 7] = 0
            touched[a >> 7] |= 1 << ((a & 127) >> 5)
        reqs.extend((line, touched[line]) for line in order)
    return reqs, byte_map


def random_im2col_case(rng, max_box_bytes=8192, max_ref_bytes=1 << 22, max_tensor_bytes=1 << 17):
    """A random legal im2col load: (descriptor fields, command fields, tensor buffer). Rank 3..5,
    every dtype, ts 1..8 in every dimension, negative and positive corners, off-grid starts,
    negative and beyond-N images (n-crossing), channel ranges partly or wholly outside C, random
    offsets (with bit 15 set at random at rank 5), every fill mode, every legal swizzle, and
    multicast. Cases whose TMA-V2 reference array or tensor would be large are redrawn."""
    while True:
        rank = rng.randint(3, 5)
        S = rank - 2
        dtype = rng.choice(sorted(ESIZE))
        es = ESIZE[dtype]
        inner = 16 * rng.choice((1, 1, 2, 2, 3, 4, 8, 16))
        rc = inner // es
        C = rng.choice((rng.randint(1, rc + 8), rng.randint(max(1, rc - 4), 2 * rc + 3)))
        sp = [rng.randint(1, {3: 12, 4: 7, 5: 4}[rank]) for _ in range(S)]
        N = rng.randint(1, 3)
        lim = I2C_CORNER_LIM[rank]
        # "conv" cases: far = -(filter extent - 1), base = -padding, offsets within the filter, so
        # that most pixels are in bounds; the others draw corners and offsets freely
        style = rng.choices(("conv", "small", "wide"), (0.7, 0.22, 0.08))[0]
        bits = I2C_OFF_BITS[rank]
        base, far, offs = [], [], []
        for s in range(S):
            while True:
                if style == "conv":
                    f = -rng.randint(0, min(3, sp[s] - 1))
                    b = rng.choice((0, -rng.randint(0, -f)))
                    o = rng.randint(0, -f)
                elif style == "small":
                    b, f = rng.choice((0, rng.randint(-3, 2))), rng.choice((0, rng.randint(-3, 2)))
                    o = rng.choice((0, 1, rng.randint(0, min((1 << bits[s]) - 1, sp[s] + 3))))
                else:
                    b, f = rng.randint(-lim, min(lim - 1, 4)), rng.randint(-4, lim - 1)
                    o = rng.randint(0, min((1 << bits[s]) - 1, sp[s] + 3))
                if sp[s] - b + f >= 1:
                    break
            base.append(b)
            far.append(f)
            offs.append(o)
        ts = [rng.randint(1, 8) if k in (0, rank - 1) or rng.random() < 0.4 else rng.randint(1, 2)
              for k in range(rank)]
        lo = base
        hi = [sp[s] - 1 + far[s] for s in range(S)]
        per_image = int(np.prod([len(range(lo[s], hi[s] + 1, ts[s + 1])) for s in range(S)]))
        ndhw = rng.randint(1, max(1, min(1024, max_box_bytes // inner, 3 * per_image + 2)))
        P = max(abs(v) for v in base + far) + max(offs)
        ref_bytes = N * int(np.prod([x + 2 * P for x in sp])) * (C + 2 * rc) * es
        size = [C] + sp + [N]
        stride, prev = [], -(-C * es // 16) * 16
        for k in range(1, rank):
            if rng.random() < 0.04:
                s_ = 16 * rng.randint(0, 2)                          # aliasing pixels
            else:
                s_ = prev + 16 * rng.choice((0, 0, 1, 3))
            stride.append(s_)
            prev = s_ * size[k]
        if ref_bytes <= max_ref_bytes and extent(size, stride, es) <= max_tensor_bytes:
            break
    c0 = rng.randint(-rc - 2, C + 2) if rng.random() < 0.3 else rng.randint(-2, max(-2, C - rc + 2))
    start = [rng.randint(lo[s], hi[s]) for s in range(S)]
    n0 = rng.randint(-1, N) if rng.random() < 0.25 else rng.randint(0, N - 1)
    off = pack_i2c_offsets(offs, rank)
    if rank == 5 and rng.random() < 0.5:
        off |= 0x8000                                               # ignored (TMA-F20)
    fills = [OobFill.ZERO, OobFill.CONST] + ([OobFill.NAN] if dtype in FLOATS else [])
    swizzles = [Swizzle.NONE] + [m for m, span in ((1, 32), (2, 64), (3, 128)) if inner <= span]
    swizzle = rng.choice(swizzles)
    bb = ndhw * inner
    fp = bb if swizzle == 0 else -(-bb // 128) * 128
    align = 1024 if swizzle else 128
    desc = dict(global_address=16 * rng.randint(0x1000, 0x100000), tensor_size=size,
                tensor_stride=stride, rank=rank, mode=Mode.IM2COL, dtype=dtype, swizzle=swizzle,
                oob_fill=rng.choice(fills), oob_const=rng.getrandbits(64), range_c=rc,
                range_ndhw=ndhw, base_corner=base, far_corner=far, traversal_stride=ts,
                box_size=[rng.randint(0, 0xFFFF) for _ in range(5)])         # unused (TMA-F16)
    mcast = int(rng.random() < 0.2)
    cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=rank,
               coord=[c0] + start + [n0], im2col_off=off,
               smem_addr=align * rng.randint(0, ((1 << 18) - fp) // align),
               mbar_addr=8 * rng.randint(0, 1000), cta_id=rng.randint(0, 15), mcast=mcast,
               cta_mask=rng.randint(1, 0xFFFF) if mcast else 0)
    buf = rng.randbytes(extent(size, stride, es))
    return desc, cmd, buf


def test_reference_im2col_base_positions_on_a_hand_case():
    """Rank 5 walk written out by hand: W grid {0, 2} (ts 2) from the off-grid w = 1, H grid
    {-1, 2} (ts 3) from the off-grid h = 0, D = {0}; every carry happens at the first step."""
    got = i2c_base_positions(lo=[0, -1, 0], hi=[2, 2, 0], ts=[2, 3, 1], start=[1, 0, 0], n0=1,
                             count=7)
    assert got == [(1, 0, 0, 1), (2, 0, -1, 0), (2, 0, -1, 2), (2, 0, 2, 0), (2, 0, 2, 2),
                   (3, 0, -1, 0), (3, 0, -1, 2)]
    # rank 3, on-grid start in the middle of the grid
    assert i2c_base_positions([-1], [4], [2], [3], 0, 5) == [(0, 3), (1, -1), (1, 1), (1, 3), (2, -1)]


def test_reference_im2col_on_a_hand_case():
    """The V2 reference on a rank-3 U8 tensor N=2, W=3, C=2 (value 10n + 2w + c + 1): box
    w in [-1, 2] (base -1, far 0), ts 1, start w = 1, n = 0, offset 1, channels 1..2, 6 pixels."""
    t = np.array([[[10 * n + 2 * w + c + 1 for c in range(2)] for w in range(3)] for n in range(2)],
                 dtype=np.uint8)
    desc = dict(rank=3, range_c=2, range_ndhw=6, base_corner=(-1,), far_corner=(0,),
                tensor_size=(2, 3, 2), traversal_stride=(1, 1, 1))
    out = ref_im2col_dense(t, desc, coord=(1, 1, 0), im2col_off=1, fill=0xEE)
    # bases w: 1, 2, -1(n1), 0, 1, 2 -> pixels 2, 3, 0, 1, 2, 3; channel 2 is outside C
    assert list(out) == [6, 0xEE, 0xEE, 0xEE, 12, 0xEE, 14, 0xEE, 16, 0xEE, 0xEE, 0xEE]


def test_reference_unpack_and_brute_im2col_requests():
    assert unpack_i2c_offsets(0xFFFF, 5) == [31, 31, 31] and pack_i2c_offsets([1, 2, 3], 5) == 0x0C41
    assert unpack_i2c_offsets(0x0102, 4) == [2, 1] and unpack_i2c_offsets(0xABCD, 3) == [0xABCD]
    desc = dict(rank=3, dtype=DType.U16, tensor_size=(64, 4, 2), tensor_stride=(128, 512),
                global_address=0x1000, range_c=64, range_ndhw=3, base_corner=(0,), far_corner=(0,),
                traversal_stride=(1, 1, 1))
    reqs, byte_map = brute_im2col_requests(desc, (32, 3, 0), 0)
    # pixel 0: (n0, w3) channels 32..63 -> 0x1000 + 384 + 64 = 0x11C0 (64 B, sectors 2, 3);
    # pixel 1: (n1, w0) -> 0x1200 + 64; pixel 2: (n1, w1) -> 0x1280 + 64
    assert reqs == [(0x1180 >> 7, 0xC), (0x1200 >> 7, 0xC), (0x1280 >> 7, 0xC)]
    assert byte_map[0] == 0x11C0 and byte_map[128] == 0x1240 and len(byte_map) == 192


@pytest.mark.parametrize("k", range(3))
def test_random_im2col_case_generator_is_legal(k):
    import random
    from golden.tma.encode import decode_desc
    from golden.tma.validate import validate
    rng = random.Random(100 + k)
    for _ in range(50):
        desc, cmd, _ = random_im2col_case(rng)
        d = decode_desc(encode_desc(**desc))
        assert validate(TmaCmd(desc_addr=DESC_ADDR, **cmd), d, TmaParams()) == 0
