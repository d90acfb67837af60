"""L2 request lists: line splitting vectors of spec tma.md §5 and random loads against a
brute-force enumeration of the lines and sectors each row touches (TMA-F23..F26, TMA-V7, TMA-P3)."""

import random

import pytest

from golden.tma import vectors as gv
from golden.tma.formats import CmdOp, DType, OobFill
from golden.tma.l2req import sectors_of
from golden.tma.params import TmaParams
from tests.golden.test_tma_support import (ESIZE, brute_requests, extent, load_setup,
                                           random_tile_case)


def _pieces(res):
    return [(q.line * 128, q.sectors, (q.lane, q.lane + q.nbytes - 1),
             (q.dense, q.dense + q.nbytes - 1)) for q in res.requests]


def _line_split(v):
    desc = dict(gv.LINE_SPLIT_DESC, tensor_size=(v["size"],), box_size=(v["box"],),
                oob_fill=OobFill.CONST, oob_const=0xEE)
    model, c = load_setup(desc, dict(op=CmdOp.TENSOR_LOAD, rank=1, coord=(v["coord"],),
                                     smem_addr=0))
    model.gmem.write(0x1000, bytes(range(256)) * 4)
    return model, c


@pytest.mark.req("TMA-GV28", "TMA-GV29", "TMA-F24", "TMA-F25", "TMA-F33")
@pytest.mark.parametrize("name", ["GV28", "GV29"])
def test_line_splitting_vectors(name):
    v = {"GV28": gv.GV28, "GV29": gv.GV29}[name]
    model, c = _line_split(v)
    res = model.run([c]).commands[0]
    assert _pieces(res) == v["pieces"]
    assert all(q.op == 0 for q in res.requests)
    image = model.smem.read(0, 0, 256)
    inb = v["size"] - v["coord"]
    for k in range(256):
        expect = (bytes(range(256)) * 4)[v["coord"] + k] if k < inb else 0xEE
        assert image[k] == expect
    if v["fill"]:
        lo, hi = v["fill"]
        assert inb == lo and hi == 255
    assert res.tx[0] == v["tx"]
    if "beats" in v:
        piece_beats = [b for b in res.beats]
        assert len(piece_beats) == v["beats"]


@pytest.mark.req("TMA-GV30", "TMA-F24", "TMA-F26")
def test_gv30_rows_sharing_a_line_are_not_merged():
    model, c = load_setup(gv.GV30_DESC, dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(0, 0)))
    res = model.run([c]).commands[0]
    assert [(q.line * 128, q.sectors) for q in res.requests] == gv.GV30["load"]


@pytest.mark.req("TMA-F25")
def test_sector_masks_against_brute_force():
    for lane in range(128):
        for n in range(1, 129 - lane):
            expect = 0
            for b in range(lane, lane + n):
                expect |= 1 << (b // 32)
            assert sectors_of(lane, n) == expect


def _check_requests(desc, cmd, res, addr_w=64):
    expect, byte_map = brute_requests(desc, cmd.coord, addr_w)
    got = [(q.line, q.sectors) for q in res.requests]
    assert got == expect                                    # order, lines, sectors (TMA-F26, P3)
    carried = {}
    for q in res.requests:
        assert q.sectors != 0 and q.op == 0
        assert 0 <= q.lane and q.lane + q.nbytes <= 128     # no piece crosses a line
        for k in range(q.nbytes):
            assert q.dense + k not in carried                # each (element, byte) once
            carried[q.dense + k] = (q.line * 128 + q.lane + k) % (1 << addr_w)
    assert carried == byte_map                               # exactly the in-bounds bytes (V7)


@pytest.mark.req("TMA-F23", "TMA-F24", "TMA-F25", "TMA-F26")
def test_random_request_lists_against_brute_force(seed):
    rng = random.Random(seed)
    for _ in range(300):
        desc, cmd, buf = random_tile_case(rng, max_box_bytes=2048)
        model, c = load_setup(desc, cmd, buf)
        res = model.run([c]).commands[0]
        _check_requests(desc, c, res)


@pytest.mark.req("TMA-F24", "TMA-F26", "TMA-C1")
def test_random_spans_wrapping_at_the_top_of_the_address_space(seed):
    """Tensors placed just below 2^ADDR_W (ADDR_W 40..64): spans that pass the top continue at 0,
    split there like at a line boundary, pieces in span order."""
    rng = random.Random(seed)
    wrapped = crossing = 0
    for _ in range(200):
        addr_w = rng.choice([40, 48, 64])
        p = TmaParams(ADDR_W=addr_w)
        desc, cmd, _ = random_tile_case(rng, max_box_bytes=1024, allow_alias=False)
        ext = extent(desc["tensor_size"], desc["tensor_stride"], ESIZE[desc["dtype"]])
        desc["global_address"] = (1 << addr_w) - 16 * rng.randint(1, max(1, ext // 16))
        model, c = load_setup(desc, cmd, params=p)
        res = model.run([c]).commands[0]
        _check_requests(desc, c, res, addr_w)
        wrapped += any(q.addr < desc["global_address"] for q in res.requests)
        crossing += any(a.line == ((1 << addr_w) >> 7) - 1 and b.line == 0 and b.dense == a.dense + a.nbytes
                        for a, b in zip(res.requests, res.requests[1:]))
    assert wrapped > 15 and crossing > 3


@pytest.mark.req("TMA-F23")
def test_partly_oob_rows_never_request_oob_bytes():
    """U8 rows 32 B wide, box shifted 16 left: each row's read starts at the tensor's first byte."""
    desc = dict(global_address=0x10000, tensor_size=(32, 4), tensor_stride=(32,), rank=2,
                dtype=DType.U8, box_size=(32, 4))
    model, c = load_setup(desc, dict(op=CmdOp.TENSOR_LOAD, rank=2, coord=(-16, 0)))
    res = model.run([c]).commands[0]
    assert [(q.addr, q.nbytes, q.dense) for q in res.requests] == [
        (0x10000 + 32 * i, 16, 32 * i + 16) for i in range(4)]
