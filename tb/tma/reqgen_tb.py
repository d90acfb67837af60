"""cocotb testbench of the TMA front end, ``TmaSetup`` -> ``TmaReqGen``, against the golden model
(spec tma.md §4.5, §4.7, §4.8, §4.10; ``golden.tma.jobs``).

The DUT is the test top ``TmaFrontTop`` of tests/rtl/test_tma_reqgen.py: Setup's ``job`` output
drives ReqGen's ``job`` input and is also brought out as a passive tap (``job__*``). Inputs
``i`` get random valid gaps; ``piece``, ``fill``, ``fin`` and ``err`` random (bursty)
back-pressure; every stream, the tap included, has a protocol checker. Five ordered scoreboards
hold the golden expectation of each command, in acceptance order: its job (``job_key``), pieces
(``golden_pieces``: line, sectors, op, dtype, cta and the whole placement), fill runs
(``golden_fills``), ``fin`` record, or its ``err``. At the end nothing may be missing, extra or
in flight.

Testcases:

* ``golden_vectors``: the tile and line-splitting vectors of §5 (TMA-GV9, GV10, GV17, GV21, GV24/25,
  GV27..GV36, GV108, GV109, and GV107 on an ADDR_W = 40 build), with the spec's printed values
  checked on the golden output first;
* ``im2col_vectors``: the im2col vectors of §5 (TMA-GV3..GV8, GV11..GV16, GV18..GV20, the GV22
  addresses), each also as store, reduction and prefetch, the im2col edge cases (pixels, image
  index and channels past 2^31, a pixel span crossing 2^ADDR_W, a rank-5 walk carrying W -> H ->
  D -> n) and BM-I2C, with the printed values checked on the golden output first;
* ``random_tile``: random legal tile loads, stores, reductions and prefetches of rank 1..5 (every
  dtype and swizzle, random ts, sizes up to 2^32 - 1, negative and beyond-size coordinates),
  block ops, control ops and rejected commands, mixed;
* ``random_im2col``: random legal im2col loads, stores, reductions and prefetches of rank 3..5
  (``tb.tma.setup_tb.random_im2col``: ts 1..8, off-grid starts, n-crossing, partly OOB channels,
  negative corners, every dtype, offsets) mixed with tile and block jobs and mutated commands;
* ``throughput``: always-ready outputs, no input gaps: pieces per cycle over the request window of
  BM-TILE (TMA-P1), BM-TILE8 (TMA-P2) and BM-I2C (TMA-P7, against BM-TILE), the BM-8D window
  (TMA-P11) and the latency from the command's ``i`` transfer to its first piece (the front-end
  share of TMA-P4; also for an im2col command). The figures go to the result file
  (``GPUBLOCKS_RESULT``) and the log.
"""

import random

import cocotb
from cocotb.triggers import RisingEdge

from golden.tma.formats import CmdOp, DType, L2Op, Mode, OobFill, Swizzle, TmaCmd, TmaDesc, err_fields
from golden.tma.jobs import (fill_fields, fin_fields, golden_fills, golden_fin, golden_job,
                             golden_pieces, job_fields, job_key, piece_fields)
from golden.tma import vectors as V
from golden.tma.tile import rows as tensor_rows
from hw.tma.completion import open_fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor, finish
from tb.tma.setup_tb import (Case, desc_word, mutate, pack_input, params_from_env, random_block,
                             random_control, random_im2col as random_im2col_case)
from tb.tma.setup_tb import random_tile as random_tile_case

OUTPUTS = ("open", "piece", "fill", "fin", "err")


