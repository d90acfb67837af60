"""WD-C1..C22: every build parameter of the spec's §3.3 table is accepted at both ends of its
legal range and refused just outside it, with a ValueError naming the parameter."""

import pytest

from golden.wdist.params import WdistParams

# (name, lowest legal, highest legal, a value below, a value above); None: no such side. The
# ranges are transcribed from wdist.md §3.3.
RANGES = [
    ("WD-C1", "N_GPC", 1, 16, 0, 17),
    ("WD-C3", "SM_PER_TPC", 1, 4, 0, 5),
    ("WD-C4", "REG_CAP_G", 1, 256, 0, 257),
    ("WD-C5", "SMEM_CAP_G", 1, 1023, 0, 1024),
    ("WD-C6", "WARP_CAP", 1, 64, 0, 65),
    ("WD-C7", "CTA_SLOTS", 1, 63, 0, 64),
    ("WD-C8", "MAX_CGA_CTAS", 1, 32, 0, 33),
    ("WD-C9", "MAX_OUTER", 1, 16, 0, 17),
    ("WD-C10", "GPC_CGA_ID_W", 1, 8, 0, 9),
    ("WD-C11", "CGA_CREDIT_PER_SM", 1, 4, 0, 5),
    ("WD-C12", "SEQ_W", 1, 16, 0, 17),
    ("WD-C14", "GX_W", 1, 32, 0, 33),
    ("WD-C14", "GY_W", 1, 16, 0, 17),
    ("WD-C14", "GZ_W", 1, 16, 0, 17),
    ("WD-C15", "GRID_ID_W", 1, 16, 0, 17),
    ("WD-C16", "SESSION_MAX_STEPS", 1, 255, 0, 256),
    ("WD-C17", "CMD_FIFO_DEPTH", 1, 16, 0, 17),
    ("WD-C18", "RASTER_FIFO_DEPTH", 2, 16, 1, 17),
    ("WD-C19", "TRACE", 0, 1, -1, 2),
    ("WD-C22", "MAX_FLAT_CTAS", 1, 256, 0, 257),
]


@pytest.mark.req("WD-C1", "WD-C3", "WD-C4", "WD-C5", "WD-C6", "WD-C7", "WD-C8", "WD-C9",
                 "WD-C10", "WD-C11", "WD-C12", "WD-C14", "WD-C15", "WD-C16", "WD-C17",
                 "WD-C18", "WD-C19", "WD-C22")
@pytest.mark.parametrize("req, name, lo, hi, below, above", RANGES)
def test_integer_parameter_ranges(req, name, lo, hi, below, above):
    base = dict(SM_PER_TPC=1) if name != "SM_PER_TPC" else {}
    for v in (lo, hi):
        kw = dict(base, **{name: v})
        if name == "SM_PER_TPC":
            kw["SM_PER_GPC"] = 8 if v != 3 else 6
        WdistParams(**kw)
    for v in (below, above):
        with pytest.raises(ValueError, match=name):
            WdistParams(**dict(base, **{name: v}))


@pytest.mark.req("WD-C2", "WD-C3")
def test_sm_per_gpc_tuple_range_and_tpc_multiple():
    """WD-C2: a tuple (may differ per GPC), each 2..32 and a multiple of SM_PER_TPC."""
    p = WdistParams(N_GPC=4, SM_PER_GPC=(8, 6, 8, 4))
    assert p.N_SM == 26 and p.base(2) == 14
    WdistParams(N_GPC=2, SM_PER_GPC=(2, 32))
    for bad in ((1, 8), (8, 33), (8, 7)):
        with pytest.raises(ValueError, match="SM_PER_GPC"):
            WdistParams(N_GPC=2, SM_PER_GPC=bad)


@pytest.mark.req("WD-C13")
def test_delta_w_lower_bound():
    """WD-C13: DELTA_W ≥ ⌈log2(S_MAX·CTA_SLOTS+1)⌉+1 (8 SMs × 32 slots: 9 + 1 = 10)."""
    WdistParams(DELTA_W=10)
    with pytest.raises(ValueError, match="DELTA_W"):
        WdistParams(DELTA_W=9)


@pytest.mark.req("WD-C20", "WD-C21")
def test_distributor_and_cpc_per_gpc():
    """WD-C20: "shadow" or "legacy"; WD-C21: 0 or a divisor of SM_PER_GPC[g]/SM_PER_TPC."""
    WdistParams(DISTRIBUTOR="legacy")
    with pytest.raises(ValueError, match="DISTRIBUTOR"):
        WdistParams(DISTRIBUTOR="fifo")
    WdistParams(CPC_PER_GPC=2)                   # 8 SMs / 2 per TPC = 4 TPCs
    WdistParams(CPC_PER_GPC=4)
    with pytest.raises(ValueError, match="CPC_PER_GPC"):
        WdistParams(CPC_PER_GPC=3)
