"""The interface map and PT_INIT (memrouter §4.2) against the golden address vectors MR-GV7..GV10,
the reference configurations MR-GV1 and an independent running-counter interleaver (MR-V1's
static map, on CFG-A..D and CFG-G64 and on random slot tables)."""

import random
from fractions import Fraction as Fr

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.formats import E_RANGE, FAR, NEAR, STABLE, UNMAPPED
from golden.memrouter.ifmap import pt_init, route
from golden.memrouter.params import (CFG_NAMES, MemrouterParams, config_error, geometry,
                                     parse_slots, reference, slot_text)


def running_counter_map(slots, near_frames, n_off, mod_frames, far_frames):
    """Near frames handed out one by one: each slot target keeps its own next-frame counter;
    far frames round-robin over modules above the carve-out (the hardware's incremental form)."""
    nxt = {}
    near = []
    for nf in range(near_frames):
        s = slots[nf % len(slots)]
        port = 0 if s & 1 == 0 else 1 + (s >> 1)
        near.append((port, nxt.get(port, 0)))
        nxt[port] = nxt.get(port, 0) + 1
    carve = nxt.get(1, 0)
    used = [carve] * n_off
    far = []
    for f in range(far_frames):
        m = f % n_off
        far.append((1 + m, used[m]))
        used[m] += 1
    assert all(u <= mod_frames for u in used)
    return near, far


@pytest.mark.req("MR-GV1", "MR-C1", "MR-C2", "MR-C3", "MR-C5", "MR-C18", "MR-C19", "MR-C21",
                 "MR-C27", "MR-C28")
@pytest.mark.parametrize("name", CFG_NAMES)
def test_reference_configurations(name):
    (log2g, n_off, slots, hbm, mod, near, carve, far, pages, pt_entries, lines, off_rate,
     near_bw) = gv.GV1[name]
    p, c = reference(name)
    g = geometry(p, c)
    assert (p.LOG2G, p.N_OFF, slot_text(c.SLOTS), c.HBM_FRAMES, c.MOD_FRAMES, c.NEAR_FRAMES) == \
        (log2g, n_off, slots, hbm, mod, near)
    assert (g.CARVE, g.FAR_FRAMES, g.PAGES, p.PT_ENTRIES, p.NUM_LINES) == \
        (carve, far, pages, pt_entries, lines)
    assert [(q.RATE_N, q.RATE_F) for q in c.QOS] == [(12, 0)] + [off_rate] * n_off
    assert all((q.BURST_N, q.BURST_F) == (8, 8) for q in c.QOS)
    assert (p.MAX_LEN, p.ROB_BEATS, p.QDEN) == (8, 256, 24)
    # Σ bandwidth of the near pool's ports: HBM 4/8 plus 1/8 per module named in the slot table;
    # CFG-C's near class gets RATE_N/(RATE_N+RATE_F) = 2/3 of each module (near 0.75)
    rn, rf = off_rate
    mods = {s >> 1 for s in c.SLOTS if s & 1}
    assert gv.SECTOR_BW["HBM"] + len(mods) * gv.SECTOR_BW["OFF"] == near_bw
    if name == "C":
        assert Fr(1, 2) + len(mods) * gv.SECTOR_BW["OFF"] * Fr(rn, rn + rf) == Fr(3, 4)
    inc = geometry(p, c.copy(MODE=1))
    assert inc.PAGES == far                     # inclusive variants: PAGES = FAR_FRAMES
    assert config_error(p, c) is None


@pytest.mark.req("MR-GV7", "MR-F4", "MR-F5", "MR-F7", "MR-F8", "MR-C1", "MR-V1")
def test_gv7_seed_scale_map():
    p, c = reference("G64")
    init = pt_init(p, c)
    for addr, port, dev in gv.GV7:
        got = route(init, addr, p.LOG2G)
        assert got == (E_RANGE if port is None else (port, dev)), hex(addr)


@pytest.mark.req("MR-GV8", "MR-GV9", "MR-GV10", "MR-F4", "MR-F5", "MR-F8", "MR-V1")
@pytest.mark.parametrize("name", ["A", "B", "C", "D"])
def test_gv8_to_gv10_maps(name):
    p, c = reference(name)
    init = pt_init(p, c)
    if name == "B":
        rows = gv.GV8
    else:
        table = gv.GV9 if name == "A" else gv.GV10[name]
        rows = [(pg << 12, port, dev) for pg, port, dev in table]
        if name == "A":
            rows.append(gv.GV9_BYTE)
    for addr, port, dev in rows:
        got = route(init, addr, p.LOG2G)
        assert got == (E_RANGE if port is None else (port, dev)), (name, hex(addr))
    if name == "C":
        carve = [pg for pg in range(72) if init.pt[pg].port != 0]
        assert carve[:6] == gv.GV10_C_CARVE
        assert [init.pt[pg].port for pg in carve[:6]] == [1, 2, 3, 1, 2, 3]


