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
