"""The migration engine (memrouter §4.8): the seed-scale and scaled migration traces MR-GV12 and
MR-GV13, every MR-GV14 operation with its port beats, triggers, walker controls, stall mode,
swap, relabel, copy and drop demotion, ABORT on poison and the MIG_CMD rejections."""

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.formats import (EV_ABORT, EV_DONE, EV_LINE_FULL, EV_PT_UPDATE, EV_REJECT,
                                      EV_START, FAR, FULL_BE, MIG, MIGRATING, NEAR, PTE,
                                      REJ_FULL, REJ_NOFRAME, REJ_RANGE, REJ_STATE, ST_ABORTED,
                                      ST_DONE, STABLE, Desc, start_arg)
from golden.memrouter.harness import Harness
from golden.memrouter.ifmap import route
from golden.memrouter.params import reference

PROMOTE, DEMOTE, SWAP = 1, 2, 3


def hb(name="B", params=None, **cfg):
    return Harness(*reference(name, params, **cfg))


def reads_of(h, port, cls, wr=False):
    return [m for m in h.r.ports.log if m.port == port and m.cls == cls and m.wr == wr]


def sectors(ms, log2g):
    return [((m.addr >> 5) + k) & ((1 << (log2g - 5)) - 1) for m in ms for k in range(m.nb)]


def check_v5(h):
    for rec in h.r.engine.history:
        if rec["done"]:
            total = sum(rec[k] for k in ("MIG_WALK_FILLS", "MIG_DEMAND_FILLS", "MIG_PREVALID",
                                         "MIG_FULL_WRITES"))
            assert total == h.p.NS * rec["line_fulls"]


def run_trace(h, vec, name):
    """MR-GV12/GV13: pre-valid reads trigger, walker to WALK_STOP, demand reads, resume."""
    p, lg = vec["page"], h.p.LOG2G
    base = p << lg
    lo, hi = vec["pre"]
    for s in range(lo - 1, hi, 8):
        h.read(base + 32 * s, min(8, hi - s))
    assert h.r.engine.status == 1 and h.r.counters["MIG_PREVALID"] == vec["prevalid"]
    assert h.r.events[-1][:3] == (EV_START, h.r.lines.of(p).idx, p)
    lo, hi = vec["demand"]
    for s in range(lo - 1, hi, 8):
        h.read(base + 32 * s, min(8, hi - s))
    h.csr.write("CTRL", h.r.cfg.ctrl & ~(1 << 7))                    # WALK_STOP_EN = 0
    h.r.settle()
    c = h.r.counters
    assert (c["MIG_WALK_FILLS"], c["MIG_DEMAND_FILLS"], c["MIG_PREVALID"],
            c["MIG_FULL_WRITES"]) == (vec["walk"], vec["demand_fills"], vec["prevalid"],
                                      vec["full_writes"])
    assert h.r.pt[p] == PTE.of(STABLE, NEAR, Desc(*vec["near"]))
    assert list(h.r.ffree) == [Desc(*vec["far"])]
    assert h.r.events[-1] == (EV_DONE, 0, p, vec["walk"])
    check_v5(h)
    # no sector of the source read twice; walker order ascending
    src = [m for m in h.r.ports.log if m.port == vec["far"][0] and not m.wr]
    secs = sectors(src, lg)
    assert sorted(secs) == list(range(h.p.NS))
    walk = sectors([m for m in src if m.cls == MIG], lg)
    assert walk == sorted(walk)


@pytest.mark.req("MR-GV12", "MR-F21", "MR-F24", "MR-F25", "MR-F14", "MR-F26", "MR-F27",
                 "MR-F50", "MR-V5", "MR-C16", "MR-C22", "MR-V16")
