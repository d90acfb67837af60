"""Tensor stores, reductions and prefetches in the TMA golden model (spec tma.md §4.7, §4.9,
§4.10; TMA-F32, F36, F39..F41, F45, F46, F52): the GV30, GV31, GV35, GV107 and GV109 vectors,
and random tile stores / reductions against an independent numpy reference (a strided view of
the tensor bytes, written through boolean in-bounds masks; the closed-form swizzle)."""

import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.formats import CmdOp, DType, L2Op, RedOp, TmaCmd
from golden.tma.params import TmaParams
from tests.golden.test_tma_support import (ESIZE, load_setup, random_tile_case,
                                           swz_closed)


def _pieces(res):
    return [(q.line * 128, q.sectors, (q.lane, q.lane + q.nbytes - 1),
             (q.dense, q.dense + q.nbytes - 1)) for q in res.requests]


def _lanes(be):
    bits = [j for j in range(128) if be >> j & 1]
    return (bits[0], bits[-1]) if bits else None


@pytest.mark.req("TMA-GV30", "TMA-F45", "TMA-P3")
def test_gv30_prefetch_drops_repeated_lines():
    model, c = load_setup(gv.GV30_DESC, dict(op=CmdOp.TENSOR_PREFETCH, rank=2, coord=(0, 0)))
    run = model.run([c])
    res = run.commands[0]
    assert [(q.line * 128, q.sectors, int(q.op)) for q in res.requests] == \
        [(a, s, L2Op.PREFETCH) for a, s in gv.GV30["prefetch"]]
    assert res.responses == [] and res.beats == [] and res.smem_reads == [] and res.done
    assert run.outstanding == 0 and run.idle


@pytest.mark.req("TMA-GV31", "TMA-F46")
def test_gv31_block_prefetch():
    model, _ = load_setup(None, {})
    res = model.run([TmaCmd(**dict(gv.GV31_CMD, op=CmdOp.BLOCK_PREFETCH))]).commands[0]
    assert [(q.line * 128, q.sectors, int(q.op)) for q in res.requests] == \
        [(a, s, L2Op.PREFETCH) for a, s in gv.GV31["prefetch"]]
    assert res.responses == [] and res.beats == [] and res.mbar == [] and res.done


@pytest.mark.req("TMA-GV35", "TMA-F39", "TMA-F40", "TMA-F36")
def test_gv35_store_skips_the_oob_elements():
    desc = dict(gv.LINE_SPLIT_DESC, tensor_size=(gv.GV29["size"],))
    guard = bytes(range(256)) * 2
    model, c = load_setup(desc, dict(op=CmdOp.TENSOR_STORE, rank=1, coord=(gv.GV29["coord"],)))
    model.gmem.write(0x1000, guard)
    src = bytes((7 * k + 3) & 0xFF for k in range(256))
    model.smem.write(c.cta_id, 0, src)
    res = model.run([c]).commands[0]
    got = [(q.line * 128, q.sectors, _lanes(q.be), (q.dense, q.dense + q.nbytes - 1))
           for q in res.requests]
    assert got == gv.GV35["writes"]
    assert all(q.op == L2Op.WRITE for q in res.requests) and res.done and not res.beats
    out = model.gmem.read(0x1000, 512).tobytes()
    want = bytearray(guard)
    want[200:0x12C] = src[:100]                      # global 0x10C8..0x112B
    assert out == bytes(want)
    assert out[gv.GV35["unchanged_from"] - 0x1000:] == guard[gv.GV35["unchanged_from"] - 0x1000:]


@pytest.mark.req("TMA-GV107", "TMA-F45", "TMA-F39", "TMA-F24")
def test_gv107_prefetch_and_store_across_the_top_of_memory():
    p = TmaParams(ADDR_W=gv.GV107_ADDR_W)
    model, c = load_setup(gv.GV107_DESC, dict(op=CmdOp.TENSOR_PREFETCH, rank=1, coord=(0,)),
                          params=p)
    res = model.run([c]).commands[0]
    assert [(q.line * 128, q.sectors) for q in res.requests] == gv.GV107["prefetch"]
    model, c = load_setup(gv.GV107_DESC, dict(op=CmdOp.TENSOR_STORE, rank=1, coord=(0,)),
                          params=p)
    src = bytes(range(1, 129))
    model.smem.write(0, 0, src)
    res = model.run([c]).commands[0]
    assert _pieces(res) == gv.GV107["pieces"]
    assert model.gmem.read(2 ** 40 - 64, 64).tobytes() == src[:64]
    assert model.gmem.read(0, 64).tobytes() == src[64:]


