"""The closed-loop top model (``wd_top`` with SM stubs): the top-level replays of §5 (WD-GV1,
GV3, GV5, GV6, GV7, GV8, GV14, GV15), the command and protocol errors (WD-E1..E10), and random
runs under every invariant checker (WD-V1..V12) for both distributors."""

import itertools
import random

import pytest

from golden.wdist import vectors as gv
from golden.wdist.driver import run
from golden.wdist.formats import Command, Err, Kind, Level, Mode, Shape, Stall, TraceKind
from golden.wdist.invariants import check_all
from golden.wdist.model import WdistModel
from golden.wdist.params import WdistParams
from golden.wdist.session import GridRun, Launcher
from golden.wdist.stimulus import StimulusError, parse, result, run_stimulus

SHAPE8 = dict(warps=8, regs_g=32, smem_g=114)          # free = 8 per empty SM (§3.5)


def _caps(f, **kw):
    return [dict(sm=s, slot_cap=x, **kw) for s, x in enumerate(f)]


def _launch(m):
    return [b for _, b in m.bcast if b.kind in (Kind.LAUNCH, Kind.LAUNCH_ID)]


@pytest.mark.req("WD-GV1", "WD-GV2", "WD-GV11", "WD-F19", "WD-F33", "WD-V3", "WD-V8", "WD-V9",
                 "WD-V10", "WD-V11")
@pytest.mark.parametrize("shape", gv.GV1_SHAPES, ids=[s[0].split()[0] for s in gv.GV1_SHAPES])
def test_gv1_fig12_shapes(shape, seed):
    name, level, inner, outer, units, per = shape
    cmd = Command(grid_id=1, level=Level[level], grid_x=18, grid_y=12, in_x=inner[0],
                  in_y=inner[1], out_x=outer[0], out_y=outer[1], **SHAPE8)
    assert cmd.units == units and cmd.ctas // units == per
    r = run(WdistParams(), [cmd], seed=seed)
    assert not r.timeout and not r.model.errs
    check_all(r.model)                                # permutation of the 216 IDs, V1..V10
    if level == "GPC":                                # GV2: CTA "C" = unit 8, rank 4 -> (7,3,0)
        recs = [x for s in r.model.cta_ids for _, x in s]
        assert any(x.ctaid == (7, 3, 0) and x.cga_cta_id == 4 for x in recs)


@pytest.mark.req("WD-GV3", "WD-E5", "WD-F14", "WD-V16")
@pytest.mark.parametrize("row", gv.GV3, ids=[f"row{i + 1}" for i in range(len(gv.GV3))])
def test_gv3_top_level(row):
    f, n, a, *_ , speed = row
    p = WdistParams(N_GPC=1, SM_PER_GPC=(len(f),), SM_PER_TPC=1)
    cmd = Command(grid_id=3, level=Level.GPC, grid_x=n, in_x=n)
    m = run(p, [cmd], cfg=_caps(f), hold=True).model
    if a is None:
        assert not _launch(m) and m.fail_cnt == 1
        assert [(e.code, e.info) for _, e in m.errs] == [(Err.NEVER_FITS, 0)]
        assert [t.never_fits for t in m.traces if t.kind == TraceKind.FAIL] == [1]
        return
    assert list(_launch(m)[0].cnt) == a
    q = [t for t in m.traces if t.kind == TraceKind.QUERY]
    assert q[0].speed == speed


@pytest.mark.req("WD-GV5", "WD-F17")
def test_gv5_plain_top_level():
    v = gv.GV5
    p = WdistParams(CTA_SLOTS=12)
    m = run(p, [Command(grid_id=5, grid_x=v["N"])], cfg=_caps(v["f"]), hold=True).model
    assert [len(x) for x in m.cta_ids] == v["a"]
    launch = _launch(m)
    assert [b.gpc for b in launch] == [0, 1, 2, 3] and len({b.seq for b in launch}) == 1
    assert [b.end_of_cga for b in launch] == [0, 0, 0, 1]


