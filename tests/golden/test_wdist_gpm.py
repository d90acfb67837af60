"""``wd_gpm``: the CGA ID pool of WD-GV12 (lowest free, next-cycle release) and the completion
path (active counters, flush handshake, cga_complete) of WD-F21..F23."""

import pytest

from golden.wdist import vectors as gv
from golden.wdist.formats import Beat, Err, Kind
from golden.wdist.gpm import Gpm, IdPool
from golden.wdist.params import WdistParams


@pytest.mark.req("WD-GV12", "WD-F21")
def test_gv12_id_pool():
    pool = IdPool(2)
    ids = {}
    for cycle, alloc, release, want in gv.GV12:
        got = None
        if alloc is not None:
            got = pool.alloc()
            if got is not None:
                ids[alloc] = got
        if release is not None:
            pool.release(ids[release] if isinstance(release, str) else release)
        pool.tick()
        if want == "stall":
            assert got is None, cycle
        elif want is not None:
            assert got == want, cycle


def _beat(cnt, first=1, last=1, seq=0):
    return Beat(Kind.LAUNCH, 5, seq=seq, gpc=0, cnt=tuple(cnt), is_cga=1, gcga_first=first,
                gcga_last=last, end_of_cga=last)


@pytest.mark.req("WD-F22", "WD-F23", "WD-E7", "WD-E8")
def test_completion_path():
    p = WdistParams(N_GPC=1, SM_PER_GPC=(4,), CPC_PER_GPC=2)
    g = Gpm(p, 0)
    b0 = _beat([1, 1, 0, 0], first=1, last=0)
    cid = g.try_alloc(b0)
    g.accept_beat(b0, cid)
    b1 = _beat([0, 0, 2, 0], first=0, last=0)
    assert g.try_alloc(b1) == cid                          # later beats carry the same ID
    g.accept_beat(b1, cid)
    for _ in range(4):                                     # all CTAs done before gcga_last
        assert g.cta_complete_error(cid) is None
        g.cta_complete(cid)
    assert not g.flush_q                                   # gcga_last not seen yet
    assert g.cta_complete_error(cid) == Err.COMPLETE_BAD_CGA
    b2 = _beat([0, 1, 0, 0], first=0, last=1)
    g.accept_beat(b2, g.try_alloc(b2))
    g.cta_complete(cid)
    assert len(g.flush_q) == 1 and g.flush_q[0].n_ctas == 5
    assert g.flush_done_error(cid) == Err.FLUSH_UNEXPECTED   # flush_req not yet sent
    g.flush_sent(g.flush_q.popleft())
    for _ in range(5):
        assert g.flush_done_error(cid) is None and not g.complete_q
        g.flush_done(cid)
    assert g.flush_done_error(cid) == Err.FLUSH_UNEXPECTED  # one more than n_ctas
    r = g.complete_q.popleft()
    assert (r.gpc, r.cga_id, r.grid_id) == (0, cid, 5)
    g.complete_sent(r)
    assert not g.full()
    g.tick()
    assert g.full() and g.idle()
