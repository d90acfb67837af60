"""The wdist engines and sessions against independent brute-force references on thousands of
random cases: the one-CTA-at-a-time greedy (G-A2's defining property, WD-V14's basis), a sort for
multicast, a per-GPC greedy selection loop for G-A5 / G-SESS-GPC and for Pass I / Pass II."""

import random

import pytest

from golden.common.popcount import prefix_popcount
from golden.wdist.formats import FAIL, Cause, Command, Level, Mode
from golden.wdist.multicast import mc_place
from golden.wdist.params import WdistParams
from golden.wdist.session import DONE, MORE, NEVER_FITS, WAIT_CGA_FIT, GridRun, Launcher
from golden.wdist.waterfill import lb_place, level_search


def greedy_lb(f, n):
    """One CTA at a time to the SM with the most remaining free slots, ties to the lowest index."""
    if n > sum(f):
        return None
    left, a = list(f), [0] * len(f)
    for _ in range(n):
        i = max(range(len(f)), key=lambda j: (left[j], -j))
        left[i] -= 1
        a[i] += 1
    return a, min(left[i] for i in range(len(f)) if a[i])


def sort_mc(f, n, tpc):
    """Class A (whole TPC has a slot) first, then more free, then lower index; one CTA per SM."""
    cand = [i for i in range(len(f)) if f[i] >= 1]
    if n > len(cand):
        return None
    groups = [list(range(i, i + tpc)) for i in range(0, len(f), tpc)]
    cls = {i: all(f[j] >= 1 for j in g) for g in groups for i in g}
    cand.sort(key=lambda i: (not cls[i], -f[i], i))
    a = [0] * len(f)
    for i in cand[:n]:
        a[i] = 1
    return a, min(f[i] - 1 for i in cand[:n])


def place_ref(f, n, mode, tpc):
    return greedy_lb(f, n) if mode == Mode.LB else sort_mc(f, n, tpc)


@pytest.mark.req("WD-F7", "WD-F8", "WD-F9", "WD-V14")
def test_lb_equals_greedy(seed):
    rng = random.Random(seed)
    for _ in range(4000):
        n_sm = rng.randint(1, 32)
        cap = rng.choice([1, 3, 8, 12, 32, 63])
        f = [rng.randint(0, cap) if rng.random() < 0.8 else 0 for _ in range(n_sm)]
        n = rng.randint(1, max(1, sum(f) + 2))
        r = lb_place(f, n, cap.bit_length())
        ref = greedy_lb(f, n)
        if ref is None:
            assert r is FAIL
            continue
        assert (list(r.a), r.speed) == ref, (f, n)
        assert 0 <= r.rem and (r.level == 0 or r.rem < r.candidates)      # §6 item 29


@pytest.mark.req("WD-F10")
def test_mc_equals_sort(seed):
    rng = random.Random(seed)
    for _ in range(4000):
        tpc = rng.choice([1, 2, 4])
        n_sm = tpc * rng.randint(1, 8)
        cap = rng.choice([1, 3, 8, 32])
        f = [rng.randint(0, cap) if rng.random() < 0.75 else 0 for _ in range(n_sm)]
        n = rng.randint(1, n_sm + 1)
        groups = [list(range(i, i + tpc)) for i in range(0, n_sm, tpc)]
        r = mc_place(f, n, groups, cap.bit_length())
        ref = sort_mc(f, n, tpc)
        if ref is None:
            assert r is FAIL
            continue
        assert (list(r.a), r.speed) == ref, (f, n, tpc)


@pytest.mark.req("WD-F8", "WD-F9")
def test_level_search_and_popcount_primitives(seed):
    rng = random.Random(seed)
    for _ in range(2000):
        w = rng.randint(1, 7)
        star = rng.randrange(1 << w)
        assert level_search(lambda x: x < star, w) == star
        bits = rng.getrandbits(16)
        assert prefix_popcount(bits, 16) == [bin(bits & ((1 << k) - 1)).count("1")
                                            for k in range(16)]


def _rand_params(rng, **kw):
    n_gpc = rng.randint(1, 5)
    tpc = rng.choice([1, 2])
    spg = tuple(rng.choice([2, 4, 6, 8]) for _ in range(n_gpc))
    return WdistParams(N_GPC=n_gpc, SM_PER_GPC=spg, SM_PER_TPC=tpc,
                       CTA_SLOTS=rng.choice([4, 8, 32]), **kw)


def _rand_free(rng, p):
    cap = min(p.CTA_SLOTS, rng.choice([2, 4, 8]))
    return [rng.randint(0, cap) if rng.random() < 0.7 else 0 for _ in range(p.N_SM)]


def ref_gpc_session(p, free, credit, isz, mode, remaining):
    """G-SESS-GPC by brute force: per step each GPC's greedy answer on its own left-over slots,
    ties served in ascending index. Returns (steps [(best, winners, {g: a})], failed)."""
    left = list(free)
    cred = list(credit)
    steps = []
    k = 0
    while remaining > 0 and k < p.SESSION_MAX_STEPS:
        ans = {}
        for g in range(p.N_GPC):
            if cred[g] < 1:
                continue
            r = place_ref([left[s] for s in p.sms(g)], isz, mode, p.SM_PER_TPC)
            if r is not None:
                ans[g] = r
        if not ans:
            return steps, True
        best = max(sp for _, sp in ans.values())
        win = [g for g in sorted(ans) if ans[g][1] == best][:remaining]
        for g in win:
            for s, x in zip(p.sms(g), ans[g][0]):
                left[s] -= x
            cred[g] -= 1
        steps.append((best, tuple(win), {g: ans[g][0] for g in win}))
        remaining -= len(win)
        k += 1
    return steps, False