@pytest.mark.req("WD-GV6", "WD-E5", "WD-V6", "WD-V16")
@pytest.mark.parametrize("row", gv.GV6, ids=[f"row{i + 1}" for i in range(len(gv.GV6))])
def test_gv6_top_level(row):
    f, n, _, a, speed = row
    p = WdistParams(N_GPC=1, SM_PER_GPC=(8,))
    m = run(p, [Command(grid_id=6, level=Level.GPC, mode=Mode.MC, grid_x=n, in_x=n)],
            cfg=_caps(f), hold=True).model
    if a is None:
        assert not _launch(m) and [e.code for _, e in m.errs] == [Err.NEVER_FITS]
        return
    assert list(_launch(m)[0].cnt) == a


@pytest.mark.req("WD-GV7", "WD-GV8", "WD-V16", "WD-E5")
def test_gv7_gv8_top_level():
    v = gv.GV7
    m = run(WdistParams(), [Command(grid_id=7, level=Level.GPC, grid_x=24, in_x=8)],
            cfg=_caps([x for r in v["free"] for x in r]), hold=True).model
    assert [(b.seq, b.gpc) for b in _launch(m)] == v["beats"]
    for n in (4, 5):
        w = gv.GV8
        m = run(WdistParams(), [Command(grid_id=8, level=Level.GPU, grid_x=4 * n, in_x=4,
                                        out_x=n)],
                cfg=_caps([x for r in w["free"] for x in r]), hold=True).model
        if n == 4:
            assert [(b.gpc, b.first_rank) for b in _launch(m)] == w["beats"]
        else:
            assert not _launch(m) and [(e.code, e.info) for _, e in m.errs] == [(5, 0)]
            assert m.fail_cnt == 1


@pytest.mark.req("WD-GV15", "WD-E5", "WD-V8")
def test_gv15_top_level_scenario(seed):
    v = gv.GV15
    p = WdistParams(**v["params"])
    cfg = [dict(sm=s, slot_cap=c, warp_cap=w) for s, (c, w) in
           enumerate(zip(v["slot_caps"], v["warp_caps"]))]
    a = Command(grid_id=1, grid_x=1, warps=8)
    b = Command(grid_id=2, level=Level.GPU, mode=Mode.MC, grid_x=20, in_x=2, out_x=5)
    r = run(p, [a, b], cfg=cfg, seed=seed, grid_latency={1: (30, 30), 2: (60, 90)})
    m = r.model
    assert m.cta_ids[2][0][1].grid_id == 1                     # A's CTA lands on SM2
    assert [(e.code, e.grid_id, e.info) for _, e in m.errs] == [(Err.NEVER_FITS, 2, 1)]
    assert sum(1 for b_ in _launch(m) if b_.grid_id == 2) == 5
    check_all(m)                                               # incl. V8 for the aborted grid


@pytest.mark.req("WD-GV15")
def test_gv15_only_one_state_passes_pass1():
    """Of all slot usages and credits, only 'one CTA on SM2, >= 5 credits' passes Pass I."""
    v = gv.GV15
    p = WdistParams(**v["params"])
    cmd = Command(level=Level.GPU, mode=Mode.MC, grid_x=20, in_x=2, out_x=5)
    caps = v["slot_caps"]
    passing = []
    for used in itertools.product(*[range(c + 1) for c in caps]):
        f = [c - u for c, u in zip(caps, used)]
        for credit in range(0, 7):
            res = Launcher(p).run_session(GridRun.start(cmd), f, [credit], 0)
            if not res.fail:
                passing.append((used, credit))
    assert passing == [((0, 0, 1, 0, 0, 0), c) for c in (5, 6)]


