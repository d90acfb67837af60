"""Check and wake-up (spec §2 item 3, TQ-F12..F18, TQ-E5, TQ-E10): the sector-valid table,
fill matching against all heads, the same-cycle bypass, inval, and the checker picker's
zero-latency promotion."""

import pytest

from golden.trackq.fill import HeadTracker, SectorValidTable
from golden.trackq.formats import ERR_INVAL_LIVE, SRC_FAST, SRC_TQ, Fill, Inval, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.stimulus import RandomEnv, run_env


def _probe(m, ident, sector):
    """Offer a fast-path L/G request needing ``sector``: it takes the fast path iff the sector is
    valid in the SVT after this cycle's inval and fill (TQ-F38)."""
    return m.step(req=make_req(ident, warp=ident % 8, sectors=[sector], fast_path=1))


@pytest.mark.req("TQ-F14", "TQ-F16", "TQ-E10")
def test_svt_fill_and_inval_order():
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    m.step(fill=Fill(0, 0, 0))
    m.step(fill=Fill(0, 0, 0))                               # already valid: no error
    assert _probe(m, 1, (0, 0, 0)).accepted.src == SRC_FAST
    r = m.step(inval=Inval(0, 0), fill=Fill(0, 0, 1))        # inval first, then the fill
    assert r.err_events == 0
    assert _probe(m, 2, (0, 0, 1)).accepted.src == SRC_FAST
    r = _probe(m, 3, (0, 0, 0))
    assert r.accepted.src == SRC_TQ and r.err_events          # s0 was cleared: ERR_FAST_MISS
    r = m.step(inval=Inval(0, 1), fill=Fill(0, 1, 3))         # same dslot: still valid after
    assert _probe(m, 4, (0, 1, 3)).accepted.src == SRC_FAST
    assert m.err & ERR_INVAL_LIVE == 0


@pytest.mark.req("TQ-F14", "TQ-F17")
def test_fill_matches_bank_and_dslot_of_every_head():
    p = TrackqParams.gv(FAST_PATH=0)
    m = TrackingQueuesModel(p)
    m.step(req=make_req(0, warp=0, sectors=[(1, 2, 0)]))                 # TQ0
    m.step(req=make_req(1, warp=1, sectors=[(1, 3, 0)]))                 # TQ1
    m.step(req=make_req(2, warp=2, sectors=[(0, 2, 0)]))                 # TQ2
    m.step(req=make_req(3, warp=3, sectors=[(1, 2, 0), (2, 2, 1)]))      # TQ3
    r = m.step(fill=Fill(1, 2, 0))
    assert r.ready_vec == 0b0001                  # only TQ0: bank and dslot must both match
    r = m.step(fill=Fill(2, 2, 1))
    assert r.ready_vec == 0b1000                  # TQ3 completed by its second fill
    r = m.step(fill=Fill(1, 2, 1))                # wrong sector: nothing
    assert r.ready_vec == 0


@pytest.mark.req("TQ-F12", "TQ-F13", "TQ-E5")
def test_head_checked_once_and_inval_of_head_ignored():
    """A head that was checked as a hit stays ready; an inval of its dslot is ignored with
    ERR_INVAL_LIVE. An inval of a dslot only a non-head entry uses is applied (the entry checks
    the SVT when it is promoted, §6 item 5)."""
    p = TrackqParams.gv(FAST_PATH=0, COMMIT_DEPTH=1)
    m = TrackingQueuesModel(p)
    m.step(fill=Fill(0, 0, 0))
    m.step(fill=Fill(0, 5, 2))
    m.step(req=make_req(0, warp=0, sectors=[(0, 0, 1)]))         # head of TQ0, misses s1
    m.step(req=make_req(1, warp=0, sectors=[(0, 5, 2)]))         # behind it, needs dslot 5
    r = m.step(inval=Inval(0, 0))
    assert r.err_events == ERR_INVAL_LIVE
    r = m.step(inval=Inval(0, 5))                                # not a head's: applied
    assert r.err_events == 0
    r = m.step(fill=Fill(0, 0, 1))                               # head ready, pops; successor
    assert r.ready_vec == 1 and r.pop.id == 0 and r.checks == 1  # checked: dslot 5 now invalid
    r = m.step()
    assert r.ready_vec == 0
    r = m.step(fill=Fill(0, 5, 2))
    assert r.ready_vec == 1 and r.pop.id == 1


@pytest.mark.req("TQ-F18", "TQ-F12")
def test_zero_latency_check_slot_and_at_most_two_checks(seed):
    """After every cycle, a TQ holding entries has a valid check slot on its head, and no cycle
    checks more than two heads (the successor of the popped head and a newly inserted head)."""
    p = TrackqParams.test(N_Q=4, POOL=16)
    m = TrackingQueuesModel(p)
    env = RandomEnv(p, seed, n_req=200, split=True)
    two = 0
    cycle = 0
    while not (env.idle() and m.is_empty()):
        inp = env.inputs(cycle)
        r = m.step(**inp)
        env.update(cycle, inp, r)
        assert r.checks <= 2
        two += r.checks == 2
        for q in range(p.N_Q):
            heads = m.tq_entries(q)
            assert m.ht.valid[q] == bool(heads)
            if heads:
                assert m.ht.seq[q] == heads[0].seq
        cycle += 1
    assert cycle < 20000


def test_head_tracker_unit():
    svt = SectorValidTable(2, 4, 4)
    ht = HeadTracker(3, 2, 4)

    class E:
        def __init__(self, dslot, need, seq):
            self.dslot, self.need, self.seq = dslot, need, seq

    svt.fill(0, 1, 2)
    ht.check(0, E((1, 0), (0b0101, 0), 0), svt)
    ht.check(1, E((1, 3), (0, 0b1000), 1), svt)
    assert ht.missing(0) == (0b0001, 0) and ht.missing(1) == (0, 0b1000)
    assert ht.uses(0, 1) and not ht.uses(1, 0) and ht.uses(1, 3)   # used[b] matters
    ht.fill(0, 1, 0)
    assert ht.ready(0) and not ht.ready(1) and ht.ready_vec() == 0b001
    ht.clear(0)
    assert not ht.ready(0) and ht.ready_vec() == 0


def test_random_env_drains():
    """The environment used by the random tests respects TQ-E11 well enough to drain."""
    p = TrackqParams.test()
    res = run_env(TrackingQueuesModel(p), RandomEnv(p, 1, n_req=60))
    assert len(res) < 5000
