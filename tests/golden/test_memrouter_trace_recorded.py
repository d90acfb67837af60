"""The committed program trace tb/memrouter/traces/gzip.mtrace.gz (memrouter §4.13): it parses,
carries the required header keys and the recording command, holds at least N_TRACE expanded
accesses, and scales to legal requests only; the golden MR-P9 workload (§4.14, played by
golden/memrouter/trace_run.py) on it serves a larger fraction of sectors from HBM with automatic
migration than without, every read beat checked against the flat reference memory. The MR-P9
figures themselves are an RTL benchmark; these are the golden estimates printed next to them."""

from pathlib import Path

import pytest

from golden.memrouter import vectors as gv
from golden.memrouter.ifmap import pt_init
from golden.memrouter.lackey import TOOL
from golden.memrouter.trace import N_TRACE, REQUIRED_KEYS, expand, load_mtrace, scale
from golden.memrouter.trace_run import SECTS, mr_p9_config, trace_fractions

TRACE = Path(__file__).resolve().parents[2] / "tb" / "memrouter" / "traces" / "gzip.mtrace.gz"


@pytest.fixture(scope="module")
def trace():
    return load_mtrace(TRACE)


def test_recorded_trace_header(trace):
    assert TRACE.stat().st_size < 1 << 20
    h = trace.header
    for key in REQUIRED_KEYS + ("command",):
        assert h.get(key), f"header key {key!r} missing or empty"
    assert h["tool"] == TOOL
    assert int(h["accesses"]) == len(trace.accesses)
    assert "gzip" in h["program"] and "-9" in h["args"] and "sha256" in h["input"]
    assert h["command"].startswith("valgrind --tool=lackey --trace-mem=yes")
    assert "golden.memrouter.lackey" in h["command"]
    assert len(expand(trace.accesses)) == N_TRACE            # at least N_TRACE to keep
    assert len(trace.accesses) <= 300_000                    # a short prefix of the run


@pytest.mark.req("MR-GV18")
def test_recorded_trace_scales_to_legal_requests(trace):
    p, c = mr_p9_config(True)
    pages = pt_init(p, c).pages
    reqs, rep = scale(trace.accesses, p.LOG2G, pages, p.MAX_LEN)
    print(f"\nrecorded trace: {len(trace.accesses)} accesses, {rep}")
    assert rep["stride"] == gv.GV18["strides"][pages]
    assert rep["requests"] == len(reqs) >= N_TRACE
    assert rep["distinct_pages"] > 50 and rep["pages_folded"] == 0
    assert reqs[-1].k == N_TRACE - 1
    ranks = []
    for r in reqs:                                            # first-touch order -> MR-GV18 ppns
        if r.addr >> p.LOG2G not in ranks:
            ranks.append(r.addr >> p.LOG2G)
    assert ranks[:6] == gv.GV18["ranks"]
    for r in reqs:
        assert 0 <= r.len <= p.MAX_LEN - 1 and r.addr & 31 == 0
        last = r.addr + 32 * (r.len + 1) - 1
        assert r.addr >> p.LOG2G == last >> p.LOG2G < pages, r
        if r.wr:
            assert len(r.data) == len(r.be) == r.len + 1 and all(r.be)


def test_golden_mr_p9_on_recorded_trace(trace):
    """§4.14 MR-P9 on the golden router: F_HBM(migration) > F_HBM(static), MR-V3 throughout."""
    res = {m: trace_fractions(trace, m) for m in (False, True)}
    for m, f in res.items():
        print(f"\n{'run 2 (migration)' if m else 'run 1 (static)'}: "
              + " ".join(f"{k} {f[k]:.4f}" for k in ("F_HBM", "F_NEARM", "F_LINE", "F_FILL",
                                                       "F_FARD"))
              + f" migrations {f['migrations']} requests {f['requests']} reads checked "
                f"{f['reads_checked']} pages {f['distinct_pages']} folded {f['pages_folded']}")
        assert sum(f["F_" + s[5:]] for s in SECTS) == pytest.approx(1.0)
        assert f["requests"] >= N_TRACE and f["reads_checked"] > N_TRACE // 2
        assert f["F_NEARM"] == 0                                  # CFG-D: no near module
    static, mig = res[False], res[True]
    assert static["migrations"] == 0 and mig["migrations"] > 0 and mig["aborts"] == 0
    assert mig["F_HBM"] > static["F_HBM"]


def test_golden_mr_p9_overlapping_migrations(trace):
    """The same workload with at most 2 router actions per request, so migrations overlap the
    requests behind them (demand fills and writes into locked lines), on the first 20000
    expanded accesses: MR-V3 still holds and migration still raises F_HBM."""
    static, mig = (trace_fractions(trace, m, n=20000, actions=2) for m in (False, True))
    print(f"\nactions=2, n=20000: F_HBM static {static['F_HBM']:.4f} migration "
          f"{mig['F_HBM']:.4f} ({mig['migrations']} migrations)")
    assert mig["migrations"] > 0 and mig["F_HBM"] > static["F_HBM"]