@pytest.mark.req("MR-V1", "MR-F4", "MR-F5", "MR-F6", "MR-F8", "MR-C20")
@pytest.mark.parametrize("name", CFG_NAMES)
@pytest.mark.parametrize("mode", [0, 1])
def test_static_map_against_running_counters(name, mode, seed):
    rng = random.Random(seed)
    p, c = reference(name, MODE=mode, NEAR_RESERVE=rng.choice([0, 1, 5]))
    init = pt_init(p, c)
    g = geometry(p, c)
    near, far = running_counter_map(c.SLOTS, c.NEAR_FRAMES, p.N_OFF, c.MOD_FRAMES, g.FAR_FRAMES)
    used = c.NEAR_FRAMES - c.NEAR_RESERVE if mode == 0 else 0
    assert init.pages == g.PAGES
    for pg in range(p.PT_ENTRIES):
        e = init.pt[pg]
        if pg >= init.pages:
            assert e.state == UNMAPPED
            continue
        want = (NEAR, near[pg]) if pg < used else (FAR, far[pg - used])
        assert (e.state, e.pool, (e.port, e.frame)) == (STABLE,) + want
        # every page: sectors 0, NS-1 and 4 random ones route to frame·G + offset
        for s in [0, p.NS - 1] + [rng.randrange(p.NS) for _ in range(4)]:
            a = (pg << p.LOG2G) + 32 * s
            assert route(init, a, p.LOG2G) == (want[1][0], (want[1][1] << p.LOG2G) + 32 * s)
    # one full region, every sector
    for pg in range(min(len(c.SLOTS), init.pages)):
        for s in range(p.NS):
            a = (pg << p.LOG2G) + 32 * s
            assert route(init, a, p.LOG2G)[1] == (init.pt[pg].frame << p.LOG2G) + 32 * s
    free = [(d.port, d.frame) for d in init.nfree]
    assert free == near[used:]
    assert init.ffree == []
    assert route(init, init.pages << p.LOG2G, p.LOG2G) == E_RANGE


@pytest.mark.req("MR-F5", "MR-F7", "MR-F8", "MR-C18", "MR-E12")
def test_random_slot_tables(seed):
    """Programmable slot tables of 1..16 entries: the map equals the running-counter map, every
    device frame is used at most once and stays inside its port."""
    rng = random.Random(seed)
    for _ in range(300):
        n_off = rng.randint(1, 4)
        per = rng.randint(0, 3)
        n_h = rng.randint(1, 16 - per * n_off) if per * n_off < 16 else 0
        if n_h + per * n_off == 0:
            n_h = 1
        slots = [0] * n_h + [1 | m << 1 for m in range(n_off) for _ in range(per)]
        rng.shuffle(slots)
        regions = rng.randint(1, 8)
        p = MemrouterParams(N_OFF=n_off, PT_ENTRIES=4096)
        near_frames = regions * len(slots)
        c = reference("B")[1].copy(SLOTS=tuple(slots), NEAR_FRAMES=near_frames,
                                   HBM_FRAMES=regions * n_h + rng.randint(0, 3),
                                   MOD_FRAMES=regions * per + rng.randint(1, 40),
                                   NEAR_RESERVE=rng.randint(0, near_frames))
        c.QOS = c.QOS[:1 + n_off]
        assert config_error(p, c) is None, slot_text(slots)
        init = pt_init(p, c)
        g = geometry(p, c)
        near, far = running_counter_map(slots, near_frames, n_off, c.MOD_FRAMES, g.FAR_FRAMES)
        used = near_frames - c.NEAR_RESERVE
        got = [(e.port, e.frame) for e in init.pt[:init.pages]]
        assert got == near[:used] + far
        frames = got + [(d.port, d.frame) for d in init.nfree]
        assert len(set(frames)) == len(frames)
        for port, frame in frames:
            assert frame < (c.HBM_FRAMES if port == 0 else c.MOD_FRAMES)


@pytest.mark.req("MR-E12", "MR-C18", "MR-C19", "MR-C20", "MR-C21")
@pytest.mark.parametrize("change,why", [
    (dict(SLOTS=parse_slots("H,M0,H,M1,H,M0,H")), "unequally"),
    (dict(SLOTS=parse_slots("H,M3")), "N_OFF"),
    (dict(SLOTS=()), "SLOT_LEN"),
    (dict(NEAR_FRAMES=113), "multiple"),
    (dict(NEAR_RESERVE=200), "NEAR_RESERVE"),
    (dict(HBM_FRAMES=63), "HBM_FRAMES"),
    (dict(MOD_FRAMES=15), "CARVE"),
    (dict(MOD_FRAMES=400), "PAGES"),
])
def test_pt_init_refuses_illegal_configuration(change, why):
    p, c = reference("B", **change)
    err = config_error(p, c)
    assert err and why in err
    with pytest.raises(ValueError, match="PT_INIT refused"):
        pt_init(p, c)


@pytest.mark.req("MR-C1", "MR-C2", "MR-C3", "MR-C4", "MR-C5", "MR-C6", "MR-C8", "MR-C9",
                 "MR-C10")
@pytest.mark.parametrize("name,value", [("LOG2G", 8), ("LOG2G", 17), ("PT_ENTRIES", 1000),
                                        ("PT_ENTRIES", 8192), ("NUM_LINES", 3), ("N_PROC", 5),
                                        ("N_OFF", 0), ("MAX_LEN", 17), ("ROB_BEATS", 15),
                                        ("QDEN", 0), ("CMDQ_DEPTH", 17), ("EVT_DEPTH", 0)])
def test_build_parameter_ranges(name, value):
    with pytest.raises(ValueError, match=name):
        MemrouterParams(**{name: value})
    d = MemrouterParams()
    assert (d.LOG2G, d.PT_ENTRIES, d.NUM_LINES, d.N_PROC, d.N_OFF, d.MAX_LEN, d.ROB_BEATS,
            d.QDEN, d.CMDQ_DEPTH, d.EVT_DEPTH) == (12, 1024, 8, 1, 3, 8, 256, 24, 4, 4)
