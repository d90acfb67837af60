"""Per-SM rasterization (A9, G-RAST): WD-GV2, GV9, GV10, GV11, and the hardware form with delta
folding against the direct formula on random beat streams."""

import random

import pytest

from golden.wdist import vectors as gv
from golden.wdist.emit import pad
from golden.wdist.formats import Beat, Command, Kind, Level, lin2xyz
from golden.wdist.params import WdistParams
from golden.wdist.raster import Rasterizer, advance, grast_ctaid, raster_reference


@pytest.mark.req("WD-GV9", "WD-F25")
@pytest.mark.parametrize("row", gv.GV9, ids=[f"row{i + 1}" for i in range(len(gv.GV9))])
def test_gv9_decomposition(row):
    dims, start, delta, parts, carries, result, lin = row
    pos, got_parts, got_carries = advance(start, delta, dims)
    assert (pos, got_parts, got_carries) == (result, parts, carries)
    assert pos[0] + dims[0] * (pos[1] + dims[1] * pos[2]) == lin


@pytest.mark.req("WD-GV2", "WD-GV11", "WD-F27")
def test_gv2_gv11_cga_mapping():
    v = gv.GV2
    U = (v["grid"][0] // 3, v["grid"][1] // 2)
    assert grast_ctaid(Level.GPC, v["inner"], (1, 1, 1), lin2xyz(v["u"], *U), v["r"]) == (
        v["ctaid"], v["r"])
    g = gv.GV11_GPU
    U = tuple(g["grid"][i] // (g["outer"][i] * g["inner"][i]) for i in range(2))
    assert divmod(g["rho"], 6) == (g["v"], g["r"])
    assert grast_ctaid(Level.GPU, g["inner"], g["outer"], lin2xyz(g["u"], *U), g["rho"]) == (
        g["ctaid"], g["cga_cta_id"])
    f = gv.GV11_FLAT
    U = (f["grid"][0] // 9, f["grid"][1] // 6)
    assert grast_ctaid(Level.GPU_FLAT, f["inner"], (1, 1, 1), lin2xyz(f["u"], *U),
                       f["rho"])[0] == f["ctaid"]


def _run(p, beats):
    rs = [Rasterizer(p, s) for s in range(p.N_SM)]
    out = {s: [] for s in range(p.N_SM)}
    for b in beats:
        for r in rs:
            out[r.s] += r.beat(b)
    return out, rs


@pytest.mark.req("WD-GV10", "WD-F25")
def test_gv10_plain_rasterization():
    v = gv.GV10
    p = WdistParams(N_GPC=2, SM_PER_GPC=(2, 2), SM_PER_TPC=1)
    cmd = Command(grid_id=3, grid_x=4, grid_y=2)
    beats = [Beat.grid_beat(cmd)] + [Beat(Kind.LAUNCH, 3, seq=i, gpc=g, cnt=tuple(c),
                                          end_of_cga=1) for i, (g, c) in enumerate(v["beats"])]
    out, _ = _run(p, beats)
    assert {s: [r.ctaid for r in out[s]] for s in out} == v["ids"]
    assert out == raster_reference(p, beats)


@pytest.mark.req("WD-GV11", "WD-F27")
def test_gv11_gpc_row():
    v = gv.GV11_GPC
    p = WdistParams(N_GPC=1, SM_PER_GPC=(4,))
    cmd = Command(grid_id=1, level=Level.GPC, grid_x=6, grid_y=4, in_x=3, in_y=2)
    beats = [Beat.grid_beat(cmd)] + [Beat(Kind.LAUNCH, 1, seq=u, gpc=0, cnt=tuple(v["cnt"]),
                                          is_cga=1, gcga_first=1, gcga_last=1, end_of_cga=1)
                                     for u in (0, 1)]
    out, _ = _run(p, beats)
    for u in (0, 1):
        ids = [r.ctaid[:2] for s in range(4) for r in out[s] if r.seq == u]
        assert ids == v["ids"][u]
    assert [r.cga_cta_id for r in out[3] if r.seq == 0] == [3, 4, 5]


def _random_stream(rng, p, n_grids=3):
    beats, seq = [], 0
    for gid in range(n_grids):
        level = rng.choice([Level.PLAIN, Level.GPC, Level.GPU, Level.GPU_FLAT, Level.CPC])
        inner = (rng.randint(1, 3), rng.randint(1, 2), 1)
        outer = (rng.randint(1, 2), rng.randint(1, 2), 1) if level in (Level.GPU, Level.CPC) \
            else (1, 1, 1)
        U = (rng.randint(1, 4), rng.randint(1, 3), rng.randint(1, 2))
        if level == Level.PLAIN:
            grid = tuple(U[i] * rng.randint(1, 3) for i in range(3))
        else:
            grid = tuple(U[i] * outer[i] * inner[i] for i in range(3))
        cmd = Command(grid_id=gid, level=level, grid_x=grid[0], grid_y=grid[1], grid_z=grid[2],
                      in_x=inner[0], in_y=inner[1], out_x=outer[0], out_y=outer[1])
        beats.append(Beat.grid_beat(cmd))
        isz = cmd.isz
        per = isz * (cmd.n if level in (Level.GPU, Level.CPC) else 1)
        total = cmd.ctas if level == Level.PLAIN else cmd.units
        done = 0
        while done < total:
            if level == Level.PLAIN:
                g = rng.randrange(p.N_GPC)
                k = min(total - done, rng.randint(1, 12))
                cnt = [0] * p.SM_PER_GPC[g]
                for _ in range(k):
                    cnt[rng.randrange(len(cnt))] += 1
                beats.append(Beat(Kind.LAUNCH, gid, seq=seq, gpc=g, cnt=pad(p, cnt), end_of_cga=1))
                done += k
            else:
                rank = 0
                while rank < per:
                    g = rng.randrange(p.N_GPC)
                    k = isz if level != Level.GPU_FLAT else min(per - rank, rng.randint(1, 5))
                    cnt = [0] * p.SM_PER_GPC[g]
                    for _ in range(k):
                        cnt[rng.randrange(len(cnt))] += 1
                    last = int(rank + k == per)
                    beats.append(Beat(Kind.LAUNCH, gid, seq=seq, gpc=g, cnt=pad(p, cnt),
                                      first_rank=rank, is_cga=int(level != Level.GPU_FLAT),
                                      end_of_cga=last))
                    rank += k
                done += 1
            seq = (seq + 1) % 256
    return beats


@pytest.mark.req("WD-F25", "WD-F26", "WD-F27", "WD-V8")
def test_hardware_form_equals_formula_with_folding(seed):
    rng = random.Random(seed)
    folds = 0
    for _ in range(60):
        p = WdistParams(N_GPC=2, SM_PER_GPC=(2, 4), SM_PER_TPC=2, CTA_SLOTS=3, DELTA_W=5)
        beats = _random_stream(rng, p)
        out, rs = _run(p, beats)
        assert out == raster_reference(p, beats)
        assert all(r.max_delta < 1 << p.DELTA_W for r in rs)
        folds += sum(r.folds for r in rs)
    assert folds > 0
