"""im2col loads (spec tma.md §4.6, TMA-F15..F22): the golden model against the
``sliding_window_view`` reference (TMA-V2), the convolution check (TMA-V3, TMA-GV73), every im2col
golden vector of §5 (TMA-GV3..GV8, GV11..GV16, GV18..GV20, GV22), and directed cases of the walk
(carries, next image, off-grid bases), offset unpacking, dense offsets and exact arithmetic.

Expected values come from the spec's vectors, from the independent references of
``test_tma_support`` (which never call the model's traversal) or are written out by hand."""

import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.conv import ConvCase, conv_descriptor, run_conv, tap_commands
from golden.tma.encode import decode_desc, encode_desc
from golden.tma.formats import CmdOp, DType, ErrCode, Mode, OobFill, Swizzle, TmaCmd
from golden.tma.geometry import box_bytes, footprint, geometry
from golden.tma.im2col import im2col_elements, im2col_rows, pack_offsets, unpack_offsets
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.model import run_command
from golden.tma.params import TmaParams
from golden.tma.tile import elements, rows
from golden.tma.validate import validate
from tests.golden.test_tma_support import (
    DESC_ADDR, ESIZE, SENTINEL, brute_im2col_requests, fill_value, i2c_base_positions, i2c_bbox,
    load_setup, pack_i2c_offsets, random_im2col_case, ref_im2col_dense, tensor_view,
    unpack_i2c_offsets)
from tests.golden.test_tma_tile import dense_from_smem, write_counts

P = TmaParams()


def _fig8_i2c_desc(v):
    """Descriptor fields of an im2col vector (Fig 8 common setup, §5)."""
    return gv.fig8_desc(v["tensor"], mode=Mode.IM2COL, range_c=v["range_c"],
                        range_ndhw=v["range_ndhw"], base_corner=v["base"], far_corner=v["far"],
                        traversal_stride=(1,) + tuple(v["ts"]) + (1,))


def _fig8_world(v, images=10, seed=3):
    """Global memory with the vector's descriptor and the first ``images`` images of its tensor
    (NHWC F16, every byte nonzero so that zero fill is recognisable); smem pre-filled with the
    sentinel. Returns (gmem, smem, desc fields, tensor as (N, H, W, C) uint16)."""
    (_, H, W, C), size, stride = gv.FIG8_TENSORS[v["tensor"]]
    data = np.random.default_rng(seed).integers(1, 256, images * H * W * C * 2, dtype=np.uint8)
    desc = _fig8_i2c_desc(v)
    gmem = GlobalMemory()
    gmem.write(gv.FIG8_DESC_ADDR, encode_desc(**desc))
    gmem.write(gv.FIG8_GADDR, data)
    tensor = data.view("<u2").reshape(images, H, W, C)
    return gmem, SharedMemory(default=SENTINEL), desc, tensor


def _fig8_i2c_cmd(v):
    return TmaCmd(**gv.fig8_cmd(mode=Mode.IM2COL, coord=v["coord"], im2col_off=v["off"]))


def _pixel_bytes(tensor, px, rc):
    """The range_c channels of pixel (n, h, w) of a Fig 8 tensor, or None if it is OOB."""
    n, h, w = px
    N, H, W, _ = tensor.shape
    if 0 <= n < N and 0 <= h < H and 0 <= w < W:
        return tensor[n, h, w, :rc].astype("<u2").tobytes()
    return None


def _in_box(value, box, ts):
    """``box`` as printed in §5: an interval (lo, hi) when ts = 1, else the list of grid
    positions."""
    return box[0] <= value <= box[1] if ts == 1 else value in box


# ---------------------------------------------------------------------------------------------
# §5 im2col vectors
@pytest.mark.parametrize("name", [pytest.param(k, marks=pytest.mark.req(f"TMA-{k}"))
                                  for k in gv.IM2COL])
@pytest.mark.req("TMA-V16", "TMA-F16", "TMA-F17", "TMA-F18", "TMA-F19", "TMA-F20", "TMA-F21",
                 "TMA-F22", "TMA-F23", "TMA-F25", "TMA-F26", "TMA-F35")
