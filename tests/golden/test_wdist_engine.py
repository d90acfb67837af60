"""wdist placement engines against the spec's vectors: G-A1 free slots, G-A2 water-fill with its
level search and prefix popcount (WD-GV3, GV4, GV5), G-A3 multicast (WD-GV6), G-CPC speeds."""

import pytest

from golden.wdist import vectors as gv
from golden.wdist.cpc import cpc_place
from golden.wdist.formats import FAIL, Cause, Mode, Shape
from golden.wdist.freeslots import free_slots
from golden.wdist.multicast import mc_keys, mc_place
from golden.wdist.params import WdistParams
from golden.wdist.shadow import Shadow
from golden.wdist.waterfill import lb_place, seed_bisection, water_volume


@pytest.mark.req("WD-F2")
def test_free_slots_min_over_resources():
    cap = Shape(256, 912, 64, 32)
    assert free_slots(cap, Shape(), Shape(32, 114, 8, 1)) == 8          # the WD-P1 shape
    assert free_slots(cap, Shape(0, 0, 0, 30), Shape(1, 1, 1, 1)) == 2  # slots bind
    assert free_slots(cap, Shape(0, 0, 60, 0), Shape(1, 1, 2, 1)) == 2  # warps bind
    assert free_slots(cap, Shape(250, 0, 0, 0), Shape(3, 1, 1, 1)) == 2  # registers bind
    assert free_slots(cap, Shape(0, 900, 0, 0), Shape(1, 5, 1, 1)) == 2  # shared memory binds
    assert free_slots(cap, Shape(256, 912, 0, 0), Shape(0, 0, 1, 1)) == 32  # zero demand
    assert free_slots(cap, Shape(), Shape(1, 1, 1, 1), enabled=False) == 0


@pytest.mark.req("WD-GV3", "WD-F7", "WD-F8", "WD-F9", "WD-F11")
@pytest.mark.parametrize("row", gv.GV3, ids=[f"row{i + 1}" for i in range(len(gv.GV3))])
def test_gv3_lb_placements(row):
    f, n, a, level, rem, speed = row
    r = lb_place(f, n, 6)
    if a is None:
        assert r is FAIL
        p = WdistParams(N_GPC=1, SM_PER_GPC=(len(f),), SM_PER_TPC=1)
        sh = Shadow(p)
        sh.snapshot(f, [p.credit_reset(0)], 0)
        resp = sh.query(0, n, Mode.LB)
        assert (resp.valid, resp.cause) == (0, Cause.SLOTS) and sh.LS == [0] * len(f)
        return
    assert (list(r.a), r.level, r.rem, r.speed) == (a, level, rem, speed)
    assert len(r.trace) == 6                                   # LVL_W = FREE_W iterations


@pytest.mark.req("WD-GV4", "WD-F8")
@pytest.mark.parametrize("row", gv.GV4, ids=["row1", "row2"])
def test_gv4_level_search_trace(row):
    f, n, trace, level = row
    r = lb_place(f, n, 6)
    assert list(r.trace) == trace and r.level == level


@pytest.mark.req("WD-GV4")
def test_gv4_seed_bisection():
    h, level, trace = seed_bisection(gv.GV4_SEED["f"], gv.GV4_SEED["N"])
    assert (h, level, trace) == (gv.GV4_SEED["h"], gv.GV4_SEED["L"], gv.GV4_SEED["trace"])


@pytest.mark.req("WD-GV5", "WD-F7", "WD-F8", "WD-F9")
def test_gv5_fig21():
    v = gv.GV5
    f = v["f"]
    assert sum(f) == v["sum"] and water_volume(f, 4) == v["V4"]
    assert all(f[s] == 0 for s in v["full"]) and all(f[s] == v["cap"] for s in v["empty"])
    assert all(0 < f[s] < v["cap"] for s in v["partial"])
    r = lb_place(f, v["N"], 6)
    assert (list(r.a), r.level, r.rem, r.candidates, r.speed) == (
        v["a"], v["L"], v["R"], v["candidates"], v["speed"])
    assert list(r.trace) == v["trace"]
    left = [f[s] - r.a[s] for s in range(32)]
    assert left[12] == 3 and r.a[12] == 0                       # SM12 untouched
    assert all(left[s] == 3 for s in [0, 1, 2, 5, 7] + list(range(9, 18)) + [19, 20])
    assert all(left[s] == 4 for s in range(21, 31))


@pytest.mark.req("WD-GV6", "WD-F10", "WD-F11")
@pytest.mark.parametrize("row", gv.GV6, ids=[f"row{i + 1}" for i in range(len(gv.GV6))])
def test_gv6_multicast(row):
    f, n, class_a, a, speed = row
    tpcs = [[0, 1], [2, 3], [4, 5], [6, 7]]
    keys = mc_keys(f, tpcs, 6)
    assert tuple(i for i in range(8) if keys[i] >= 64) == class_a
    r = mc_place(f, n, tpcs, 6)
    if a is None:
        assert r is FAIL
        p = WdistParams(N_GPC=1, SM_PER_GPC=(8,))
        sh = Shadow(p)
        sh.snapshot(f, [8], 0)
        assert (sh.query(0, n, Mode.MC).cause) == Cause.SLOTS
        return
    assert (list(r.a), r.speed) == (a, speed)
    assert len(r.trace) == 7                                   # FREE_W + 1 iterations


@pytest.mark.req("WD-F32")
def test_cpc_speed_is_min_of_inner_bests():
    """§6 item 5: one CPC with free [1,1,5,0,5,0], MC, N 2: successive bests 0, 4, 3."""
    v = gv.CPC_SPEEDS
    p = WdistParams(N_GPC=1, SM_PER_GPC=(6,), CPC_PER_GPC=1)
    r = cpc_place(p, 0, v["f"], v["N"], 3, Mode.MC)
    assert list(r[3]) == v["speeds"] and r[1] == 0
    r2 = cpc_place(p, 0, v["f"], v["N"], 2, Mode.MC)
    assert list(r2[3]) == [0, 4] and r2[1] == 0                # min 0 although the last is 4
    assert list(cpc_place(p, 0, v["f"], v["N"], 6, Mode.MC)[3]) == [0, 4, 3, 2, 1, 0]
    assert cpc_place(p, 0, v["f"], v["N"], 7, Mode.MC) is FAIL


@pytest.mark.req("WD-F32")
def test_cpc_parts_stay_inside_one_cpc():
    p = WdistParams(N_GPC=1, SM_PER_GPC=(8,), CPC_PER_GPC=2)
    f = [3, 1, 2, 2, 4, 4, 0, 1]
    a, speed, parts, speeds = cpc_place(p, 0, f, 3, 3, Mode.LB)
    assert sum(a) == 9 and len(parts) == 3
    for c, a_w in parts:
        assert sum(a_w) == 3
        assert all(a_w[i] == 0 for i in range(8) if i not in p.cpcs(0)[c])
    assert all(a[i] <= f[i] for i in range(8)) and speed == min(speeds)