@pytest.mark.req("WD-GV14")
def test_gv14_seed_figures():
    big = WdistParams(N_GPC=16, SM_PER_GPC=(8,) * 16, DISTRIBUTOR="legacy")
    m = run(big, [Command(grid_id=1, grid_x=1024, **SHAPE8)], hold=True).model
    launch = [t for t, b in m.bcast if b.kind == Kind.LAUNCH_ID]
    assert len(launch) == 1024 and launch[-1] - launch[0] + 1 > gv.GV14["legacy_fill_min"]
    ex = WdistParams(**gv.GV14["example"])
    assert ex.N_SM == 144
    r = run(ex, [Command(grid_id=1, level=Level.GPC, grid_x=64, in_x=8, **SHAPE8)], seed=1)
    check_all(r.model)
    one = WdistParams(N_GPC=1, SM_PER_GPC=(8,))
    m = run(one, [Command(grid_id=1, level=Level.GPC, mode=Mode.MC, grid_x=8, in_x=8)],
            hold=True).model
    assert list(_launch(m)[0].cnt) == [1] * 8


ERR_CASES = [
    ("E1", Command(grid_id=9, grid_x=0), Err.BAD_DIMS),
    ("E1cga", Command(grid_id=9, level=Level.GPC, grid_x=4, in_x=0), Err.BAD_DIMS),
    ("E2mult", Command(grid_id=9, level=Level.GPC, grid_x=5, in_x=2), Err.BAD_CGA_SHAPE),
    ("E2size", Command(grid_id=9, level=Level.GPC, grid_x=34, in_x=17), Err.BAD_CGA_SHAPE),
    ("E2outer", Command(grid_id=9, level=Level.GPC, grid_x=4, in_x=2, out_x=2),
     Err.BAD_CGA_SHAPE),
    ("E3", Command(grid_id=9, grid_x=4, warps=0), Err.BAD_RESOURCES),
    ("E3regs", Command(grid_id=9, grid_x=4, regs_g=257), Err.BAD_RESOURCES),
    ("E4", Command(grid_id=9, level=5, grid_x=4), Err.BAD_LEVEL),
    ("E4cpc", Command(grid_id=9, level=Level.CPC, grid_x=4, in_x=2, out_x=2), Err.BAD_LEVEL),
    ("lowest", Command(grid_id=9, level=6, grid_x=0, warps=0), Err.BAD_DIMS),
]


@pytest.mark.req("WD-E1", "WD-E2", "WD-E3", "WD-E4", "WD-V13", "WD-F28")
@pytest.mark.parametrize("case", ERR_CASES, ids=[c[0] for c in ERR_CASES])
def test_command_errors(case):
    _, bad, code = case
    good = Command(grid_id=1, level=Level.GPC, grid_x=8, in_x=4)
    r = run(WdistParams(N_GPC=2, SM_PER_GPC=(4, 4)), [bad, good], seed=1)
    m = r.model
    assert [(e.code, e.grid_id) for _, e in m.errs] == [(code, 9)]
    assert all(b.grid_id == 1 for _, b in m.bcast) and m.launched == {1: 2}
    check_all(m)


@pytest.mark.req("WD-E4")
def test_legacy_rejects_cga_levels():
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4), DISTRIBUTOR="legacy", CPC_PER_GPC=1)
    cmds = [Command(grid_id=k, level=lv, grid_x=8, in_x=4, out_x=2 if lv != 3 else 1)
            for k, lv in ((1, Level.GPU), (2, Level.GPU_FLAT), (3, Level.CPC))]
    m = run(p, cmds).model
    assert [(e.code, e.grid_id) for _, e in m.errs] == [(Err.BAD_LEVEL, k) for k in (1, 2, 3)]