def test_gv12_seed_scale_trace():
    v = gv.GV12
    h = hb("G64", NEAR_RESERVE=1, EN_SECT=1, T_SECT=512, EN_ACC=0, WALK_STOP_EN=1,
           WALK_STOP=v["walk_stop"])
    assert h.r.pt[13] == PTE.of(STABLE, FAR, Desc(*v["far"]))
    assert list(h.r.nfree) == [Desc(*v["near"])]
    run_trace(h, v, "GV12")
    far_reads = {c: sum(m.nb for m in reads_of(h, 1, c)) for c in (FAR, MIG)}
    assert far_reads == {FAR: v["far_reads_far"], MIG: v["far_reads_mig"]}
    assert sum(m.nb for m in reads_of(h, 0, MIG, True)) == v["near_mig_writes"]
    assert h.r.counters["PRSP_BEATS"] == v["prsp_beats"]
    addr, port, dev = v["after"]
    e = h.r.pt[addr >> 16]
    assert (e.port, e.desc.dev(addr & 0xFFFF, 16)) == (port, dev)


@pytest.mark.req("MR-GV13", "MR-F21", "MR-F25", "MR-F50", "MR-V5", "MR-V16")
def test_gv13_scaled_trace():
    v = gv.GV13
    h = hb("B", NEAR_RESERVE=1, EN_SECT=1, T_SECT=32, WALK_STOP_EN=1, WALK_STOP=v["walk_stop"])
    run_trace(h, v, "GV13")


def mig_beats(h, before):
    """MIG-class beats since ``before``: near (port 0) / far (ports >= 1) reads and writes."""
    d = h.delta(before)
    out = dict(far_r=0, far_w=0, near_r=0, near_w=0)
    for (j, wr, c), n in d.items():
        if c == MIG:
            out[("near_" if j == 0 else "far_") + ("w" if wr else "r")] += n
    return out


def check_row(h, before, far_r, far_w, near_r, near_w, walk, fulls):
    ns = h.p.NS
    assert mig_beats(h, before) == dict(far_r=far_r * ns, far_w=far_w * ns, near_r=near_r * ns,
                                        near_w=near_w * ns)
    rec = h.r.engine.history[-1]
    assert rec["done"] and rec["line_fulls"] == fulls and rec["MIG_WALK_FILLS"] == walk
    check_v5(h)


@pytest.mark.req("MR-GV14", "MR-P7", "MR-V14", "MR-F24", "MR-F30", "MR-F32", "MR-F35")
@pytest.mark.parametrize("mode", [0, 1])
def test_gv14_promote_free_frame(mode):
    h = hb(MODE=mode, NEAR_RESERVE=1)
    p = 111 if mode == 0 else 5
    src = h.r.pt[p].desc
    pre = h.r.counters["PRSP_BEATS"], h.r.counters["PREQ_BEATS"]
    b = h.beats()
    assert h.cmd(PROMOTE, p) == 0
    check_row(h, b, 1, 0, 0, 1, h.p.NS, 1)
    assert pre == (h.r.counters["PRSP_BEATS"], h.r.counters["PREQ_BEATS"])
    if mode == 0:
        assert src == Desc(1, 16) and h.r.pt[p] == PTE.of(STABLE, NEAR, Desc(0, 63))
        assert list(h.r.ffree) == [Desc(1, 16)]
    else:
        assert src == Desc(3, 17) and h.r.pt[p] == PTE.of(STABLE, NEAR, Desc(0, 0))
        assert h.r.nd[p] == 0 and h.r.ffree == type(h.r.ffree)()


@pytest.mark.req("MR-GV14", "MR-P7", "MR-V14", "MR-V5", "MR-F14")
@pytest.mark.parametrize("mode", [0, 1])
def test_gv14_promote_with_prevalid(mode):
    h = hb(MODE=mode, NEAR_RESERVE=1)
    p = 111 if mode == 0 else 5
    base = p << 12
    for s, n in ((0, 8), (8, 8), (16, 4)):
        h.read(base + 32 * s, n)
    demand = sum(m.nb for m in h.r.ports.log)
    assert demand == 20
    b = h.beats()
    h.cmd(PROMOTE, p)
    assert h.r.counters["MIG_PREVALID"] == 20
    d = mig_beats(h, b)
    assert d == dict(far_r=h.p.NS - 20, far_w=0, near_r=0, near_w=h.p.NS)
    assert h.r.engine.history[-1]["MIG_WALK_FILLS"] == h.p.NS - 20


