"""EntryPool and LinkedLists golden (spec §2 item 2, §4.2, TQ-F7..F11) against plain-list
references, and the reclaim timing through the model."""

import random
from collections import deque

import pytest

from golden.trackq.formats import FREELIST, INORDER, Fill, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.pool import Entry, EntryPool, LinkedLists


@pytest.mark.req("TQ-F8")
def test_linked_lists_match_deques(seed):
    """Random push/pop over 5 lists sharing one next-pointer RAM of 32 words, against deques;
    one list may hold every slot."""
    rng = random.Random(seed)
    n, size = 5, 32
    ll = LinkedLists(n, size)
    ref = [deque() for _ in range(n)]
    free = list(range(size))
    for _ in range(20000):
        k = rng.randrange(n) if rng.random() < 0.7 else 0
        if free and (rng.random() < 0.55 or not ref[k]):
            slot = free.pop(rng.randrange(len(free)))
            ll.push(k, slot)
            ref[k].append(slot)
        elif ref[k]:
            assert ll.second(k) == (ref[k][1] if len(ref[k]) > 1 else None)
            slot = ll.pop(k)
            assert slot == ref[k].popleft()
            free.append(slot)
        for j in range(n):
            assert ll.slots(j) == list(ref[j]) and ll.count[j] == len(ref[j])
            assert ll.first(j) == (ref[j][0] if ref[j] else None)
    # one list can hold every slot of the pool
    ll0 = LinkedLists(1, 4)
    for s in range(4):
        ll0.push(0, s)
    assert ll0.slots(0) == [0, 1, 2, 3]


class _Req:
    def __init__(self, i):
        self.id, self.warp, self.dslot, self.need = i, 0, (0,), (0,)
        self.eoi = self.eog = self.is_status = self.fast_path = 0


def _entry(i):
    return Entry(i, _Req(i), 0, 0)


@pytest.mark.req("TQ-F9")
def test_inorder_pool_reclaims_oldest_released_one_per_cycle(seed):
    rng = random.Random(seed)
    pool = EntryPool(8)
    order = deque()                       # reference: allocated entries, oldest first
    for i in range(5000):
        if pool.used < 8 and rng.random() < 0.5:
            e = _entry(i)
            pool.alloc(e)
            order.append(e)
        live = [e for e in order if not e.released]
        if live and rng.random() < 0.5:
            pool.release(rng.choice(live))
        got = pool.reclaim()
        want = order.popleft() if order and order[0].released else None
        assert got is want and pool.used == len(order)
    # slots are handed out in order, circularly
    p2 = EntryPool(4)
    assert [p2.alloc(_entry(i)) for i in range(4)] == [0, 1, 2, 3]


@pytest.mark.req("TQ-F10")
def test_freelist_pool_frees_at_release():
    pool = EntryPool(4)
    pool.set_policy(FREELIST)
    es = [_entry(i) for i in range(4)]
    for e in es:
        pool.alloc(e)
    assert pool.used == 4
    pool.release(es[2])
    assert pool.used == 3 and pool.reclaim() is None
    e = _entry(9)
    assert pool.alloc(e) == es[2].slot           # the freed slot is reused
    with pytest.raises(AssertionError):
        pool.alloc(_entry(10))
    with pytest.raises(AssertionError):
        pool.set_policy(INORDER)                 # only with the pool empty (TQ-F11)


def _reclaim_run(reclaim):
    """A (needs s0, fill 20) then B, C, D hits (warps 1..3); POOL = 4, FAST_PATH = 0."""
    p = TrackqParams.gv(POOL=4, FAST_PATH=0)
    m = TrackingQueuesModel(p)
    cfg = p.default_config(cfg_reclaim=reclaim)
    reqs = [make_req(0, warp=0, sectors=[(0, 0, 0)])] + [make_req(i, warp=i) for i in (1, 2, 3)]
    used = []
    for c in range(40):
        res = m.step(req=reqs[c] if c < 4 else None, fill=Fill(0, 0, 0) if c == 20 else None,
                     cfg=cfg)
        used.append(res.status["pool_used"])
    return used