@pytest.mark.req("WD-E6", "WD-E7", "WD-E8", "WD-E9", "WD-E10", "WD-V13", "WD-I12")
def test_protocol_errors_change_nothing():
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4))
    m = WdistModel(p)
    dbg0 = [m.dbg(sel, i) for sel in range(12) for i in range(8)]
    m.step(cfg=dict(sm=8))                                            # E10: sm >= N_SM
    m.step(cfg=dict(sm=0, slot_cap=64))                               # E10: above CTA_SLOTS
    m.step(cta_complete=(0, 0, 0, Shape(1, 1, 1)))                    # E6: nothing used
    m.step(cta_complete=(9, 0, 0, Shape(0, 0, 0)))                    # E6: sm >= N_SM
    m.step(flush_done=(0, 3))                                         # E8
    assert [e.code for _, e in m.errs] == [10, 10, 6, 6, 8]
    assert [m.dbg(sel, i) for sel in range(12) for i in range(8)] == dbg0
    m.step(cmd=Command(grid_id=1, level=Level.GPC, grid_x=4, in_x=4))
    for _ in range(4):
        m.step()
    m.step(cfg=dict(sm=0, slot_cap=2))                                # E9: not quiescent
    m.step(cta_complete=(0, 1, 7, Shape(1, 1, 1)))                    # E7: ID 7 not allocated
    assert [e.code for _, e in m.errs][-2:] == [9, 7]
    assert m.dbg(8, 0) == 4 and m.tracker.cap[0].slots == 32


def _random_cmd(rng, p, gid, cpc):
    level = rng.choice([Level.PLAIN, Level.GPC, Level.GPC, Level.GPU, Level.GPU_FLAT]
                       + ([Level.CPC] if cpc else []))
    mode = rng.choice([Mode.LB, Mode.MC])
    inner = (rng.randint(1, 3), rng.randint(1, 2), 1)
    outer = (rng.randint(1, 3), 1, 1) if level in (Level.GPU, Level.CPC) else (1, 1, 1)
    U = (rng.randint(1, 6), rng.randint(1, 3), rng.randint(1, 2))
    grid = tuple(U[i] * outer[i] * inner[i] for i in range(3))
    if level == Level.PLAIN:
        grid = (rng.randint(1, 80), rng.randint(1, 3), 1)
    return Command(grid_id=gid, level=level, mode=mode, grid_x=grid[0], grid_y=grid[1],
                   grid_z=grid[2], in_x=inner[0], in_y=inner[1], out_x=outer[0],
                   out_y=outer[1], warps=rng.choice([1, 2, 8, 16]),
                   regs_g=rng.choice([0, 8, 32]), smem_g=rng.choice([0, 57, 114]))


CONFIGS = [
    dict(N_GPC=4),
    dict(N_GPC=8, CTA_SLOTS=8),
    dict(N_GPC=4, SM_PER_GPC=(8, 6, 8, 4)),
    dict(N_GPC=2, SM_PER_GPC=(8, 8), GPC_CGA_ID_W=2, CTA_SLOTS=4),
    dict(N_GPC=2, SM_PER_GPC=(8, 4), CPC_PER_GPC=2, SESSION_MAX_STEPS=2, SEQ_W=2),
    dict(N_GPC=3, SM_PER_GPC=(4, 4, 4), SM_PER_TPC=4, CTA_SLOTS=3, DELTA_W=5),
]


@pytest.mark.req("WD-V1", "WD-V2", "WD-V3", "WD-V4", "WD-V5", "WD-V6", "WD-V8", "WD-V9",
                 "WD-V10", "WD-V11", "WD-V17", "WD-F31", "WD-F29", "WD-F20", "WD-F21", "WD-F22",
                 "WD-F23", "WD-F32", "WD-F33")
