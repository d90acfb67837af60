"""Commit picker, commit groups and the instruction lock beyond the §5 vectors (TQ-F24..F30,
TQ-F36, TQ-F40, TQ-E9). Expected cycles are derived by hand in each docstring from §4.4."""

import pytest

from golden.trackq.formats import ERR_TEX_SPLIT, LG, TEX, make_req
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import TrackqParams
from golden.trackq.trace import run_trace


def _run(reqs, params=None, fills=(), cfg=None, not_ready=(), **kw):
    p = params or TrackqParams.gv()
    cfg = cfg if cfg is not None else p.default_config()
    nr = frozenset(not_ready)
    return run_trace(TrackingQueuesModel(p),
                     [(o, make_req(k, **f)) for k, (o, f) in enumerate(reqs)],
                     fills=fills, cfg=cfg, resp_ready=lambda c: int(c not in nr), **kw)


@pytest.mark.req("TQ-F24", "TQ-F27")
@pytest.mark.parametrize("depth", [1, 2, 4])
def test_commit_fifo_depth_limits_commits(depth):
    """Hits H0..H5 of warps 0..3 at 0..5, resp.ready = 0 until 20: each pops at acc+1 and
    commits at acc+2 while the commit FIFO has room; then one commit per transfer."""
    reqs = [(i, dict(warp=i % 4)) for i in range(6)]
    res = _run(reqs, params=TrackqParams.gv(COMMIT_DEPTH=depth), not_ready=range(20))
    cmts = [e.cmt for e in res.entries]
    assert cmts[:depth] == [2 + i for i in range(depth)]
    # the next commit waits for a slot: the first transfer is at 20, so the commit at 21
    assert cmts[depth] == 21
    assert [e.resp for e in res.entries] == sorted(e.resp for e in res.entries)
    assert [e.resp for e in res.entries][0] == 20


@pytest.mark.req("TQ-F28", "TQ-F6")
def test_cgm_lowered_mid_group_forces_eog_on_next_packet():
    """One TEX instruction of 8 packets (warp 0, hits, eoi on the last); cfg_cgm = 8 until
    cycle 3, then 2. Packets 0..2 count 1..3 (no eog at 8); packet 3 is accepted with cgm = 2 and
    count 4 >= 2: eog; then the count restarts: packets 4, 5 -> eog on 5; 6, 7 -> 7 has eoi (and
    count 2 >= 2: eog too)."""
    p = TrackqParams.gv()
    reqs = [(i, dict(warp=0, cls=TEX, eoi=int(i == 7))) for i in range(8)]
    res = _run(reqs, cfg={0: p.default_config(cfg_cgm=8), 3: p.default_config(cfg_cgm=2)})
    assert [e.eog for e in res.entries] == [0, 0, 0, 1, 0, 1, 0, 1]
    assert [e.eoi for e in res.entries] == [0] * 7 + [1]


@pytest.mark.req("TQ-F28")
def test_cgm_equal_count_and_input_eog():
    """cfg_cgm = 3: the 3rd packet of a group gets eog; an input eog also closes a group and
    resets the count."""
    reqs = [(i, dict(warp=0, cls=TEX, eoi=int(i == 6))) for i in range(7)]
    reqs[3] = (3, dict(warp=0, cls=TEX, eoi=0))
    p = TrackqParams.gv()
    model_reqs = [(o, make_req(k, **f)) for k, (o, f) in enumerate(reqs)]
    model_reqs[3] = (3, model_reqs[3][1].replace(eog=1))
    res = run_trace(TrackingQueuesModel(p), model_reqs, cfg=p.default_config(cfg_cgm=3))
    # counts: 1, 2, 3 (eog), 1 + input eog, 1, 2, 3 (eoi and eog)
    assert [e.eog for e in res.entries] == [0, 0, 1, 1, 0, 0, 1]