@pytest.mark.req("TQ-F7", "TQ-F9", "TQ-F10", "TQ-I9")
def test_reclaim_timing_through_the_model():
    """B, C, D deliver at 4, 5, 6; A pops at 20 and delivers at 22.
    In-order: nothing is reclaimed before A; then A, B, C, D one per cycle at the ends of
    22..25. Free-list: each slot is free from the cycle after its resp."""
    inorder = _reclaim_run(0)
    assert inorder[4:8] == [4, 4, 4, 4] and inorder[22:28] == [4, 3, 2, 1, 0, 0]
    freelist = _reclaim_run(1)
    assert freelist[3:8] == [3, 4, 3, 2, 1] and freelist[22:24] == [1, 0]


@pytest.mark.req("TQ-F11", "TQ-I9", "TQ-F44")
def test_reclaim_policy_loads_only_in_an_empty_cycle():
    p = TrackqParams.gv(POOL=4, FAST_PATH=0)
    m = TrackingQueuesModel(p)
    on = p.default_config(cfg_reclaim=1)
    off = p.default_config(cfg_reclaim=0)
    assert m.rec_mode == INORDER                             # reset value
    r0 = m.step(req=make_req(0, sectors=[(0, 0, 0)]), cfg=on)   # empty at start: loads 1
    assert r0.status["reclaim_mode"] == 0                     # shows from the next cycle
    rows = [m.step(cfg=off, fill=Fill(0, 0, 0) if c == 3 else None) for c in range(1, 8)]
    # cycles 1..: the entry pops at 3, commits 4, resp 5; pool empty from cycle 6
    assert [r.status["reclaim_mode"] for r in rows] == [1, 1, 1, 1, 1, 1, 0]
    assert [r.status["pool_used"] for r in rows] == [1, 1, 1, 1, 1, 0, 0]


@pytest.mark.req("TQ-F7", "TQ-F38")
def test_fast_path_entries_take_no_slot():
    p = TrackqParams.gv()
    m = TrackingQueuesModel(p)
    rows = [m.step(req=make_req(c, warp=c % 4, fast_path=1)) for c in range(6)]
    assert all(r.status["pool_used"] == 0 for r in rows)
    assert all(r.accepted.src == 2 and r.accepted.seq is None for r in rows)
    assert m.counters["cnt_fast"] == 6 and m.seq_next == 0


@pytest.mark.req("TQ-V8", "TQ-I2", "TQ-C12")
def test_age_span_rule_directed():
    """POOL = 4, SEQ_W = 5 (span 2^3 = 8), free-list reclaim. A (needs s0, fill at 30) at 0,
    then hits H1.. of warp 1 offered back to back from 1; a hit accepted at c is delivered at
    c + 3 and its slot is free from c + 4. H1..H3 are accepted at 1, 2, 3 (pool full), H4..H6 at
    5, 6, 7, H7 at 9 (seq 7): then seq_next − G = 8 − 0 = 8 and req.ready stays 0 although the
    pool empties to A alone (from 13), until A commits (pop 30, cmt 31): H8 is accepted at 32."""
    p = TrackqParams.gv(POOL=4, SEQ_W=5)
    m = TrackingQueuesModel(p)
    cfg = p.default_config(cfg_reclaim=1)
    reqs = [make_req(0, warp=0, sectors=[(0, 0, 0)])] + [make_req(i, warp=1) for i in range(1, 9)]
    k, accepts, rows = 0, [], []
    for c in range(40):
        r = m.step(req=reqs[k] if k < len(reqs) else None, cfg=cfg,
                   fill=Fill(0, 0, 0) if c == 30 else None)
        rows.append(r)
        if r.accepted is not None:
            accepts.append(c)
            k += 1
    assert accepts == [0, 1, 2, 3, 5, 6, 7, 9, 32]
    assert all(rows[c].req_ready == 0 for c in range(10, 32))
    assert all(rows[c].status["pool_used"] == 1 for c in range(13, 31))
