"""Swizzle: the Fig 9 table and placement vectors, the closed form of TMA-F31/V4, a non-default
SWZ_TABLE (TMA-C8), and the beat structure of the smem writer (TMA-F30, F33)."""

import random

import numpy as np
import pytest

from golden.tma import vectors as gv
from golden.tma.formats import CmdOp, DType, Swizzle
from golden.tma.params import TmaParams
from golden.tma.swizzle import check_swz_table, default_swz_table, swz, swz_array
from tests.golden.test_tma_support import (ESIZE, load_setup, random_tile_case, swz_closed,
                                           tensor_view, ref_tile_dense, fill_value)


@pytest.mark.req("TMA-GV23", "TMA-C8")
def test_gv23_default_128b_table():
    table = default_swz_table()
    assert [list(r) for r in table[3]] == gv.GV23
    for r, row in enumerate(gv.GV23):
        for k, slot in enumerate(row):
            # ¶140: sector s -> s ^ (r >> 1) (one per bank group); halves swap iff r & 1
            assert slot >> 1 == (k >> 1) ^ (r >> 1) and (slot & 1) == (k & 1) ^ (r & 1)
    assert [list(r) for r in table[1]] == [[k ^ (r & 1) for k in range(8)] for r in range(8)]
    assert [list(r) for r in table[2]] == [[k ^ (r & 3) for k in range(8)] for r in range(8)]


@pytest.mark.req("TMA-GV26", "TMA-F31")
@pytest.mark.parametrize("row", gv.GV26, ids=lambda r: hex(r[0]))
def test_gv26_closed_form_examples(row):
    a, *expect = row
    assert [swz(a, m) for m in (1, 2, 3)] == expect
    assert [swz_closed(a, m) for m in (1, 2, 3)] == expect
    assert swz(a, Swizzle.NONE) == a


@pytest.mark.req("TMA-F31", "TMA-V4")
def test_table_form_equals_closed_form_on_every_address():
    addrs = np.arange(1 << 18)
    for m in (1, 2, 3):
        expect = addrs ^ ((addrs >> 3) & {1: 0x10, 2: 0x30, 3: 0x70}[m])
        assert np.array_equal(swz_array(addrs, m), expect)
    for a in random.Random(5).sample(range(1 << 24), 2000):
        assert all(swz(a, m) == swz_closed(a, m) for m in (1, 2, 3))


def _gv24():
    # NHWC 1x10x10x64 F16 with channel bytes = a per-unit pattern
    data = np.random.default_rng(24).integers(0, 256, 12800, dtype=np.uint8)
    model, c = load_setup(gv.GV24_DESC, dict(op=CmdOp.TENSOR_LOAD, rank=4, coord=(0, 0, 0, 0),
                                             smem_addr=0, mbar_addr=0x20000), data.tobytes())
    return model, c, data


@pytest.mark.req("TMA-GV24", "TMA-F31", "TMA-F30")
def test_gv24_fig9_placement():
    model, c, data = _gv24()
    model.run([c])
    image = model.smem.read(0, 0, 12800)
    for unit, h, w, k, p, slot, byte in gv.GV24:
        assert unit == (10 * h + w) * 8 + k and p == 10 * h + w and slot == k ^ (p & 7)
        assert byte == 128 * p + 16 * slot
        assert bytes(image[byte:byte + 16]) == bytes(data[16 * unit:16 * unit + 16])
    # every tap (r, s) and chunk k: the 8 pixels w = s..s+7 at h = r sit in 8 distinct slots
    for r in range(3):
        for s in range(3):
            for k in range(8):
                slots = {k ^ ((10 * r + w) & 7) for w in range(s, s + 8)}
                assert len(slots) == 8


@pytest.mark.req("TMA-GV25", "TMA-F33", "TMA-F35")
def test_gv25_fig9_request_statistics():
    model, c, data = _gv24()
    res = model.run([c]).commands[0]
    v = gv.GV25
    assert len(res.requests) == v["reads"]
    assert [(q.line * 128, q.sectors) for q in res.requests] == [
        (v["line0"] + 128 * p, v["sectors"]) for p in range(100)]
    assert sum(q.nbytes for q in res.requests) == v["bytes"]
    assert len(res.beats) == v["beats"] and res.tx[0] == v["tx"]


@pytest.mark.req("TMA-GV27", "TMA-F31", "TMA-F25")
def test_gv27_32b_swizzle_2d():
    data = np.random.default_rng(27).integers(0, 256, 32 * 64, dtype=np.uint8)
    model, c = load_setup(gv.GV27_DESC, gv.GV27_CMD, data.tobytes())
    res = model.run([c]).commands[0]
    assert [(q.line * 128, q.sectors) for q in res.requests] == gv.GV27["reads"]
    for i in range(8):
        for j in range(32):
            a = 0x400 + 32 * i + j
            a = a if i < 4 else a ^ 0x10
            assert model.smem.read(0, a, 1)[0] == data[32 * i + j]
    for (i, j), a in gv.GV27["examples"]:
        assert model.smem.read(0, a, 1)[0] == data[32 * i + j]
    assert len(res.beats) == gv.GV27["beats"] and res.tx[0] == gv.GV27["tx"]