@pytest.mark.req("MR-GV14", "MR-P7", "MR-V14", "MR-F31", "MR-F36", "MR-F30", "MR-V5")
@pytest.mark.parametrize("how", ["swap", "promote"])
def test_gv14_exclusive_swap(how):
    h = hb(NEAR_RESERVE=0)
    b = h.beats()
    if how == "swap":
        h.cmd(SWAP, 112, 0)
        start = [e for e in h.r.events if e[0] == EV_START][0]
        assert start[3] == start_arg(SWAP, 0, True, 0)
    else:
        h.cmd(PROMOTE, 112)
        assert h.r.hand == 1
    check_row(h, b, 1, 1, 1, 1, 2 * h.p.NS, 2)
    assert h.r.pt[112] == PTE.of(STABLE, NEAR, Desc(0, 0))
    assert h.r.pt[0] == PTE.of(STABLE, FAR, Desc(1, 16))
    assert h.r.events[-1] == (EV_DONE, 0, 112, 2 * h.p.NS)
    ups = [e for e in h.r.events if e[0] == EV_PT_UPDATE]
    assert [u[2] for u in ups] == [112, 0]
    assert all(not line.tv for line in h.r.lines)


@pytest.mark.req("MR-GV14", "MR-P7", "MR-V14", "MR-F33", "MR-F38")
def test_gv14_relabel():
    h = hb()
    free = (list(h.r.nfree), list(h.r.ffree))
    b = h.beats()
    h.cmd(DEMOTE, 1)
    assert mig_beats(h, b) == dict(far_r=0, far_w=0, near_r=0, near_w=0)
    assert h.r.pt[1] == PTE.of(STABLE, FAR, Desc(1, 0))
    assert (list(h.r.nfree), list(h.r.ffree)) == free
    start = [e for e in h.r.events if e[0] == EV_START][0]
    assert start == (EV_START, 0, 1, start_arg(DEMOTE, 0, False))
    assert h.r.engine.history[-1]["line_fulls"] == 0


@pytest.mark.req("MR-GV14", "MR-P7", "MR-V14", "MR-F34", "MR-E11")
def test_gv14_hbm_demote_copy():
    h = hb(NEAR_RESERVE=1)
    assert h.cmd(DEMOTE, 0) == 0
    assert h.r.engine.status == REJ_NOFRAME                         # FFREE empty after PT_INIT
    h.cmd(PROMOTE, 111)
    b = h.beats()
    h.cmd(DEMOTE, 0)
    check_row(h, b, 0, 1, 1, 0, h.p.NS, 1)
    assert h.r.pt[0] == PTE.of(STABLE, FAR, Desc(1, 16))
    assert list(h.r.nfree) == [Desc(0, 0)]


@pytest.mark.req("MR-GV14", "MR-P7", "MR-V14", "MR-F35", "MR-F38")
@pytest.mark.parametrize("dirty", [0, 1])
def test_gv14_inclusive_demote(dirty):
    h = hb(MODE=1)
    h.cmd(PROMOTE, 5)
    if dirty:
        h.write(5 << 12, [0x1234])
        assert h.r.nd[5] == 1
    b = h.beats()
    h.cmd(DEMOTE, 5)
    if dirty:
        check_row(h, b, 0, 1, 1, 0, h.p.NS, 1)
    else:
        check_row(h, b, 0, 0, 0, 0, 0, 0)
    assert h.r.pt[5] == PTE.of(STABLE, FAR, Desc(3, 17)) and h.r.nd[5] == 0
    assert h.r.nfree[-1] == Desc(0, 0)
    assert h.read(5 << 12).beats[0][0] == (0x1234 if dirty else
                                           h.r.ports[3].read_sector(17 << 12))


