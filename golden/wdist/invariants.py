"""Checkers of the verification obligations over observed port streams (WD-V1, V2, V3, V4, V5,
V6, V8, V9, V10).

They read an object with the ``WdistModel`` attributes ``p``, ``bcast`` [(cycle, Beat)],
``cta_ids`` [[(cycle, CtaRecord)] per SM], ``completions``, ``flush_reqs``, ``flush_dones``,
``cga_completes``, ``errs``, ``commands`` [(cycle, Command)], ``sessions`` and ``tracker.cap`` /
``tracker.enable`` — the golden model's own record, or a testbench's record of the RTL ports.
Each raises AssertionError naming the obligation.
"""

from collections import Counter, defaultdict

from golden.wdist.formats import Err, Kind, Level, Mode, Shape, lin2xyz
from golden.wdist.freeslots import free_slots
from golden.wdist.gpm import IdPool
from golden.wdist.raster import grast_ctaid, raster_reference

__all__ = ["grids_of", "check_units", "check_raster", "check_resources", "check_gpm",
           "check_quiescent", "check_all"]


def _shapes(m):
    shapes = {}
    for _, c in m.commands:
        shapes.setdefault(c.grid_id, c.shape)
    return shapes


def grids_of(m):
    """[(GRID beat, [LAUNCH beats])] in ``bcast`` order."""
    out = []
    for _, b in m.bcast:
        if b.kind == Kind.GRID:
            out.append((b, []))
        else:
            assert out, "WD-F19: LAUNCH beat before any GRID beat"
            assert b.grid_id == out[-1][0].grid_id, "WD-F19: LAUNCH beat of another grid"
            out[-1][1].append(b)
    return out


def _units(beats):
    """Split a grid's LAUNCH beats into launch units (WD-V4: contiguous ``seq``, closed by
    ``end_of_cga``)."""
    units, cur = [], []
    for b in beats:
        if cur:
            assert b.seq == cur[-1].seq, "WD-V4: a launch unit's beats interleave with another seq"
        cur.append(b)
        if b.end_of_cga:
            units.append(cur)
            cur = []
    assert not cur, "WD-V3/V4: a launch unit was left open (no end_of_cga)"
    return units


def check_units(m):
    """WD-V3 (all-or-nothing per unit), WD-V4, WD-V5, WD-V6, WD-F18 field rules."""
    p = m.p
    for gb, beats in grids_of(m):
        level, isz = gb.level, gb.inner[0] * gb.inner[1] * gb.inner[2]
        n = gb.outer[0] * gb.outer[1] * gb.outer[2]
        for unit in _units(beats):
            tot = sum(sum(b.cnt) for b in unit)
            assert all(sum(b.cnt) > 0 for b in unit), "WD-F18: empty beat"
            for b in unit:
                assert all(c == 0 for c in b.cnt[p.SM_PER_GPC[b.gpc]:]), "WD-I3: cnt past the GPC"
            legacy = unit[0].kind == Kind.LAUNCH_ID
            if level == Level.PLAIN:
                assert all(b.is_cga == 0 and b.first_rank == 0 for b in unit)
                if legacy:
                    assert len(unit) == 1 and tot == 1
                else:
                    assert len({b.gpc for b in unit}) == len(unit), "WD-F18: one beat per GPC"
            elif level == Level.GPC:
                assert tot == isz, "WD-V3: GPC CGA not complete"
                assert len({b.gpc for b in unit}) == 1, "WD-V5: GPC CGA spans GPCs"
                if legacy:
                    assert [b.first_rank for b in unit] == list(range(isz))
                else:
                    assert len(unit) == 1 and unit[0].gcga_first and unit[0].gcga_last
            elif level == Level.GPU:
                assert tot == n * isz, "WD-V3: GPU CGA not complete"
                assert [b.first_rank for b in unit] == [v * isz for v in range(n)]
                assert all(sum(b.cnt) == isz and b.gcga_first and b.gcga_last for b in unit)
            elif level == Level.GPU_FLAT:
                assert tot == isz, "WD-V3: GPU_FLAT CGA not complete"
                ranks = [sum(sum(x.cnt) for x in unit[:i]) for i in range(len(unit))]
                assert [b.first_rank for b in unit] == ranks and all(b.is_cga == 0 for b in unit)
            elif level == Level.CPC:
                assert tot == n * isz and len(unit) == n, "WD-V3: CPC-level GPC CGA not complete"
                assert len({b.gpc for b in unit}) == 1, "WD-V5: GPC CGA spans GPCs"
                for w, b in enumerate(unit):
                    assert sum(b.cnt) == isz and b.first_rank == w * isz
                    assert (b.gcga_first, b.gcga_last) == (int(w == 0), int(w == n - 1))
                    cpcs = [c for c in p.cpcs(b.gpc) if any(b.cnt[i] for i in c)]
                    assert len(cpcs) == 1, "WD-V5: CPC CGA spans CPCs"
            if gb.mode == Mode.MC and level != Level.PLAIN and level != Level.GPU_FLAT:
                if legacy:
                    per = Counter((b.gpc, b.cnt.index(1)) for b in unit)
                    assert max(per.values()) == 1, "WD-V6: two CTAs of an MC CGA on one SM"
                else:
                    assert all(max(b.cnt) <= 1 for b in unit), "WD-V6: MC CGA stacks CTAs"


