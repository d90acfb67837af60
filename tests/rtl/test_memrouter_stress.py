"""MR-V15: random stress of the memory router RTL (tb/memrouter/stress_tb.py) on CFG-A..D, in
exclusive and inclusive mode, with per-sector service and with MIG_STALL.

``make test`` runs half of the combinations for ``STRESS_CYCLES`` (default 20,000) cycles in
epochs of 10,000: each CFG with two (mode, stall) pairs, chosen so that every CFG meets both
modes and both stall settings and every (mode, stall) pair meets two CFGs. The slow-marked test
runs the spec's 10^6 cycles of all 16 in epochs of 50,000 (``pytest -m slow -k stress``)."""

import os

import pytest

from sim.cocotb_run import run_testbench
from tb.memrouter.builds import BLOCK, BUILDS

TB = "tb.memrouter.stress_tb"
BUILD_OF = {"A": "A2", "B": "B", "C": "C2", "D": "A2"}      # CFG-D runs on the CFG-A hardware
COMBOS = [(cfg, mode, stall) for cfg in "ABCD" for mode in (0, 1) for stall in (0, 1)]


def ids(combos):
    return [f"CFG{c}-{'incl' if m else 'excl'}-{'stall' if s else 'perSector'}"
            for c, m, s in combos]


IDS = ids(COMBOS)
SHORT = [(c, m, s) for k, c in enumerate("ABCD") for m in (0, 1) for s in (m ^ (k & 1),)]
V = ("MR-V15", "MR-V2", "MR-V3", "MR-V4", "MR-V5", "MR-V6", "MR-V7", "MR-V8", "MR-V9")


def stress(cfg, mode, stall, cycles, epoch, seed):
    env = dict(STRESS_CFG=cfg, MODE=mode, MIG_STALL=stall, CYCLES=cycles, EPOCH=epoch)
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[BUILD_OF[cfg]]), TB,
                         testcase="stress", seed=seed, label=f"stress_{cfg}{mode}{stall}",
                         env={k: str(v) for k, v in env.items()})


@pytest.mark.req(*V)
@pytest.mark.parametrize("cfg, mode, stall", SHORT, ids=ids(SHORT))
def test_stress_short(cfg, mode, stall, seed):
    """Half of the combinations for a short run (one or two epochs): traffic, MIG_CMDs,
    triggers and poison switching with MR-V2..V9 checked."""
    cycles = int(os.environ.get("STRESS_CYCLES", "20000"))
    stress(cfg, mode, stall, cycles, 10_000, seed)


# Seeds that found RTL bugs (docs/memrouter.md): a SWAP that left line A locked (MR-V9), and a
# walker fill of a sector a whole-sector write had claimed (MR-V5 sum NS + 1).
REGRESSIONS = [("B", 0, 0, 1128168333), ("A", 1, 0, 1875068165)]


@pytest.mark.req(*V)
@pytest.mark.parametrize("cfg, mode, stall, fixed_seed", REGRESSIONS,
                         ids=[f"CFG{c}-{m}{s}-{x}" for c, m, s, x in REGRESSIONS])
def test_stress_regression_seeds(cfg, mode, stall, fixed_seed):
    stress(cfg, mode, stall, 30_000, 15_000, fixed_seed)


@pytest.mark.slow
@pytest.mark.req(*V)
@pytest.mark.parametrize("cfg, mode, stall", COMBOS, ids=IDS)
def test_stress_million_cycles(cfg, mode, stall, seed):
    """MR-V15 at the spec's length: 10^6 cycles of each combination."""
    stress(cfg, mode, stall, 1_000_000, 50_000, seed)