@pytest.mark.req("WD-F5", "WD-F6", "WD-F11", "WD-F12", "WD-F13", "WD-F14", "WD-F18", "WD-V7")
def test_gpc_sessions_equal_reference(seed):
    rng = random.Random(seed)
    for _ in range(1500):
        p = _rand_params(rng, SESSION_MAX_STEPS=rng.randint(1, 4))
        free = _rand_free(rng, p)
        credit = [rng.randint(0, 3) for _ in range(p.N_GPC)]
        mode = rng.choice([Mode.LB, Mode.MC])
        isz = rng.randint(1, 6)
        units = rng.randint(1, 10)
        cmd = Command(level=Level.GPC, mode=mode, grid_x=isz * units, in_x=isz)
        L = Launcher(p)
        L.seq.value = rng.randrange(1 << p.SEQ_W)
        seq0 = L.seq.value
        run = GridRun.start(cmd)
        empty = rng.random() < 0.3
        res = L.run_session(run, free, credit, empty)
        steps, failed = ref_gpc_session(p, free, credit, isz, mode, units)
        sel = [r for r in res.trace if r.kind == 2]
        assert [(r.best, r.win_mask) for r in sel] == [
            (b, sum(1 << g for g in w)) for b, w, _ in steps]
        launch = [b for b in res.beats if b.kind == 1]
        want = [(g, tuple(a[g]) + (0,) * (p.S_MAX - len(a[g]))) for _, w, a in steps for g in w]
        assert [(b.gpc, b.cnt) for b in launch] == want
        assert [b.seq for b in launch] == [(seq0 + i) % (1 << p.SEQ_W) for i in range(len(want))]
        assert all(b.end_of_cga and b.gcga_first and b.gcga_last and b.is_cga for b in launch)
        if failed:
            assert res.fail and res.outcome == (NEVER_FITS if empty and not steps else WAIT_CGA_FIT)
        else:
            assert not res.fail and res.outcome == (DONE if run.remaining == 0 else MORE)
        assert run.remaining == units - len(launch)
        # the shadow ends with nothing reserved and FS reduced by exactly the commits
        assert all(x == 0 for x in L.shadow.LS) and all(x == 0 for x in L.shadow.LC)
        used = [0] * p.N_SM
        for b in launch:
            for i, c in enumerate(b.cnt[:p.SM_PER_GPC[b.gpc]]):
                used[p.base(b.gpc) + i] += c
        assert L.shadow.FS == [free[s] - used[s] for s in range(p.N_SM)]
        q = [r for r in res.trace if r.kind == 1 and r.cause == Cause.CREDIT]
        assert all(r.credit < 1 for r in q)


@pytest.mark.req("WD-F15", "WD-F16", "WD-E11", "WD-V7")
def test_gpu_pass1_pass2_equal_reference(seed):
    """Pass I succeeds exactly when the brute-force per-GPC sequences hold n CGAs; Pass II then
    never fails (no INTERNAL) and places what the brute-force selection loop places."""
    rng = random.Random(seed)
    for _ in range(1500):
        p = _rand_params(rng)
        free = _rand_free(rng, p)
        credit = [rng.randint(0, 4) for _ in range(p.N_GPC)]
        mode = rng.choice([Mode.LB, Mode.MC])
        isz, n = rng.randint(1, 4), rng.randint(1, 6)
        cmd = Command(level=Level.GPU, mode=mode, grid_x=isz * n, in_x=isz, out_x=n)
        L = Launcher(p)
        run = GridRun.start(cmd)
        res = L.run_session(run, free, credit, 0)
        # brute force Pass I: every GPC's own greedy sequence, counted round by round
        cap = 0
        for g in range(p.N_GPC):
            left, c = [free[s] for s in p.sms(g)], credit[g]
            while c >= 1:
                r = place_ref(left, isz, mode, p.SM_PER_TPC)
                if r is None:
                    break
                left = [x - y for x, y in zip(left, r[0])]
                c -= 1
                cap += 1
        assert res.outcome != "INTERNAL"
        if cap < n:
            assert res.fail and res.outcome == WAIT_CGA_FIT and not res.beats
            assert L.shadow.FS == free
            continue
        big = p.replace(SESSION_MAX_STEPS=255)
        steps, failed = ref_gpc_session(big, free, credit, isz, mode, n)
        assert not failed
        launch = [b for b in res.beats if b.kind == 1]
        want = [(g, tuple(a[g]) + (0,) * (p.S_MAX - len(a[g]))) for _, w, a in steps for g in w]
        assert [(b.gpc, b.cnt) for b in launch] == want
        assert len({b.seq for b in launch}) == 1
        assert [b.first_rank for b in launch] == [v * isz for v in range(n)]
        assert [b.end_of_cga for b in launch] == [0] * (n - 1) + [1]