def _random_table(rng):
    return {m: [rng.sample(range(8), 8) for _ in range(8)] for m in (1, 2, 3)}


@pytest.mark.req("TMA-V4", "TMA-C8", "TMA-F31", "TMA-C11")
def test_non_default_table(seed):
    """A random SWZ_TABLE: each load byte o lands at (A & ~0x70) | T[m][(A>>7)&7][(A>>4)&7] << 4,
    A = smem_addr + o, computed here from the table directly."""
    rng = random.Random(seed)
    table = _random_table(rng)
    p = TmaParams(SWZ_TABLE=table)
    done = 0
    while done < 100:
        desc, cmd, buf = random_tile_case(rng)
        if not desc["swizzle"]:
            continue
        done += 1
        model, c = load_setup(desc, cmd, buf, params=p)
        res = model.run([c]).commands[0]
        es = ESIZE[desc["dtype"]]
        t = tensor_view(buf, desc["tensor_size"], desc["tensor_stride"], es)
        ref = ref_tile_dense(t, c.coord[:desc["rank"]], desc["box_size"], desc["traversal_stride"],
                             fill_value(desc["dtype"], desc["oob_fill"], desc["oob_const"]), es)
        m = desc["swizzle"]
        span = -(-len(ref) // 128) * 128
        image = model.smem.read(c.cta_id, c.smem_addr, span)
        for o in range(len(ref)):
            a = c.smem_addr + o
            s = (a & ~0x70) | (table[m][(a >> 7) & 7][(a >> 4) & 7] << 4)
            assert image[s - c.smem_addr] == ref[o]
        assert res.tx[c.cta_id] == len(ref)


@pytest.mark.req("TMA-C8")
@pytest.mark.parametrize("bad", [
    {1: [list(range(8))] * 8, 2: [list(range(8))] * 8},                       # key 3 missing
    {0: [list(range(8))] * 8, 1: [list(range(8))] * 8, 2: [list(range(8))] * 8,
     3: [list(range(8))] * 8},                                                # extra key 0
    {1: [list(range(8))] * 8, 2: [list(range(8))] * 8, 3: [[0] * 8] + [list(range(8))] * 7},
    {1: [list(range(8))] * 7, 2: [list(range(8))] * 8, 3: [list(range(8))] * 8},
    {1: [list(range(8))] * 8, 2: [list(range(8))] * 8, 3: [list(range(1, 9))] * 8},
])
def test_bad_tables_are_rejected(bad):
    with pytest.raises(ValueError, match="SWZ_TABLE"):
        check_swz_table(bad)
    with pytest.raises(ValueError, match="SWZ_TABLE"):
        TmaParams(SWZ_TABLE=bad)


def _row_count(ranges):
    return sum((start + n - 1) // 128 - start // 128 + 1 for start, n in ranges)


@pytest.mark.req("TMA-F30", "TMA-F33")
def test_beats_touch_one_row_and_their_count_ignores_swizzle(seed):
    """Each response piece needs one beat per 128 B smem row its range [smem_addr + dense, +n)
    touches, the same with and without swizzle; fill beats one per smem row holding OOB bytes;
    each beat's be covers exactly the bytes it writes."""
    rng = random.Random(seed)
    for _ in range(200):
        desc, cmd, buf = random_tile_case(rng, max_box_bytes=2048)
        counts = []
        for sw in sorted({0, desc["swizzle"]}):
            d = dict(desc, swizzle=sw)
            c = dict(cmd, smem_addr=cmd["smem_addr"] // 1024 * 1024)
            model, cc = load_setup(d, c, buf)
            res = model.run([cc]).commands[0]
            piece_rows = _row_count([(cc.smem_addr + q.dense, q.nbytes) for q in res.requests])
            oob = set()
            for r in res.rows:
                for lo, hi in r.oob_ranges():
                    oob.update((cc.smem_addr + x) // 128 for x in range(lo, hi))
            assert len(res.beats) == piece_rows + len(oob)
            assert sum(b.nbytes for b in res.beats) == res.box_bytes
            counts.append(len(res.beats))
        assert len(set(counts)) == 1


@pytest.mark.req("TMA-F30", "TMA-F22")
def test_fill_beats_of_a_dtype_wider_than_a_chunk_stay_in_their_row():
    """F64 fill under SW128B: fill bytes move between lanes of one row only."""
    desc = dict(global_address=0x10000, tensor_size=(16, 16), tensor_stride=(128,), rank=2,
                dtype=DType.F64, box_size=(16, 16), swizzle=Swizzle.SW128B, oob_fill=2)
    model, c = load_setup(desc, dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(-3, -5), smem_addr=2048))
    res = model.run([c]).commands[0]
    image = model.smem.read(0, 2048, 2048)
    for o in range(0, 2048, 8):
        i, j = divmod(o // 8, 16)
        a = swz_closed(2048 + o, 3) - 2048
        if i < 5 or j < 3:
            assert bytes(image[a:a + 8]) == bytes.fromhex("ffffffffffffff7f")
    assert res.tx[0] == 2048
