"""trackq parameters, run-time config legalisation, record layouts and input checks
(spec §3.2, §3.3, TQ-E6..E8 at function level)."""

import pytest

from golden.trackq.formats import (COUNTERS, ERR_CFG, ERR_CLS, ERR_FAST_MISS, ERR_FAST_TEX,
                                   ERR_INVAL_LIVE, ERR_TEX_SPLIT, Fill, Inval, Req, cmt_fields,
                                   counter_fields, fill_fields, inval_fields, make_req, pop_fields,
                                   req_fields, resp_fields, status_fields)
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.params import Config, TrackqParams, legalise

LEGAL = {  # name: (lo, hi) of §3.3
    "N_Q": (1, 64), "POOL": (2, 4096), "N_WARPS": (1, 64), "BANKS": (1, 8), "SECTORS": (4, 4),
    "DSLOTS": (2, 4096), "ID_W": (1, 32), "FAST_PATH": (0, 1), "FAST_DEPTH": (1, 64),
    "COMMIT_DEPTH": (1, 64), "FREELIST": (0, 1),
}


@pytest.mark.req("TQ-C1", "TQ-C2", "TQ-C3", "TQ-C4", "TQ-C5", "TQ-C6", "TQ-C7", "TQ-C8",
                 "TQ-C9", "TQ-C10", "TQ-C11", "TQ-C17")