def test_im2col_vector(name):
    """The vector through ``run_command``: READ count, sectors 0x1 at lane 0, the OOB pixel
    indices (zero-filled, no request), tx, the first and last pixels and the last base, every base
    inside the printed bounding box / grid; the whole image equals the TMA-V2 reference and the
    request list the brute-force one."""
    v = gv.IM2COL[name]
    gmem, smem, desc, tensor = _fig8_world(v)
    cmd = _fig8_i2c_cmd(v)
    res = run_command(cmd, gmem, smem)
    rc, ndhw = v["range_c"], v["range_ndhw"]
    px_bytes = rc * 2
    assert res.code == 0 and res.done
    assert res.tx[0] == v["tx"] == res.box_bytes and sum(m.tx for m in res.mbar) == v["tx"]
    # requests: one READ per in-bounds pixel, 16/32 B at line offset 0, pixel order
    assert len(res.requests) == v["reads"]
    assert all(q.op == 0 and q.sectors == 0x1 and q.lane == 0 and q.nbytes == px_bytes
               for q in res.requests)
    req_px = [q.dense // px_bytes for q in res.requests]
    assert req_px == sorted(set(range(ndhw)) - set(v["oob_idx"]))
    assert len(v["oob_idx"]) == v["oob_px"]
    # the image: OOB pixels zero, in-bounds pixels nonzero data; first and last pixels
    image = smem.read(0, 0, v["tx"])
    for i in range(ndhw):
        chunk = bytes(image[i * px_bytes:(i + 1) * px_bytes])
        assert (chunk == bytes(px_bytes)) == (i in v["oob_idx"]), i
    for i, px in ((0, v["first_px"]), (ndhw - 1, v["last_px"])):
        want = _pixel_bytes(tensor, px, rc)
        assert bytes(image[i * px_bytes:(i + 1) * px_bytes]) == (want or bytes(px_bytes))
    assert set(smem.read(0, v["tx"], 4096)) == {SENTINEL}
    # bases inside the printed bounding box (or grid); last base; first/last pixel coordinates
    offs = (v["off"] & 0xFF, v["off"] >> 8)
    bw, bh = v["bbox"][1], v["bbox"][3]
    for r in res.rows:
        w, h = r.coord[1] - offs[0], r.coord[2] - offs[1]
        assert _in_box(w, bw, v["ts"][0]) and _in_box(h, bh, v["ts"][1]), (r.index, w, h)
    first, last = res.rows[0].coord, res.rows[-1].coord
    assert (first[3], first[2], first[1]) == v["first_px"]
    assert (last[3], last[2], last[1]) == v["last_px"]
    assert (last[3], last[2] - offs[1], last[1] - offs[0]) == v["last_base"]
    if v["fig"] == "8F":            # ¶132: top row, first and last columns, not the bottom row
        assert all(r.coord[2] - offs[1] != 12 for r in res.rows)
    if v["fig"] == "8G":            # ¶133: not the last column
        assert all(r.coord[1] - offs[0] != 6 for r in res.rows)
    # the independent references
    _, size, stride = gv.FIG8_TENSORS[v["tensor"]]
    view = tensor_view(gmem.read(gv.FIG8_GADDR, 10 * stride[2]).tobytes(),
                       (size[0], size[1], size[2], 10), stride, 2)
    assert bytes(image) == ref_im2col_dense(view, dict(desc, rank=4), v["coord"], v["off"], 0)
    brute, _ = brute_im2col_requests(dict(desc, rank=4, dtype=DType.F16), v["coord"], v["off"])
    assert [(q.line, q.sectors) for q in res.requests] == brute
    if v["fig"] == "8B":
        assert encode_desc(**desc) == gv.GV1_BYTES                     # the TMA-GV1 descriptor


@pytest.mark.req("TMA-GV22", "TMA-V16", "TMA-F13", "TMA-F25")
@pytest.mark.parametrize("name", sorted(gv.GV22))
def test_gv22_read_addresses(name):
    v = gv.IM2COL[name]
    gmem, smem, _, _ = _fig8_world(v)
    res = run_command(_fig8_i2c_cmd(v), gmem, smem)
    by_px = {q.dense // (v["range_c"] * 2): q.line * 128 + q.lane for q in res.requests}
    firsts, (last_i, last_a) = gv.GV22[name]
    for i, a in firsts:
        assert by_px[i] == a, (i, hex(by_px[i]), hex(a))
    assert res.requests[-1].line * 128 == last_a and max(by_px) == last_i
    # the printed formula: 0x10000 + n*16128 + h*1152 + w*128 of the pixel
    n, h, w = v["first_px"]
    assert by_px[0] == 0x10000 + n * 16128 + h * 1152 + w * 128


def test_im2col_vectors_are_transcribed_as_printed():
    """Spot checks of vectors.py against the §5 table text (transcription, no model)."""
    assert gv.IM2COL["GV3"]["oob_idx"] == [4, 13, 22, 31, 40, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58]
    assert gv.IM2COL["GV20"]["oob_idx"] == [2, 3, 11, 12, 20, 21] + list(range(29, 49)) + [56, 57]
    assert gv.IM2COL["GV18"]["last_base"] == (8, -1, 3) and gv.IM2COL["GV19"]["off"] == 0x0202
    assert gv.IM2COL["GV14"]["bbox"] == ("w", (-1, 1, 3, 5), "h", (-1, 1, 3, 5, 7, 9, 11))
    assert [gv.IM2COL[k]["off"] for k in ("GV3", "GV4", "GV5", "GV20")] == [0, 0x101, 0x202, 0x404]
    assert {k: (v["range_c"], v["range_ndhw"], v["ts"]) for k, v in gv.IM2COL.items()
            if k in ("GV6", "GV11", "GV14", "GV18")} == {
        "GV6": (8, 64, (1, 1)), "GV11": (16, 32, (2, 2)), "GV14": (16, 32, (2, 2)),
        "GV18": (16, 64, (1, 1))}
    assert gv.GV73 == [((1, 1, 1), 60), ((2, 2, 1), 60), ((1, 1, 2), 18), ((0, 1, 1), 24)]


# ---------------------------------------------------------------------------------------------
# TMA-V2: random loads against the sliding_window_view reference
def _check_random_load(model, c, desc, buf, res):
    es = ESIZE[desc["dtype"]]
    r = desc["rank"]
    tensor = tensor_view(buf, desc["tensor_size"][:r], desc["tensor_stride"][:r - 1], es)
    fill = fill_value(desc["dtype"], desc["oob_fill"], desc["oob_const"])
    ref = ref_im2col_dense(tensor, desc, c.coord, c.im2col_off, fill)
    assert res.code == 0 and res.done
    assert res.box_bytes == len(ref) == desc["range_c"] * desc["range_ndhw"] * es
    mask = c.dest_mask
    for cta in range(16):
        if mask >> cta & 1:
            dense, fp = dense_from_smem(model, cta, c.smem_addr, len(ref), desc["swizzle"])
            assert dense == ref, cta
            assert res.tx[cta] == len(ref)
            counts = write_counts(res.beats, cta)
            assert set(counts) == fp and set(counts.values()) == {1}
            mem = model.smem.cta(cta)
            fpa = np.fromiter(fp, dtype=np.int64)
            for page, data in mem.pages.items():
                outside = ~np.isin(page * 4096 + np.arange(4096), fpa)
                assert np.all(data[outside] == SENTINEL)
        else:
            assert res.tx[cta] == 0
            assert all(np.all(data == SENTINEL) for data in model.smem.cta(cta).pages.values())
    # requests: the brute-force list, and every in-bounds (element, byte) carried exactly once
    brute, byte_map = brute_im2col_requests(desc, c.coord, c.im2col_off)
    assert [(q.line, q.sectors) for q in res.requests] == brute
    carried = {}
    for q in res.requests:
        for k in range(q.nbytes):
            assert q.dense + k not in carried
            carried[q.dense + k] = q.line * 128 + q.lane + k
    assert carried == byte_map


@pytest.mark.req("TMA-V2", "TMA-V4", "TMA-F13", "TMA-F15", "TMA-F16", "TMA-F17", "TMA-F18",
                 "TMA-F19", "TMA-F20", "TMA-F21", "TMA-F22", "TMA-F23", "TMA-F24", "TMA-F26",
                 "TMA-F30", "TMA-F31", "TMA-F34", "TMA-F35")
def test_im2col_loads_match_sliding_window_reference(seed):
    """>= 500 random im2col loads (rank 3..5, esize 1/2/4/8, ts 1..8, n-crossing, images below 0
    and past N, partly and wholly OOB channel ranges, negative corners, off-grid bases, offsets,
    ZERO/CONST/NAN fill, every legal swizzle, multicast) equal the sliding-window reference in
    every destination CTA, write every footprint byte once and nothing else, credit tx = box
    bytes, and issue exactly the brute-force request list."""
    rng = random.Random(seed)
    st = {k: set() for k in ("rank", "es", "fill", "swizzle", "ts")}
    cnt = dict.fromkeys(("ncross", "nneg", "nbeyond", "cpart", "cout", "negcorner", "offs",
                         "offgrid", "mcast", "bit15", "noreq", "mostly_in"), 0)
    cases = 600
    for _ in range(cases):
        desc, cmd, buf = random_im2col_case(rng)
        model, c = load_setup(desc, cmd, buf, smem_default=SENTINEL)
        res = model.run([c]).commands[0]
        _check_random_load(model, c, desc, buf, res)
        r, S = desc["rank"], desc["rank"] - 2
        st["rank"].add(r)
        st["es"].add(ESIZE[desc["dtype"]])
        st["fill"].add(desc["oob_fill"])
        st["swizzle"].add(desc["swizzle"])
        st["ts"].update(desc["traversal_stride"][1:r - 1])
        bbox = i2c_bbox(desc)
        pos = i2c_base_positions([b[0] for b in bbox], [b[1] for b in bbox],
                                 desc["traversal_stride"][1:r - 1], c.coord[1:r - 1], c.coord[r - 1],
                                 desc["range_ndhw"])
        N, C, rc, c0 = desc["tensor_size"][r - 1], desc["tensor_size"][0], desc["range_c"], c.coord[0]
        cnt["ncross"] += pos[-1][0] > pos[0][0]
        cnt["nneg"] += pos[0][0] < 0
        cnt["nbeyond"] += pos[-1][0] >= N
        cnt["cpart"] += (c0 < 0 < c0 + rc) or (c0 < C < c0 + rc)
        cnt["cout"] += c0 + rc <= 0 or c0 >= C
        cnt["negcorner"] += min(desc["base_corner"][:S]) < 0
        cnt["offs"] += any(unpack_i2c_offsets(c.im2col_off, r))
        cnt["offgrid"] += any((c.coord[s + 1] - bbox[s][0]) % desc["traversal_stride"][s + 1]
                              for s in range(S))
        cnt["mcast"] += c.mcast
        cnt["bit15"] += c.im2col_off >> 15
        cnt["noreq"] += not res.requests
        cnt["mostly_in"] += 2 * sum(q.nbytes for q in res.requests) > res.box_bytes
    print(f"{cases} cases: {st} {cnt}")
    assert st["rank"] == {3, 4, 5} and st["es"] == {1, 2, 4, 8} and st["fill"] == {0, 1, 2}
    assert st["swizzle"] == {0, 1, 2, 3} and st["ts"] == set(range(1, 9))
    assert all(v >= 10 for v in cnt.values()), cnt


@pytest.mark.req("TMA-F16", "TMA-F18", "TMA-F21")
def test_rows_agree_with_the_element_enumeration(seed):
    """im2col_rows (used by the model) against the §4.6 per-element loop, and the mode dispatch
    of ``elements`` / ``rows``."""
    rng = random.Random(seed)
    for _ in range(150):
        desc, cmd, _ = random_im2col_case(rng, max_box_bytes=2048)
        d = decode_desc(encode_desc(**desc))
        c = TmaCmd(**cmd)
        es, rc = ESIZE[desc["dtype"]], desc["range_c"]
        elems = list(im2col_elements(d, c))
        assert elems == list(elements(d, c))
        assert [e[0] for e in elems] == [k * es for k in range(rc * desc["range_ndhw"])]
        rws = im2col_rows(d, c)
        assert rws == rows(d, c) and len(rws) == desc["range_ndhw"]
        for row in rws:
            assert row.nbytes == rc * es and row.dense == row.index * rc * es
            chunk = elems[row.index * rc:(row.index + 1) * rc]
            ib = [e for e in chunk if e[1]]
            assert row.span_bytes == len(ib) * es
            if ib:
                assert (row.span_dense, row.addr) == (ib[0][0], ib[0][2])
                assert [e[0] for e in ib] == list(range(ib[0][0], ib[0][0] + len(ib) * es, es))


# ---------------------------------------------------------------------------------------------
# TMA-V3 / TMA-GV73: convolution from one im2col load per filter tap
def direct_conv(x, w, pad, dil, stride):
    """Plain direct convolution (NHWC x, RSCK w, zero padding), in int64."""
    N, H, W, C = x.shape
    R, S, _, K = w.shape
    OH = (H + 2 * pad - (R - 1) * dil - 1) // stride + 1
    OW = (W + 2 * pad - (S - 1) * dil - 1) // stride + 1
    out = np.zeros((N, OH, OW, K), dtype=np.int64)
    for n in range(N):
        for oh in range(OH):
            for ow in range(OW):
                for r in range(R):
                    for s in range(S):
                        h = oh * stride - pad + r * dil
                        ww = ow * stride - pad + s * dil
                        if 0 <= h < H and 0 <= ww < W:
                            out[n, oh, ow] += np.einsum("c,ck->k", x[n, h, ww].astype(np.int64),
                                                        w[r, s].astype(np.int64))
    return out


@pytest.mark.req("TMA-V3", "TMA-GV73", "TMA-V16", "TMA-F17", "TMA-F19", "TMA-F20")
@pytest.mark.parametrize("pds,ndhw", gv.GV73, ids=["pad", "dilation2", "stride2", "valid"])
def test_gv73_convolution_from_im2col_loads(pds, ndhw, seed):
    pad, dil, stride = pds
    sh = gv.GV73_SHAPE
    rng = np.random.default_rng(seed)
    lo, hi = sh["value_range"]
    x = rng.integers(lo, hi, (sh["N"], sh["H"], sh["W"], sh["C"]), dtype=np.int32)
    w = rng.integers(lo, hi, (sh["R"], sh["S"], sh["C"], sh["K"]), dtype=np.int32)
    case = ConvCase(sh["N"], sh["H"], sh["W"], sh["C"], sh["R"], sh["S"], sh["K"], pad, dil,
                    stride, sh["dtype"])
    assert case.M == ndhw
    d = conv_descriptor(case)
    assert (d["range_c"], d["range_ndhw"], d["rank"], d["mode"]) == (16, ndhw, 4, Mode.IM2COL)
    assert d["base_corner"] == (-pad, -pad) and d["far_corner"] == (pad - 2 * dil,) * 2
    assert d["traversal_stride"][1:3] == (stride, stride)
    taps = tap_commands(case, 0x8000)
    assert [(rs, t.coord[:4], unpack_i2c_offsets(t.im2col_off, 4)) for rs, t, _ in taps] == \
        [((r, s), (0, -pad, -pad, 0), [s * dil, r * dil]) for r in range(3) for s in range(3)]
    run = run_conv(case, x, w)
    for res in run.results.values():
        assert res.code == 0 and res.tx[0] == ndhw * 16 * 4
    want = direct_conv(x, w, pad, dil, stride)
    assert want.shape == run.out.shape and np.array_equal(run.out, want)


def test_conv_driver_rejects_cases_that_do_not_fit_one_load():
    with pytest.raises(ValueError, match="range_c"):
        ConvCase(1, 4, 4, 3, 3, 3, 1, 1, 1, 1).check()                 # 12 B per pixel
    with pytest.raises(ValueError, match="range_ndhw"):
        ConvCase(8, 16, 16, 16, 3, 3, 1, 1, 1, 1).check()              # 2048 pixels
    with pytest.raises(ValueError, match="fit"):
        ConvCase(1, 2, 2, 16, 5, 5, 1, 0, 1, 1).check()


# ---------------------------------------------------------------------------------------------
# Directed cases
def _i2c_world(desc, cmd, values, es, addr_w=64, smem_default=SENTINEL):
    """Descriptor at DESC_ADDR; ``values`` {element address: integer} written little-endian."""
    p = TmaParams(ADDR_W=addr_w)
    gmem = GlobalMemory(addr_w)
    gmem.write(DESC_ADDR, encode_desc(**desc))
    for a, val in values.items():
        gmem.write(a, int(val).to_bytes(es, "little"))
    return p, gmem, SharedMemory(default=smem_default), TmaCmd(desc_addr=DESC_ADDR, **cmd)


@pytest.mark.req("TMA-F19", "TMA-F17", "TMA-F18", "TMA-F16")
def test_f19_rank5_walk_carries_through_w_h_d_into_n():
    """Rank 5, U32, C 4: W box [0, 2] ts 2 (grid {0, 2}) from the off-grid w = 1; H box [-1, 2]
    ts 3 (grid {-1, 2}) from the off-grid h = 0; D box [0, 0]; so the first step carries W -> H ->
    D -> n at once. Pixels (n, d, h, w) written out by hand."""
    W, H, D, N, C = 3, 3, 2, 4, 4
    stride = (16, 16 * W, 16 * W * H, 16 * W * H * D)
    desc = dict(global_address=0x40000, rank=5, mode=Mode.IM2COL, dtype=DType.U32,
                tensor_size=(C, W, H, D, N), tensor_stride=stride, range_c=4, range_ndhw=7,
                base_corner=(0, -1, 0), far_corner=(0, 0, -1), traversal_stride=(5, 2, 3, 1, 7),
                oob_fill=OobFill.CONST, oob_const=0xFFFFFFFF_EEEEEEEE)
    cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=5, coord=(0, 1, 0, 0, 1), im2col_off=0,
               smem_addr=0x400)
    expect = [(1, 0, 0, 1), (2, 0, -1, 0), (2, 0, -1, 2), (2, 0, 2, 0), (2, 0, 2, 2),
              (3, 0, -1, 0), (3, 0, -1, 2)]
    vals = {}
    for n in range(N):
        for dd in range(D):
            for h in range(H):
                for w in range(W):
                    for c in range(C):
                        a = 0x40000 + c * 4 + w * stride[0] + h * stride[1] + dd * stride[2] + n * stride[3]
                        vals[a] = 1000 * n + 100 * dd + 10 * h + w + c * 0x10000
    p, gmem, smem, c = _i2c_world(desc, cmd, vals, 4)
    res = run_command(c, gmem, smem, p)
    assert res.code == 0
    assert [(r.coord[4], r.coord[3], r.coord[2], r.coord[1]) for r in res.rows] == expect
    words = np.frombuffer(smem.read(0, 0x400, 7 * 16).tobytes(), dtype="<u4").reshape(7, 4)
    for i, (n, dd, h, w) in enumerate(expect):
        want = [0xEEEEEEEE] * 4 if h < 0 else [1000 * n + 100 * dd + 10 * h + w + c * 0x10000
                                                 for c in range(4)]
        assert list(words[i]) == want, i
    assert len(res.requests) == 3 and res.tx[0] == 112


@pytest.mark.req("TMA-F19", "TMA-F15", "TMA-F22", "TMA-F23")
def test_f19_rank3_next_image_below_and_past_n():
    """Rank 3 (C, W, N), U16: W box [-1, 2] (base -1, far -2 on W = 5), ts 2, grid {-1, 1}.
    From the off-grid w = 2 (= hi) of image 0, offset 1; images 2 and 3 lie past N = 2 and are
    fill. A second command starts at image -1."""
    C, W, N = 8, 5, 2
    desc = dict(global_address=0x50000, rank=3, mode=Mode.IM2COL, dtype=DType.U16,
                tensor_size=(C, W, N), tensor_stride=(16, 16 * W), range_c=8, range_ndhw=6,
                base_corner=(-1,), far_corner=(-2,), traversal_stride=(1, 2, 1),
                oob_fill=OobFill.ZERO)
    vals = {0x50000 + 2 * c + 16 * w + 80 * n: 0x100 * (n + 1) + 0x10 * w + c
            for n in range(N) for w in range(W) for c in range(C)}
    for n0, expect in ((0, [(0, 3), (1, 0), (1, 2), (2, 0), (2, 2), (3, 0)]),
                       (-1, [(-1, 0), (-1, 2), (0, 0), (0, 2), (1, 0), (1, 2)])):
        cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=3, coord=(0, 2 if n0 == 0 else -1, n0),
                   im2col_off=1)
        p, gmem, smem, c = _i2c_world(desc, cmd, vals, 2)
        res = run_command(c, gmem, smem, p)
        assert [(r.coord[2], r.coord[1]) for r in res.rows] == expect
        got = np.frombuffer(smem.read(0, 0, 96).tobytes(), dtype="<u2").reshape(6, 8)
        for i, (n, w) in enumerate(expect):
            inside = 0 <= n < N and 0 <= w < W
            assert list(got[i]) == ([0x100 * (n + 1) + 0x10 * w + ch for ch in range(C)] if inside
                                    else [0] * 8), (n0, i)
        assert len(res.requests) == sum(0 <= n < N and 0 <= w < W for n, w in expect)


