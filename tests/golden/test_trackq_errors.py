"""Bad input and errors (spec §3.4, TQ-E1..E11): each error keeps exactly-once delivery, sets
its sticky flag, and counts once per cycle in cnt_err; err_clr and the 32-bit counters."""

import pytest

from golden.trackq.formats import (COUNTER_MASK, ERR_CFG, ERR_CLS, ERR_FAST_MISS, ERR_FAST_TEX,
                                   ERR_INVAL_LIVE, LG, SRC_FAST, SRC_STATUS, SRC_TQ, TEX, Fill,
                                   Inval, make_req)
from golden.trackq.invariants import TraceChecker
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.trace import run_trace
from golden.trackq.vectors import by_name, run_vector


@pytest.mark.req("TQ-E1")
def test_reserved_class_is_lg_in_every_respect():
    """cls 3 with fast_path and a hit takes the fast path like L/G; with a TEX instruction open
    it closes the group with eog (TQ-F37) like L/G; it maps by warp; resp.cls = 0."""
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    r = m.step(req=make_req(0, warp=1, cls=3, fast_path=1))
    assert r.accepted.src == SRC_FAST and r.err_events == ERR_CLS
    m.step(req=make_req(1, warp=0, cls=TEX, eoi=0))
    r = m.step(req=make_req(2, warp=2, cls=3))
    assert r.accepted.src == SRC_TQ and r.accepted.q == 2 and r.accepted.cls == LG
    res = [m.step() for _ in range(6)]
    delivered = {x.resp.id: x.resp for x in res if x.resp is not None and x.fire}
    assert delivered[2].cls == 0 and delivered[1].eog == 1 and delivered[1].eoi == 0
    assert m.err == ERR_CLS


@pytest.mark.req("TQ-E4")
def test_status_takes_precedence_over_fast_path():
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    r = m.step(req=make_req(0, warp=0, cls=LG, is_status=1, fast_path=1))
    assert r.accepted.src == SRC_STATUS and r.err_events == 0
    r = m.step(req=make_req(1, warp=0, cls=TEX, is_status=1, fast_path=1, sectors=[(0, 0, 0)]))
    assert r.accepted.src == SRC_STATUS and r.err_events == 0   # never checked, no FAST_* flag
    out = [m.step() for _ in range(6)]
    assert [x.resp.id for x in out if x.fire] == [0, 1]
    assert all(x.ready_vec == 0 and x.pop is None for x in out)   # status packets are not popped


@pytest.mark.req("TQ-E2", "TQ-E3", "TQ-E4")
@pytest.mark.parametrize("fast_build", [0, 1])
def test_fast_path_refusals(fast_build):
    p = TrackqParams.gv(FAST_PATH=fast_build)
    m = TrackingQueuesModel(p)
    rows = [m.step(req=make_req(0, warp=0, cls=TEX, fast_path=1)),                 # TEX hit
            m.step(req=make_req(1, warp=1, cls=2, fast_path=1, sectors=[(0, 1, 0)])),   # miss
            m.step(req=make_req(2, warp=2, cls=TEX, fast_path=1, sectors=[(0, 1, 1)]))]
    assert all(r.accepted.src == SRC_TQ for r in rows)
    if fast_build:
        assert [r.err_events for r in rows] == [ERR_FAST_TEX, ERR_FAST_MISS,
                                                ERR_FAST_TEX | ERR_FAST_MISS]
        assert m.counters["cnt_err"] == 3
    else:
        assert [r.err_events for r in rows] == [0, 0, 0] and m.err == 0


@pytest.mark.req("TQ-E6", "TQ-F28")
def test_cgm_zero_acts_as_one_and_flags_every_cycle():
    p = TrackqParams.gv()
    cfg = p.default_config(cfg_cgm=0)
    reqs = [(i, make_req(i, warp=0, cls=TEX, eoi=int(i == 2))) for i in range(3)]
    res = run_trace(TrackingQueuesModel(p), reqs, cfg=cfg)
    assert [e.eog for e in res.entries] == [1, 1, 1]           # cgm 1: every packet closes
    assert res.err == ERR_CFG and res.counters["cnt_err"] == res.n_cycles


@pytest.mark.req("TQ-E7")
def test_lgq_out_of_range_is_clamped_in_mode3():
    p = TrackqParams.gv()                                     # N_Q = 4, Q_W = 2
    m = TrackingQueuesModel(p)
    qs = [m.step(req=make_req(w, warp=w), cfg=p.default_config(cfg_mode=2, cfg_lgq=0))
          .accepted.q for w in range(4)]
    assert qs == [0, 0, 0, 0] and m.err == ERR_CFG             # W clamped to 1
    r = m.step(req=make_req(9, warp=0, cls=2), cfg=p.default_config(cfg_mode=2, cfg_lgq=0))
    assert r.accepted.q == 1                                   # TTU over TQ1..TQ3


