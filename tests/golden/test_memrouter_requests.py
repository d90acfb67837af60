"""Request checks, split, routing and line service of the router model (memrouter §4.3-§4.6):
MR-GV11 row by row, every MR-E response of the request path, and directed checks of fills,
writes, LRU, eviction and counters."""

import pytest

from golden.memrouter.formats import (E_POISON, E_RANGE, E_UNMAPPED, EV_ALLOC, EV_EVICT, FAR,
                                      FULL_BE, MIG, NEAR, OK, UNMAPPED_PTE)
from golden.memrouter.harness import Harness
from golden.memrouter.params import reference
from golden.memrouter.pattern import pat


def sector_pat(j, d):
    """The initial 256-bit sector at device byte d of port j."""
    return sum(pat(j, d + 4 * w) << (32 * w) for w in range(8))


def hb(name="B", params=None, **cfg):
    return Harness(*reference(name, params, **cfg))


def mreqs(h):
    return [(m.port, m.addr, m.nb, m.wr, m.cls) for m in h.r.ports.log]


@pytest.mark.req("MR-GV11", "MR-F3", "MR-F4", "MR-F10", "MR-F44", "MR-I2")
def test_gv11_split_near_near():
    h = hb()
    rsp = h.read(0x0F80, 8)
    assert mreqs(h) == [(0, 0x0F80, 4, False, NEAR), (1, 0x0000, 4, False, NEAR)]
    want = [sector_pat(0, 0xF80 + 32 * k) for k in range(4)] + \
           [sector_pat(1, 32 * k) for k in range(4)]
    assert rsp.beats == [(w, OK) for w in want]
    assert h.r.counters["SECT_HBM"] == 4 and h.r.counters["SECT_NEARM"] == 4


@pytest.mark.req("MR-GV11", "MR-F3", "MR-F9", "MR-F11", "MR-F12", "MR-C15")
def test_gv11_split_near_far_line():
    h = hb()
    rsp = h.read(0x6FF80, 8)
    assert mreqs(h) == [(0, 0x3FF80, 4, False, NEAR), (1, 0x10000, 4, False, FAR)]
    assert h.r.events == [(EV_ALLOC, 0, 112, 0)]
    assert rsp.beats[4:] == [(sector_pat(1, 0x10000 + 32 * k), OK) for k in range(4)]
    line = h.r.lines.of(112)
    assert line.valid == 0xF and not line.pending


@pytest.mark.req("MR-GV11", "MR-E1", "MR-E2", "MR-E3", "MR-E5", "MR-E14", "MR-V13", "MR-F2")
@pytest.mark.parametrize("addr,nb,beats", [(0x10, 1, 1), (0x0, 9, 9), (0x33FFE0, 2, 2)])
def test_gv11_range_errors(addr, nb, beats):
    h = hb()
    before = dict(h.r.counters)
    rsp = h.read(addr, nb)
    assert rsp.beats == [(0, E_RANGE)] * beats
    assert h.r.ports.log == [] and h.r.events == []
    assert h.r.counters["ERR_RANGE"] == 1
    assert not any(h.r.ref) and all(not line.tv for line in h.r.lines)
    changed = {k for k in before if before[k] != h.r.counters[k]}
    assert changed == {"ERR_RANGE", "PREQ_BEATS", "PRSP_BEATS"}


@pytest.mark.req("MR-GV11", "MR-E4", "MR-E5", "MR-F37", "MR-V13")
def test_gv11_unmapped_second_part():
    h = hb()
    h.csr.write("PT_ADDR", 5)
    assert h.csr.write("PT_DATA", UNMAPPED_PTE.encode()) == 0
    rsp = h.write(0x4FE0, [1, 2], [FULL_BE, FULL_BE])
    assert rsp.beats == [(0, E_UNMAPPED)]
    assert h.r.ports.log == [] and h.r.ref[4] == 0
    assert h.r.counters["ERR_UNMAPPED"] == 1
    assert h.read(0x4FE0).beats == [(sector_pat(0, 0x2FE0), OK)]    # page 4 not written
    assert h.r.ref[4] == 1


