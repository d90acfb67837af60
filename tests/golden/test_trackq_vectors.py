"""Every golden vector of spec trackq.md §5 (TQ-GV1..GV15, GV17, GV18) reproduced exactly by the
golden model: the model regenerates each table and it is compared with the transcription in
``golden/trackq/vectors.py`` (TQ-V17). TQ-GV16 is tests/golden/test_arbiter.py; TQ-GV19 is
tests/golden/test_trackq_bench.py."""

import subprocess
import sys

import pytest

from golden.trackq import vectors as gv
from golden.trackq.formats import ERR_INVAL_LIVE

REQS = {
    "TQ-GV1": ("TQ-GV1", "TQ-F1", "TQ-F4", "TQ-F17", "TQ-V17"),
    "TQ-GV2": ("TQ-GV2", "TQ-F4", "TQ-F5", "TQ-V3", "TQ-V17"),
    "TQ-GV3": ("TQ-GV3", "TQ-F14", "TQ-F19", "TQ-F20", "TQ-V17"),
    "TQ-GV4": ("TQ-GV4", "TQ-F7", "TQ-F9", "TQ-F10", "TQ-F11", "TQ-P7", "TQ-V17"),
    "TQ-GV5": ("TQ-GV5", "TQ-F22", "TQ-F23", "TQ-F25", "TQ-F28", "TQ-F29", "TQ-F31", "TQ-V17"),
    "TQ-GV6": ("TQ-GV6", "TQ-F30", "TQ-V17"),
    "TQ-GV7": ("TQ-GV7", "TQ-F32", "TQ-F33", "TQ-F34", "TQ-V17"),
    "TQ-GV8": ("TQ-GV8", "TQ-F35", "TQ-F26", "TQ-V17"),
    "TQ-GV9a": ("TQ-GV9", "TQ-F39", "TQ-F40", "TQ-F42", "TQ-I10", "TQ-V17"),
    "TQ-GV9b": ("TQ-GV9", "TQ-F39", "TQ-P6", "TQ-V17"),
    "TQ-GV9c": ("TQ-GV9", "TQ-F41", "TQ-F42", "TQ-P6", "TQ-V17"),
    "TQ-GV10": ("TQ-GV10", "TQ-F8", "TQ-P4", "TQ-V17"),
    "TQ-GV11": ("TQ-GV11", "TQ-E1", "TQ-E2", "TQ-E3", "TQ-E4", "TQ-F38", "TQ-V17"),
    "TQ-GV12": ("TQ-GV12", "TQ-F1", "TQ-F2", "TQ-F3", "TQ-F4", "TQ-F5", "TQ-V17"),
    "TQ-GV13a": ("TQ-GV13", "TQ-F12", "TQ-F15", "TQ-F21", "TQ-V17"),
    "TQ-GV13b": ("TQ-GV13", "TQ-F15", "TQ-V17"),
    "TQ-GV14a": ("TQ-GV14", "TQ-F16", "TQ-V17"),
    "TQ-GV14b": ("TQ-GV14", "TQ-E5", "TQ-F13", "TQ-V17"),
    "TQ-GV15": ("TQ-GV15", "TQ-F36", "TQ-F37", "TQ-E9", "TQ-V17"),
    "TQ-GV17": ("TQ-GV17", "TQ-P1", "TQ-F46", "TQ-V17"),
    "TQ-GV18": ("TQ-GV18", "TQ-P3", "TQ-F24", "TQ-V17"),
}


def _marks(name):
    key = name.split()[0]
    return pytest.mark.req(*REQS[key])


@pytest.mark.parametrize("v", [pytest.param(v, id=v.name, marks=_marks(v.name))
                               for v in gv.VECTORS])
def test_vector(v):
    table, counters, err, res = gv.regenerate(v)
    for label, want in v.expect.items():
        assert table[label] == want, f"{v.name} {label}"
    assert counters == v.counters
    if v.err is not None:
        assert err == v.err, f"{v.name}: err {err:#x}"
    # every request was accepted and delivered exactly once
    assert all(e.accept is not None and e.resp is not None for e in res.entries)


@pytest.mark.req("TQ-GV1", "TQ-P2")
def test_gv1_mean_latencies():
    for name, (pop_mean, resp_mean) in gv.GV1_MEANS.items():
        res, _ = gv.run_vector(gv.by_name(f"TQ-GV1 {name}"))
        pops = [e.pop - e.accept for e in res.entries]
        resps = [e.resp - e.accept for e in res.entries]
        assert sum(pops) / 4 == pop_mean and sum(resps) / 4 == resp_mean, name


