"""RTL regression of the memrouter QoS arbitration (hw/memrouter/qos.py ``QosArbiter``,
hw/memrouter/qos_port.py ``QosPort``) on Verilator against golden/memrouter/qos.py
(tb/memrouter/qos_tb.py, tb/memrouter/qos_port_tb.py)."""

import pytest

from hw.memrouter.qos import QosArbiter
from hw.memrouter.qos_port import QosPort
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param


def arbiter_top(QDEN=24, MAX_LEN=8):
    return QosArbiter(qden=QDEN, max_len=MAX_LEN)


def port_top(QDEN=24, MAX_LEN=8, DEPTH=16, POISON=0):
    return QosPort(qden=QDEN, max_len=MAX_LEN, depth=DEPTH, poison_collisions=POISON)


ARB = Block(name="memrouter_qos_arb", kind="test", summary="QosArbiter (test builds)",
            spec="memrouter.md §4.10, MR-F40..F42", top=arbiter_top,
            params=(Param("QDEN", 24, "1..255", "token units per beat"),
                    Param("MAX_LEN", 8, "1..16", "largest nb")))
PORT = Block(name="memrouter_qos_port", kind="test", summary="QosPort (test builds)",
             spec="memrouter.md §2.3 qos_arb, §4.10", top=port_top,
             params=(Param("QDEN", 24, "1..255", "token units per beat"),
                     Param("MAX_LEN", 8, "1..16", "largest nb"),
                     Param("DEPTH", 16, "MAX_LEN..256", "beats per class queue"),
                     Param("POISON", 0, "0..1", "block-RAM reads colliding with a write "
                           "return the inverted word")))

ARB_BUILDS = {"default": {}, "q255_l16": dict(QDEN=255, MAX_LEN=16),
              "q1_l1": dict(QDEN=1, MAX_LEN=1)}
# DEPTH > 16: the block-RAM beat queues the router uses (the three classes share a write
# port); 24 is not a power of two. POISON: the port must never use a read that collides with a
# write (its result is undefined in block RAM), so those reads return garbage here.
PORT_BUILDS = {"default": {}, "q1_l16_d16": dict(QDEN=1, MAX_LEN=16, DEPTH=16),
               "d64": dict(DEPTH=64, POISON=1), "q3_l5_d24": dict(QDEN=3, MAX_LEN=5, DEPTH=24,
                                                                  POISON=1)}


def run(block, overrides, tb, seed, testcase, **env):
    return run_testbench(block, block.resolve_params(overrides), tb, testcase=testcase,
                         seed=seed, env={k: str(v) for k, v in env.items()})


@pytest.mark.req("MR-V10", "MR-GV15", "MR-F40", "MR-F41", "MR-F42", "MR-C9", "MR-C25",
                 "MR-C26", "MR-C27", "MR-C28")
def test_qos_arbiter_gv15(seed):
    """Every MR-GV15 vector a..i driven as golden ``run_qos`` drives it; the spec's counts,
    sequences, idle-ready counts and MIG times asserted on the RTL's own transfers, and every
    cycle's selection and buckets equal to golden ``QosArbiter``."""
    run(ARB, {}, "tb.memrouter.qos_tb", seed, "gv15")


@pytest.mark.req("MR-V10", "MR-F40", "MR-F41", "MR-F42", "MR-C9", "MR-C25", "MR-C26",
                 "MR-C27", "MR-C28")
@pytest.mark.parametrize("build", list(ARB_BUILDS))
def test_qos_arbiter_random(build, seed):
    """Random configurations (RATE 0..65535, BURST 1..255, UW 1..65535, MIG_STARVE 0..65535,
    both UTH modes, changes at run time), heads and xfer patterns: cycle by cycle equal to
    golden; every MR-F40 rule, starvation, the UTH hold and both buckets' ≤ 0 excursions
    covered."""
    run(ARB, ARB_BUILDS[build], "tb.memrouter.qos_tb", seed, "random_configs",
        QOS_SEGMENTS=24 if build == "default" else 16)


@pytest.mark.req("MR-F40", "MR-F41", "MR-I3", "MR-I7", "MR-I8")
@pytest.mark.parametrize("build,fixed_seed", [(b, None) for b in PORT_BUILDS]
                         # its 6,000 cycles of random configurations never reached rule 3
                         + [("q1_l16_d16", 103236916)])
def test_qos_port_random(build, fixed_seed, seed):
    """Random multi-beat reads and writes on the three class inputs with valid gaps, random
    mig_block and mreq back-pressure: every request whole, in per-class order, write beats
    contiguous, nothing lost or duplicated, payload stable while valid, counter hooks right,
    and the selections cycle by cycle equal to golden ``QosArbiter`` fed with the queue heads
    the testbench computes."""
    run(PORT, PORT_BUILDS[build], "tb.memrouter.qos_port_tb", fixed_seed or seed,
        "random_traffic", QOS_PORT_CYCLES=6000)


@pytest.mark.parametrize("kw, name", [
    (dict(qden=0), "qden"), (dict(qden=256), "qden"), (dict(max_len=0), "max_len"),
    (dict(max_len=17), "max_len"), (dict(qden=True), "qden")])
def test_qos_arbiter_rejects_bad_params(kw, name):
    with pytest.raises(ValueError, match=name):
        QosArbiter(**kw)


@pytest.mark.parametrize("kw, name", [
    (dict(depth=7), "depth"), (dict(max_len=16, depth=15), "depth"), (dict(depth=257), "depth"),
    (dict(qden=300), "qden"), (dict(max_len=20), "max_len")])
def test_qos_port_rejects_bad_params(kw, name):
    with pytest.raises(ValueError, match=name):
        QosPort(**kw)