def _grid_coords(gb, units):
    """The ctaids of the first ``units`` top-level units of grid ``gb`` (all when None)."""
    gx, gy, gz = gb.grid
    if gb.level == Level.PLAIN:
        total = gx * gy * gz if units is None else units
        return Counter(lin2xyz(k, gx, gy) for k in range(total))
    o = gb.outer if gb.level in (Level.GPU, Level.CPC) else (1, 1, 1)
    U = tuple(gb.grid[i] // (o[i] * gb.inner[i]) for i in range(3))
    nu = U[0] * U[1] * U[2] if units is None else units
    per = o[0] * o[1] * o[2] * gb.inner[0] * gb.inner[1] * gb.inner[2]
    out = Counter()
    for u in range(nu):
        for rho in range(per):
            out[grast_ctaid(gb.level, gb.inner, gb.outer, lin2xyz(u, U[0], U[1]), rho)[0]] += 1
    return out


def check_raster(m, aborted=None):
    """WD-V8: records equal G-RAST of the observed beats, in order; each fully launched grid is a
    permutation; a grid aborted after ``info`` units has exactly those units' IDs.
    ``aborted``: {grid_id: info} of NEVER_FITS errors (default: from ``m.errs``)."""
    p = m.p
    ref = raster_reference(p, [b for _, b in m.bcast])
    for s in range(p.N_SM):
        assert [r for _, r in m.cta_ids[s]] == ref[s], f"WD-V8: SM {s} records differ from G-RAST"
    if aborted is None:
        aborted = {e.grid_id: e.info for _, e in m.errs if e.code == Err.NEVER_FITS}
    for gb, beats in grids_of(m):
        recs = raster_reference(p, [gb] + beats)
        got = Counter(r.ctaid for s in recs for r in recs[s])
        units = aborted.get(gb.grid_id)
        if gb.level == Level.PLAIN and units is not None:
            units = sum(sum(b.cnt) for b in beats)
        assert got == _grid_coords(gb, units), f"WD-V8: grid {gb.grid_id} is not a permutation"


def check_resources(m):
    """WD-V1 (0 <= used <= cap at every event), WD-V2 (each snapshot <= A1 of the real state
    rebuilt from beats and completions before it), WD-V10 (launched − completed = resident)."""
    p = m.p
    shapes = _shapes(m)
    events = [(t, 0, b) for t, b in m.bcast if b.kind != Kind.GRID]
    events += [(c[0], 1, c) for c in m.completions]
    events.sort(key=lambda e: (e[0], e[1]))
    used = [[0, 0, 0, 0] for _ in range(p.N_SM)]
    cap = m.tracker.cap
    snaps = sorted(m.sessions, key=lambda x: x[0])
    si = 0

    def snap_check(upto):
        nonlocal si
        while si < len(snaps) and snaps[si][0] <= upto:
            t, cmd, free, _, _, _ = snaps[si]
            for s in range(p.N_SM):
                u = Shape(*used[s])
                a1 = free_slots(cap[s], u, cmd.shape, m.tracker.enable[s])
                assert free[s] <= a1, f"WD-V2: snapshot at {t} SM {s}: {free[s]} > A1 {a1}"
            si += 1

    for t, kind, x in events:
        snap_check(t)
        if kind == 0:
            sh = shapes[x.grid_id]
            for i, k in enumerate(x.cnt):
                if k:
                    s = p.base(x.gpc) + i
                    used[s] = [used[s][0] + k * sh.regs_g, used[s][1] + k * sh.smem_g,
                               used[s][2] + k * sh.warps, used[s][3] + k]
        else:
            _, s, _, _, sh = x
            used[s] = [used[s][0] - sh.regs_g, used[s][1] - sh.smem_g, used[s][2] - sh.warps,
                       used[s][3] - 1]
        s_list = range(p.N_SM) if kind == 1 else [p.base(x.gpc) + i for i in range(len(x.cnt))
                                                   if x.cnt[i]]
        for s in s_list:
            c = cap[s]
            for v, hi in zip(used[s], (c.regs_g, c.smem_g, c.warps, c.slots)):
                assert 0 <= v <= hi, f"WD-V1: SM {s} used {used[s]} exceeds {c} at cycle {t}"
    snap_check(float("inf"))
    for s in range(p.N_SM):
        assert used[s] == list(m.tracker.used[s].__dict__.values()), "WD-V10: used counters"
        done = sum(1 for c in m.completions if c[1] == s)
        assert len(m.cta_ids[s]) - done == used[s][3], f"WD-V10: SM {s} resident count"


def check_gpm(m):
    """WD-V9: lowest-free cga_id (G-GPM cycle rules), one flush_req per GPC CGA after its last
    cta_complete with n_ctas = its CTAs, one cga_complete after the n-th flush done."""
    p = m.p
    events = defaultdict(list)            # g -> [(t, order, kind, data)]
    for t, b in m.bcast:
        if b.kind != Kind.GRID and b.is_cga:
            events[b.gpc].append((t, 0, "beat", b))
    for t, r in m.cga_completes:
        events[r.gpc].append((t, 1, "done", r))
    open_cga = {}                          # (g, id) -> dict
    for g in range(p.N_GPC):
        pool = IdPool(p.GPC_CGA_ID_W)
        last_t = None
        for t, _, kind, x in sorted(events[g], key=lambda e: (e[0], e[1])):
            if last_t is not None and t != last_t:
                pool.tick()
            last_t = t
            if kind == "beat":
                if x.gcga_first:
                    want = pool.alloc()
                    assert x.cga_id == want, f"WD-V9: GPC {g} got ID {x.cga_id}, G-GPM {want}"
                    assert (g, x.cga_id) not in open_cga, "WD-V9: ID held twice"
                    open_cga[(g, x.cga_id)] = dict(start=t, ctas=0, seq=x.seq)
                open_cga[(g, x.cga_id)]["ctas"] += sum(x.cnt)
            else:
                c = open_cga.pop((g, x.cga_id))
                c["end"] = t
                pool.release(x.cga_id)
                _check_flush(m, g, x.cga_id, c)


def _check_flush(m, g, cid, c):
    p = m.p
    lo, hi = c["start"], c["end"]
    comps = [t for t, sm, is_cga, i, _ in m.completions
             if is_cga and i == cid and p.gpc_of(sm)[0] == g and lo <= t <= hi]
    fr = [(t, r) for t, r in m.flush_reqs if r.gpc == g and r.cga_id == cid and lo <= t <= hi]
    assert len(comps) == c["ctas"], f"WD-V9: GPC {g} ID {cid}: {len(comps)} completions"
    assert len(fr) == 1, f"WD-V9: GPC {g} ID {cid}: {len(fr)} flush_req"
    ft, r = fr[0]
    assert r.n_ctas == c["ctas"] and ft > max(comps), "WD-V9: flush_req n_ctas or timing"
    fd = [t for t, sm, i in m.flush_dones if i == cid and p.gpc_of(sm)[0] == g and ft <= t <= hi]
    assert len(fd) == r.n_ctas and hi > max(fd), "WD-V9: cga_complete before the n-th flush done"


def check_quiescent(m):
    """WD-V10 / WD-F31 at the end of a test."""
    p = m.p
    assert m.quiescent(), "WD-V10: not quiescent"
    for s in range(p.N_SM):
        assert all(m.dbg(sel, s) == 0 for sel in range(4))
    for g in range(p.N_GPC):
        assert m.dbg(4, g) == p.credit_reset(g) and m.dbg(5, g) == 1 << p.GPC_CGA_ID_W


def check_all(m, quiescent=True):
    check_units(m)
    check_raster(m)
    check_resources(m)
    check_gpm(m)
    if quiescent:
        check_quiescent(m)