class FrontBench:
    """Driver, monitors, protocol checkers and scoreboards around the Setup -> ReqGen top."""

    def __init__(self, dut, p, gap_prob=0.3, ready_prob=0.6, burst=3.0):
        self.dut, self.p = dut, p
        self.clk = dut.clk
        self.seq = 0
        self.sent = []                           # (case, code) in acceptance order
        self.opened = {}                         # seq -> cycle of its open handshake
        fields = {"open": open_fields(p), "piece": piece_fields(p), "fill": fill_fields(p), "fin": fin_fields(p),
                  "err": err_fields(p)}
        self.sb = {name: Scoreboard(name) for name in OUTPUTS + ("job",)}
        self.checks = [StreamProtocolChecker(dut, s, self.clk) for s in ("i", "job") + OUTPUTS]
        self.driver = StreamDriver(dut, "i", self.clk, rng=env.rng(21), gap_prob=gap_prob,
                                   burst=burst)
        self.mon = {}
        for k, name in enumerate(OUTPUTS):
            self.mon[name] = StreamMonitor(dut, name, self.clk, fields=fields[name],
                                           rng=env.rng(22 + k), ready_prob=ready_prob,
                                           burst=burst, callback=self._observer(name))
        self.mon["job"] = StreamMonitor(dut, "job", self.clk, fields=job_fields(p), passive=True,
                                        callback=lambda t: self.sb["job"].observe(
                                            job_key(t.fields), t.cycle))

    def _observer(self, name):
        sb = self.sb[name]
        if name == "err":
            return lambda t: sb.observe(t.fields, t.cycle)

        def observe(t):
            seq = t.fields["seq"]
            if name == "open":
                self.opened[seq] = t.cycle
            elif self.opened.get(seq, t.cycle) >= t.cycle:
                raise AssertionError(f"{name} of seq {seq} at cycle {t.cycle} before its open")
            sb.observe(t.fields, t.cycle)
        return observe

    def expected(self, case, seq):
        """(code, job, pieces, fills, fin) the golden model expects for ``case``."""
        p, cmd, d = self.p, case.cmd, case.desc
        code = case.code(p)
        if code:
            return code, None, [], [], None
        return (0, golden_job(cmd, d, p, seq), golden_pieces(cmd, d, p, seq),
                golden_fills(cmd, d, p, seq), golden_fin(cmd, d, p, seq))

    def send(self, case, expect_code=None):
        code, job, pieces, fills, fin = self.expected(case, self.seq)
        if expect_code is not None:
            assert code == expect_code, f"{case.name}: golden code {code:#x} != {expect_code:#x}"
        if code:
            self.sb["err"].expect(dict(id=case.cmd.id, code=code))
        else:
            self.sb["job"].expect(job_key(job))
            self.sb["open"].expect(dict(seq=job["seq"], id=case.cmd.id))
            self.sb["piece"].expect_all(pieces)
            self.sb["fill"].expect_all(fills)
            self.sb["fin"].expect(fin)
        self.seq += 1
        self.sent.append((case, code))
        self.driver.append(pack_input(case, self.p))
        return pieces, fills

    async def finish(self, timeout=500_000):
        await finish(self.clk, self.driver, list(self.sb.values()), self.checks, timeout, 30)


async def _start(dut):
    start_clock(dut)
    dut.i__valid.value = 0
    for name in OUTPUTS:
        getattr(dut, f"{name}__ready").value = 0
    await reset(dut)


def _tensor(desc_fields, cmd_fields_, op=CmdOp.TENSOR_LOAD, name="", **cmd_changes):
    d = TmaDesc.make(**desc_fields)
    cmd = TmaCmd(**{**dict(op=op, mode=d.mode, rank=d.rank, desc_addr=0x8000, smem_addr=0,
                           mbar_addr=0x20000), **cmd_fields_, **cmd_changes})
    return Case(cmd, desc_word(d), name)


def _fig8(key, **changes):
    v = V.TILE_FIG8[key]
    desc = V.fig8_desc(v["tensor"], mode=Mode.TILE, box_size=v["box"],
                       traversal_stride=(1,) + tuple(v["ts"][1:]),
                       **{k: x for k, x in changes.items() if k in ("oob_fill", "oob_const")})
    cmd = V.fig8_cmd(coord=v["coord"])
    cmd.update({k: x for k, x in changes.items() if k not in ("oob_fill", "oob_const")})
    return Case(TmaCmd(**cmd), desc_word(TmaDesc.make(**desc)), key)


def _line_split(size, coord, op=CmdOp.TENSOR_LOAD):
    desc = dict(V.LINE_SPLIT_DESC, tensor_size=(size,))
    return _tensor(desc, dict(coord=(coord,)), op=op, name=f"split {size}/{coord}")