@pytest.mark.req("TMA-F20")
def test_f20_offset_unpacking():
    """rank 3: 1 x 16 bits; rank 4: 2 x 8 (w low); rank 5: 3 x 5 (w, h, d), bit 15 ignored."""
    assert unpack_offsets(0xABCD, 3) == [0xABCD]
    assert unpack_offsets(0xABCD, 4) == [0xCD, 0xAB]
    v = 0b0_10101_01010_00111
    assert unpack_offsets(v, 5) == [7, 10, 21] == unpack_offsets(v | 0x8000, 5)
    assert unpack_offsets(0xFFFF, 5) == [31, 31, 31]
    for rank, offs in ((3, [0xFFFF]), (4, [0xCD, 0xAB]), (5, [7, 10, 21])):
        assert pack_offsets(offs, rank) == pack_i2c_offsets(offs, rank)
    with pytest.raises(ValueError):
        pack_offsets([32, 0, 0], 5)
    with pytest.raises(ValueError):
        unpack_offsets(0, 2)


@pytest.mark.req("TMA-F20", "TMA-V2")
def test_f20_bit15_is_ignored_at_rank5_through_the_model(seed):
    """Rank-5 loads with and without bit 15 of ``im2col_off`` give the same requests and image."""
    rng = random.Random(seed)
    done = 0
    while done < 20:
        desc, cmd, buf = random_im2col_case(rng)
        if desc["rank"] != 5:
            continue
        out = []
        for bit in (0, 0x8000):
            cmd2 = dict(cmd, im2col_off=(cmd["im2col_off"] & 0x7FFF) | bit, mcast=0, cta_mask=0)
            model, c = load_setup(desc, cmd2, buf, smem_default=SENTINEL)
            res = model.run([c]).commands[0]
            _check_random_load(model, c, desc, buf, res)
            out.append((res.request_keys(), bytes(model.smem.read(c.cta_id, c.smem_addr,
                                                                  res.box_bytes))))
        assert out[0] == out[1]
        done += 1


