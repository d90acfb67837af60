"""The legacy baseline (G-LEGACY, WD-F30): WD-GV13's legacy rows cycle by cycle, its LAUNCH_ID
fields, and WD-V14's equality of per-SM totals with the shadow distributor for plain grids."""

import random
from dataclasses import replace

import pytest

from golden.wdist import vectors as gv
from golden.wdist.driver import run
from golden.wdist.formats import Command, Kind, Level
from golden.wdist.invariants import check_all
from golden.wdist.params import WdistParams
from golden.wdist.raster import raster_reference


def _caps(f):
    return [dict(sm=s, slot_cap=x) for s, x in enumerate(f)]


def _totals(m):
    return [len(x) for x in m.cta_ids]


@pytest.mark.req("WD-GV13", "WD-F30", "WD-V14")
def test_gv13_plain_row():
    v = gv.GV13_PLAIN
    p = WdistParams(N_GPC=1, SM_PER_GPC=(3,), SM_PER_TPC=1)
    cmd = Command(grid_id=1, grid_x=v["N"])
    res = {}
    for dist in ("legacy", "shadow"):
        r = run(p.replace(DISTRIBUTOR=dist), [cmd], cfg=_caps(v["f"]), hold=True)
        res[dist] = r.model
    launch = [(t, b) for t, b in res["legacy"].bcast if b.kind == Kind.LAUNCH_ID]
    assert [b.cnt.index(1) for _, b in launch] == v["picks"]
    ts = [t for t, _ in launch]
    assert ts == list(range(ts[0], ts[0] + 5))                 # one CTA per cycle
    assert [b.ctaid for _, b in launch] == [(k, 0, 0) for k in range(5)]
    assert [b.seq for _, b in launch] == list(range(5)) and all(b.end_of_cga for _, b in launch)
    assert _totals(res["legacy"]) == _totals(res["shadow"]) == v["totals"]


@pytest.mark.req("WD-GV13", "WD-F30")
def test_gv13_cga_row():
    v = gv.GV13_CGA
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4), DISTRIBUTOR="legacy")
    cmd = Command(grid_id=2, level=Level.GPC, grid_x=4, in_x=4)
    r = run(p, [cmd], cfg=_caps(v["free"][0] + v["free"][1]), hold=True)
    m = r.model
    launch = [b for _, b in m.bcast if b.kind == Kind.LAUNCH_ID]
    assert {b.gpc for b in launch} == {v["legacy_gpc"]}
    assert [b.cnt.index(1) for b in launch] == v["legacy_picks"]
    assert _totals(m)[4:] == v["legacy_totals"]
    assert [b.first_rank for b in launch] == [0, 1, 2, 3] == [b.cga_cta_id for b in launch]
    assert [(b.gcga_first, b.gcga_last, b.end_of_cga) for b in launch] == [
        (1, 0, 0), (0, 0, 0), (0, 0, 0), (0, 1, 1)]
    assert len({b.seq for b in launch}) == 1
    # choice cycle + 4 placement cycles (the GRID beat leaves with the first LAUNCH_ID)
    assert m.sessions == [] and r.model.tracker.credit == [4, 3]
    shadow = run(p.replace(DISTRIBUTOR="shadow"), [cmd], cfg=_caps(v["free"][0] + v["free"][1]),
                 hold=True).model
    assert {b.gpc for _, b in shadow.bcast if b.kind == Kind.LAUNCH} == {v["shadow_gpc"]}


@pytest.mark.req("WD-F30", "WD-F25")
def test_legacy_ids_equal_grast():
    """LAUNCH_ID carries exactly what G-RAST computes (rasterizers copy it)."""
    p = WdistParams(N_GPC=2, SM_PER_GPC=(4, 4), DISTRIBUTOR="legacy")
    cmds = [Command(grid_id=1, level=Level.GPC, mode=1, grid_x=6, grid_y=4, in_x=3, in_y=2),
            Command(grid_id=2, grid_x=5, grid_y=3)]
    m = run(p, cmds, seed=3).model
    beats = [b for _, b in m.bcast]
    recomputed = raster_reference(p, [replace(b, kind=Kind.LAUNCH) if b.kind == Kind.LAUNCH_ID
                                      else b for b in beats])
    assert {s: [r.ctaid for _, r in m.cta_ids[s]] for s in range(8)} == {
        s: [r.ctaid for r in recomputed[s]] for s in range(8)}
    check_all(m)


@pytest.mark.req("WD-V14", "WD-F17")
def test_plain_totals_equal_under_both(seed):
    rng = random.Random(seed)
    for _ in range(60):
        n_gpc = rng.randint(1, 3)
        p = WdistParams(N_GPC=n_gpc, SM_PER_GPC=tuple(rng.choice([2, 4]) for _ in range(n_gpc)),
                        CTA_SLOTS=8)
        f = [rng.randint(0, 8) for _ in range(p.N_SM)]
        if sum(f) == 0:
            continue
        n = rng.randint(1, sum(f))
        cmd = Command(grid_id=1, grid_x=n)
        t = {}
        for dist in ("legacy", "shadow"):
            t[dist] = _totals(run(p.replace(DISTRIBUTOR=dist), [cmd], cfg=_caps(f),
                                  hold=True).model)
        assert t["legacy"] == t["shadow"], (f, n)
