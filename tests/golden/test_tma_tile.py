"""Tile-mode loads: the golden model against plain numpy slicing of the tensor (TMA-V1), the
closed-form swizzle (TMA-V4), and the Fig 8 tile vectors, OOB fill patterns, interleave and the
coordinate/address edge vectors of spec tma.md §5."""

import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.formats import CmdOp, DType, Interleave, OobFill, Swizzle, TmaCmd
from golden.tma.params import TmaParams
from golden.tma.tile import tile_elements, tile_rows
from golden.tma.encode import decode_desc, encode_desc
from tests.golden.test_tma_support import (
    ESIZE, SENTINEL, fill_value, load_setup, random_tile_case, ref_tile_dense, tensor_view)


def _lanes(be):
    return np.flatnonzero(np.unpackbits(np.frombuffer(be.to_bytes(16, "little"), dtype=np.uint8),
                                        bitorder="little"))


def write_counts(beats, cta):
    """{smem address: times written} for CTA ``cta``, from the beats alone."""
    counts = {}
    for b in beats:
        if b.mask >> cta & 1:
            for lane in _lanes(b.be):
                a = b.row * 128 + int(lane)
                counts[a] = counts.get(a, 0) + 1
    return counts


def dense_from_smem(model, cta, smem_addr, nbytes, swizzle):
    """Undo the swizzle with the closed form: dense[o] = smem[swz(smem_addr + o)]."""
    span = -(-nbytes // 128) * 128 if swizzle else nbytes
    image = model.smem.read(cta, smem_addr, span)
    addrs = smem_addr + np.arange(nbytes)
    if swizzle:
        addrs = addrs ^ ((addrs >> 3) & {1: 0x10, 2: 0x30, 3: 0x70}[swizzle])
    return image[addrs - smem_addr].tobytes(), set((addrs).tolist())


def check_load(model, cmd, desc, buf, res):
    """The full set of V1/V4/V8 checks of one tile load."""
    es = ESIZE[desc["dtype"]]
    rank = desc["rank"]
    size = list(desc["tensor_size"])
    tensor = tensor_view(buf, size, desc["tensor_stride"], es)
    box = list(desc["box_size"])
    ts = list(desc["traversal_stride"])
    fill = fill_value(desc["dtype"], desc["oob_fill"], desc.get("oob_const", 0))
    ref = ref_tile_dense(tensor, cmd.coord[:rank], box, ts, fill, es)
    assert res.code == 0 and res.done
    dense, footprint = dense_from_smem(model, cmd.cta_id, cmd.smem_addr, len(ref), desc["swizzle"])
    assert dense == ref
    assert res.tx[cmd.cta_id] == len(ref) and sum(m.tx for m in res.mbar) == len(ref)
    counts = write_counts(res.beats, cmd.cta_id)
    assert set(counts) == footprint and set(counts.values()) == {1}
    mem = model.smem.cta(cmd.cta_id)
    fp = np.fromiter(footprint, dtype=np.int64)
    for page, data in mem.pages.items():
        addrs = page * 4096 + np.arange(4096)
        outside = ~np.isin(addrs, fp)
        assert np.all(data[outside] == SENTINEL)


@pytest.mark.req("TMA-V1", "TMA-V4", "TMA-F12", "TMA-F13", "TMA-F14", "TMA-F15", "TMA-F22", "TMA-F30", "TMA-F31", "TMA-F35", "TMA-C9")
def test_tile_loads_match_numpy_slicing(seed):
    """>= 1000 random tile loads (rank 1..5, esize 1/2/4/8, ts 1..8, negative and beyond-size
    coordinates, ZERO/CONST/NAN fill, all swizzles where legal) equal the padded-slicing reference;
    with swizzle the image is read back through the closed form; every footprint byte is written
    exactly once, nothing else in smem changes, and the barrier tx sums to the box bytes."""
    rng = random.Random(seed)
    stats = {"rank": set(), "es": set(), "fill": set(), "swizzle": set(), "neg": 0, "beyond": 0}
    for _ in range(1000):
        desc, cmd, buf = random_tile_case(rng)
        model, c = load_setup(desc, cmd, buf, rng=rng, smem_default=SENTINEL)
        res = model.run([c]).commands[0]
        check_load(model, c, desc, buf, res)
        stats["rank"].add(desc["rank"])
        stats["es"].add(ESIZE[desc["dtype"]])
        stats["fill"].add(desc["oob_fill"])
        stats["swizzle"].add(desc["swizzle"])
        stats["neg"] += any(x < 0 for x in cmd["coord"])
        stats["beyond"] += any(cmd["coord"][k] + desc["box_size"][k] > desc["tensor_size"][k]
                               for k in range(desc["rank"]))
    assert stats["rank"] == {1, 2, 3, 4, 5} and stats["es"] == {1, 2, 4, 8}
    assert stats["fill"] == {0, 1, 2} and stats["swizzle"] == {0, 1, 2, 3}
    assert stats["neg"] > 100 and stats["beyond"] > 100


@pytest.mark.req("TMA-F51", "TMA-V1")
def test_interleaved_tensors_load_as_tile_mode(seed):
    """I16B/I32B tensors (dim 0 = one 16/32 B channel slice, box[0] = size[0], C in slices as an
    outer dimension) load like any tile box: compared with the slicing reference."""
    rng = random.Random(seed)
    for _ in range(150):
        il = rng.choice([Interleave.I16B, Interleave.I32B])
        dtype = rng.choice(sorted(ESIZE))
        es = ESIZE[dtype]
        slice_bytes = 16 if il == Interleave.I16B else 32
        rank = rng.randint(3, 5)
        size = [slice_bytes // es] + [rng.randint(1, 6) for _ in range(rank - 1)]
        stride, prev = [], slice_bytes
        for k in range(1, rank):
            stride.append(prev + slice_bytes * rng.choice((0, 0, 1)))
            prev = stride[-1] * size[k]
        box = [size[0]] + [rng.randint(1, 5) for _ in range(rank - 1)]
        ts = [1] + [rng.randint(1, 3) for _ in range(rank - 1)]
        swizzle = Swizzle.SW32B if il == Interleave.I32B else rng.choice([0, 1, 2, 3])   # inner 16 B
        coord = [rng.randint(-2, 1)] + [rng.randint(-box[k] * ts[k], size[k]) for k in range(1, rank)]
        desc = dict(global_address=32 * rng.randint(0x1000, 0x8000), tensor_size=size,
                    tensor_stride=stride, rank=rank, dtype=dtype, interleave=il, swizzle=swizzle,
                    oob_fill=OobFill.CONST, oob_const=rng.getrandbits(64), box_size=box,
                    traversal_stride=ts)
        buf = rng.randbytes(size[0] * es + sum((size[d] - 1) * stride[d - 1] for d in range(1, rank)))
        cmd = dict(op=CmdOp.TENSOR_LOAD, rank=rank, coord=coord, smem_addr=1024 * rng.randint(0, 8),
                   mbar_addr=0x20000)
        model, c = load_setup(desc, cmd, buf, smem_default=SENTINEL)
        res = model.run([c]).commands[0]
        check_load(model, c, desc, buf, res)


def _fig8_tensor_bytes(tensor, images=2, seed=8):
    """Random bytes for the first ``images`` images of a Fig 8 tensor (NHWC F16)."""
    (_, h, w, c), _, _ = gv.FIG8_TENSORS[tensor]
    return np.random.default_rng(seed).integers(0, 256, images * h * w * c * 2, dtype=np.uint8)


def _fig8_tile(name, **desc_changes):
    v = gv.TILE_FIG8[name]
    desc = gv.fig8_desc(v["tensor"], box_size=v["box"], traversal_stride=v["ts"], **desc_changes)
    cmd = gv.fig8_cmd(coord=v["coord"])
    buf = _fig8_tensor_bytes(v["tensor"])
    model, c = load_setup(desc, cmd, buf.tobytes())
    return v, desc, model, c, buf


@pytest.mark.req("TMA-GV9", "TMA-GV10", "TMA-GV17", "TMA-GV21", "TMA-F12", "TMA-F26")
@pytest.mark.parametrize("name", sorted(gv.TILE_FIG8))
def test_fig8_tile_vectors(name):
    v, desc, model, c, buf = _fig8_tile(name)
    res = model.run([c]).commands[0]
    assert res.code == 0 and len(res.rows) == v["rows"]
    assert sum(1 for r in res.rows if r.span_bytes) == v["inb_px"]
    assert len(res.requests) == v["reads"] and {r.sectors for r in res.requests} == {0x1}
    assert all(r.nbytes == 16 and r.lane == 0 for r in res.requests)
    assert res.tx[0] == v["tx"] and res.box_bytes == v["tx"]
    # every in-bounds pixel (n 0, h, w) is at dense (box_w * i_h + i_w) * 16
    (_, H, W, C), _, _ = gv.FIG8_TENSORS[v["tensor"]]
    t = buf.reshape(-1, H, W, C * 2)
    box_w = -(-v["box"][1] // v["ts"][1])
    box_h = -(-v["box"][2] // v["ts"][2])
    image = model.smem.read(0, 0, v["tx"])
    inb = 0
    for ih in range(box_h):
        for iw in range(box_w):
            h = v["coord"][2] + ih * v["ts"][2]
            w = v["coord"][1] + iw * v["ts"][1]
            off = (box_w * ih + iw) * 16
            if 0 <= h < H and 0 <= w < W:
                inb += 1
                assert v["inb_h"][0] <= h <= v["inb_h"][1] and v["inb_w"][0] <= w <= v["inb_w"][1]
                assert bytes(image[off:off + 16]) == bytes(t[0, h, w, :16])
            else:
                assert not image[off:off + 16].any()
    assert inb == v["inb_px"]
    if v["subtiles"]:
        side, origins, offsets = v["subtiles"]
        assert [(box_w * ih + iw) * 16 for ih, iw in origins] == offsets
    if name == "GV17":
        rows_hw = {(r.coord[2], r.coord[1]) for r in res.rows}
        assert rows_hw == {(h, w) for h in gv.GV17_POSITIONS for w in gv.GV17_POSITIONS}


@pytest.mark.req("TMA-GV9", "TMA-F26")
def test_gv9_request_detail():
    v, desc, model, c, buf = _fig8_tile("GV9")
    res = model.run([c]).commands[0]
    row_of_dense = {r.span_dense: r.index for r in res.rows if r.span_bytes}
    got = [(row_of_dense[q.dense], q.line * 128, q.dense) for q in res.requests]
    assert got[0] == gv.GV9_DETAIL["first"] and got[1] == gv.GV9_DETAIL["second"]
    assert got[-1] == gv.GV9_DETAIL["last"]
    assert [r.index for r in res.rows if not r.span_bytes][:11] == gv.GV9_DETAIL["fill_rows"]
    assert [g[0] for g in got] == sorted(g[0] for g in got)          # traversal order


@pytest.mark.req("TMA-GV33", "TMA-F22", "TMA-C9")
@pytest.mark.parametrize("fill", [OobFill.ZERO, OobFill.CONST, OobFill.NAN])
def test_gv33_fill_patterns(fill):
    v, desc, model, c, buf = _fig8_tile("GV9", oob_fill=fill, oob_const=gv.GV33_CONST)
    res = model.run([c]).commands[0]
    image = model.smem.read(0, 0, 1600)
    pixels = []
    for ih in range(10):
        for iw in range(10):
            h, w = ih - 1, iw - 1
            if not (0 <= h < 14 and 0 <= w < 8):
                pixels.append((h, w))
                off = (10 * ih + iw) * 16
                assert bytes(image[off:off + 16]) == gv.GV33[fill] * 8
    assert sorted(pixels) == sorted(gv.GV33_FILL_PIXELS) and len(pixels) * 16 == gv.GV33_FILL_BYTES
    lo, hi = gv.GV33_FILL_DENSE
    assert bytes(image[lo:hi + 1]) == gv.GV33[fill] * ((hi + 1 - lo) // 2)
    assert res.tx[0] == 1600


@pytest.mark.req("TMA-F23", "TMA-F35", "TMA-F36")
def test_wholly_oob_box_issues_no_request_but_fills_and_completes():
    """BM-FILL shape: U32 rank 2 box {128,128} at coord (2048, 0) of a 1024-wide tensor."""
    desc = dict(global_address=0x100000, tensor_size=(1024, 1024), tensor_stride=(4096,), rank=2,
                dtype=DType.U32, box_size=(128, 128), oob_fill=OobFill.CONST, oob_const=0xDEADBEEF)
    cmd = dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(2048, 0), smem_addr=0, mbar_addr=0x3FFF8)
    model, c = load_setup(desc, cmd)
    run = model.run([c])
    res = run.commands[0]
    assert res.requests == [] and res.tx[0] == 65536 and run.done == [0]
    assert len(res.beats) == 512 and all(b.be == (1 << 128) - 1 for b in res.beats)
    assert bytes(model.smem.read(0, 0, 65536)) == bytes.fromhex("efbeadde") * 16384


@pytest.mark.req("TMA-GV108", "TMA-F15")
def test_gv108_coordinates_past_2_31():
    rng = np.random.default_rng(108)
    data = rng.integers(0, 256, 256, dtype=np.uint8)
    model, c = load_setup(gv.GV108_DESC, dict(op=CmdOp.TENSOR_LOAD, rank=1,
                                              coord=(gv.GV108_COORD,), smem_addr=0))
    model.gmem.write(0x1000 + gv.GV108_COORD, data)
    res = model.run([c]).commands[0]
    got = [(q.line * 128, q.sectors, (q.lane, q.lane + q.nbytes - 1), (q.dense, q.dense + q.nbytes - 1))
           for q in res.requests]
    assert got == gv.GV108["pieces"] and res.tx[0] == gv.GV108["tx"]
    assert bytes(model.smem.read(0, 0, 256)) == data.tobytes()


@pytest.mark.req("TMA-GV107", "TMA-F24", "TMA-F26", "TMA-F13", "TMA-C1")
def test_gv107_row_crossing_the_top_of_the_address_space():
    p = TmaParams(ADDR_W=gv.GV107_ADDR_W)
    model, c = load_setup(gv.GV107_DESC, dict(op=CmdOp.TENSOR_LOAD, rank=1, coord=(0,),
                                              smem_addr=0), params=p)
    top = np.arange(64, dtype=np.uint8) + 1
    low = np.arange(64, dtype=np.uint8) + 101
    model.gmem.write(2 ** 40 - 64, top)
    model.gmem.write(0, low)
    res = model.run([c]).commands[0]
    got = [(q.line * 128, q.sectors, (q.lane, q.lane + q.nbytes - 1), (q.dense, q.dense + q.nbytes - 1))
           for q in res.requests]
    assert got == gv.GV107["pieces"]
    image = model.smem.read(0, 0, 128)
    assert bytes(image[:64]) == top.tobytes() and bytes(image[64:]) == low.tobytes()
    assert len(res.beats) == gv.GV107["beats"] and {b.row for b in res.beats} == {0}
    assert res.tx[0] == gv.GV107["tx"]


@pytest.mark.req("TMA-GV109")
def test_gv109_aliased_rows_load():
    model, c = load_setup(gv.GV109_DESC, dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(0, 0),
                                              smem_addr=0, mbar_addr=0x20000))
    words = b"".join(w.to_bytes(4, "little") for w in gv.GV109_GLOBAL_WORDS)
    model.gmem.write(0x3000, words)
    res = model.run([c]).commands[0]
    got = [(q.line * 128, q.sectors, (q.lane, q.lane + q.nbytes - 1), q.dense) for q in res.requests]
    assert got == gv.GV109["requests"]
    assert bytes(model.smem.read(0, 0, 48)) == words * 3 and res.tx[0] == gv.GV109["load_tx"]


def test_row_view_agrees_with_the_literal_element_enumeration(seed):
    """tile_rows (used by the model) against the §4.5 per-element loop (used by testbenches)."""
    rng = random.Random(seed)
    for _ in range(200):
        desc, cmd, _ = random_tile_case(rng, max_box_bytes=1024)
        d = decode_desc(encode_desc(**desc))
        c = TmaCmd(**cmd)
        elems = list(tile_elements(d, c))
        es = ESIZE[desc["dtype"]]
        for row in tile_rows(d, c):
            per = row.nbytes // es
            chunk = elems[row.dense // es: row.dense // es + per]
            ib = [e for e in chunk if e[1]]
            assert row.span_bytes == len(ib) * es
            if ib:
                assert (row.span_dense, row.addr) == (ib[0][0], ib[0][2])
                assert [e[0] for e in chunk if e[1]] == list(range(ib[0][0], ib[0][0] + len(ib) * es, es))


@pytest.mark.req("TMA-F12", "TMA-F14")
def test_dims_beyond_rank_and_ts0_are_ignored():
    """ts[0] is treated as 1 (dense offsets step by esize); a rank-2 box ignores box/ts/coord of
    dims 2..4."""
    desc = dict(global_address=0x4000, tensor_size=(64, 4), tensor_stride=(128,), rank=2,
                dtype=DType.U16, box_size=(16, 2), traversal_stride=(7, 1))
    buf = bytes(range(256)) * 2
    model, c = load_setup(desc, dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(3, 1, 99, -5, 7)), buf)
    res = model.run([c]).commands[0]
    t = tensor_view(buf, (64, 4), (128,), 2)
    assert bytes(model.smem.read(0, 0, 64)) == t[1:3, 3:19].astype("<u2").tobytes()
    assert res.box_bytes == 64 and [q.dense for q in res.requests] == [0, 32]