@pytest.mark.req("TMA-F20", "TMA-F15", "TMA-F13")
def test_f20_large_offsets_at_rank3_and_rank4():
    """Rank 3: a 16-bit offset 0x1234 moves the pixel 4660 positions to the right; rank 4: 0xABCD
    is w + 0xCD, h + 0xAB. Pixel addresses written out from TMA-F13."""
    # rank 3, U8, W = 5000, C = 16
    desc = dict(global_address=0x100000, rank=3, mode=Mode.IM2COL, dtype=DType.U8,
                tensor_size=(16, 5000, 1), tensor_stride=(16, 16 * 5000), range_c=16, range_ndhw=3,
                base_corner=(0,), far_corner=(0,), traversal_stride=(1, 1, 1))
    cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=3, coord=(0, 338, 0), im2col_off=0x1234)
    vals = {0x100000 + 16 * w + c: (w + c) & 0xFF for w in (4998, 4999) for c in range(16)}
    p, gmem, smem, c = _i2c_world(desc, cmd, vals, 1)
    res = run_command(c, gmem, smem, p)
    # bases 338, 339, 340 -> pixels 4998, 4999, 5000 (OOB)
    assert [q.line * 128 + q.lane for q in res.requests] == [0x100000 + 16 * 4998, 0x100000 + 16 * 4999]
    img = smem.read(0, 0, 48)
    assert list(img[:32]) == [(w + c) & 0xFF for w in (4998, 4999) for c in range(16)]
    assert list(img[32:]) == [0] * 16
    # rank 4, U16, W = 300, H = 200, C = 8
    desc = dict(global_address=0x200000, rank=4, mode=Mode.IM2COL, dtype=DType.U16,
                tensor_size=(8, 300, 200, 1), tensor_stride=(16, 4800, 960000), range_c=8,
                range_ndhw=1, base_corner=(0, 0), far_corner=(0, 0), traversal_stride=(1,) * 5)
    cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=4, coord=(0, 3, 5, 0), im2col_off=0xABCD)
    w, h = 3 + 0xCD, 5 + 0xAB
    a = 0x200000 + 16 * w + 4800 * h
    p, gmem, smem, c = _i2c_world(desc, cmd, {a + 2 * k: 0x1111 * (k + 1) for k in range(8)}, 2)
    res = run_command(c, gmem, smem, p)
    assert [q.line * 128 + q.lane for q in res.requests] == [a]
    assert list(np.frombuffer(smem.read(0, 0, 16).tobytes(), dtype="<u2")) == \
        [0x1111 * (k + 1) for k in range(8)]


