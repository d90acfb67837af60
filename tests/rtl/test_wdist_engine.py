"""RTL regression of the wdist placement engine ``PlaceEngine`` (tb/wdist/engine_tb.py) and the
mock GPC ``MockGpc`` (tb/wdist/mock_gpc_tb.py) on Verilator, against golden/wdist."""

import pytest

from hw.wdist.engine import PlaceEngine
from hw.wdist.mock_gpc import MockGpc
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

ENGINE_TB = "tb.wdist.engine_tb"
MOCK_TB = "tb.wdist.mock_gpc_tb"

_PARAMS = (Param("n_sm", 8, "1..128", "SMs placed over"), Param("free_w", 6, "1..6", "FREE_W"),
           Param("sm_per_tpc", 1, "1..4", "SM_PER_TPC"), Param("cnt_w", 6, "free_w..16", "CNT_W"))



def engine(**params):
    """Test top: PlaceEngine with its ``dbg_*`` trace outputs (the testbench reads them)."""
    return PlaceEngine(**params, debug=True)


def mock_gpc(**params):
    """Test top: MockGpc with ``c`` and the ``dbg_*`` trace outputs (the testbench reads them)."""
    return MockGpc(**params, debug=True)


ENGINE = Block(name="wdist_engine", kind="test", summary="PlaceEngine (G-A2, G-A3), test builds",
               spec="wdist.md §4 G-A2, G-A3", top=engine, params=_PARAMS)
MOCK = Block(name="wdist_mock_gpc", kind="test", summary="MockGpc (G-Q), test builds",
             spec="wdist.md §4 G-Q", top=mock_gpc,
             params=(Param("n_sm", 8, "2..32", "SM_PER_GPC[g]"),) + _PARAMS[1:])

BUILDS = {
    "s8_t1": dict(n_sm=8, sm_per_tpc=1),
    "s8_t2": dict(n_sm=8, sm_per_tpc=2),
    "s4_t2": dict(n_sm=4, sm_per_tpc=2),
    "s32_t2": dict(n_sm=32, sm_per_tpc=2),
}
GLOBAL = {"s128_t1": dict(n_sm=128, sm_per_tpc=1)}         # the plain-grid global fill
MOCK_BUILDS = {"s8_t2": dict(n_sm=8, sm_per_tpc=2), "s8_t1": dict(n_sm=8, sm_per_tpc=1),
               "s4_t1_w3": dict(n_sm=4, sm_per_tpc=1, free_w=3, cnt_w=3),
               "s32_t2": dict(n_sm=32, sm_per_tpc=2)}


def run(block, tb, build, seed, testcase, **env):
    return run_testbench(block, block.resolve_params(build), tb, testcase=testcase, seed=seed,
                         env={k: str(v) for k, v in env.items()})


@pytest.mark.req("WD-F7", "WD-F8", "WD-F9", "WD-F10", "WD-F29", "WD-P4")
@pytest.mark.parametrize("build", list(BUILDS))
def test_engine_random_matches_golden(build, seed):
    """Random f (zeros, full, ties), N (FAIL rows too) and modes: a, speed, L/T, R and the
    per-iteration trace equal golden lb_place / mc_place / level_search; every query's latency
    is within WD-P4. An SM with f = 0 (a disabled SM, WD-F29) breaks its TPC's MC class A."""
    run(ENGINE, ENGINE_TB, BUILDS[build], seed, "random_queries", WD_QUERIES=300)


@pytest.mark.req("WD-GV3", "WD-GV4", "WD-GV5", "WD-GV6", "WD-F7", "WD-F8", "WD-F10", "WD-P4")
@pytest.mark.parametrize("build", list(BUILDS))
def test_engine_golden_vectors(build, seed):
    """WD-GV3 (a, L, R, speed), GV4 rows 1-2 (iteration traces), GV5 (32 SMs: the s32 build),
    GV6 (MC, SM_PER_TPC = 2: the t2 builds)."""
    run(ENGINE, ENGINE_TB, BUILDS[build], seed, "golden_vectors")


# slow: the 128-SM engine compiles for about 90 s and `make test` is near its time budget; the
# 4- and 32-SM builds above run the same code on every commit
@pytest.mark.slow
@pytest.mark.req("WD-F7", "WD-F8", "WD-F9", "WD-P4", "WD-GV3", "WD-GV4", "WD-GV5")
@pytest.mark.parametrize("build", list(GLOBAL))
def test_engine_global_fill(build, seed):
    """The 128-SM engine of the plain-grid global fill: random queries and the golden vectors
    (GV5 padded to 128 SMs); latency within FREE_W + 7 + 2 = 15 (WD-P4)."""
    run(ENGINE, ENGINE_TB, GLOBAL[build], seed, "random_queries,golden_vectors", WD_QUERIES=120)


@pytest.mark.req("WD-F4", "WD-F5", "WD-F6", "WD-F11", "WD-F7", "WD-F10", "WD-P4")
@pytest.mark.parametrize("build", list(MOCK_BUILDS))
def test_mock_gpc_matches_golden_shadow(build, seed):
    """Random snapshot / query / commit / cancel / reset / plain-share sequences, with credit
    exhaustion and Pass-I style accumulated reservations, equal golden Shadow: every response
    (valid, cause, speed, a, credit) and the fs / f / c outputs after every operation."""
    run(MOCK, MOCK_TB, MOCK_BUILDS[build], seed, "random_sequences,golden_vectors",
        WD_STEPS=400)


@pytest.mark.parametrize("cls,kwargs,name", [
    (PlaceEngine, dict(n_sm=0), "n_sm"), (PlaceEngine, dict(n_sm=129), "n_sm"),
    (PlaceEngine, dict(free_w=0), "free_w"), (PlaceEngine, dict(free_w=7), "free_w"),
    (PlaceEngine, dict(sm_per_tpc=5), "sm_per_tpc"),
    (PlaceEngine, dict(n_sm=6, sm_per_tpc=4), "sm_per_tpc"),
    (PlaceEngine, dict(free_w=6, cnt_w=5), "cnt_w"), (PlaceEngine, dict(cnt_w=17), "cnt_w"),
    (PlaceEngine, dict(n_sm=True), "n_sm"),
    (MockGpc, dict(n_sm=1), "n_sm"), (MockGpc, dict(n_sm=33), "n_sm"),
    (MockGpc, dict(n_sm=6, sm_per_tpc=4), "sm_per_tpc"), (MockGpc, dict(free_w=7), "free_w"),
    (MockGpc, dict(free_w=4, cnt_w=3), "cnt_w"),
])
def test_rejects_bad_parameters(cls, kwargs, name):
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)
