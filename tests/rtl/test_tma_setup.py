"""RTL regression of ``TmaSetup`` (hw/tma/setup.py, hw/tma/validate.py) on Verilator.

The bare TmaSetup is the top. The testbench (tb/tma/setup_tb.py) checks every error vector
TMA-GV74..GV106 (exact code, no job, the valid base command after it gets its job), random
legal and mutated commands of every op and random im2col commands: the first violated code in
table order, or the job bit-exact with ``golden.tma.jobs.golden_job``; descriptors carry random
garbage in reserved bits and in the fields of unused dimensions; ``job`` and ``err`` see bursty
random back-pressure.
"""

import pytest

from golden.tma.formats import DType
from hw.tma.setup import TmaSetup
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.tma.setup_tb"

BLOCK = Block(
    name="tma_setup", kind="test", summary="TmaSetup (decode, validate, precompute)",
    spec="tma.md §3.4, §4.2, §4.4, §4.5, §4.6", top=TmaSetup,
    params=(Param("addr_w", 64, "40..64", "ADDR_W"), Param("smem_aw", 18, "11..24", "SMEM_AW"),
            Param("id_w", 8, "1..16", "ID_W"), Param("nb_w", 20, "1..28", "NB_W")),
)

GV_IDS = [f"TMA-GV{n}" for n in range(74, 107)]


def _run(seed, testcase, params=None):
    return run_testbench(BLOCK, BLOCK.resolve_params(params or {}), TB, testcase=testcase,
                         seed=seed)


@pytest.mark.req("TMA-E1", "TMA-E2", "TMA-E5", "TMA-E6", "TMA-F10", "TMA-V9", *GV_IDS)
def test_setup_error_vectors(seed):
    """TMA-GV74..GV106 (and the variants in their rows): exact err code and no job."""
    _run(seed, "error_vectors")


@pytest.mark.req("TMA-F9", "TMA-F10", "TMA-F13", "TMA-F15", "TMA-E1", "TMA-E2",
                 "TMA-E4", "TMA-E5", "TMA-E6")
def test_setup_random_commands(seed):
    """Random legal and single-field-mutated commands: codes and jobs bit-exact with golden."""
    _run(seed, "random_commands")


@pytest.mark.req("TMA-F9", "TMA-F15", "TMA-F16", "TMA-F17", "TMA-F18", "TMA-F19", "TMA-F20",
                 "TMA-E6")
def test_setup_im2col_jobs(seed):
    """The §5 im2col vectors and random im2col commands (rank 3..5, every tensor op, offsets,
    negative corners, off-grid starts, sizes and coordinates past 2^31): every job field
    (pixel coordinates, restart and wrap values, level start addresses) bit-exact with golden."""
    _run(seed, "im2col_jobs")


@pytest.mark.parametrize("kwargs", [
    {"addr_w": 39}, {"addr_w": 65}, {"smem_aw": 10}, {"smem_aw": 25}, {"id_w": 0}, {"id_w": 17},
    {"nb_w": 0}, {"nb_w": 29}, {"addr_w": "64"},
])
def test_setup_parameters_are_checked(kwargs):
    name = next(iter(kwargs))
    with pytest.raises(ValueError, match=name):
        TmaSetup(**kwargs)


def test_setup_nan_pattern_is_checked():
    with pytest.raises(ValueError, match="nan_pattern"):
        TmaSetup(nan_pattern={DType.F16: 0x1FFFF})
