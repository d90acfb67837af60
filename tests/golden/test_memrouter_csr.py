"""The CSR block of the router model (memrouter §3.3): register map, PT_INIT, FLUSH,
CLR_COUNTERS, indirect PT access, free-list pushes, LINE_STATUS and every CSR error of MR-E12."""

import pytest

from golden.memrouter.csr import OFFSETS
from golden.memrouter.formats import (EV_EVICT, FAR, FULL_BE, ID_VALUE, NEAR, PTE, STABLE,
                                      UNMAPPED, Desc)
from golden.memrouter.harness import Harness
from golden.memrouter.params import reference, slot_m


def hb(name="B", **cfg):
    return Harness(*reference(name, **cfg))


@pytest.mark.req("MR-F48", "MR-C11", "MR-C12", "MR-C13", "MR-C14", "MR-C15", "MR-C16",
                 "MR-C17", "MR-C22", "MR-C23", "MR-C24", "MR-C25", "MR-C26", "MR-C27")
def test_reset_values_and_map():
    h = hb()
    c = h.csr
    assert c.read("ID") == ID_VALUE
    assert c.read("CTRL") == 0x024
    assert c.read("PAGES") == 832 and c.read("SLOT_LEN") == 7
    assert [c.read(n) for n in ("NEAR_FRAMES", "NEAR_RESERVE", "HBM_FRAMES", "MOD_FRAMES")] == \
        [112, 0, 64, 256]
    assert [c.read(n) for n in ("T_SECT", "T_ACC", "WINDOW", "WALK_STOP", "MIG_OUTSTANDING",
                                "MIG_STARVE", "UW")] == [32, 16, 4096, 0, 8, 1024, 1024]
    assert [c.read(0x100 + 4 * k) for k in range(5)] == [12, 0, 8, 8, 0]
    assert [c.read(0x120 + 4 * k) for k in range(5)] == [3, 0, 8, 8, 0]
    assert [c.read(0x80 + 4 * s) for s in range(7)] == [0, 1, 0, 3, 0, 5, 0]
    assert c.read("STATUS") == 0b10                                 # IDLE
    assert c.read("NFREE_CNT") == 0 and c.read("FFREE_CNT") == 0
    c.write("PT_ADDR", 112)
    assert PTE.decode(c.read("PT_DATA")) == PTE.of(STABLE, FAR, Desc(1, 16))


@pytest.mark.req("MR-E12", "MR-V13")
@pytest.mark.parametrize("off,we", [(0x048, 0), (0x048, 1), (0x000, 1), (0x008, 1),
                                    (0x020, 1), (0x044, 1), (0x0D0, 1), (0x0E0, 1),
                                    (0x200, 1), (0x300, 1), (0x400, 1), (0x500, 0),
                                    (0x180, 0), (0x0C2, 0)])
def test_unknown_and_read_only(off, we):
    h = hb()
    before = (list(h.r.pt), dict(h.r.counters))
    assert h.csr.access(off, bool(we), 0x1234)[1] == 1
    assert (list(h.r.pt), dict(h.r.counters)) == before


@pytest.mark.req("MR-E12", "MR-F6", "MR-V13")
def test_pt_access_errors():
    h = hb()
    assert h.csr.write("PT_ADDR", 1024) == 1                          # >= PT_ENTRIES
    h.csr.write("PT_ADDR", 200)
    h.read(200 << 12)                                                # page 200 has a line
    assert h.csr.write("PT_DATA", 0) == 1
    h.csr.write("CTRL", h.r.cfg.ctrl | 1 << 6)                       # walker paused
    h.cmd(1, 300)
    h.csr.write("PT_ADDR", 300)                                       # MIGRATING
    assert h.csr.write("PT_DATA", 0) == 1
    h.csr.write("PT_ADDR", 301)
    assert h.csr.write("PT_DATA", PTE.of(STABLE, NEAR, Desc(2, 9)).encode()) == 0
    assert h.r.pt[301] == PTE.of(STABLE, NEAR, Desc(2, 9))