def _gv109(op, red_op=0):
    model, c = load_setup(gv.GV109_DESC, dict(op=op, rank=2, coord=(0, 0), red_op=red_op,
                                              mbar_addr=0x20000))
    for i, words in enumerate(gv.GV109_SMEM_WORDS):
        model.smem.write(0, 16 * i, np.array(words, dtype="<u4").tobytes())
    model.gmem.write(0x3000, np.array(gv.GV109_GLOBAL_WORDS, dtype="<u4").tobytes())
    res = model.run([c]).commands[0]
    assert [(q.line * 128, q.sectors, _lanes(q.be), q.dense) for q in res.requests] == \
        gv.GV109["requests"]
    return res, list(np.frombuffer(model.gmem.read(0x3000, 16).tobytes(), dtype="<u4"))


@pytest.mark.req("TMA-GV109", "TMA-F52", "TMA-F39", "TMA-F41")
def test_gv109_aliased_rows_store_and_reduce_in_visit_order():
    res, words = _gv109(CmdOp.TENSOR_STORE)
    assert [q.data[0:16] for q in res.requests] == \
        [np.array(w, dtype="<u4").tobytes() for w in gv.GV109_SMEM_WORDS]
    assert words == gv.GV109["store_words"]
    res, words = _gv109(CmdOp.TENSOR_RED, RedOp.ADD)
    assert all(q.op == L2Op.RED_ADD and q.dtype == DType.U32 for q in res.requests)
    assert words == gv.GV109["red_add_words"]
    res, words = _gv109(CmdOp.TENSOR_RED, RedOp.INC)
    assert all(q.op == L2Op.RED_INC for q in res.requests)
    assert words == gv.GV109["red_inc_words"]


# -- random tile stores and reductions against numpy ------------------------------------------
def _writable_view(buf, size, stride, es):
    """The tensor (axes reversed) as a writeable strided view of ``buf`` (a uint8 array)."""
    r = len(size)
    arr = buf.view(np.dtype(f"<u{es}") if es > 1 else np.uint8)
    shape = tuple(size[d] for d in reversed(range(r)))
    strides = tuple(stride[d - 1] for d in reversed(range(1, r))) + (es,)
    return np.lib.stride_tricks.as_strided(arr, shape=shape, strides=strides)