@pytest.mark.req("MR-F30", "MR-F35", "MR-F36", "MR-V5")
def test_inclusive_promote_into_full_near_pool_demotes_victim():
    h = hb(MODE=1, NEAR_FRAMES=7, HBM_FRAMES=4)
    for p in range(7):
        h.cmd(PROMOTE, p)
    assert not h.r.nfree
    h.write(0, [0xAB])                                               # page 0 near-dirty
    h.r.ref[:] = bytes(len(h.r.ref))
    b = h.beats()
    h.cmd(PROMOTE, 100)
    assert h.r.pt[0].pool == FAR and h.r.pt[0].desc == h.r.init.ifmap.far_desc(0)
    assert h.r.pt[100].pool == NEAR
    rec = h.r.engine.history[-1]
    assert rec["line_fulls"] == 2                                    # victim copied home
    check_v5(h)
    assert mig_beats(h, b)["far_w"] == h.p.NS
    assert h.read(0).beats[0][0] == 0xAB


@pytest.mark.req("MR-F36", "MR-F37")
def test_clock_skips_referenced_pages():
    h = hb(NEAR_RESERVE=0)
    h.read(0)
    h.read(1 << 12)                                                  # REF[0] = REF[1] = 1
    h.cmd(PROMOTE, 112)
    assert h.r.pt[2].pool == FAR and h.r.pt[112].desc == Desc(0, 1)  # page 2's frame
    assert h.r.ref[0] == 0 and h.r.ref[1] == 0 and h.r.hand == 3


@pytest.mark.req("MR-F20", "MR-F22", "MR-C14", "MR-C23")
def test_access_count_trigger():
    h = hb(EN_ACC=1, T_ACC=3, NEAR_RESERVE=1)
    a = 200 << 12
    h.read(a)
    h.read(a)
    assert h.r.engine.history == []
    h.read(a)
    rec = h.r.engine.history[-1]
    assert rec["source"] == 1 and rec["done"] and h.r.pt[200].pool == NEAR
    start = [e for e in h.r.events if e[0] == EV_START][0]
    assert start[3] == start_arg(PROMOTE, 1, True)


@pytest.mark.req("MR-F22", "MR-F23", "MR-E10")
def test_triggers_dropped_when_busy_or_nomig():
    h = hb(EN_ACC=1, T_ACC=1, NEAR_RESERVE=2, WALK_PAUSE=1)
    h.read(200 << 12)                                                # trigger: PROMOTE 200
    assert h.r.pt[200].state == MIGRATING
    h.read(201 << 12)                                                # engine busy: dropped
    h.csr.write("CTRL", h.r.cfg.ctrl & ~(1 << 6))
    h.r.settle()
    assert [x["p"] for x in h.r.engine.history] == [200]
    h.read(201 << 12)                                                # now it fires
    assert [x["p"] for x in h.r.engine.history] == [200, 201]
    # nomig: after an abort the line never triggers again, explicit commands still run
    h2 = hb(EN_ACC=1, T_ACC=2, NEAR_RESERVE=1)
    e = h2.r.pt[300]
    h2.r.ports[e.port].poison.add(e.desc.dev(32 * 50, 12))
    h2.read(300 << 12)
    h2.read(300 << 12)                                               # trigger -> abort
    assert h2.r.engine.status == ST_ABORTED and h2.r.lines.of(300).nomig
    h2.r.ports[e.port].poison.clear()
    for _ in range(5):
        h2.read(300 << 12)
    assert len(h2.r.engine.history) == 1
    h2.cmd(PROMOTE, 300)
    assert h2.r.engine.status == ST_DONE and h2.r.pt[300].pool == NEAR


@pytest.mark.req("MR-F23", "MR-F19", "MR-C10")
def test_explicit_commands_queue_and_precede_triggers():
    h = hb(NEAR_RESERVE=4, EN_ACC=1, T_ACC=1)
    for p in (300, 301, 302):
        assert h.cmd(PROMOTE, p, settle=False) == 0
    h.read(400 << 12, settle=False)                                  # cmdq busy: no trigger
    h.r.settle()
    assert [x["p"] for x in h.r.engine.history] == [300, 301, 302]