def _ranges(pieces):
    return [(pc["line"] << 7, pc["sectors"], (pc["lane"], pc["lane"] + pc["nbytes"] - 1),
             (pc["dst"], pc["dst"] + pc["nbytes"] - 1)) for pc in pieces]


def bm_tile(coord1=0, smem=0):
    """BM-TILE (TMA-P1): U32, rank 2, sizes {1024, 1024}, stride {4096}, box {128, 128}."""
    desc = dict(global_address=0x100000, tensor_size=(1024, 1024), tensor_stride=(4096,), rank=2,
                dtype=DType.U32, box_size=(128, 128))
    return _tensor(desc, dict(coord=(0, coord1), smem_addr=smem), name="BM-TILE")


def _fig8_i2c(key, op=CmdOp.TENSOR_LOAD):
    """The §5 im2col vector ``key`` (Fig 8 common setup) as a case."""
    v = V.IM2COL[key]
    desc = V.fig8_desc(v["tensor"], mode=Mode.IM2COL, range_c=v["range_c"],
                       range_ndhw=v["range_ndhw"], base_corner=v["base"], far_corner=v["far"],
                       traversal_stride=(1,) + tuple(v["ts"]) + (1,))
    cmd = V.fig8_cmd(op=op, mode=Mode.IM2COL, coord=v["coord"], im2col_off=v["off"])
    return Case(TmaCmd(**cmd), desc_word(TmaDesc.make(**desc)), f"{key} {CmdOp(op).name}")


def _i2c(desc_fields, coord, off=0, op=CmdOp.TENSOR_LOAD, name=""):
    desc = dict(dict(mode=Mode.IM2COL, traversal_stride=(1,) * 5), **desc_fields)
    return _tensor(desc, dict(coord=coord, im2col_off=off, mode=Mode.IM2COL), op=op, name=name)


def bm_i2c():
    """BM-I2C (TMA-P7): F16 im2col, rank 4, sizes {64, 32, 32, 4}, strides {128, 4096, 131072},
    range_c 64, range_ndhw 512, corners 0/0, coord (0, 0, 0, 0), offsets 0: 512 one-line rows."""
    desc = dict(global_address=0x100000, rank=4, dtype=DType.F16, tensor_size=(64, 32, 32, 4),
                tensor_stride=(128, 4096, 131072), range_c=64, range_ndhw=512,
                base_corner=(0, 0), far_corner=(0, 0))
    return _i2c(desc, (0, 0, 0, 0), name="BM-I2C")