@pytest.mark.req("MR-GV11", "MR-E7", "MR-F12", "MR-F14")
def test_gv11_poisoned_fill():
    h = hb()
    h.r.ports[1].poison.add(0x10020)
    rsp = h.read(0x70020)
    assert rsp.beats == [(0, E_POISON)]
    assert h.r.counters["ERR_POISON"] == 1
    line = h.r.lines.of(112)
    assert not line.valid >> 1 & 1 and not line.pending
    h.r.ports[1].poison.clear()
    n = len(h.r.ports.log)
    assert h.read(0x70020).beats == [(sector_pat(1, 0x10020), OK)]
    assert len(h.r.ports.log) == n + 1                              # re-fetched


@pytest.mark.req("MR-E6", "MR-V13")
def test_direct_read_poison_keeps_data():
    h = hb()
    h.r.ports[0].poison.add(0x1000 + 64)
    rsp = h.read(0x2000 + 32, 3)                                    # page 2 = HBM frame 1
    assert rsp.beats == [(sector_pat(0, 0x1020), OK), (sector_pat(0, 0x1040), E_POISON),
                         (sector_pat(0, 0x1060), OK)]
    assert h.r.counters["ERR_POISON"] == 1


@pytest.mark.req("MR-E8", "MR-F13", "MR-V13")
def test_poisoned_fill_drops_waiting_writes():
    """A partial write's own fill and a full write waiting on a pending fill: both sectors stay
    unwritten with an E_POISON ack; the write's other sectors are applied."""
    h = hb()
    a = h.page_addr(112)
    h.r.ports[1].poison.add(0x10000)
    rd = h.read(a, 1, settle=False)                                 # sector 0 now pending
    w_full = h.write(a, [0xAA, 0xBB], [FULL_BE, FULL_BE], settle=False)
    w_part = h.write(a + 64, [0xCC], [0x3], settle=False)            # sector 2: partial
    h.r.ports[1].poison.add(0x10040)
    h.r.settle()
    out = {x.uid: x for x in h.r.responses()}
    assert out[rd.uid].beats == [(0, E_POISON)]
    assert out[w_full.uid].beats == [(0, E_POISON)]
    assert out[w_part.uid].beats == [(0, E_POISON)]
    assert sorted(h.r.dropped) == [(w_full.uid, a), (w_part.uid, a + 64)]
    line = h.r.lines.of(112)
    assert line.valid == 0b10 and line.data[1] == 0xBB               # other sector applied
    assert h.r.counters["ERR_POISON"] == 3


@pytest.mark.req("MR-F12", "MR-F14", "MR-F13", "MR-F46")
def test_fills_coalesce_and_never_repeat():
    h = hb()
    a = h.page_addr(200)
    h.write(a + 3 * 32, [7])                                         # full write: no fetch
    assert h.r.ports.log == []
    h.write(a + 9 * 32, [0x5], [0x1])                                # partial: fill + merge
    e = h.r.pt[200]
    assert [(m.port, m.addr, m.nb) for m in h.r.ports.log] == \
        [(e.port, (e.frame << 12) + 9 * 32, 1)]
    h.r.ports.log.clear()
    r1 = h.read(a, 8, settle=False)                                  # 0..7, sector 3 valid
    r2 = h.read(a + 32, 2, settle=False)                             # pending: no new fill
    h.r.settle()
    assert [(m.nb, m.addr & 0xFFF) for m in h.r.ports.log] == [(3, 0), (4, 4 * 32)]
    outs = {x.uid: x for x in h.r.responses()}
    assert outs[r1.uid].beats[3] == (7, OK)
    assert outs[r2.uid].beats == outs[r1.uid].beats[1:3]
    assert h.read(a + 9 * 32).beats[0][0] & 0xFF == 0x5
    assert h.read(a + 9 * 32).beats[0][0] >> 8 == sector_pat(e.port, (e.frame << 12) + 9 * 32) >> 8