@pytest.mark.req("MR-F25", "MR-C24")
def test_walker_outstanding_bound_and_order():
    h = hb(NEAR_RESERVE=1, MIG_OUTSTANDING=3)
    h.cmd(PROMOTE, 200, settle=False)
    peak = 0
    while h.r.step():
        peak = max(peak, h.r.engine.walk_inflight)
    assert peak <= 3
    walk = [m for m in h.r.ports.log if m.cls == MIG and not m.wr]
    assert max(m.nb for m in walk) == 3 and h.r.pt[200].pool == NEAR


@pytest.mark.req("MR-F27", "MR-E13", "MR-F13", "MR-V5")
def test_per_sector_completion_during_migration():
    h = hb(NEAR_RESERVE=1, WALK_STOP_EN=1, WALK_STOP=16)
    a = 200 << 12
    h.cmd(PROMOTE, 200)
    assert h.r.pt[200].state == MIGRATING
    rsp = h.read(a + 32 * 100, 4)                                    # served by demand fill
    assert all(err == 0 for _, err in rsp.beats)
    w = h.write(a + 32 * 120, [5, 6])                                # full writes: no fetch
    assert w.beats == [(0, 0)]
    h.csr.write("CTRL", h.r.cfg.ctrl & ~(1 << 7))
    h.r.settle()
    c = h.r.counters
    assert (c["MIG_DEMAND_FILLS"], c["MIG_FULL_WRITES"]) == (4, 2)
    assert c["MIG_WALK_FILLS"] == h.p.NS - 6
    check_v5(h)
    assert h.read(a + 32 * 121).beats[0][0] == 6


@pytest.mark.req("MR-F28", "MR-C13", "MR-E13")
def test_stall_mode_holds_requests():
    h = hb(NEAR_RESERVE=1, MIG_STALL=1, WALK_PAUSE=1)
    h.cmd(PROMOTE, 200)
    req = h.read(200 << 12, settle=False)
    other = h.read(0, settle=False)                                  # held behind (in order)
    h.r.settle()
    assert h.r.out[0] == [] and h.r.route_q
    h.csr.write("CTRL", h.r.cfg.ctrl & ~(1 << 6))
    h.r.settle()
    out = h.r.responses()
    assert [x.uid for x in out] == [req.uid, other.uid]
    first = [m for m in h.r.ports.log if m.port == 0 and not m.wr and m.cls == NEAR]
    assert first and first[0].addr == 63 << 12                       # routed by the new entry
    assert h.r.counters["MIG_DEMAND_FILLS"] == 0


@pytest.mark.req("MR-F29", "MR-F26", "MR-V7")
def test_write_during_write_phase_is_written_again():
    h = hb(NEAR_RESERVE=1)
    h.cmd(PROMOTE, 200, settle=False)
    # run until the write-out has started
    while not any(m.cls == MIG and m.wr for m in h.r.ports.log):
        assert h.r.step()
    w = h.write(200 << 12, [0x77], settle=False)                    # sector 0 already written
    h.r.settle()
    assert h.r.pt[200] == PTE.of(STABLE, NEAR, Desc(0, 63))
    assert h.r.ports[0].read_sector(63 << 12) == 0x77
    outs = [m for m in h.r.ports.log if m.cls == MIG and m.wr and m.addr == 63 << 12]
    assert len(outs) == 2 and w is not None


@pytest.mark.req("MR-F38")
def test_fence_waits_for_earlier_requests():
    h = hb(NEAR_RESERVE=1)
    h.write(200 << 12, [1], settle=False)                          # FAR line: partial? full
    d = h.r.pt[0].desc
    h.r.request(0, 9, 0, 1, True, [0x55], [FULL_BE])                 # direct near write port 0
    h.cmd(DEMOTE, 0, settle=False)                                   # (rejected: FFREE empty)
    h.r.settle()
    h.cmd(PROMOTE, 111, settle=False)
    h.r.request(0, 10, 0, 1, True, [0x66], [FULL_BE])               # NEAR write to HBM (0,0)
    h.cmd(DEMOTE, 0, settle=False)
    # dispatch only MIG traffic: the DEMOTE's walker must not read port 0 before the NEAR write
    for _ in range(2000):
        acts = [a for a in h.r.actions() if not (a[0] == "dispatch" and a[2] == NEAR)]
        if not acts:
            break
        h.r.do(acts[0])
    assert not any(m.cls == MIG and m.port == d.port and not m.wr and m.addr < 1 << 12
                   for m in h.r.ports.log)
    h.r.settle()
    assert h.read(0).beats[0][0] == 0x66