@pytest.mark.req("TMA-F21", "TMA-F18", "TMA-F15")
def test_f21_dense_offsets_and_channel_bounds():
    """Rank 3, U32, C = 6, range_c 4 from c = 4 (channels 4, 5 in bounds, 6, 7 not): the §4.6
    elements of 2 pixels (n 0, w 1) and (n 1 = N, w 0), written out by hand."""
    desc = dict(global_address=0x3000, rank=3, mode=Mode.IM2COL, dtype=DType.U32,
                tensor_size=(6, 2, 1), tensor_stride=(32, 64), range_c=4, range_ndhw=2,
                base_corner=(0,), far_corner=(0,), traversal_stride=(1, 1, 1))
    d = decode_desc(encode_desc(**desc))
    c = TmaCmd(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=3, coord=(4, 1, 0))
    want = [(0, True, 0x3000 + 32 + 16), (4, True, 0x3000 + 32 + 20), (8, False, 0x3000 + 32 + 24),
            (12, False, 0x3000 + 32 + 28),
            (16, False, 0x3000 + 64 + 16), (20, False, 0x3000 + 64 + 20),
            (24, False, 0x3000 + 64 + 24), (28, False, 0x3000 + 64 + 28)]
    assert list(im2col_elements(d, c)) == want
    rws = im2col_rows(d, c)
    assert [(r.dense, r.nbytes, r.span_dense, r.span_bytes, r.addr) for r in rws] == \
        [(0, 16, 0, 8, 0x3030), (16, 16, 32, 0, None)]
    assert rws[0].oob_ranges() == [(8, 16)] and rws[1].oob_ranges() == [(16, 32)]


