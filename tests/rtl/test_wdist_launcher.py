"""RTL regression of the shadow session controller (hw/wdist/launcher.py) on Verilator against
golden sessions (tb/wdist/launcher_tb.py), and its Verilator -Wall lint."""

import pytest

from golden.wdist.params import WdistParams
from hw.wdist.launcher import Launcher
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog

TB = "tb.wdist.launcher_tb"


def launcher(**params):
    """Test top: Launcher of the WdistParams built from integer parameters."""
    return Launcher(WdistParams(**params))


BLOCK = Block(
    name="wdist_launcher", kind="test", summary="wd_gpu2gpc + mock GPCs (test builds)",
    spec="wdist.md G-SESS-PLAIN, G-SESS-FLAT, G-SESS-GPC, G-SESS-GPU, G-A5", top=launcher,
    params=(Param("N_GPC", 2, "1..16", "GPCs"), Param("SM_PER_GPC", 4, "2..32", "SMs per GPC"),
            Param("CTA_SLOTS", 8, "1..63", "CTA slots"),
            Param("SESSION_MAX_STEPS", 8, "1..255", "A5 steps per session")),
)

BUILDS = {"2x4": dict(SESSION_MAX_STEPS=2), "4x8": dict(N_GPC=4, SM_PER_GPC=8, CTA_SLOTS=32)}


@pytest.mark.req("WD-F4", "WD-F12", "WD-F13", "WD-F14", "WD-F15", "WD-F16", "WD-F17", "WD-F18",
                 "WD-F19", "WD-F33", "WD-E5", "WD-V7")
@pytest.mark.parametrize("build", list(BUILDS))
def test_launcher_matches_golden(build, seed):
    """Random PLAIN, level-GPC, level-GPU (LB, MC) and GPU_FLAT grids with waits, FAIL events
    and NEVER_FITS, then GPU / GPU_FLAT units that fail Pass I (Σf < isz) and wait, and that
    never fit: every beat, FAIL event and result equals the golden sessions."""
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB,
                  testcase="random_grids,gpu_wait_never_fits", seed=seed)


@pytest.mark.req("WD-F6", "WD-F12", "WD-F15", "WD-F16", "WD-F33", "WD-P6", "WD-P7", "WD-P10")
def test_launcher_fills(seed):
    """WD-P1/P3/P6 shapes and the Fig 12 GPU / GPU_FLAT shapes on the empty 4 x 8 machine,
    against the golden sessions: N_GPC CGAs per step from empty (WD-P6), a step's or chunk's
    beats on consecutive cycles (WD-P7), cycles per E1(4) GPU CGA within WD-P10's bound."""
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS["4x8"]), TB,
                  testcase="plain_fill,cga_fill,gpu_fill", seed=seed)


# MockGpc's ``c`` and the engines' ``dbg_*`` outputs exist only with ``debug=True`` (their own
# testbenches), so nothing is left unread inside the launcher (Verilator UNUSEDSIGNAL).
@pytest.mark.parametrize("build", list(BUILDS))
def test_launcher_lints_clean(build, tmp_path):
    path, module = write_verilog(BLOCK, BLOCK.resolve_params(BUILDS[build]), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