def im2col_cases(p):
    """(name, case, check) of the §5 im2col vectors, the im2col edge cases and BM-I2C;
    ``check(pieces, fills)`` asserts the printed values on the golden output."""
    out = []

    def add(name, case, check=None):
        out.append((name, case, check))

    for key, v in V.IM2COL.items():
        px = v["range_c"] * 2                              # F16 pixel bytes

        def chk(ps, fs, v=v, key=key, px=px):
            assert len(ps) == v["reads"], key
            assert all((pc["sectors"], pc["lane"], pc["nbytes"]) == (1, 0, px) for pc in ps), key
            assert [pc["dst"] // px for pc in ps] == sorted(
                set(range(v["range_ndhw"])) - set(v["oob_idx"])), key
            oob = sorted({(f["dst"] + k) // px for f in fs for k in range(0, f["nbytes"], px)})
            assert oob == v["oob_idx"] and len(oob) == v["oob_px"], key
            assert sum(f["nbytes"] for f in fs) + px * len(ps) == v["tx"], key
            if key in V.GV22:                              # TMA-GV22 READ addresses
                firsts, (last_i, last_a) = V.GV22[key]
                by_px = {pc["dst"] // px: pc["line"] << 7 | pc["lane"] for pc in ps}
                assert all(by_px[i] == a for i, a in firsts), key
                assert max(by_px) == last_i and ps[-1]["line"] << 7 == last_a, key
        add(key, _fig8_i2c(key), chk)
        for op in (CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED, CmdOp.TENSOR_PREFETCH):
            if key in ("GV3", "GV11", "GV20"):
                def chk_op(ps, fs, v=v, op=op):
                    assert not fs
                    if op != CmdOp.TENSOR_PREFETCH:
                        assert len(ps) == v["reads"]
                add(f"{key} {CmdOp(op).name}", _fig8_i2c(key, op), chk_op)

    # exact arithmetic past 2^31 (TMA-F15): pixels pos + off past 2^31, a carry moving n from
    # 2^31 - 1 to 2^31, channels crossing 2^31
    big, top = 0xFFFFFFFF, 1 << 31
    e31 = dict(global_address=0x1000, rank=3, dtype=DType.U8, tensor_size=(16, big, 1),
               tensor_stride=(16, 16 << 32), range_c=16, range_ndhw=4, base_corner=(0,),
               far_corner=(0,))

    def chk_a(ps, fs):
        assert [pc["line"] << 7 | pc["lane"] for pc in ps] == [
            0x1000 + 16 * (top + 1 + i) for i in range(4)] and not fs
    add("pixels past 2^31", _i2c(e31, (0, top - 2, 0), 3), chk_a)
    e31n = dict(e31, tensor_size=(16, 2, big), tensor_stride=(16, 32))

    def chk_b(ps, fs):
        pix = [(top - 1, 0), (top - 1, 1), (top, 0), (top, 1)]
        assert [pc["line"] << 7 | pc["lane"] for pc in ps] == [
            (0x1000 + 16 * w + 32 * n) % 2 ** p.ADDR_W for n, w in pix] and not fs
    add("n past 2^31", _i2c(e31n, (0, 0, top - 1)), chk_b)
    e31c = dict(e31, tensor_size=(big, 1, 1), tensor_stride=(1 << 32, 1 << 32), range_ndhw=1)

    def chk_c(ps, fs):
        a = 0x1000 + top - 8
        assert [(pc["line"] << 7 | pc["lane"], pc["nbytes"]) for pc in ps] == [(a, 8), (a + 8, 8)]
    add("channels past 2^31", _i2c(e31c, (top - 8, 0, 0)), chk_c)
    # a pixel span crossing 2^ADDR_W (continues at address 0, TMA-F24, F26)
    top_a = 2 ** p.ADDR_W
    wrap = dict(global_address=top_a - 192, rank=3, dtype=DType.U8, tensor_size=(128, 2, 1),
                tensor_stride=(128, 256), range_c=128, range_ndhw=2, base_corner=(0,),
                far_corner=(0,))

    def chk_w(ps, fs):
        assert [(pc["line"] << 7, pc["sectors"], pc["lane"], pc["nbytes"], pc["dst"])
                for pc in ps] == [(top_a - 256, 0xC, 64, 64, 0), (top_a - 128, 0x3, 0, 64, 64),
                                  (top_a - 128, 0xC, 64, 64, 128), (0, 0x3, 0, 64, 192)]
    add("span crossing 2^ADDR_W", _i2c(wrap, (0, 0, 0)), chk_w)
    add("span crossing 2^ADDR_W store", _i2c(wrap, (0, 0, 0), op=CmdOp.TENSOR_STORE), chk_w)
    # rank 5: every carry W -> H -> D -> n, off-grid start, ts 2/3/2, offsets (1, 0, 1), first
    # and next image, negative corners, channels partly OOB (c0 = -8 of range_c 32, C = 20)
    r5 = dict(global_address=0x40000, rank=5, dtype=DType.U16, tensor_size=(20, 5, 4, 3, 3),
              tensor_stride=(64, 320, 1280, 3840), range_c=32, range_ndhw=40,
              base_corner=(-2, -1, -1), far_corner=(1, 0, -1), traversal_stride=(1, 2, 3, 2, 1))

    def chk_r5(ps, fs):
        assert ps and fs
    add("rank 5 carries", _i2c(r5, (-8, 1, 0, 0, 0), off=1 | 0 << 5 | 1 << 10 | 1 << 15),
        chk_r5)
    # rank 3 with a 16-bit offset and n from -1 (OOB image first, then image 0 and 1)
    r3 = dict(global_address=0x7000, rank=3, dtype=DType.F32, tensor_size=(8, 40, 2),
              tensor_stride=(32, 1280), range_c=4, range_ndhw=120, base_corner=(-300,),
              far_corner=(-290,), traversal_stride=(1, 3, 1))

    def chk_r3(ps, fs):
        assert ps and fs
    add("rank 3 offset, n from -1", _i2c(r3, (0, -299, -1), off=300), chk_r3)

    def chk_bm(ps, fs):
        assert len(ps) == 512 and all(pc["nbytes"] == 128 for pc in ps) and not fs
        assert [pc["line"] << 7 for pc in ps] == [0x100000 + 128 * k for k in range(512)]
    add("BM-I2C", bm_i2c(), chk_bm)
    return [(name, fitted, check) for name, case, check in out
            if (fitted := _fit(case, p)) is not None]


def directed_cases(p):
    """(name, case, check) of the §5 vectors; ``check(pieces, fills)`` asserts the spec's printed
    values on the golden output."""
    out = []

    def add(name, case, check=None):
        out.append((name, case, check))

    for key, v in V.TILE_FIG8.items():
        def chk(ps, fs, v=v, key=key):
            assert len(ps) == v["reads"] and all(pc["sectors"] == 1 for pc in ps), key
            assert sum(f["nbytes"] for f in fs) + 16 * len(ps) == v["tx"], key
            if key == "GV9":
                first, second, last = V.GV9_DETAIL["first"], V.GV9_DETAIL["second"], V.GV9_DETAIL["last"]
                for pc, (_, line, dense) in zip((ps[0], ps[1], ps[-1]), (first, second, last)):
                    assert (pc["line"] << 7, pc["dst"]) == (line, dense)
        add(key, _fig8(key), chk)
    for mode, pat in V.GV33.items():
        def chk(ps, fs, pat=pat):
            assert sum(f["nbytes"] for f in fs) == V.GV33_FILL_BYTES
            assert all(f["pattern"].to_bytes(8, "little")[:2] == pat for f in fs)
            assert fs[0]["dst"] == 0 and fs[0]["nbytes"] == 176
        add(f"GV33 {OobFill(mode).name}", _fig8("GV9", oob_fill=mode, oob_const=V.GV33_CONST), chk)

    def chk34(ps, fs):
        assert all(pc["mask"] == V.GV34["cta_mask"] for pc in ps + fs)
    add("GV34", _fig8("GV9", mcast=1, cta_mask=V.GV34["cta_mask"]), chk34)

    def chk24(ps, fs):
        assert len(ps) == V.GV25["reads"] and not fs
        assert [(pc["line"] << 7, pc["sectors"]) for pc in ps] == [
            (V.GV25["line0"] + 128 * k, 0xF) for k in range(100)]
        assert all(pc["swizzle"] == Swizzle.SW128B for pc in ps)
    add("GV24", _tensor(V.GV24_DESC, dict(coord=(0, 0, 0, 0))), chk24)

    def chk27(ps, fs):
        assert [(pc["line"] << 7, pc["sectors"]) for pc in ps] == V.GV27["reads"]
    add("GV27", _tensor(V.GV27_DESC, dict(V.GV27_CMD)), chk27)
    for key, v in (("GV28", V.GV28), ("GV29", V.GV29)):
        def chk(ps, fs, v=v):
            assert _ranges(ps) == v["pieces"]
            fill = [(f["dst"], f["dst"] + f["nbytes"] - 1) for f in fs]
            assert fill == ([v["fill"]] if v["fill"] else [])
        add(key, _line_split(v["size"], v["coord"]), chk)

    def chk35(ps, fs):
        assert [(a, s, lanes, dense) for a, s, lanes, dense in _ranges(ps)] == V.GV35["writes"]
        assert all(pc["op"] == L2Op.WRITE for pc in ps) and not fs
    add("GV35", _line_split(V.GV29["size"], V.GV29["coord"], CmdOp.TENSOR_STORE), chk35)

    def chk30(ps, fs):
        assert [(pc["line"] << 7, pc["sectors"]) for pc in ps] == V.GV30["load"]
    add("GV30", _tensor(V.GV30_DESC, dict(coord=(0, 0))), chk30)

    def chk30p(ps, fs):
        assert [(pc["line"] << 7, pc["sectors"]) for pc in ps] == V.GV30["prefetch"]
    add("GV30 prefetch", _tensor(V.GV30_DESC, dict(coord=(0, 0)), op=CmdOp.TENSOR_PREFETCH),
        chk30p)

    def chk31(ps, fs):
        assert [(a, s, lanes, (d - 0x200, e - 0x200)) for a, s, lanes, (d, e) in _ranges(ps)] \
            == V.GV31["pieces"]
    add("GV31", Case(TmaCmd(**V.GV31_CMD, mbar_addr=0x20000)), chk31)

    def chk31p(ps, fs):
        assert [(pc["line"] << 7, pc["sectors"]) for pc in ps] == V.GV31["prefetch"]
    add("GV31 prefetch", Case(TmaCmd(**dict(V.GV31_CMD, op=CmdOp.BLOCK_PREFETCH))), chk31p)

    def chk32(ps, fs):
        assert not ps and not fs
    add("GV32", Case(TmaCmd(**V.GV32_CMD)), chk32)

    def chk36(ps, fs):
        assert [(pc["line"] << 7 | pc["lane"], pc["nbytes"], pc["dst"], pc["mask"]) for pc in ps] \
            == [(0x100, 64, 0x1F0, 0x0002)]
    add("GV36", Case(TmaCmd(**V.GV36_CMD)), chk36)

    def chk108(ps, fs):
        assert _ranges(ps) == V.GV108["pieces"] and not fs
    add("GV108", _tensor(V.GV108_DESC, dict(coord=(V.GV108_COORD,))), chk108)
    for op in (CmdOp.TENSOR_LOAD, CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED):
        def chk109(ps, fs):
            assert [(pc["line"] << 7, pc["sectors"], (pc["lane"], pc["lane"] + pc["nbytes"] - 1),
                     pc["dst"]) for pc in ps] == V.GV109["requests"]
        add(f"GV109 {CmdOp(op).name}", _tensor(V.GV109_DESC, dict(coord=(0, 0)), op=op), chk109)
    if p.ADDR_W == V.GV107_ADDR_W:
        def chk107(ps, fs):
            assert _ranges(ps) == V.GV107["pieces"] and not fs
        add("GV107", _tensor(V.GV107_DESC, dict(coord=(0,))), chk107)

        def chk107p(ps, fs):
            assert [(pc["line"] << 7, pc["sectors"]) for pc in ps] == V.GV107["prefetch"]
        add("GV107 prefetch", _tensor(V.GV107_DESC, dict(coord=(0,)),
                                      op=CmdOp.TENSOR_PREFETCH), chk107p)
        add("GV107 store", _tensor(V.GV107_DESC, dict(coord=(0,)), op=CmdOp.TENSOR_STORE), chk107)

    def chk_tile(ps, fs):
        assert len(ps) == 512 and all(pc["nbytes"] == 128 for pc in ps) and not fs
    add("BM-TILE", bm_tile(), chk_tile)
    return [(name, fitted, check) for name, case, check in out
            if (fitted := _fit(case, p)) is not None]


def _fit(case, p):
    """``case`` with its barrier address folded into a small smem window, or None when its
    footprint does not fit SMEM_SIZE (narrow builds run the vectors that fit)."""
    cmd = case.cmd.replace(mbar_addr=case.cmd.mbar_addr % p.SMEM_SIZE)
    fitted = Case(cmd, case.desc_word, case.name)
    return fitted if fitted.code(p) == 0 else None


@cocotb.test()
async def golden_vectors(dut):
    """The §5 tile, line-split, block, prefetch and aliasing vectors, bit-exact against golden."""
    p = params_from_env()
    await _start(dut)
    bench = FrontBench(dut, p)
    names = []
    for name, case, check in directed_cases(p):
        pieces, fills = bench.send(case, 0)
        if check is not None:
            check(pieces, fills)
        names.append(name)
    await bench.finish()
    dut._log.info("vectors: %s; %d pieces, %d fills", ", ".join(names),
                  bench.sb["piece"].matched, bench.sb["fill"].matched)


@cocotb.test()
async def im2col_vectors(dut):
    """The §5 im2col vectors (also as store, reduction, prefetch), im2col edge cases and
    BM-I2C, bit-exact against golden."""
    p = params_from_env()
    await _start(dut)
    bench = FrontBench(dut, p)
    names = []
    for name, case, check in im2col_cases(p):
        pieces, fills = bench.send(case, 0)
        if check is not None:
            check(pieces, fills)
        names.append(name)
    assert sum(n.startswith("GV") and " " not in n for n in names) == len(V.IM2COL), names
    await bench.finish()
    dut._log.info("vectors: %s; %d pieces, %d fills", ", ".join(names),
                  bench.sb["piece"].matched, bench.sb["fill"].matched)


def im2col_features(case, p):
    """Coverage features of an im2col case, from the golden rows: restarts of each spatial
    level, n crossings, pixel-OOB rows, partly OOB channel ranges, off-grid starts, in-bounds
    pixels past 2^31, spans crossing 2^ADDR_W."""
    d, cmd = case.desc, case.cmd
    r, S = d.rank, d.rank - 2
    rs = tensor_rows(d, cmd, p.ADDR_W)
    out = set()
    for a, b in zip(rs, rs[1:]):
        for s in range(S):
            if b.coord[s + 1] < a.coord[s + 1]:
                out.add(f"restart {'WHD'[s]}")
        if b.coord[r - 1] != a.coord[r - 1]:
            out.add("n crossing")
    chan = min(d.range_c, d.tensor_size[0] - cmd.coord[0]) - max(0, -cmd.coord[0])
    if chan > 0 and any(not row.span_bytes for row in rs):
        out.add("pixel OOB")
    if any(0 < row.span_bytes < row.nbytes for row in rs):
        out.add("channels partly OOB")
    if any((cmd.coord[s + 1] - d.base_corner[s]) % d.traversal_stride[s + 1] for s in range(S)):
        out.add("off grid")
    if any(row.span_bytes and max(row.coord[1:r]) >= 2 ** 31 for row in rs):
        out.add("past 2^31")
    if any(row.span_bytes and row.addr + row.span_bytes > 2 ** p.ADDR_W for row in rs):
        out.add("span wraps")
    return out


@cocotb.test()
async def random_im2col(dut):
    """Random im2col ops of rank 3..5 mixed with tile, block and mutated commands."""
    p = params_from_env()
    seed = env.seed()
    rng = random.Random(seed * 17 + 3)
    dut._log.info("seed %d", seed)
    await _start(dut)
    bench = FrontBench(dut, p, gap_prob=0.3, ready_prob=0.65, burst=3.0)
    kinds = {}
    ops = [CmdOp.TENSOR_LOAD] * 4 + [CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED, CmdOp.TENSOR_PREFETCH]
    cover = {}
    for _ in range(800):
        x = rng.random()
        if x < 0.72:
            case = random_im2col_case(rng, p, op=rng.choice(ops), max_px=256, max_pieces=600)
            key = f"im2col r{case.desc.rank} {CmdOp(case.cmd.op).name}"
            for f in im2col_features(case, p) | {f"rank {case.desc.rank}"}:
                cover[f] = cover.get(f, 0) + 1
        elif x < 0.82:
            case = random_tile_case(rng, p, op=rng.choice(ops), max_rows=24)
            key = "tile"
        elif x < 0.88:
            case = random_block(rng, p)
            key = "block"
        else:
            case = mutate(random_im2col_case(rng, p, max_px=64, max_pieces=200), rng, p)
            key = "mutant"
        bench.send(case)
        kinds[key] = kinds.get(key, 0) + 1
    await bench.finish(timeout=4_000_000)
    dut._log.info("commands: %s; %d pieces, %d fills, %d errs", dict(sorted(kinds.items())),
                  bench.sb["piece"].matched, bench.sb["fill"].matched, bench.sb["err"].matched)
    dut._log.info("im2col coverage: %s", dict(sorted(cover.items())))
    need = ["restart W", "restart H", "restart D", "n crossing", "pixel OOB",
            "channels partly OOB", "off grid", "rank 3", "rank 4", "rank 5"]
    assert all(cover.get(f, 0) >= 5 for f in need), cover
    assert cover.get("span wraps", 0) and cover.get("past 2^31", 0), cover


@cocotb.test()
async def random_tile(dut):
    """Random tile ops of rank 1..5, block ops, control ops and rejected commands, mixed."""
    p = params_from_env()
    seed = env.seed()
    rng = random.Random(seed * 13 + 5)
    dut._log.info("seed %d", seed)
    await _start(dut)
    bench = FrontBench(dut, p, gap_prob=0.3, ready_prob=0.65, burst=3.0)
    kinds = {}
    for _ in range(700):
        x = rng.random()
        if x < 0.6:
            op = rng.choice([CmdOp.TENSOR_LOAD] * 4 + [CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED,
                                                       CmdOp.TENSOR_PREFETCH])
            case = random_tile_case(rng, p, op=op, max_rows=40)
            key = f"tile r{case.desc.rank}"
        elif x < 0.8:
            case = random_block(rng, p)
            key = CmdOp(case.cmd.op).name
        elif x < 0.85:
            case = random_control(rng, p)
            key = "control"
        else:
            case = mutate(random_tile_case(rng, p, max_rows=24), rng, p)
            key = "mutant"
        bench.send(case)
        kinds[key] = kinds.get(key, 0) + 1
    await bench.finish()
    dut._log.info("commands: %s; %d pieces, %d fills, %d errs", kinds,
                  bench.sb["piece"].matched, bench.sb["fill"].matched, bench.sb["err"].matched)


@cocotb.test()
async def throughput(dut):
    """BM-TILE / BM-TILE8 / BM-I2C pieces per cycle, BM-8D window and first-piece latency
    (ready = 1)."""
    p = params_from_env()
    await _start(dut)
    bench = FrontBench(dut, p, gap_prob=0.0, ready_prob=1.0, burst=1.0)
    pm = bench.mon["piece"]
    result = {}

    async def run(cases):
        start_piece = pm.count
        start_in = len(bench.driver.transfers)
        counts = [len(bench.send(c)[0]) for c in cases]
        await bench.driver.idle()
        total = sum(counts)
        await pm.wait_for(start_piece + total)
        cycles = [t.cycle for t in pm.transfers[start_piece:start_piece + total]]
        first_in = bench.driver.transfers[start_in].cycle
        for _ in range(10):
            await RisingEdge(bench.clk)
        return total, cycles[-1] - cycles[0] + 1, cycles[0] - first_in

    n, window, lat = await run([bm_tile()])
    result["bm_tile"] = dict(requests=n, window_cycles=window, rate=n / window, latency=lat)
    n, window, lat = await run([bm_i2c()])
    result["bm_i2c"] = dict(requests=n, window_cycles=window, rate=n / window, latency=lat,
                            vs_tile=(n / window) / result["bm_tile"]["rate"])
    n, window, lat = await run([_fig8_i2c("GV4")])
    result["gv4_latency"] = lat
    n, window, _ = await run([bm_tile(128 * k, 0x10000 * (k & 1)) for k in range(8)])
    result["bm_tile8"] = dict(requests=n, window_cycles=window, rate=n / window)
    n, window, lat = await run([_fig8("GV10")])
    result["gv10_latency"] = lat
    n, window, _ = await run([_fig8("GV9")])
    result["bm_8d"] = dict(requests=n, window_cycles=window)
    await bench.finish()
    for key, value in result.items():
        dut._log.info("%s: %s", key, value)
    env.write_result(result)
    assert result["bm_tile"]["rate"] >= 0.98, result
    assert result["bm_tile8"]["rate"] >= 0.98, result
    assert result["bm_8d"]["window_cycles"] <= 92, result
    assert result["bm_tile"]["latency"] <= 3 and result["gv10_latency"] <= 3, result
    assert result["bm_i2c"]["vs_tile"] >= 0.9 and result["bm_i2c"]["rate"] >= 0.98, result
    assert result["bm_i2c"]["latency"] <= 3 and result["gv4_latency"] <= 3, result