@pytest.mark.req("TMA-F23", "TMA-F22", "TMA-F35")
def test_wholly_oob_channel_range_fills_without_requests():
    desc = dict(global_address=0x3000, rank=4, mode=Mode.IM2COL, dtype=DType.F16,
                tensor_size=(8, 4, 4, 2), tensor_stride=(16, 64, 256), range_c=8, range_ndhw=20,
                base_corner=(0, 0), far_corner=(0, 0), traversal_stride=(1,) * 5,
                oob_fill=OobFill.NAN)
    for c0 in (8, -8, 1000):
        cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=4, coord=(c0, 0, 0, 0))
        p, gmem, smem, c = _i2c_world(desc, cmd, {}, 2)
        res = run_command(c, gmem, smem, p)
        assert res.requests == [] and res.done and res.tx[0] == 320
        assert bytes(smem.read(0, 0, 320)) == bytes([0xFF, 0x7F]) * 160


@pytest.mark.req("TMA-F15", "TMA-F13", "TMA-F19")
def test_im2col_coordinates_past_2_31():
    """Exact arithmetic (§4.5): pixels pos + off past 2^31 (W = 2^32 - 1), a carry that moves n
    from 2^31 - 1 to 2^31, channels crossing 2^31 (C = 2^32 - 1): all in bounds, no fill.
    Addresses from TMA-F13, modulo 2^64."""
    big = 0xFFFFFFFF
    top = 1 << 31
    # (a) pixels past 2^31: rank 3, W = 2^32 - 1, start w = 2^31 - 2, offset 3, N = 1
    desc = dict(global_address=0x1000, rank=3, mode=Mode.IM2COL, dtype=DType.U8,
                tensor_size=(16, big, 1), tensor_stride=(16, 16 << 32), range_c=16, range_ndhw=4,
                base_corner=(0,), far_corner=(0,), traversal_stride=(1, 1, 1))
    cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=3, coord=(0, top - 2, 0), im2col_off=3)
    addrs = [0x1000 + 16 * (top + 1 + i) for i in range(4)]
    p, gmem, smem, c = _i2c_world(desc, cmd, {a: i + 1 for i, a in enumerate(addrs)}, 1)
    res = run_command(c, gmem, smem, p)
    assert [q.line * 128 + q.lane for q in res.requests] == addrs
    assert [smem.read(0, 16 * i, 1)[0] for i in range(4)] == [1, 2, 3, 4]
    # (b) the carry into n crosses 2^31: W = 2, N = 2^32 - 1, n from 2^31 - 1
    stride_n = 32
    desc = dict(desc, tensor_size=(16, 2, big), tensor_stride=(16, stride_n))
    cmd = dict(cmd, coord=(0, 0, top - 1), im2col_off=0)
    pix = [(top - 1, 0), (top - 1, 1), (top, 0), (top, 1)]
    addrs = [(0x1000 + 16 * w + stride_n * n) % 2 ** 64 for n, w in pix]
    p, gmem, smem, c = _i2c_world(desc, cmd, {a: i + 1 for i, a in enumerate(addrs)}, 1)
    res = run_command(c, gmem, smem, p)
    assert [r.coord[2] for r in res.rows] == [n for n, _ in pix]
    assert [q.line * 128 + q.lane for q in res.requests] == addrs
    assert [smem.read(0, 16 * i, 1)[0] for i in range(4)] == [1, 2, 3, 4]
    # (c) channels crossing 2^31: C = 2^32 - 1, c from 2^31 - 8
    desc = dict(desc, tensor_size=(big, 1, 1), tensor_stride=(1 << 32, 1 << 32), range_c=16,
                range_ndhw=1)
    cmd = dict(cmd, coord=(top - 8, 0, 0))
    a = 0x1000 + top - 8
    p, gmem, smem, c = _i2c_world(desc, cmd, {a + k: k + 1 for k in range(16)}, 1)
    res = run_command(c, gmem, smem, p)
    assert a == 0x80000FF8                               # 8 bytes below a line boundary
    assert [(q.line * 128 + q.lane, q.nbytes) for q in res.requests] == [(a, 8), (a + 8, 8)]
    assert list(smem.read(0, 0, 16)) == list(range(1, 17))


