"""The router model against the flat reference memory on thousands of random operations
(MR-V3): reads, partial and full writes, 35 % to 8 hot sectors from every processor port, random
MIG_CMDs and automatic triggers, poison, FLUSH, window ticks, in every configuration, mode and
stall setting, with random interleaving of engine, class queues and port completions. Checks
MR-V2 (mreq targets against a PT mirror built from events), V3 (every read beat, final
contents), V4 (ids, order, nothing left), V5, V6, V8, V9."""

import random

import pytest

from golden.memrouter.params import reference
from golden.memrouter.stress import run

REQS = ("MR-V2", "MR-V3", "MR-V4", "MR-V5", "MR-V6", "MR-V8", "MR-V9", "MR-V11", "MR-F46", "MR-E13",
        "MR-E14", "MR-F27", "MR-F28", "MR-F29", "MR-F31", "MR-F33", "MR-F34", "MR-F35",
        "MR-F17", "MR-F47", "MR-E9", "MR-E7", "MR-E8")


# The floor on accepted requests only guards against a stimulus that does nothing. Exclusive
# mode with MIG_STALL = 1, one port and MIG_OUTSTANDING = 1 throttles acceptance hard (requests
# to a migrating page hold the class queue, and the generator drops a refused request): over 600
# seeds of the four (excl, stall1) cases the lowest count was 249, and CI seed 582379985 drew 352.
MIN_ACCEPTED = 150


def _random_run(name, mode, stall, seed):
    rng = random.Random(seed)
    p, c = reference(name, MODE=mode, MIG_STALL=stall, EN_ACC=1, EN_SECT=1,
                     T_ACC=rng.randint(2, 8), T_SECT=rng.choice([8, 16, 64]),
                     WINDOW=rng.choice([0, 300, 2000]), NEAR_RESERVE=rng.choice([0, 1, 3]),
                     FAR_ALLOC=rng.choice([0, 1, 1]), MIG_OUTSTANDING=rng.choice([1, 8, 64]))
    p = p.replace(N_PROC=rng.randint(1, 4), NUM_LINES=rng.choice([4, 8]))
    stats, _ = run(p, c, seed, n_ops=8000, n_pages=rng.choice([6, 16, 40]))
    assert stats["reads"] + stats["writes"] >= MIN_ACCEPTED, stats
    assert stats["done"] + stats["aborts"] >= 1, stats


@pytest.mark.req(*REQS)
@pytest.mark.parametrize("name", ["A", "B", "C", "D"])
@pytest.mark.parametrize("mode", [0, 1], ids=["excl", "incl"])
@pytest.mark.parametrize("stall", [0, 1], ids=["stall0", "stall1"])
def test_random_against_flat_reference(name, mode, stall, seed):
    _random_run(name, mode, stall, seed)


@pytest.mark.req(*REQS)
@pytest.mark.parametrize("name,mode,stall,fixed_seed", [("D", 0, 1, 582379985),
                                                       ("D", 0, 1, 356960432)])
def test_random_regression_seeds(name, mode, stall, fixed_seed):
    """Seeds that drew few accepted requests (CI stop 23 and the lowest of a 600-seed sweep)."""
    _random_run(name, mode, stall, fixed_seed)


@pytest.mark.req(*REQS, "MR-C1", "MR-C6")
def test_random_seed_scale_pages(seed):
    """CFG-G64 (NS = 2048, 4 lines) with short MAX_LEN: long migrations, many walker runs."""
    p, c = reference("G64", MODE=seed % 2, EN_SECT=1, T_SECT=64, EN_ACC=1, T_ACC=6,
                     NEAR_RESERVE=1, MIG_OUTSTANDING=64)
    stats, _ = run(p.replace(N_PROC=2, MAX_LEN=16), c, seed, n_ops=6000, n_pages=8)
    assert stats["reads"] + stats["writes"] >= 150
