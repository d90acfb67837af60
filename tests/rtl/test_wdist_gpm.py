"""RTL regression of the per-GPC GPM ``Gpm`` (hw/wdist/gpm.py; tb/wdist/gpm_tb.py) on Verilator
against golden ``golden.wdist.gpm.Gpm`` driven identically every cycle."""

import pytest
from amaranth import Signal

from golden.wdist.params import WdistParams
from hw.wdist.gpm import Gpm, in_gpc
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.wdist.gpm_tb"


def gpm_top(N_GPC, SM_PER_GPC, G, GPC_CGA_ID_W, CTA_SLOTS, MAX_CGA_CTAS, MAX_OUTER,
            MAX_FLAT_CTAS, GRID_ID_W, SEQ_W):
    """Test top: ``Gpm(WdistParams(...))`` from integer parameters (every GPC has SM_PER_GPC
    SMs). The GPM has no GPC index; ``G`` is the GPC the testbench plays (it drives
    ``beat_mine`` / ``cc_mine`` / ``fd_mine`` for it), checked here."""
    if not isinstance(G, int) or not 0 <= G < N_GPC:
        raise ValueError(f"G must be in 0..{N_GPC - 1}, got {G!r}")
    p = WdistParams(N_GPC=N_GPC, SM_PER_GPC=(SM_PER_GPC,) * N_GPC, GPC_CGA_ID_W=GPC_CGA_ID_W,
                    CTA_SLOTS=CTA_SLOTS, MAX_CGA_CTAS=MAX_CGA_CTAS, MAX_OUTER=MAX_OUTER,
                    MAX_FLAT_CTAS=MAX_FLAT_CTAS, GRID_ID_W=GRID_ID_W, SEQ_W=SEQ_W)
    return Gpm(p)


BLOCK = Block(
    name="wdist_gpm", kind="test", summary="wd_gpm[g] (G-GPM), test builds",
    spec="wdist.md WD-F21..F23, G-GPM", top=gpm_top,
    params=(Param("N_GPC", 2, "1..16", "GPCs"), Param("SM_PER_GPC", 8, "2..32", "SMs per GPC"),
            Param("G", 1, "0..N_GPC-1", "this GPM's GPC"),
            Param("GPC_CGA_ID_W", 2, "1..8", "ID width"), Param("CTA_SLOTS", 8, "1..63", "slots"),
            Param("MAX_CGA_CTAS", 8, "1..32", "CGA size"), Param("MAX_OUTER", 1, "1..16", "outer"),
            Param("MAX_FLAT_CTAS", 8, "1..256", "flat CGA"),
            Param("GRID_ID_W", 8, "1..16", "grid tag"), Param("SEQ_W", 8, "1..16", "seq")),
)

# w2: 4 IDs for 8 SMs (WD-V12, WD-GV12), RANK_W = 3; w5: 32 IDs, RANK_W = 8 (MAX_OUTER x
# MAX_CGA_CTAS = 256), GPC 0 of 4; w8: the default 256-ID pool. The w8 simulation model takes
# about 9 minutes to compile on 2 cores, so its random run is a slow test
# (pytest -m slow tests/rtl/test_wdist_gpm.py); its lint runs always.
BUILDS = {
    "w2": dict(GPC_CGA_ID_W=2),
    "w5": dict(N_GPC=4, G=0, GPC_CGA_ID_W=5, CTA_SLOTS=32, MAX_CGA_CTAS=16, MAX_OUTER=16,
               MAX_FLAT_CTAS=64),
    "w8": dict(N_GPC=4, G=0, GPC_CGA_ID_W=8, CTA_SLOTS=32, MAX_CGA_CTAS=16, MAX_OUTER=16,
               MAX_FLAT_CTAS=64),
}


def run(build, seed, testcase, **env):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed, env={k: str(v) for k, v in env.items()})


@pytest.mark.req("WD-F21", "WD-F22", "WD-F23", "WD-E7", "WD-E8", "WD-V9", "WD-I6", "WD-I7",
                 "WD-I8")
@pytest.mark.parametrize("build", ["w2", "w5", pytest.param("w8", marks=pytest.mark.slow)])
def test_gpm_random_matches_golden(build, seed):
    """Closed loop with the SM model, random back-pressure, bad completions and unexpected
    flush dones: every output equals golden Gpm cycle by cycle; V9 per GPC CGA."""
    run(build, seed, "random_traffic", WD_UNITS=300 if build == "w2" else 150)


@pytest.mark.req("WD-GV12", "WD-F21")
def test_gpm_golden_vector_gv12(seed):
    run("w2", seed, "golden_vector_gv12")


@pytest.mark.req("WD-V12", "WD-V9", "WD-F21")
def test_gpm_id_exhaustion(seed):
    """GPC_CGA_ID_W = 2, 8 SMs: 40 GPC CGAs through 4 IDs; WAIT_CGA_ID seen, each CGA once."""
    run("w2", seed, "id_exhaustion")


@pytest.mark.req("WD-F22", "WD-F23", "WD-I7")
@pytest.mark.parametrize("fixed_seed", [None, 657518986])
def test_gpm_two_flush_reqs_in_one_cycle(seed, fixed_seed):
    """A beat and a cta_complete finish two CGAs in one cycle: flush_req in golden order.
    Seed 657518986 (a session's regression run) completed Y's CTA by a random completion
    before the script did; the first two cycles now carry no completions."""
    run("w2", seed if fixed_seed is None else fixed_seed, "two_flush_reqs_one_cycle")


@pytest.mark.parametrize("params", [None, {"N_GPC": 2}])
def test_gpm_rejects_bad_parameters(params):
    with pytest.raises(ValueError, match="params"):
        Gpm(params)


@pytest.mark.parametrize("g", [2, -1, True, "1"])
def test_in_gpc_rejects_bad_gpc(g):
    with pytest.raises(ValueError, match="g must be"):
        in_gpc(WdistParams(N_GPC=2), g, Signal(4))