@pytest.mark.parametrize("name", sorted(LEGAL))
def test_build_parameter_ranges(name):
    lo, hi = LEGAL[name]
    for good in {lo, hi, (lo + hi) // 2}:
        TrackqParams.test(**{name: good}, SEQ_W=16 if name != "POOL" else 32)
    for bad in (lo - 1, hi + 1, float(lo), str(lo), None, True):
        with pytest.raises(ValueError, match=name):
            TrackqParams.test(**{name: bad})


@pytest.mark.req("TQ-C12", "TQ-C17")
@pytest.mark.parametrize("pool,lo", [(2, 4), (4, 5), (16, 7), (17, 8), (512, 12), (4096, 15)])
def test_seq_w_range_depends_on_pool(pool, lo):
    """SEQ_W >= ceil(log2 POOL) + 3 and <= 32."""
    TrackqParams.test(POOL=pool, SEQ_W=lo)
    TrackqParams.test(POOL=pool, SEQ_W=32)
    for bad in (lo - 1, 33):
        with pytest.raises(ValueError, match="SEQ_W"):
            TrackqParams.test(POOL=pool, SEQ_W=bad)


def test_defaults_are_the_spec_columns():
    t = TrackqParams.test()
    assert (t.N_Q, t.POOL, t.N_WARPS, t.BANKS, t.SECTORS, t.DSLOTS, t.ID_W, t.FAST_PATH,
            t.FAST_DEPTH, t.COMMIT_DEPTH, t.FREELIST, t.SEQ_W) == (4, 16, 8, 4, 4, 16, 8, 1, 2,
                                                                    4, 1, 16)
    f = TrackqParams.full()
    assert (f.N_Q, f.POOL, f.N_WARPS, f.BANKS, f.DSLOTS, f.ID_W, f.FAST_DEPTH) == (48, 512, 64, 4,
                                                                                  256, 16, 4)
    assert TrackqParams.gv().FAST_DEPTH == 4
    cfg = t.default_config()
    assert (cfg.cfg_mode, cfg.cfg_lgq, cfg.cfg_cgm, cfg.cfg_reclaim) == (3, 2, 8, 0)


@pytest.mark.req("TQ-I1")
def test_req_layout_full_size_is_76_bits():
    f = req_fields(TrackqParams.full())
    assert f.names == ["id", "warp", "cls", "dslot", "need", "eoi", "eog", "is_status",
                       "fast_path"]
    assert [f.widths[n] for n in f.names] == [16, 6, 2, 32, 16, 1, 1, 1, 1]
    assert f.width == 76


@pytest.mark.req("TQ-I1")
def test_req_pack_roundtrip_and_bit_positions():
    p = TrackqParams.test()
    r = Req(id=0xA5, warp=5, cls=2, dslot=(1, 2, 3, 15), need=(1, 0, 8, 15), eoi=1, eog=0,
            is_status=0, fast_path=1)
    word = r.pack(p)
    assert Req.unpack(p, word) == r
    # id at bit 0, warp next (WARP_W = 3), cls (2), dslot 4 x 4 bits, need 4 x 4 bits, flags
    assert word & 0xFF == 0xA5 and (word >> 8) & 7 == 5 and (word >> 11) & 3 == 2
    assert (word >> 13) & 0xFFFF == 1 | 2 << 4 | 3 << 8 | 15 << 12
    assert (word >> 29) & 0xFFFF == 1 | 0 << 4 | 8 << 8 | 15 << 12
    assert word >> 45 == 0b1001          # eoi, eog, is_status, fast_path from bit 45


@pytest.mark.req("TQ-I3", "TQ-I4", "TQ-I5", "TQ-I7", "TQ-I8", "TQ-I9", "TQ-I10")
def test_other_layouts():
    p = TrackqParams.test(N_Q=6, BANKS=3, N_WARPS=1, DSLOTS=17, FAST_DEPTH=4)
    assert [(n, w) for n, w in fill_fields(p).fields] == [("bank", 2), ("dslot", 5), ("sector", 2)]
    assert [(n, w) for n, w in inval_fields(p).fields] == [("bank", 2), ("dslot", 5)]
    assert [(n, w) for n, w in resp_fields(p).fields] == [
        ("id", 8), ("warp", 1), ("cls", 2), ("src", 2), ("q", 3), ("eoi", 1), ("eog", 1)]
    assert [(n, w) for n, w in pop_fields(p).fields] == [("q", 3), ("id", 8)]
    assert [(n, w) for n, w in cmt_fields(p).fields] == [("src", 2), ("q", 3), ("id", 8)]
    st = status_fields(p)
    assert st.shapes["occ"] == (5, False, 6) and st.widths["fast_occ"] == 3
    assert st.widths["ready_vec"] == 6 and st.widths["lock_q"] == 3
    assert counter_fields().width == 8 * 32 and tuple(counter_fields().names) == COUNTERS
    one = TrackqParams.test(N_Q=1, BANKS=1)
    assert one.Q_W == 1 and one.BANK_W == 1 and one.WARP_W == 3


@pytest.mark.req("TQ-I11")
def test_error_bit_assignment():
    assert [ERR_CLS, ERR_FAST_TEX, ERR_FAST_MISS, ERR_TEX_SPLIT, ERR_INVAL_LIVE, ERR_CFG] == [
        1, 2, 4, 8, 16, 32]


@pytest.mark.req("TQ-I6", "TQ-C13")
def test_config_port_widths():
    p = TrackqParams.test(POOL=16, N_Q=4)              # CGM_W = 5, Q_W = 2
    Config(cfg_mode=3, cfg_lgq=3, cfg_cgm=31, cfg_reclaim=1).checked(p)
    for field, bad in (("cfg_mode", 4), ("cfg_lgq", 4), ("cfg_cgm", 32), ("cfg_reclaim", 2),
                       ("cfg_cgm", -1)):
        with pytest.raises(ValueError, match=field):
            Config(**{**p.default_config().as_dict(), field: bad}).checked(p)
    with pytest.raises(ValueError, match="cfg_cgm"):
        TrackingQueuesModel(p).step(cfg=p.default_config().replace(cfg_cgm=40))


@pytest.mark.req("TQ-E6", "TQ-C15")
@pytest.mark.parametrize("cgm,want,err", [(0, 1, ERR_CFG), (1, 1, 0), (16, 16, 0),
                                          (17, 16, ERR_CFG), (31, 16, ERR_CFG)])
def test_cgm_clamp(cgm, want, err):
    p = TrackqParams.test()
    eff = legalise(p, p.default_config(cfg_cgm=cgm))
    assert (eff.cgm, eff.errors) == (want, err)


@pytest.mark.req("TQ-E7", "TQ-C14", "TQ-C1")
def test_lgq_clamp_and_single_queue_modes():
    p = TrackqParams.test(N_Q=6)                       # Q_W = 3: cfg_lgq 0..7
    for lgq, want, err in ((0, 1, ERR_CFG), (1, 1, 0), (5, 5, 0), (6, 5, ERR_CFG),
                           (7, 5, ERR_CFG)):
        eff = legalise(p, p.default_config(cfg_mode=2, cfg_lgq=lgq))
        assert (eff.mode, eff.lgq, eff.errors) == (3, want, err)
        # outside mode 3 cfg_lgq is not used and raises nothing
        assert legalise(p, p.default_config(cfg_mode=3, cfg_lgq=lgq)).errors == 0
    one = TrackqParams.test(N_Q=1)
    for mode, want, err in ((0, 1, 0), (1, 1, ERR_CFG), (2, 1, ERR_CFG), (3, 4, 0)):
        eff = legalise(one, one.default_config(cfg_mode=mode, cfg_lgq=1))
        assert (eff.mode, eff.errors) == (want, err), mode


@pytest.mark.req("TQ-E8", "TQ-C16")
def test_reclaim_needs_freelist_build():
    with_fl = TrackqParams.test(FREELIST=1)
    without = TrackqParams.test(FREELIST=0)
    assert legalise(with_fl, with_fl.default_config(cfg_reclaim=1)).reclaim == 1
    eff = legalise(without, without.default_config(cfg_reclaim=1))
    assert (eff.reclaim, eff.errors) == (0, ERR_CFG)


def test_bad_inputs_raise_naming_the_field():
    p = TrackqParams.test()
    m = TrackingQueuesModel(p)
    cases = [
        (dict(req=make_req(256)), "req.id"),
        (dict(req=make_req(1, warp=8)), "req.warp"),
        (dict(req=make_req(1).replace(cls=4)), "req.cls"),
        (dict(req=make_req(1).replace(need=(16, 0, 0, 0))), r"req.need\[0\]"),
        (dict(req=make_req(1).replace(need=(1, 0, 0))), "req.need"),
        (dict(req=make_req(1).replace(eoi=2)), "req.eoi"),
        (dict(fill=Fill(4, 0, 0)), "fill.bank"),
        (dict(fill=Fill(0, 16, 0)), "fill.dslot"),
        (dict(fill=Fill(0, 0, 4)), "fill.sector"),
        (dict(inval=Inval(0, 16)), "inval.dslot"),
        (dict(resp_ready=2), "resp_ready"),
        (dict(err_clr=-1), "err_clr"),
        (dict(req="x"), "req must be"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            m.step(**kwargs)
    assert m.cycle == 0                                 # nothing was applied
    q = TrackqParams.test(DSLOTS=10)                    # DSLOT_W = 4: 10..15 fit the port
    with pytest.raises(ValueError, match="DSLOTS"):
        TrackingQueuesModel(q).step(req=make_req(1, sectors=[(1, 12, 0)]))
    TrackingQueuesModel(q).step(req=make_req(1).replace(dslot=(12, 0, 0, 0)))  # unused bank
    with pytest.raises(ValueError, match="already names dslot 2"):
        make_req(1, sectors=[(0, 2, 0), (0, 3, 1)])


def test_model_rejects_non_params():
    with pytest.raises(ValueError, match="TrackqParams"):
        TrackingQueuesModel({"N_Q": 4})
