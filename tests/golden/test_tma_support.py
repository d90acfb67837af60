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
