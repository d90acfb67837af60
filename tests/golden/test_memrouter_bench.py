"""Seed arithmetic and streaming targets (memrouter MR-GV2..GV6, MR-GV19, MR-GV20) from the
golden configurations, and the ideal-router streaming estimate of golden/memrouter/bench.py
(the bound the RTL benchmark MR-P1..P3 is measured against)."""

from fractions import Fraction as Fr

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.bench import qos_shares, streaming, streaming_requests
from golden.memrouter.ifmap import pt_init
from golden.memrouter.params import geometry, reference

GB = 4          # frames of 4 KiB per seed GB (§2.4)
CH = Fr(1, 8)   # one 128-GB/s channel unit in beats/cycle


def port_bw(j):
    return gv.SECTOR_BW["HBM"] if j == 0 else gv.SECTOR_BW["OFF"]


@pytest.mark.req("MR-GV2", "MR-GV6")
def test_gv2_gv6_seed_topology():
    p, c = reference("A")
    hbm_gb, mod_gb = Fr(c.HBM_FRAMES, GB), Fr(c.MOD_FRAMES, GB)
    assert (hbm_gb, mod_gb) == (24, 64)
    assert hbm_gb + 2 * mod_gb == 152 == Fr(geometry(p, c).PAGES, GB)
    hbm, link = port_bw(0) / CH * 128, port_bw(1) / CH * 128            # GB/s
    assert (hbm, link) == (512, 128) and hbm + 2 * link == 768
    assert 6 * (hbm_gb + 2 * mod_gb) == 912 and Fr(6 * 768, 1024) == Fr(9, 2)
    assert Fr(896, 512) == Fr(7, 4) and Fr(768, 512) == Fr(3, 2) and Fr(384, 128) == 3
    assert port_bw(0) / CH == 4                                          # 4 channel units


@pytest.mark.req("MR-GV3", "MR-GV5")
def test_gv3_gv5_near_pools():
    p, c = reference("B")
    slots = c.SLOTS
    off = sum(1 for s in slots if s & 1)
    assert Fr(len(slots) - off, len(slots)) == Fr(4, 7) and Fr(off, len(slots)) == Fr(3, 7)
    g = geometry(p, c)
    on = Fr(g.RON * g.REG, GB)
    carve = Fr(g.CARVE * p.N_OFF, GB)
    assert (on, carve, on + carve) == (16, 12, 28)
    assert (port_bw(0) + p.N_OFF * port_bw(1)) / CH * 128 == 896
    assert all(d.port != 0 for d in map(lambda f: pt_init(p, c).ifmap.far_desc(f), range(9)))
    pa, ca = reference("A")
    ga = geometry(pa, ca)
    assert Fr(ga.RON * ga.REG + ga.CARVE * pa.N_OFF, GB) == 36            # +50 % capacity
    assert (port_bw(0) + 2 * port_bw(1)) / port_bw(0) == Fr(3, 2)
    assert (port_bw(0) + 2 * port_bw(1)) / (2 * port_bw(1)) == 3
    assert all(q.RATE_F == 0 for q in ca.QOS[1:])                       # far not guaranteed


@pytest.mark.req("MR-GV4", "MR-GV20")
def test_gv4_gv20_capped_pools_and_sweeps():
    p, c = reference("C")
    q = c.QOS[1]
    near_share = Fr(q.RATE_N, q.RATE_N + q.RATE_F)
    assert near_share == Fr(2, 3)
    assert 512 + 3 * 128 * near_share == 768
    assert 3 * 128 * (1 - near_share) == 128                            # reserved far bandwidth
    g = geometry(p, c)
    gb_c = 3                                                            # CFG-C: 1 GB = 3 frames
    assert (Fr(g.CARVE * p.N_OFF, gb_c), Fr(g.RON * g.REG, gb_c)) == (8, 16)
    assert Fr(8, 256) == Fr(16, 512) == Fr(1, 32)                       # 31.25 ms
    per_module_near = Fr(q.RATE_N, p.QDEN)                              # 1/12 beat/cycle
    assert per_module_near == Fr(1, 12)
    carve_frames = g.CARVE * p.N_OFF
    hbm_frames = g.RON * g.REG
    assert (carve_frames, hbm_frames) == (24, 48)
    assert carve_frames * p.NS / (p.N_OFF * per_module_near) == 12288
    assert hbm_frames * p.NS / port_bw(0) == 12288
    assert 152 * 2 ** 30 // 2 ** 16 == 2490368


@pytest.mark.req("MR-GV19")
def test_gv19_targets_and_round_balance():
    for name, (bw, target, ratio, tratio) in gv.GV19.items():
        p, c = reference(name)
        near_ports = {0} | {1 + (s >> 1) for s in c.SLOTS if s & 1}
        assert sum(port_bw(j) for j in near_ports) == bw
        assert bw * Fr(97, 100) == target
        assert bw / Fr(1, 2) == ratio
        if tratio is not None:
            assert ratio * Fr(97, 100) == tratio
    p, c = reference("B")
    init = pt_init(p, c)
    gen = streaming_requests(p, c, init)
    per_port = {}
    for _ in range(len(c.SLOTS)):
        a = next(gen)
        j = init.pt[a >> p.LOG2G].port
        per_port[j] = per_port.get(j, 0) + 8
    assert per_port == {0: 32, 1: 8, 2: 8, 3: 8}
    assert per_port[0] / port_bw(0) == per_port[1] / port_bw(1) == 64


@pytest.mark.req("MR-GV19")
def test_ideal_streaming_reaches_targets():
    got = {n: streaming(*reference(n))[0] for n in ("D", "A", "B")}
    for name, (_, target, _, tratio) in gv.GV19.items():
        assert got[name] >= target, (name, got[name])
        if tratio is not None:
            assert got[name] / got["D"] >= tratio


def _cfg_c(rob, rates=None):
    p, c = reference("C", params=dict(ROB_BEATS=rob), FAR_ALLOC=0)
    if rates:
        for q in c.QOS[1:]:
            q.RATE_N, q.RATE_F = rates
    return p, c


@pytest.mark.req("MR-GV4")
def test_ideal_qos_shares():
    """The §4.14 QoS workload through the ideal router: with a response buffer deep enough to
    keep every module busy (ROB_BEATS 1024), the near share is RATE_N/(RATE_N+RATE_F) on every
    OFF port, and each class alone gets the whole port (work conservation)."""
    for rates in ((2, 1), (1, 2)):
        shares = qos_shares(*_cfg_c(1024, rates))
        for n, f in shares.values():
            assert n + f >= 1212
            assert abs(n / (n + f) - Fr(rates[0], sum(rates))) <= 0.02
    for near, far in ((True, False), (False, True)):
        for n, f in qos_shares(*_cfg_c(1024), near=near, far=far).values():
            assert (n if near else f) >= 1212.5


def test_ideal_qos_rob_256_finding():
    """Documented finding (docs/memrouter.md): at the default ROB_BEATS = 256 the far stream in
    ppn order (16 requests per page, pages striped over the modules) keeps only about two of the
    three modules busy from one in-order response buffer, so even the ideal router stays below
    the 97 % of MR-P5 with far traffic alone and off the 2:1 split of MR-P4."""
    far_only = qos_shares(*_cfg_c(256), near=False)
    assert all(f < 1212.5 for _, f in far_only.values())
    n, f = qos_shares(*_cfg_c(256, (2, 1)))[1]
    assert abs(n / (n + f) - Fr(2, 3)) > 0.02