@pytest.mark.req("TQ-GV3", "TQ-F14")
def test_gv3_one_fill_readies_three_heads():
    res, _ = gv.run_vector(gv.by_name("TQ-GV3"))
    assert [c.ready_vec for c in res.cycles[19:22]] == [0b000, 0b111, 0b111]


def _lock_cycles(res):
    return [c.cycle for c in res.cycles if c.status["lock_valid"]], \
        {c.status["lock_q"] for c in res.cycles if c.status["lock_valid"]}


@pytest.mark.req("TQ-GV5", "TQ-GV8", "TQ-GV15", "TQ-F29", "TQ-I9")
@pytest.mark.parametrize("name,window,queue", [("TQ-GV5", gv.GV5_LOCK, 0),
                                               ("TQ-GV8", gv.GV8_LOCK, 0),
                                               ("TQ-GV15", gv.GV15_LOCK, 0)])
def test_lock_window(name, window, queue):
    """The lock is set by a commit in cycle a and released by a commit in cycle b, so the
    registered lock_valid output shows it in cycles a+1..b."""
    res, _ = gv.run_vector(gv.by_name(name))
    cycles, queues = _lock_cycles(res)
    assert cycles == list(range(window[0] + 1, window[1] + 1)) and queues == {queue}


@pytest.mark.req("TQ-GV10", "TQ-P4", "TQ-V8", "TQ-I9")
def test_gv10_ready_low_exactly_while_pool_full():
    res, _ = gv.run_vector(gv.by_name("TQ-GV10"))
    lo, hi = gv.GV10_NOT_READY
    for c in res.cycles:
        assert c.req_ready == int(not lo <= c.cycle <= hi), c.cycle
        assert c.status["pool_full"] == int(lo <= c.cycle <= hi), c.cycle
    assert max(c.status["occ"][0] for c in res.cycles) == 16


@pytest.mark.req("TQ-GV9", "TQ-F39", "TQ-I10")
def test_gv9a_interlock_cycles():
    res, _ = gv.run_vector(gv.by_name("TQ-GV9a"))
    assert [c.cycle for c in res.cycles if c.interlocked] == [4, 5, 6]   # "blocked in 4-6"


@pytest.mark.req("TQ-GV13", "TQ-F15", "TQ-F18", "TQ-C18")
def test_gv13_promotion_with_same_cycle_fill():
    res, labels = gv.run_vector(gv.by_name("TQ-GV13a"))
    # R1 is promoted at 11 (R0's pop) and checked against the SVT after the s1 fill of 11
    assert res.cycles[11].checks == 1 and res.cycles[12].ready_vec & 1
    assert res.cycles[10].pop.q == 1              # rr = 1 after H, so A (TQ1) before R0 (TQ0)


@pytest.mark.req("TQ-GV14", "TQ-E5")
def test_gv14b_inval_ignored_keeps_svt():
    res, _ = gv.run_vector(gv.by_name("TQ-GV14b"))
    assert res.cycles[3].err_events == ERR_INVAL_LIVE
    assert all(c.err_events == 0 for c in res.cycles if c.cycle != 3)


@pytest.mark.req("TQ-GV16")
def test_gv16_is_transcribed_once():
    """TQ-GV16 is the arbiter table of golden.common (checked in test_arbiter.py)."""
    from golden.common.arbiter_vectors import TQ_GV16
    assert gv.TQ_GV16 is TQ_GV16 and len(TQ_GV16) == 10


@pytest.mark.req("TQ-V17")
def test_golden_imports_no_amaranth():
    code = ("import sys, golden.trackq.bench, golden.trackq.invariants, golden.trackq.stimulus, "
            "golden.trackq.vectors; bad = [m for m in sys.modules if m.split('.')[0] in "
            "('amaranth', 'cocotb', 'hw')]; assert not bad, bad")
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.req("TQ-V17")
def test_vector_check_can_fail():
    """A wrong transcription is caught: the comparison is not vacuous."""
    v = gv.by_name("TQ-GV4 in-order")
    table, counters, _, _ = gv.regenerate(v)
    assert table["E"] == {"ins": 53, "pop": 54, "resp": 56}
    assert table["E"] != {"ins": 52, "pop": 54, "resp": 56} and counters["cnt_req_stall"] == 49