@pytest.mark.parametrize("dist", ["shadow", "legacy"])
@pytest.mark.parametrize("k", range(len(CONFIGS)), ids=[f"cfg{k}" for k in range(len(CONFIGS))])
def test_random_closed_loop(k, dist, seed):
    rng = random.Random(seed * 31 + k)
    p = WdistParams(**CONFIGS[k], DISTRIBUTOR=dist)
    for _ in range(3):
        cmds = [_random_cmd(rng, p, gid, p.CPC_PER_GPC > 0) for gid in range(8)]
        if dist == "legacy":
            cmds = [c for c in cmds if c.level in (Level.PLAIN, Level.GPC)]
        cfg = [dict(sm=s, enable=0) for s in rng.sample(range(p.N_SM), 2)] \
            if rng.random() < 0.5 else []
        r = run(p, cmds, cfg=cfg, seed=rng.randrange(1 << 30), latency=(1, rng.choice([5, 40])))
        m = r.model
        assert not r.timeout, "WD-V11: watchdog"
        assert all(e.code == Err.NEVER_FITS for _, e in m.errs)
        for _, e in m.errs:                  # V11: only grids whose unit misses the empty machine
            cmd = next(c for c in cmds if c.grid_id == e.grid_id)
            t = WdistModel(p).tracker
            for w in cfg:
                t.cfg_write(**w)
            if dist == "shadow":
                res = Launcher(p).run_session(GridRun.start(cmd), t.free_vector(cmd.shape),
                                              list(t.credit), 1)
                assert res.outcome == "NEVER_FITS" or e.info > 0
        check_all(m)


@pytest.mark.req("WD-V12", "WD-F21")
def test_id_exhaustion_stalls(seed):
    p = WdistParams(N_GPC=1, SM_PER_GPC=(8,), GPC_CGA_ID_W=2)
    cmd = Command(grid_id=1, level=Level.GPC, grid_x=40, in_x=1)
    r = run(p, [cmd], seed=seed, latency=(20, 40))
    m = r.model
    assert Stall.WAIT_CGA_ID in m.stalls_seen
    assert len(_launch(m)) == 40
    check_all(m)


@pytest.mark.req("WD-F14", "WD-F13", "WD-I9")
def test_fail_waits_for_dirty_and_plain_wait_is_not_a_fail(seed):
    p = WdistParams(N_GPC=1, SM_PER_GPC=(2,), CTA_SLOTS=2)
    cmds = [Command(grid_id=1, level=Level.GPC, grid_x=12, in_x=3),
            Command(grid_id=2, grid_x=9)]
    r = run(p, cmds, seed=seed, latency=(5, 10))
    m = r.model
    assert m.fail_cnt == len([t for t in m.traces if t.kind == TraceKind.FAIL]) > 0
    assert {Stall.WAIT_CGA_FIT, Stall.WAIT_SLOTS} <= m.stalls_seen
    for (t0, *_, r0), (t1, *_, r1) in zip(m.sessions, m.sessions[1:]):
        if r0.outcome in ("WAIT_CGA_FIT", "WAIT_SLOTS"):      # a wait ends only after a completion
            assert any(t0 <= c[0] < t1 for c in m.completions) or any(
                t0 <= c < t1 for c, _ in m.cga_completes)
    check_all(m)


@pytest.mark.req("WD-I1")
def test_stimulus_format():
    data = {"params": {"N_GPC": 2, "SM_PER_GPC": [4, 4]},
            "cfg": [{"sm": 1, "slot_cap": 2}],
            "grids": [{"grid_id": 1, "level": "GPC", "mode": "MC", "grid": [8, 1, 1],
                       "in": [4, 1, 1]},
                      {"grid_id": 2, "grid": [5, 2, 1], "warps": 4}],
            "sm": {"latency": [1, 5], "seed": 3}}
    stim = parse(data)
    out = result(run_stimulus(stim))
    assert out["quiescent"] and not out["timeout"] and out["err"] == []
    assert sum(len(v) for v in out["cta_id"].values()) == 18
    for bad, where in [({"grids": []}, "grids"),
                       ({"grids": [{"grid": [1, 1]}]}, "grids[0].grid"),
                       ({"grids": [{"grid": [1, 1, 1], "level": "X"}]}, "grids[0].level"),
                       ({"params": {"N_GPC": 0}, "grids": [{"grid": [1, 1, 1]}]}, "params"),
                       ({"grids": [{"grid": [1, 1, 1], "in": [64, 1, 1]}]}, "grids[0]"),
                       ({"grids": [{"grid": [1, 1, 1]}], "sm": {"latency": [3, 1]}},
                        "sm.latency")]:
        with pytest.raises(StimulusError, match=r"^" + where.replace("[", r"\[")):
            parse(bad)