def _box_index(coord, box, ts, size):
    """Per axis (dim rank-1 first): the visited coordinates that are in bounds, and their
    positions in the box."""
    r = len(size)
    tensor_idx, box_idx = [], []
    for d in reversed(range(r)):
        step = ts[d] if d else 1
        c = coord[d] + step * np.arange(-(-box[d] // step))
        ok = (c >= 0) & (c < size[d])
        tensor_idx.append(c[ok])
        box_idx.append(np.flatnonzero(ok))
    return tensor_idx, box_idx


NP_RED = {RedOp.ADD: np.add, RedOp.MIN: np.minimum, RedOp.MAX: np.maximum,
          RedOp.AND: np.bitwise_and, RedOp.OR: np.bitwise_or, RedOp.XOR: np.bitwise_xor}
INT_TYPES = {DType.U32: "<u4", DType.S32: "<i4", DType.U64: "<u8", DType.S64: "<i8"}


@pytest.mark.req("TMA-F39", "TMA-F40", "TMA-F41", "TMA-F32", "TMA-F36", "TMA-P3")
def test_random_stores_and_reductions_match_numpy(seed):
    """300 random tile stores (any dtype, swizzle, coordinates partly or wholly outside) and
    integer reductions: the global image equals numpy's assignment / ufunc on the in-bounds
    sub-box of a strided view (smem read through the closed-form swizzle), every other byte is
    unchanged, and the request count is the load's."""
    rng = random.Random(seed)
    checked = {"store": 0, "red": 0}
    for case in range(300):
        desc, cmd, buf = random_tile_case(rng, max_box_bytes=2048, allow_alias=False)
        red = None
        es = ESIZE[desc["dtype"]]
        if es in (4, 8) and rng.random() < 0.6:       # an integer type of the same size
            dtype = rng.choice([t for t in sorted(INT_TYPES) if ESIZE[t] == es])
            ops = [RedOp.ADD, RedOp.AND, RedOp.OR, RedOp.XOR, RedOp.MIN, RedOp.MAX]
            if dtype == DType.S64:
                ops.remove(RedOp.ADD)
            red = rng.choice(ops)
            desc = dict(desc, dtype=dtype, oob_fill=0)
        size, stride, box = desc["tensor_size"], desc["tensor_stride"], desc["box_size"]
        rank = desc["rank"]
        ts = desc["traversal_stride"]
        op = CmdOp.TENSOR_RED if red is not None else CmdOp.TENSOR_STORE
        model, c = load_setup(desc, dict(cmd, op=op, red_op=red or 0), tensor_bytes=buf)
        n = [box[0]] + [-(-box[d] // ts[d]) for d in range(1, rank)]
        nbytes = es * int(np.prod(n))
        model.smem.write(c.cta_id, c.smem_addr, rng.randbytes(-(-nbytes // 128) * 128))
        gaddr = desc["global_address"]
        guard_lo, guard_hi = gaddr - 256, gaddr + len(buf) + 256
        before = model.gmem.read(guard_lo, guard_hi - guard_lo).copy()
        smem_before = model.smem.read(c.cta_id, c.smem_addr, nbytes).copy()
        res = model.run([c]).commands[0]
        assert res.code == 0, (case, res.code)
        # the reference: the dense box from smem through the closed-form swizzle
        swz = np.array([swz_closed(c.smem_addr + o, desc["swizzle"]) for o in range(nbytes)])
        smem_img = model.smem.read(c.cta_id, 0, model.smem.size)
        dense = smem_img[swz].copy().view(np.dtype(f"<u{es}") if es > 1 else np.uint8)
        dense = dense.reshape(tuple(reversed(n)))
        want = before.copy()
        view = _writable_view(want[gaddr - guard_lo:], size, stride, es)
        t_idx, b_idx = _box_index(c.coord, box, ts, size)
        src_box = dense[np.ix_(*b_idx)]
        if red is None:
            view[np.ix_(*t_idx)] = src_box
        else:
            t = INT_TYPES[desc["dtype"]]
            old = view[np.ix_(*t_idx)].view(t)
            view[np.ix_(*t_idx)] = NP_RED[red](old, src_box.view(t)).view(view.dtype)
        got = model.gmem.read(guard_lo, guard_hi - guard_lo)
        assert np.array_equal(got, want), f"case {case}: global image differs ({desc}, {cmd})"
        assert np.array_equal(model.smem.read(c.cta_id, c.smem_addr, nbytes), smem_before)
        load, lc = load_setup(desc, dict(cmd, op=CmdOp.TENSOR_LOAD), tensor_bytes=buf)
        assert len(res.requests) == len(load.run([lc]).commands[0].requests)
        checked["red" if red is not None else "store"] += 1
    print(f"seed {seed}: {checked}")
    assert checked["red"] >= 40, checked


@pytest.mark.req("TMA-F45", "TMA-P3")
def test_random_prefetches_are_the_load_lines_without_repeats(seed):
    """200 random tile prefetches: the PREFETCH lines are the load's READ lines with each run of
    equal consecutive lines kept once, sectors 0xF, no smem traffic, done, nothing outstanding."""
    rng = random.Random(seed)
    for case in range(200):
        desc, cmd, buf = random_tile_case(rng, max_box_bytes=2048)
        model, c = load_setup(desc, dict(cmd, op=CmdOp.TENSOR_LOAD), tensor_bytes=buf)
        lines = [q.line for q in model.run([c]).commands[0].requests]
        want = [x for k, x in enumerate(lines) if k == 0 or lines[k - 1] != x]
        model, c = load_setup(desc, dict(cmd, op=CmdOp.TENSOR_PREFETCH), tensor_bytes=buf)
        run = model.run([c])
        res = run.commands[0]
        assert [(q.line, q.sectors, int(q.op)) for q in res.requests] == \
            [(x, 0xF, L2Op.PREFETCH) for x in want], case
        assert not res.beats and not res.mbar and not res.smem_reads and res.done
        assert run.outstanding == 0 and run.idle