@pytest.mark.req("TQ-E8")
def test_freelist_request_without_freelist_build_stays_inorder():
    """TQ-GV4 with FREELIST = 0 and cfg_reclaim = 1: the in-order timing (E accepted at 53),
    ERR_CFG in every cycle."""
    v = by_name("TQ-GV4 free-list")
    params, cfg, reqs, _ = v.build()
    p = params.replace(FREELIST=0)
    res = run_trace(TrackingQueuesModel(p), reqs, fills=v.fills, cfg=cfg)
    assert res.entries[4].accept == 53 and res.counters["cnt_req_stall"] == 49
    assert res.err == ERR_CFG and res.counters["cnt_err"] == res.n_cycles
    assert all(c.status["reclaim_mode"] == 0 for c in res.cycles)


@pytest.mark.req("TQ-E5", "TQ-E10")
def test_fill_and_inval_error_cases():
    p = TrackqParams.gv(FAST_PATH=0)
    m = TrackingQueuesModel(p)
    m.step(req=make_req(0, warp=0, sectors=[(2, 7, 3)]))
    assert m.step(inval=Inval(2, 7)).err_events == ERR_INVAL_LIVE
    assert m.step(inval=Inval(1, 7)).err_events == 0           # other bank: applied
    assert m.step(fill=Fill(3, 9, 0)).err_events == 0          # dslot no head uses
    r = m.step(fill=Fill(2, 7, 3))
    assert r.err_events == 0 and r.pop.id == 0
    assert m.step(fill=Fill(2, 7, 3)).err_events == 0          # already valid
    rest = [m.step() for _ in range(4)]
    assert [x.resp.id for x in rest if x.fire] == [0]          # delivered exactly once


@pytest.mark.req("TQ-I6", "TQ-I11", "TQ-I10")
def test_err_clr_and_cnt_err():
    """err_clr clears the sticky flags at the edge while the same cycle's errors still set
    them; cnt_err counts cycles, not events."""
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    m.step(req=make_req(0, warp=0, cls=3))
    assert m.err == ERR_CLS
    r = m.step(req=make_req(1, warp=1, cls=TEX, fast_path=1, sectors=[(0, 0, 0)]), err_clr=1)
    assert r.err == ERR_CLS                                    # the port shows the old value
    assert m.err == ERR_FAST_TEX | ERR_FAST_MISS               # cleared, then this cycle's set
    m.step(err_clr=1)
    assert m.err == 0
    m.step(req=make_req(2, warp=2, cls=3, fast_path=1, sectors=[(0, 1, 0)]),
           cfg=p.default_config(cfg_cgm=0))
    assert m.err == ERR_CLS | ERR_FAST_MISS | ERR_CFG
    assert m.counters["cnt_err"] == 3                          # three cycles with events


@pytest.mark.req("TQ-I10")
def test_counters_wrap_at_32_bits():
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    for name in m.counters:
        m.counters[name] = COUNTER_MASK
    m.step(req=make_req(0, warp=0, fast_path=1), cfg=p.default_config(cfg_cgm=0))
    assert m.counters["cnt_fast"] == 0 and m.counters["cnt_err"] == 0
    assert m.counters["cnt_pop"] == COUNTER_MASK


@pytest.mark.req("TQ-E11")
def test_trace_checker_flags_environment_violations():
    """Testbenches assert the environment obligations on their stimulus: an id reused while
    outstanding is reported by the checker (the block itself does not check it)."""
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    chk = TraceChecker(p)
    inputs = [dict(req=make_req(5, warp=0, sectors=[(0, 0, 0)])), dict(req=make_req(5, warp=1)),
              dict(fill=Fill(0, 0, 0))] + [dict() for _ in range(8)]
    for c, inp in enumerate(inputs):
        full = {**dict(req=None, fill=None, inval=None, cfg=p.default_config(), resp_ready=1,
                       err_clr=0), **inp}
        chk.observe(c, result=m.step(**full), **full)
    with pytest.raises(AssertionError, match="TQ-E11"):
        chk.finish()


@pytest.mark.req("TQ-V2")
def test_every_error_vector_delivers_exactly_once():
    for name in ("TQ-GV11", "TQ-GV14b", "TQ-GV15", "TQ-GV11 TEX fast miss"):
        res, _ = run_vector(by_name(name))
        assert sorted(e.id for e in res.entries) == sorted(
            c.resp.id for c in res.cycles if c.fire)