@pytest.mark.req("MR-E9", "MR-V8")
def test_abort_on_poisoned_walker_fill_swap():
    h = hb(NEAR_RESERVE=0)
    h.write(0, [0x99])                                               # victim page 0, near
    h.r.ports[0].poison.add(32 * 7)                                  # line B fill poisoned
    h.write((112 << 12) + 32, [0x42], [0xF])                         # far line, dirty
    h.cmd(SWAP, 112, 0)
    assert h.r.engine.status == ST_ABORTED
    ev = [e for e in h.r.events if e[0] in (EV_ABORT, EV_DONE)]
    assert ev == [(EV_ABORT, 0, 112, 7)]
    assert h.r.pt[112] == PTE.of(STABLE, FAR, Desc(1, 16))
    assert h.r.pt[0] == PTE.of(STABLE, NEAR, Desc(0, 0))
    a = h.r.lines.of(112)
    assert a is not None and not a.lock and a.nomig and a.dirty
    assert h.r.lines.of(0) is None                                   # line B evicted
    assert h.r.counters["MIG_ABORT"] == 1 and not h.r.ffree
    h.r.ports[0].poison.clear()
    assert h.read(0).beats[0][0] == 0x99
    assert h.read((112 << 12) + 32).beats[0][0] & 0xFFFFFFFF == 0x42


@pytest.mark.req("MR-E11", "MR-E12", "MR-F19")
def test_mig_cmd_rejections():
    h = hb(NEAR_RESERVE=0)
    cases = [((7, 5), REJ_STATE), ((PROMOTE, 900), REJ_RANGE), ((SWAP, 112, 900), REJ_RANGE),
             ((PROMOTE, 5), REJ_STATE), ((DEMOTE, 112), REJ_STATE),
             ((SWAP, 112, 113), REJ_STATE), ((SWAP, 112, 112), REJ_STATE),
             ((DEMOTE, 0), REJ_NOFRAME)]
    for args, code in cases:
        assert h.cmd(*args) == 0
        assert h.r.engine.status == code, args
        assert h.r.events[-1] == (EV_REJECT, 0, args[1], code)
    assert h.r.ports.log == []
    hi = hb(MODE=1)
    hi.cmd(SWAP, 5, 900)
    assert hi.r.engine.status == REJ_RANGE                           # range before mode
    hi.cmd(SWAP, 5, 6)
    assert hi.r.engine.status == REJ_STATE
    # FIFO full (CMDQ_DEPTH 4, nothing popped yet): the write itself answers err and REJ_FULL
    errs = [h.cmd(PROMOTE, 200 + k, settle=False) for k in range(6)]
    assert errs == [0, 0, 0, 0, 1, 1] and h.r.engine.status == REJ_FULL
    assert h.r.events[-2:] == [(EV_REJECT, 0, 204, REJ_FULL), (EV_REJECT, 0, 205, REJ_FULL)]
    h.r.settle()
    assert [x["p"] for x in h.r.engine.history] == [200, 201, 202, 203]
    # EN_EXPLICIT = 0: err, nothing queued, no status change, no event
    h3 = hb(EN_EXPLICIT=0)
    assert h3.cmd(PROMOTE, 200) == 1
    assert h3.r.events == [] and h3.r.engine.status == 0 and not h3.r.engine.cmdq


@pytest.mark.req("MR-V9", "MR-F26")
def test_no_line_holds_a_stable_near_page():
    h = hb(NEAR_RESERVE=0)
    h.read(112 << 12)
    h.cmd(SWAP, 112, 3)
    for line in h.r.lines:
        if line.tv:
            assert not h.r.pt[line.tag].is_(STABLE, NEAR)
    assert route(h.r.init, 0, 12) == (0, 0)
    lf = [e for e in h.r.events if e[0] == EV_LINE_FULL]
    assert len(lf) == 2
