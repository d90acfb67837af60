"""The cycle-exact QoS arbiter (memrouter §4.10) on every MR-GV15 vector (MR-V10), and the token
bucket bound of MR-F41 on random traffic."""

import random

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.formats import FAR, MIG, NEAR
from golden.memrouter.qos import QosArbiter, run_qos

NAMES = {NEAR: "N", FAR: "F", MIG: "M"}
REQS = {
    "a": ("MR-F40", "MR-F41"), "b": ("MR-F40", "MR-F41"), "c": ("MR-F40",), "d": ("MR-F40",),
    "e": ("MR-F41",), "f": ("MR-F40", "MR-C17"), "g": ("MR-F42", "MR-C17", "MR-C26"),
    "h": ("MR-F41", "MR-F42", "MR-C17", "MR-C26"), "i": ("MR-F40", "MR-C25"),
}


def run_vector(name, cycles=15000):
    rn, rf, kw, _ = gv.GV15[name]
    kw = dict(kw)
    near, far, mig = kw.pop("near", True), kw.pop("far", True), kw.pop("mig", False)
    gate = kw.pop("near_gate", False)
    nb = kw.pop("nb", 1)
    period = kw.pop("ready", 8)
    arb = QosArbiter(qden=24, rate_n=rn, rate_f=rf, burst_n=8, burst_f=8, **kw)

    def valid(c, t):
        if c == NEAR:
            return near and (not gate or t % 64 < 16)
        return far if c == FAR else mig
    return run_qos(cycles, arb, valid, lambda t: t % period == period - 1, lambda c: nb)


@pytest.mark.parametrize("name", [
    pytest.param(n, id=f"GV15{n}", marks=pytest.mark.req("MR-GV15", "MR-V10", *REQS[n]))
    for n in sorted(gv.GV15)])
def test_gv15(name):
    exp = gv.GV15[name][3]
    run = run_vector(name)
    assert run.sectors(NEAR, 0, 10000) == exp["N"]
    assert run.sectors(FAR, 0, 10000) == exp["F"]
    if "M" in exp:
        assert run.count(MIG, 0, 10000) == exp["M"]
    if "N2" in exp:
        assert (run.sectors(NEAR, 5000, 15000), run.sectors(FAR, 5000, 15000)) == \
            (exp["N2"], exp["F2"])
    if "head" in exp:
        seq = run.selections if name == "i" else [(t, c) for t, c, _ in run.transfers]
        assert "".join(NAMES[c] for _, c in seq[:len(exp["head"])]) == exp["head"]
    if "first" in exp:
        assert [t for t, _, _ in run.transfers[:3]] == exp["first"]
    if "idle" in exp:
        assert len([t for t in run.idle_ready if t < 10000]) == exp["idle"]
    if "F_first_epoch" in exp:
        assert run.sectors(FAR, 0, 1000) == exp["F_first_epoch"]
        assert run.sectors(FAR, 1000, 10000) == exp["F_rest"]
    if "mig_first" in exp:
        assert [t for t, c in run.selections if c == MIG][:4] == exp["mig_first"]


@pytest.mark.req("MR-GV15")
def test_gv15_shares():
    run = run_vector("a")
    assert run.sectors(NEAR, 0, 10000) / 1250 == pytest.approx(0.6728)
    assert run.sectors(NEAR, 5000, 15000) / 1250 == pytest.approx(0.6672)
    assert run_vector("b").sectors(NEAR, 0, 10000) / 1250 == pytest.approx(0.34)


@pytest.mark.req("MR-F41", "MR-F40", "MR-C9", "MR-C27", "MR-C28")
def test_token_bounds_random(seed):
    """Buckets stay within [1 − MAX_LEN·QDEN, BURST·QDEN]; a request is always granted when the
    port can take one and a class is present (work conservation with QOS_UTH_EN = 0)."""
    rng = random.Random(seed)
    for _ in range(20):
        qden = rng.randint(1, 255)
        bn, bf = rng.randint(1, 255), rng.randint(1, 255)
        arb = QosArbiter(qden=qden, rate_n=rng.randint(0, 300), rate_f=rng.randint(0, 300),
                         burst_n=bn, burst_f=bf, mig_starve=rng.choice([0, 5, 100]))
        p = [rng.random() for _ in range(3)]
        period = rng.randint(1, 9)
        lengths = {}

        def valid(c, t):
            return (hash((c, t, p[c])) % 1000) / 1000 < p[c]

        def nb(c):
            lengths[c] = rng.randint(1, 16)
            return lengths[c]
        run = run_qos(3000, arb, valid, lambda t: t % period == 0, nb)
        assert arb.tok[NEAR] <= bn * qden and arb.tok[NEAR] >= 1 - 16 * qden
        assert arb.tok[FAR] <= bf * qden and arb.tok[FAR] >= 1 - 16 * qden
        assert run.transfers
