"""Mock-GPC shadow operations and the GPU2GPC engine replays of §5: WD-GV7 (ties), WD-GV8
(Pass I / Pass II), the shadow rows of WD-GV13, and both engine rows of WD-GV15."""

import pytest

from golden.wdist import vectors as gv
from golden.wdist.formats import Cause, Command, Level, Mode, Pass, TraceKind
from golden.wdist.params import WdistParams
from golden.wdist.select import select_step
from golden.wdist.session import NEVER_FITS, WAIT_CGA_FIT, GridRun, Launcher
from golden.wdist.shadow import Shadow
from golden.wdist.tracker import ResourceTracker

P4 = WdistParams()


def _flat(rows):
    return [x for r in rows for x in r]


@pytest.mark.req("WD-F4", "WD-F5", "WD-F6", "WD-F11", "WD-F24")
def test_shadow_reserve_commit_cancel_reset():
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4))
    sh = Shadow(p)
    sh.snapshot([3, 2, 0, 1, 2, 2, 2, 2], [1, 4], 0)
    r0 = sh.query(0, 3, Mode.LB)
    assert r0.valid and r0.a == (2, 1, 0, 0) and sh.LS[:4] == [2, 1, 0, 0] and sh.LC == [1, 0]
    assert sh.f(0) == [1, 1, 0, 1]
    assert sh.query(0, 1, Mode.LB).cause == Cause.CREDIT          # credit checked first
    r1 = sh.query(1, 2, Mode.LB)
    r1b = sh.query(1, 2, Mode.LB)
    assert sh.LC == [1, 2]
    committed = []
    sh.commit_hook = lambda g, a, cga: committed.append((g, tuple(a), cga))
    sh.commit(0, r0.a)
    assert sh.FS[:4] == [1, 1, 0, 1] and sh.LS[:4] == [0] * 4 and sh.CS == [0, 4] and sh.LC[0] == 0
    assert committed == [(0, (2, 1, 0, 0), True)]
    sh.cancel(1, r1.a)
    assert sh.LC[1] == 1 and sum(sh.LS[4:]) == sum(r1b.a)
    sh.reset()
    assert sh.LS == [0] * 8 and sh.LC == [0, 0] and sh.FS[4:] == [2, 2, 2, 2]


@pytest.mark.req("WD-F1", "WD-F3", "WD-F4", "WD-F24")
def test_commit_reaches_real_state_and_completion_only_real():
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4))
    t = ResourceTracker(p)
    L = Launcher(p, t)
    cmd = Command(level=Level.GPC, grid_x=8, in_x=4, regs_g=2, smem_g=3, warps=4)
    res = L.run_session(GridRun.start(cmd), t.free_vector(cmd.shape), list(t.credit), t.empty())
    assert res.outcome == "MORE" or res.outcome == "DONE"
    for g, a, cga in res.commits:
        for s, k in zip(p.sms(g), a):
            assert t.used[s].warps == 4 * k and t.used[s].regs_g == 2 * k and t.used[s].slots == k
    assert t.credit == [3, 3] and not t.empty()
    fs = list(L.shadow.FS)
    t.complete(0, cmd.shape)
    assert L.shadow.FS == fs                                       # the shadow never grows


@pytest.mark.req("WD-GV7", "WD-F12", "WD-F13", "WD-F18", "WD-V7")
def test_gv7_ties_served_in_one_step():
    v = gv.GV7
    cmd = Command(grid_id=7, level=Level.GPC, grid_x=v["grid"][0], in_x=v["inner"][0])
    L = Launcher(P4)
    res = L.run_session(GridRun.start(cmd), _flat(v["free"]), [8] * 4, 0)
    q = [r for r in res.trace if r.kind == TraceKind.QUERY]
    sel = [r for r in res.trace if r.kind == TraceKind.SELECT]
    for k, (want, best, winners) in enumerate(v["steps"]):
        for g, exp in want.items():
            r = q[4 * k + g]
            assert (r.step, r.gpc) == (k, g)
            if exp is None:
                assert (r.valid, r.cause) == (0, Cause.SLOTS)
            else:
                assert r.valid and r.speed == exp[0]
                if exp[1] is not None:
                    assert list(r.vec) == exp[1]
        assert (sel[k].best, sel[k].win_mask) == (best, sum(1 << g for g in winners))
    launch = [b for b in res.beats if b.kind == 1]
    assert [(b.seq, b.gpc) for b in launch] == v["beats"]
    assert all(b.first_rank == 0 and b.end_of_cga for b in launch)
    assert res.beats[0].kind == 0 and res.outcome == "DONE"