@pytest.mark.req("TMA-F24", "TMA-F26", "TMA-F13", "TMA-C1")
def test_im2col_pixel_span_crossing_2_addr_w():
    """ADDR_W = 40: pixel 1 of a 128-byte-pixel im2col load starts 64 bytes below 2^40 and
    continues at address 0 (pieces in span order); compared with the brute-force list."""
    desc = dict(global_address=2 ** 40 - 192, rank=3, mode=Mode.IM2COL, dtype=DType.U8,
                tensor_size=(128, 2, 1), tensor_stride=(128, 256), range_c=128, range_ndhw=2,
                base_corner=(0,), far_corner=(0,), traversal_stride=(1, 1, 1))
    cmd = dict(op=CmdOp.TENSOR_LOAD, mode=Mode.IM2COL, rank=3, coord=(0, 0, 0))
    vals = {(2 ** 40 - 192 + k) % 2 ** 40: (k * 7 + 1) & 0xFF for k in range(256)}
    p, gmem, smem, c = _i2c_world(desc, cmd, vals, 1, addr_w=40)
    res = run_command(c, gmem, smem, p)
    got = [(q.line * 128, q.sectors, q.lane, q.nbytes, q.dense) for q in res.requests]
    assert got == [(0xFFFFFFFF00, 0xC, 64, 64, 0), (0xFFFFFFFF80, 0x3, 0, 64, 64),
                   (0xFFFFFFFF80, 0xC, 64, 64, 128), (0x0, 0x3, 0, 64, 192)]
    brute, _ = brute_im2col_requests(dict(desc), (0, 0, 0), 0, addr_w=40)
    assert [(q.line, q.sectors) for q in res.requests] == brute
    assert list(smem.read(0, 0, 256)) == [(k * 7 + 1) & 0xFF for k in range(256)]


@pytest.mark.req("TMA-F16", "TMA-F18", "TMA-E6")
def test_im2col_geometry_box_bytes_and_footprint(seed):
    """box bytes = range_ndhw x range_c x esize whatever box_size and ts hold; the footprint is
    rounded up to 128 when swizzled; rule 0x1E is decided on it."""
    rng = random.Random(seed)
    for _ in range(100):
        desc, cmd, _ = random_im2col_case(rng)
        d = decode_desc(encode_desc(**desc))
        bb = desc["range_ndhw"] * desc["range_c"] * ESIZE[desc["dtype"]]
        assert box_bytes(d) == bb and geometry(d).n_rows == desc["range_ndhw"]
        assert footprint(d) == (bb if desc["swizzle"] == Swizzle.NONE else -(-bb // 128) * 128)
        c = TmaCmd(desc_addr=DESC_ADDR, **dict(cmd, mcast=0, cta_mask=0))
        align = 1024 if desc["swizzle"] else 128
        last = (P.SMEM_SIZE - footprint(d)) // align * align
        assert validate(c.replace(smem_addr=last), d, P) == 0
        if last + align < P.SMEM_SIZE:
            assert validate(c.replace(smem_addr=last + align), d, P) == ErrCode.E_SMEM_RANGE