@pytest.mark.req("MR-F15", "MR-F16", "MR-F17", "MR-F52")
def test_lru_victim_and_write_back():
    h = hb()
    far = list(range(112, 112 + 9))
    for p in far[:8]:
        h.read(h.page_addr(p))
    assert [h.r.lines[i].tag for i in range(8)] == far[:8]           # lowest free line first
    h.read(h.page_addr(far[0]))                                      # touch: far[1] is LRU now
    h.write(h.page_addr(far[1], 5), [0x11, 0x22], [FULL_BE, 0xF])    # MRU, 2 dirty sectors
    h.r.ports.log.clear()
    h.read(h.page_addr(far[8]))                                      # evicts far[2]
    assert h.r.lines.of(far[2]) is None and h.r.lines.of(far[8]).idx == 2
    assert [e for e in h.r.events if e[0] == EV_EVICT] == [(EV_EVICT, 2, far[2], 0)]
    h.r.lru = h.r.lines.lru
    for p in far[3:]:
        h.read(h.page_addr(p))
    h.read(h.page_addr(far[0]))
    h.r.ports.log.clear()
    h.read(h.page_addr(300))                                         # evicts far[1] (dirty)
    e1 = h.r.pt[far[1]]
    wb = [(m.port, m.addr, m.nb, m.wr, m.cls) for m in h.r.ports.log if m.wr]
    assert wb == [(e1.port, (e1.frame << 12) + 5 * 32, 2, True, FAR)]
    assert h.r.counters["WB_SECT"] == 2 and h.r.counters["EVICTS"] == 2
    assert h.r.ports[e1.port].read_sector((e1.frame << 12) + 6 * 32) & 0xFFFFFFFF == \
        (sector_pat(e1.port, (e1.frame << 12) + 6 * 32) & ~0xFFFFFFFF | 0x22) & 0xFFFFFFFF
    assert h.r.counters["SECT_FILL"] > 0 and h.r.counters["SECT_LINE"] > 0


@pytest.mark.req("MR-F18", "MR-C23")
def test_access_counter_window_and_saturation():
    h = hb(WINDOW=1000)
    a = h.page_addr(150)
    for _ in range(300):
        h.read(a)
    line = h.r.lines.of(150)
    assert line.cnt == 255
    h.r.tick(999)
    assert line.cnt == 255
    h.r.tick(1)                                                      # cycle 1000
    assert line.cnt == 0
    h.read(a)
    assert line.cnt == 1
    h2 = hb(WINDOW=0)
    h2.read(a)
    h2.r.tick(10 ** 6)
    assert h2.r.lines.of(150).cnt == 1


@pytest.mark.req("MR-F11", "MR-C15", "MR-F52", "MR-F39")
def test_far_alloc_off_goes_direct():
    h = hb(FAR_ALLOC=0)
    h.read(h.page_addr(113), 2)
    assert mreqs(h) == [(2, 0x10000, 2, False, FAR)]
    assert all(not line.tv for line in h.r.lines)
    assert h.r.counters["SECT_FARD"] == 2


@pytest.mark.req("MR-F45", "MR-F44", "MR-E14", "MR-I8", "MR-C8")
def test_acks_and_order_and_rob_reservation():
    p, c = reference("B", params=dict(ROB_BEATS=16, N_PROC=2))
    h = Harness(p, c)
    w = h.write(0x0, [1], settle=False)                                # direct near write
    bad = h.read(0x10, 1, settle=False)                                # rejected at once
    rd = h.read(0x0, 8, settle=False)
    assert h.r.out[0] == []                                          # write not yet performed
    assert h.r.request(0, 1, 0x40, 8) is None                        # ROB: 1+1+8+8 > 16
    assert h.r.request(1, 1, 0x0, 8) is not None                     # other port's own ROB
    last = h.read(0x40, 6, settle=False)                             # 1+1+8+6 = 16 fits
    h.r.settle()
    out = h.r.responses(0)
    assert [x.uid for x in out] == [w.uid, bad.uid, rd.uid, last.uid]
    assert out[0].beats == [(0, OK)] and out[1].beats == [(0, E_RANGE)]
    assert out[2].beats[0] == (1, OK)                                # sees the earlier write


@pytest.mark.req("MR-F43", "MR-V6", "MR-P6")
def test_processor_link_beats():
    h = hb()
    h.read(0x0, 8)
    h.write(h.page_addr(120), [1, 2, 3])
    h.read(0x10, 1)
    c = h.r.counters
    assert c["PREQ_BEATS"] == 1 + 3 + 1 and c["PRSP_BEATS"] == 8 + 1 + 1
    before = (c["PREQ_BEATS"], c["PRSP_BEATS"])
    assert h.cmd(1, 120) == 0
    assert (c["PREQ_BEATS"], c["PRSP_BEATS"]) == before              # migration: 0 link beats
    assert any(m.cls == MIG for m in h.r.ports.log)