@pytest.mark.req("WD-GV8", "WD-F15", "WD-F16", "WD-F14", "WD-F11")
@pytest.mark.parametrize("case", ["n5", "n4", "credit1"])
def test_gv8_pass1_pass2(case):
    v = gv.GV8
    n = 5 if case == "n5" else 4
    credit = [1, 8, 8, 8] if case == "credit1" else [8] * 4
    cmd = Command(grid_id=8, level=Level.GPU, grid_x=4 * n, in_x=4, out_x=n)
    L = Launcher(P4)
    free = _flat(v["free"])
    res = L.run_session(GridRun.start(cmd), free, credit, 0)
    p1 = [r for r in res.trace if r.kind == TraceKind.QUERY and r.pass_ == Pass.PASS1]
    rounds = v["pass1_credit"] if case == "credit1" else v["pass1"][n]
    for k, want in enumerate(rounds):
        assert tuple(r.gpc for r in p1 if r.step == k and r.valid) == want
    if case == "credit1":
        assert [r.cause for r in p1 if r.step == 1 and r.gpc == 0] == [Cause.CREDIT]
    if case != "n4":
        assert res.fail and res.outcome == WAIT_CGA_FIT and not res.beats
        assert L.shadow.LS == [0] * 32 and L.shadow.LC == [0] * 4 and L.shadow.FS == free
        assert [r.kind for r in res.trace].count(TraceKind.FAIL) == 1
        return
    p2 = [r for r in res.trace if r.kind == TraceKind.QUERY and r.pass_ == Pass.PASS2]
    sel = [r for r in res.trace if r.kind == TraceKind.SELECT]
    for k, (want, best, winners) in enumerate(v["pass2"]):
        for g, exp in want.items():
            r = p2[4 * k + g]
            if exp is None:
                assert not r.valid
            else:
                assert r.valid and r.speed == exp[0]
                if exp[1] is not None:
                    assert list(r.vec) == exp[1]
        assert (sel[k].best, sel[k].win_mask) == (best, sum(1 << g for g in winners))
    launch = [b for b in res.beats if b.kind == 1]
    assert [(b.gpc, b.first_rank) for b in launch] == v["beats"]
    assert len({b.seq for b in launch}) == 1
    assert [b.end_of_cga for b in launch] == [0, 0, 0, 1]
    for g, want in enumerate(v["final"]):
        assert L.shadow.fs(g) == (want if want is not None else v["free"][g])


@pytest.mark.req("WD-GV13", "WD-F12")
def test_gv13_shadow_rows():
    v = gv.GV13_CGA
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4))
    sh = Shadow(p)
    sh.snapshot(_flat(v["free"]), [4, 4], 0)
    st = select_step(sh, v["N"], Mode.LB, 1)
    for g, (speed, a) in v["shadow"].items():
        assert (st.resp[g].speed, list(st.resp[g].a)) == (speed, a)
    assert st.winners == (v["shadow_gpc"],)


@pytest.mark.req("WD-GV15", "WD-F10", "WD-F15", "WD-F16")
@pytest.mark.parametrize("row", ["empty", "one"])
def test_gv15_engine_rows(row):
    v = gv.GV15
    p = WdistParams(**v["params"])
    cmd = Command(grid_id=15, level=Level.GPU, mode=Mode.MC, grid_x=v["grid"][0],
                  in_x=v["inner"][0], out_x=v["outer"][0])
    f = v[f"{row}_f"]
    rounds = v[f"{row}_rounds"]
    L = Launcher(p)
    res = L.run_session(GridRun.start(cmd), f, [v["credit"]], 0)
    p1 = [r for r in res.trace if r.kind == TraceKind.QUERY and r.pass_ == Pass.PASS1]
    got = [(list(r.vec[:6]), r.speed) for r in p1 if r.valid]
    assert got == [(a, s) for a, s in rounds]
    if row == "empty":
        assert p1[-1].cause == Cause.SLOTS and res.fail and res.outcome == WAIT_CGA_FIT
        res2 = Launcher(p).run_session(GridRun.start(cmd), f, [v["credit"]], 1)
        assert res2.outcome == NEVER_FITS
        return
    launch = [b for b in res.beats if b.kind == 1]
    assert [list(b.cnt) for b in launch] == [a for a, _ in rounds]
    assert [b.first_rank for b in launch] == v["first_ranks"]
    assert len({b.seq for b in launch}) == 1 and [b.end_of_cga for b in launch] == [0] * 4 + [1]
