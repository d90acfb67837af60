"""SingleFifo baseline (spec §4.5, TQ-F46, TQ-F47, TQ-V15): the independently written
``SingleFifoModel`` equals ``TrackingQueuesModel`` in mode 1 cycle by cycle on the equivalence
domain, and behaves as a plain FIFO outside it."""

import pytest

from golden.trackq.fifo import SingleFifoModel
from golden.trackq.formats import ERR_INVAL_LIVE, TEX, Fill, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.stimulus import RandomEnv, run_env

BUILDS = [dict(N_Q=1, POOL=4, SEQ_W=5, COMMIT_DEPTH=1), dict(N_Q=4, POOL=16, COMMIT_DEPTH=4),
          dict(N_Q=8, POOL=16, COMMIT_DEPTH=2, FAST_PATH=0), dict(N_Q=6, POOL=8, FREELIST=0),
          dict(N_Q=2, POOL=4, SEQ_W=5, COMMIT_DEPTH=2)]


def _view(r):
    resp = None if r.resp is None else (r.resp.id, r.resp.warp, r.resp.cls, r.resp.src,
                                        r.resp.q, r.resp.eoi, r.resp.eog)
    return (r.req_ready, r.pop, resp, r.cmt, r.status["pool_used"], r.status["pool_full"],
            r.ready_vec & 1)


@pytest.mark.req("TQ-V15", "TQ-F46")
@pytest.mark.parametrize("build", BUILDS, ids=[f"q{b['N_Q']}p{b['POOL']}" for b in BUILDS])
def test_mode1_equals_single_fifo_cycle_by_cycle(seed, build):
    p = TrackqParams.test(**build)
    for k in range(8):
        env = RandomEnv(p, seed + k, fifo_domain=True, p_inval=0.05, n_req=150,
                        contract_invals=k % 2 == 0)
        tq, fifo = TrackingQueuesModel(p), SingleFifoModel(p)
        res_tq, res_fifo = run_env(tq, env, others=(fifo,))
        assert len(res_tq) > 150
        for a, b in zip(res_tq, res_fifo):
            assert _view(a) == _view(b), f"seed {seed + k}, cycle {a.cycle}"
        assert {k: tq.counters[k] for k in fifo.counters} == fifo.counters
        assert tq.err & ~ERR_INVAL_LIVE == 0 and fifo.is_empty() and tq.is_empty()


@pytest.mark.req("TQ-V15")
def test_equivalence_check_can_fail(seed):
    """Outside the domain (cfg_cgm = 1 forces eog on TEX) the two differ: the comparison above
    is not vacuous."""
    p = TrackqParams.test()
    tq, fifo = TrackingQueuesModel(p), SingleFifoModel(p)
    cfg = p.default_config(cfg_mode=0, cfg_cgm=1)
    a = [tq.step(req=make_req(0, cls=TEX, eoi=1), cfg=cfg)] + [tq.step(cfg=cfg) for _ in range(4)]
    b = [fifo.step(req=make_req(0, cls=TEX, eoi=1))] + [fifo.step() for _ in range(4)]
    assert [_view(x) for x in a] != [_view(x) for x in b]


@pytest.mark.req("TQ-F47")
def test_single_fifo_passes_fields_through():
    """No class rewrite, no marks, status and fast_path as ordinary slow entries (checked against
    the SVT and popped), one FIFO order, no error flags."""
    p = TrackqParams.gv()
    fifo = SingleFifoModel(p)
    reqs = [make_req(0, warp=0, cls=3, fast_path=1),
            make_req(1, warp=1, cls=TEX, eoi=0, is_status=1, sectors=[(0, 0, 0)]),
            make_req(2, warp=2, cls=TEX, eoi=0, fast_path=1),
            make_req(3, warp=3, cls=2, eoi=0)]
    out = []
    for c in range(30):
        r = fifo.step(req=reqs[c] if c < 4 else None, fill=Fill(0, 0, 0) if c == 10 else None)
        out.append(r)
    pops = [(r.cycle, r.pop.id) for r in out if r.pop]
    assert pops == [(1, 0), (10, 1), (11, 2), (12, 3)]         # status waits for its sector
    resps = [(r.resp.id, r.resp.cls, r.resp.src, r.resp.eoi, r.resp.eog)
             for r in out if r.resp is not None and r.fire]
    assert resps == [(0, 3, 0, 1, 0), (1, 1, 0, 0, 0), (2, 1, 0, 0, 0), (3, 2, 0, 0, 0)]
    assert fifo.err == 0 and all(r.err == 0 for r in out)


@pytest.mark.req("TQ-F46", "TQ-GV17")
@pytest.mark.parametrize("lm", [50, 500])
def test_single_fifo_head_of_line_blocking(lm):
    """TQ-GV17 by hand: R1 (hit) behind R0 (miss, fill at Lm) pops at Lm + 1 and is delivered at
    Lm + 3 (latency Lm + 2)."""
    fifo = SingleFifoModel(TrackqParams.gv())
    rows = [fifo.step(req=make_req(0, sectors=[(0, 0, 0)]) if c == 0 else
                      make_req(1, warp=1) if c == 1 else None,
                      fill=Fill(0, 0, 0) if c == lm else None) for c in range(lm + 6)]
    assert [(r.cycle, r.pop.id) for r in rows if r.pop] == [(lm, 0), (lm + 1, 1)]
    assert [(r.cycle, r.resp.id) for r in rows if r.fire] == [(lm + 2, 0), (lm + 3, 1)]
