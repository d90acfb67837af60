"""RTL regression of the whole TMA unit ``hw.tma.Tma`` (part 1) on Verilator, against the golden
transaction model (tb/tma/top_tb.py): random tile loads, block copies, control and rejected
commands with random memory latency, out-of-order L2 responses and back-pressure everywhere.

Two builds: the default parameters, and the TMA-V19 corner (Q_DEPTH = DC_ENTRIES = 2,
TRK_ENTRIES = 4, ADDR_W = 40) with narrow SMEM_AW / ID_W / NB_W.
"""

import json

import pytest

from hw.tma import Tma
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.tma.top_tb"

BLOCK = Block(
    name="tma_top", kind="test", summary="hw.tma.Tma (part 1)", spec="tma.md §2.2", top=Tma,
    params=(Param("addr_w", 64, "40..64", "ADDR_W"), Param("smem_aw", 18, "11..24", "SMEM_AW"),
            Param("id_w", 8, "1..16", "ID_W"), Param("q_depth", 4, "2..16", "Q_DEPTH"),
            Param("dc_entries", 4, "2..16", "DC_ENTRIES"),
            Param("trk_entries", 32, "4..256", "TRK_ENTRIES"), Param("nb_w", 20, "1..28", "NB_W")),
)

BUILDS = {"default": {},
          "corner": dict(addr_w=40, smem_aw=13, id_w=4, q_depth=2, dc_entries=2, trk_entries=4,
                         nb_w=8)}


def _run(build, seed, testcase, tmp_path, **env):
    out = tmp_path / f"{testcase}.json"
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase, seed=seed,
                  env={"GPUBLOCKS_RESULT": str(out), **env})
    figures = json.loads(out.read_text())
    print(json.dumps(figures, indent=1))
    return figures


@pytest.mark.req("TMA-I1", "TMA-I2", "TMA-I3", "TMA-I4", "TMA-I5", "TMA-I6", "TMA-I7", "TMA-I8",
                 "TMA-I9", "TMA-I10", "TMA-I13", "TMA-V5", "TMA-V6", "TMA-V11", "TMA-P3",
                 "TMA-E1", "TMA-E3", "TMA-F36", "TMA-F38")
@pytest.mark.parametrize("build", list(BUILDS))
def test_top_random_commands(build, seed, tmp_path):
    figures = _run(build, seed, "random_commands", tmp_path)
    assert figures["commands"] >= 60 and figures["requests"] > 0 and figures["beats"] > 0


@pytest.mark.req("TMA-V1", "TMA-V2", "TMA-F22", "TMA-F31", "TMA-F34", "TMA-F47", "TMA-F49")
def test_top_directed_vectors(seed, tmp_path):
    figures = _run("default", seed, "directed_vectors", tmp_path)
    assert {"GV9", "GV10", "GV17", "GV21", "GV24", "GV31", "GV36"} <= set(figures["vectors"])


@pytest.mark.req("TMA-P1", "TMA-P2", "TMA-P4", "TMA-P5", "TMA-P6", "TMA-P8", "TMA-P10", "TMA-P11",
                 "TMA-P12")
def test_top_benchmarks(seed, tmp_path):
    """The part-1 benchmarks under the spec's memory model (TMA-P12 figures printed), each
    target asserted: rates, BM-LAT latency (TMA-P4), the BM-DMISS gap (TMA-P8) and BM-8D."""
    f = _run("default", seed, "benchmarks", tmp_path)
    for key in ("bm_tile", "bm_tile8", "bm_swz_128b", "bm_swz_none", "bm_blk"):
        assert f[key]["request"]["per_cycle"] >= 0.98, (key, f[key])
    for key in ("bm_tile", "bm_fill"):
        assert f[key]["write"]["per_cycle"] >= 0.98, (key, f[key])
    a, b = f["bm_swz_128b"]["request"]["window_cycles"], f["bm_swz_none"]["request"]["window_cycles"]
    assert abs(a - b) <= 0.01 * max(a, b)
    assert f["bm_tile"]["request"]["count"] == 512 and f["bm_fill"]["request"]["count"] == 0
    assert f["bm_8d"]["request"]["window_cycles"] <= 92
    assert f["bm_lat"]["first_req_latency"] <= 4
    assert f["bm_dmiss"]["gap_cycles"] <= 4
