"""RTL regression of the TMA front end, TmaSetup -> TmaReqGen (hw/tma/setup.py, hw/tma/reqgen.py),
on Verilator.

The test top ``TmaFrontTop`` chains the two modules and brings the job stream between them out as
a passive tap. Two builds: default parameters, and ADDR_W = 40 with SMEM_AW = 11, ID_W = 3,
NB_W = 6 (TMA-GV107, narrow fields). The testbench (tb/tma/reqgen_tb.py) compares every job,
piece, fill run, fin record and error bit-exactly with ``golden.tma.jobs`` in order, with random
input gaps, random back-pressure on every output and protocol checkers on every stream: tile
and im2col commands (§4.5, §4.6), block and control ops.
"""

import json

import pytest
from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import err_fields
from golden.tma.jobs import fill_fields, fin_fields, job_fields, piece_fields
from hw.common.layout import struct_layout
from hw.tma.completion import open_fields
from hw.tma.reqgen import TmaReqGen
from hw.tma.setup import TmaSetup, setup_in_layout
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.tma.reqgen_tb"


class TmaFrontTop(wiring.Component):
    """Test top: ``TmaSetup`` feeding ``TmaReqGen``; ports ``i``, ``err``, ``open``, ``piece``,
    ``fill``, ``fin``, setup's ``busy`` and the job tap ``job__valid`` / ``job__ready`` /
    ``job__payload`` (outputs)."""

    def __init__(self, addr_w=64, smem_aw=18, id_w=8, nb_w=20):
        self.setup = TmaSetup(addr_w, smem_aw, id_w, nb_w)
        self.reqgen = TmaReqGen(addr_w, smem_aw, nb_w, id_w)
        p = self.setup.p
        super().__init__({
            "i": In(stream.Signature(setup_in_layout(p))),
            "err": Out(stream.Signature(struct_layout(err_fields(p)))),
            "open": Out(stream.Signature(struct_layout(open_fields(p)))),
            "piece": Out(stream.Signature(struct_layout(piece_fields(p)))),
            "fill": Out(stream.Signature(struct_layout(fill_fields(p)))),
            "fin": Out(stream.Signature(struct_layout(fin_fields(p)))),
            "busy": Out(1), "job__valid": Out(1), "job__ready": Out(1),
            "job__payload": Out(struct_layout(job_fields(p))),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.setup = self.setup
        m.submodules.reqgen = self.reqgen
        wiring.connect(m, wiring.flipped(self.i), self.setup.i)
        wiring.connect(m, self.setup.job, self.reqgen.job)
        wiring.connect(m, self.setup.err, wiring.flipped(self.err))
        for name in ("open", "piece", "fill", "fin"):
            wiring.connect(m, getattr(self.reqgen, name), wiring.flipped(getattr(self, name)))
        m.d.comb += [self.busy.eq(self.setup.busy),
                     self.job__valid.eq(self.setup.job.valid),
                     self.job__ready.eq(self.reqgen.job.ready),
                     self.job__payload.eq(self.setup.job.payload)]
        return m


BLOCK = Block(
    name="tma_front", kind="test", summary="TmaSetup -> TmaReqGen test top",
    spec="tma.md §2.2, §4.4-4.7", top=TmaFrontTop,
    params=(Param("addr_w", 64, "40..64", "ADDR_W"), Param("smem_aw", 18, "11..24", "SMEM_AW"),
            Param("id_w", 8, "1..16", "ID_W"), Param("nb_w", 20, "1..28", "NB_W")),
)

BUILDS = {"default": {}, "narrow": dict(addr_w=40, smem_aw=11, id_w=3, nb_w=6)}


def _run(build, seed, testcase, **kw):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed, **kw)


@pytest.mark.req("TMA-F12", "TMA-F13", "TMA-F14", "TMA-F22", "TMA-F23", "TMA-F24", "TMA-F25",
                 "TMA-F26", "TMA-F45", "TMA-F47", "TMA-F50", "TMA-F52",
                 "TMA-GV9", "TMA-GV10", "TMA-GV17", "TMA-GV21", "TMA-GV24", "TMA-GV25",
                 "TMA-GV27", "TMA-GV28", "TMA-GV29", "TMA-GV30", "TMA-GV31", "TMA-GV32",
                 "TMA-GV33", "TMA-GV34", "TMA-GV35", "TMA-GV108", "TMA-GV109")
def test_front_golden_vectors(seed):
    """§5 tile / line-split / block vectors: pieces, fills and fin bit-exact with golden."""
    _run("default", seed, "golden_vectors")


@pytest.mark.req("TMA-F15", "TMA-F24", "TMA-F26", "TMA-GV107")
def test_front_golden_vectors_addr40(seed):
    """The same vectors on ADDR_W = 40, SMEM_AW = 11 (GV107: a row crossing 2^40)."""
    _run("narrow", seed, "golden_vectors")


I2C_GV = [f"TMA-GV{n}" for n in (3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15, 16, 18, 19, 20, 22)]


@pytest.mark.req("TMA-F13", "TMA-F15", "TMA-F16", "TMA-F17", "TMA-F18", "TMA-F19", "TMA-F20",
                 "TMA-F21", "TMA-F22", "TMA-F23", "TMA-F24", "TMA-F25", "TMA-F26", "TMA-F45",
                 "TMA-V16", *I2C_GV)
def test_front_im2col_vectors(seed):
    """§5 im2col vectors (as load, store, reduction, prefetch), edge cases past 2^31 and across
    2^64, a rank-5 walk carrying into n, BM-I2C: jobs, pieces, fills and fin bit-exact."""
    _run("default", seed, "im2col_vectors")


@pytest.mark.req("TMA-F15", "TMA-F24", "TMA-F26", "TMA-F19", *I2C_GV)
def test_front_im2col_vectors_addr40(seed):
    """The same on ADDR_W = 40, SMEM_AW = 11 (the vectors that fit 2 KiB; a pixel span
    crossing 2^40)."""
    _run("narrow", seed, "im2col_vectors")


@pytest.mark.req("TMA-F13", "TMA-F15", "TMA-F16", "TMA-F17", "TMA-F18", "TMA-F19", "TMA-F20",
                 "TMA-F21", "TMA-F22", "TMA-F23", "TMA-F24", "TMA-F25", "TMA-F26", "TMA-F45",
                 "TMA-E1", "TMA-E4")
@pytest.mark.parametrize("build", list(BUILDS))
def test_front_random_im2col(build, seed):
    """Random im2col loads, stores, reductions and prefetches of rank 3..5 (ts 1..8, off-grid
    starts, n-crossing, partly OOB channels, negative corners, every dtype, offsets) mixed with
    tile, block and rejected commands, gaps and back-pressure: bit-exact with golden, in order."""
    _run(build, seed, "random_im2col")


@pytest.mark.req("TMA-F12", "TMA-F13", "TMA-F14", "TMA-F15", "TMA-F22", "TMA-F23",
                 "TMA-F24", "TMA-F25", "TMA-F26", "TMA-F45", "TMA-F46", "TMA-F47",
                 "TMA-F48", "TMA-F50", "TMA-F51", "TMA-E1", "TMA-E4")
@pytest.mark.parametrize("build", list(BUILDS))
def test_front_random(build, seed):
    """Random tile ops of rank 1..5, block, control and rejected commands with gaps and
    back-pressure: jobs, pieces, fills, fin and errors bit-exact with golden, in order."""
    _run(build, seed, "random_tile")


@pytest.mark.req("TMA-F11")
def test_front_throughput(seed, tmp_path):
    """BM-TILE / BM-TILE8 / BM-I2C pieces per cycle, BM-8D window, first-piece latency (always
    ready); BM-I2C at least 0.9 x the BM-TILE rate on the front end."""
    out = tmp_path / "perf.json"
    _run("default", seed, "throughput", env={"GPUBLOCKS_RESULT": str(out)})
    figures = json.loads(out.read_text())
    print(json.dumps(figures, indent=1))
    assert figures["bm_tile"]["rate"] >= 0.98
    assert figures["bm_tile8"]["rate"] >= 0.98
    assert figures["bm_i2c"]["vs_tile"] >= 0.9


@pytest.mark.parametrize("cls,kwargs", [
    (TmaReqGen, {"addr_w": 39}), (TmaReqGen, {"addr_w": 65}), (TmaReqGen, {"smem_aw": 10}),
    (TmaReqGen, {"nb_w": 29}), (TmaReqGen, {"nb_w": True}),
])
def test_reqgen_parameters_are_checked(cls, kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)