@pytest.mark.req("TQ-F30", "TQ-F29")
def test_partial_unit_of_the_lock_holder_needs_no_oldest():
    """cfg_cgm = 2. T0, T1 (warp 0) form a partial group; L0 (L/G, warp 1, needs s0, fill 30)
    is accepted at 2; T2, T3 (partial) and T4 (eoi) are accepted at 3..5 and pop at 4..6 (each
    enters an empty TQ0). T0's group is the oldest (G = 0): it commits at 3, 4 and sets the lock.
    T2's group is partial and T2 is not the oldest (L0 is), but TQ0 holds the lock, so it starts
    as soon as T3 is in CQ0: commits at 6, 7; T4 commits at 8 and releases the lock (lock_valid
    in 5..8). L0 pops at 30 and commits at 31."""
    reqs = [(0, dict(warp=0, cls=TEX, eoi=0)), (1, dict(warp=0, cls=TEX, eoi=0)),
            (2, dict(warp=1, sectors=[(0, 0, 0)])),
            (3, dict(warp=0, cls=TEX, eoi=0)), (4, dict(warp=0, cls=TEX, eoi=0)),
            (5, dict(warp=0, cls=TEX, eoi=1))]
    p = TrackqParams.gv()
    res = _run(reqs, fills=((30, (0, 0, 0)),), cfg=p.default_config(cfg_cgm=2))
    assert [e.cmt for e in res.entries] == [3, 4, 31, 6, 7, 8]
    lock = [c.cycle for c in res.cycles if c.status["lock_valid"]]
    assert lock == [5, 6, 7, 8]


@pytest.mark.req("TQ-F30")
def test_partial_unit_waits_to_be_oldest_without_lock():
    """The same first group behind an older L/G miss: T0 (seq 1) is not G = 0 (L0), so the
    partial group [T0, T1] waits until L0 commits (fill at 20: L0 pop 20, cmt 21)."""
    reqs = [(0, dict(warp=1, sectors=[(0, 0, 0)])), (1, dict(warp=0, cls=TEX, eoi=0)),
            (2, dict(warp=0, cls=TEX, eoi=0)), (3, dict(warp=0, cls=TEX, eoi=1))]
    p = TrackqParams.gv()
    res = _run(reqs, fills=((20, (0, 0, 0)),), cfg=p.default_config(cfg_cgm=2))
    assert [e.cmt for e in res.entries] == [21, 22, 23, 24]


@pytest.mark.req("TQ-F40", "TQ-F25", "TQ-F39", "TQ-I10")
def test_started_unit_stalls_in_place_on_interlock():
    """L0 (L/G w2, needs s0) at 0 (seq 0), T0 (TEX w0, eoi 0) at 1 (seq 1), F (fast hit, w1)
    at 2 (tsnap 2), T1 (TEX w0, eoi 1) at 3 (seq 2); fill s0 at 6; resp.ready = 0 until 9.
    (No slow L/G packet may come between T0 and T1: it would close T0's group, TQ-F37.)
    T0 pops 2, T1 pops 4; the unit [T0, T1] starts at 5 (seq 1 < 2). From 6 T1 fails the
    interlock and the unit stalls in place; L0 (pop 6, in CQ2 from 7, seq 0 < 2) passes the
    interlock but may not pass the started unit. F transfers at 9; T1 commits at 10, L0 at 11;
    resp T0 10, T1 11, L0 12. cnt_interlock = 4 (cycles 6..9)."""
    reqs = [(0, dict(warp=2, sectors=[(0, 0, 0)])), (1, dict(warp=0, cls=TEX, eoi=0)),
            (2, dict(warp=1, fast_path=1)), (3, dict(warp=0, cls=TEX, eoi=1))]
    res = _run(reqs, fills=((6, (0, 0, 0)),), not_ready=range(9))
    l0, t0, f, t1 = res.entries
    assert (t0.cmt, t1.cmt, l0.cmt, f.resp) == (5, 10, 11, 9)
    assert (t0.resp, t1.resp, l0.resp) == (10, 11, 12)
    assert res.counters["cnt_interlock"] == 4