@pytest.mark.req("MR-E12", "MR-V13")
def test_free_list_push_full():
    p, c = reference("B", params=dict(PT_ENTRIES=256), MOD_FRAMES=16 + 10, NEAR_FRAMES=112)
    h = Harness(p, c)
    for k in range(256):
        assert h.csr.write("FFREE_PUSH", Desc(1, k).encode()) == 0
    assert h.csr.write("FFREE_PUSH", Desc(1, 0).encode()) == 1
    assert h.csr.read("FFREE_CNT") == 256
    assert h.csr.write("NFREE_PUSH", Desc(0, 3).encode()) == 0
    assert list(h.r.nfree) == [Desc(0, 3)]


@pytest.mark.req("MR-E12", "MR-F6", "MR-F7", "MR-V13")
def test_pt_init_command():
    h = hb()
    h.read(300 << 12)
    h.r.ref[0] = h.r.nd[0] = 1
    h.csr.write("NEAR_RESERVE", 200)                                  # illegal: > NEAR_FRAMES
    before = list(h.r.pt)
    assert h.csr.write("CMD", 1) == 1 and h.r.pt == before
    h.csr.write("NEAR_RESERVE", 7)
    h.csr.write(0x80 + 4 * 1, slot_m(2))                             # SLOT[1] = M2, SLOT[5] = M0
    h.csr.write(0x80 + 4 * 5, slot_m(0))
    assert h.csr.write("CMD", 1) == 0
    assert h.csr.read("PAGES") == 112 - 7 + 720
    assert h.r.pt[1] == PTE.of(STABLE, NEAR, Desc(3, 0)) and h.r.pt[5].port == 1
    assert all(not line.tv for line in h.r.lines) and not any(h.r.ref) and not any(h.r.nd)
    assert h.csr.read("NFREE_CNT") == 7 and h.r.hand == 0
    assert not [e for e in h.r.events if e[0] == EV_EVICT]            # no write-back
    h.csr.write("CTRL", h.r.cfg.ctrl | 1)                            # inclusive
    assert h.csr.write("CMD", 1) == 0
    assert h.csr.read("PAGES") == 720 and h.csr.read("NFREE_CNT") == 112
    h.csr.write("PT_ADDR", 720)
    assert PTE.decode(h.csr.read("PT_DATA")).state == UNMAPPED


@pytest.mark.req("MR-F47", "MR-F17")
def test_flush_evicts_every_line_in_order():
    h = hb()
    h.write((300 << 12) + 64, [1, 2], [FULL_BE, 0x1])
    h.read(301 << 12)
    h.write(302 << 12, [3])
    assert h.csr.write("CMD", 2) == 0
    h.r.settle()
    ev = [e for e in h.r.events if e[0] == EV_EVICT]
    assert ev == [(EV_EVICT, 0, 300, 2), (EV_EVICT, 1, 301, 0), (EV_EVICT, 2, 302, 1)]
    assert h.r.counters["EVICTS"] == 3 and h.r.counters["WB_SECT"] == 3
    assert all(not line.tv for line in h.r.lines)
    e = h.r.pt[302]
    assert h.r.ports[e.port].read_sector(e.frame << 12) == 3


@pytest.mark.req("MR-F48", "MR-F52")
def test_counters_line_status_and_clear():
    h = hb()
    h.read(0, 2)
    h.read(1 << 12)
    h.read(300 << 12, 3)
    h.read((300 << 12) + 32)
    c = h.csr
    names = ["PREQ_BEATS", "PRSP_BEATS", "SECT_HBM", "SECT_NEARM", "SECT_LINE", "SECT_FILL",
             "SECT_FARD"]
    assert [c.read(0x200 + 4 * k) for k in range(7)] == [4, 7, 2, 1, 1, 3, 0]
    assert names[0] == "PREQ_BEATS"
    e = h.r.pt[300]
    assert c.read(0x300 + 0x20 * e.port + 4) == 3                    # RD_F of that port
    assert c.read(0x300 + 0) == 2                                    # RD_N of HBM
    st = c.read(0x400)
    assert st & 1 and (st >> 4) & 0xFFF == 3 and st >> 16 == 300
    assert c.write("CMD", 3) == 0
    assert all(c.read(0x200 + 4 * k) == 0 for k in range(18))
    assert c.read(0x300) == 0
    assert c.read(OFFSETS["MIG_STATUS"]) == 0