@pytest.mark.req("TQ-F36", "TQ-E9", "TQ-F29")
def test_split_after_last_packet_committed_releases_lock():
    """T0 (TEX w0, eoi 0, input eog 1) is a partial unit: pop 1, cmt 2, lock TQ0 from 3. T1
    (TEX w1 -> TQ1, eoi 1) is offered at 5: the open instruction's last packet (T0) is committed,
    so the split releases the lock (lock_valid 0 from 6) and sets ERR_TEX_SPLIT. T1 pops 6,
    commits 7. Without the release T1 would wait for ever."""
    p = TrackqParams.gv()
    r0 = make_req(0, warp=0, cls=TEX, eoi=0).replace(eog=1)
    r1 = make_req(1, warp=1, cls=TEX, eoi=1)
    res = run_trace(TrackingQueuesModel(p), [(0, r0), (5, r1)])
    t0, t1 = res.entries
    assert (t0.cmt, t0.eoi, t0.eog) == (2, 0, 1)
    assert (t1.accept, t1.pop, t1.cmt) == (5, 6, 7)
    assert [c.cycle for c in res.cycles if c.status["lock_valid"]] == [3, 4, 5]
    assert res.err == ERR_TEX_SPLIT and res.cycles[5].err_events == ERR_TEX_SPLIT


@pytest.mark.req("TQ-F36", "TQ-E9", "TQ-F6")
def test_mode_change_mid_instruction_is_a_split():
    """T0 (TEX w1, eoi 0) accepted in mode 4 goes to TQ1; the mode changes to 1 at cycle 1; T1
    (TEX w1, eoi 1) goes to TQ0: the instruction is closed (T0 gets eoi = 1, still uncommitted),
    ERR_TEX_SPLIT."""
    p = TrackqParams.gv()
    reqs = [(0, dict(warp=1, cls=TEX, eoi=0)), (1, dict(warp=1, cls=TEX, eoi=1))]
    res = _run(reqs, cfg={0: p.default_config(cfg_mode=3), 1: p.default_config(cfg_mode=0)})
    t0, t1 = res.entries
    assert (t0.q, t1.q) == (1, 0)
    assert (t0.eoi, t0.eog, t1.eoi) == (1, 0, 1)
    assert res.err == ERR_TEX_SPLIT


@pytest.mark.req("TQ-F31", "TQ-F34", "TQ-F33")
def test_lg_and_ttu_pass_lock_and_status():
    """The TQ-GV5 instruction (P0..P4, warp 0, cfg_cgm = 2, P2 needs s1, fill 30; commits 3, 4,
    32, 33, 34; lock on TQ0 from 5) in mode 3 with W = 2, then S (status) at 5, L (L/G, warp 1
    -> TQ1) at 6 and R (TTU -> TQ2) at 7, hits. L and R commit right after their pop (8, 9):
    neither the lock nor the older status packet holds them. S commits when it is the oldest,
    right after P4: 35."""
    reqs = [(i, dict(warp=0, cls=TEX, eoi=int(i == 4), sectors=[(0, 0, 1)] if i == 2 else []))
            for i in range(5)]
    reqs += [(5, dict(warp=1, cls=TEX, is_status=1)), (6, dict(warp=1, cls=LG)),
             (7, dict(warp=3, cls=2))]
    p = TrackqParams.gv()
    res = _run(reqs, fills=((30, (0, 0, 1)),), cfg=p.default_config(cfg_cgm=2, cfg_mode=2,
                                                                    cfg_lgq=2))
    assert [e.cmt for e in res.entries] == [3, 4, 32, 33, 34, 35, 8, 9]
    assert (res.entries[6].q, res.entries[7].q) == (1, 2)
