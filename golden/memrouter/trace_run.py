"""The MR-P9 program-trace workload (spec §4.14) played on the transaction-level golden router:
CFG-D, exclusive, NUM_LINES 8, FAR_ALLOC = 1, MIG_STALL = 0, N_PROC = 1; run 1 without
migration (EN_ACC = EN_SECT = 0), run 2 with automatic migration (EN_ACC = 1, T_ACC 16,
WINDOW 4096; EN_SECT = 1, T_SECT 32). The requests are those of :func:`trace.scale` (§4.13), in
trace order. Every read beat is checked against the flat reference memory (MR-V3), and after a
final FLUSH so is the whole memory through the final page table.

Time. The golden router is transaction-level; this driver gives it the ideal-router time of
``bench.py``: the cycle counter (which clears the access counters every WINDOW cycles, §4.7)
advances by the request's ``preq`` beats (1 header for a read, nb beats for a write) at its
acceptance. By default the block is run to quiescence after each request
(``actions=None``): memory and the migration engine are infinitely fast next to the request
stream, so a triggered migration completes before the next request is routed. With an integer
``actions`` the driver performs at most that many router actions (engine step, class-queue
dispatch, port completion; priority order of :meth:`Router.step`) per request, so a migration
overlaps the requests that follow it; it still waits for progress when the ROB is full. The MR-P9
figures themselves come from RTL simulation; these are the golden estimates they are set
against.
"""

from pathlib import Path

import numpy as np

from golden.memrouter.csr import Csr
from golden.memrouter.formats import EV_DONE, OK
from golden.memrouter.params import reference
from golden.memrouter.reference import FlatReference
from golden.memrouter.router import Router
from golden.memrouter.stress import check_final
from golden.memrouter.trace import N_TRACE, Trace, load_mtrace, scale

__all__ = ["SECTS", "mr_p9_config", "trace_fractions"]

SECTS = ("SECT_HBM", "SECT_NEARM", "SECT_LINE", "SECT_FILL", "SECT_FARD")


def mr_p9_config(migrate):
    """(params, config) of the §4.14 MR-P9 runs: run 2 when ``migrate``, else run 1."""
    trig = dict(EN_ACC=1, T_ACC=16, WINDOW=4096, EN_SECT=1, T_SECT=32) if migrate else \
        dict(EN_ACC=0, EN_SECT=0)
    return reference("D", dict(NUM_LINES=8, N_PROC=1), MODE=0, FAR_ALLOC=1, MIG_STALL=0,
                     **trig)


def _accesses(trace):
    if isinstance(trace, (str, Path)):
        trace = load_mtrace(trace)
    return trace.accesses if isinstance(trace, Trace) else list(trace)


def _fold(ref, addr):
    """Fold the logged writes of sector ``addr`` into the reference's base image (only valid
    when every read that could precede them has been checked and none can be dropped)."""
    v = ref.read(addr)
    ref.mem[addr:addr + 32] = np.frombuffer(v.to_bytes(32, "little"), np.uint8)
    ref.log.pop(addr, None)


def trace_fractions(trace, migrate, n=N_TRACE, actions=None):
    """Play the MR-P9 workload on ``trace`` (a :class:`Trace`, an mtrace path or a list of
    (op, addr, size)), first ``n`` expanded accesses. Returns a dict with the fractions F_HBM,
    F_NEARM, F_LINE, F_FILL, F_FARD (of SECT_HBM + SECT_NEARM + SECT_LINE + SECT_FILL +
    SECT_FARD), the raw counters, ``migrations`` (DONE events), ``aborts``, ``requests``,
    ``reads_checked`` (MR-V3 beats), ``distinct_pages``, ``pages_folded`` and ``cycles``.
    AssertionError on any MR-V3/V4 mismatch."""
    params, cfg = mr_p9_config(migrate)
    r = Router(params, cfg)
    csr = Csr(r)
    ref = FlatReference(r.init, params)
    reqs, rep = scale(_accesses(trace), params.LOG2G, r.pages, params.MAX_LEN, n)
    pending = {}                        # uid -> (first sector address, nb, wr)
    dirty = set()                       # sectors written since the last fold
    checked = 0

    def check():
        nonlocal checked
        for rsp in r.responses(0):
            a0, nb, wr = pending.pop(rsp.uid)
            if wr:
                assert rsp.beats == [(0, OK)], f"uid {rsp.uid}: write ack {rsp.beats}"
                continue
            assert len(rsp.beats) == nb
            for k, (d, err) in enumerate(rsp.beats):
                want = ref.read(a0 + 32 * k, rsp.uid)
                assert err == OK and d == want, \
                    f"MR-V3: uid {rsp.uid} beat {k} read {d:#x} err {err}, want {want:#x}"
                checked += 1

    for t in reqs:
        nb = t.len + 1
        while True:
            req = r.request(0, t.k & 0xFF, t.addr, nb, t.wr, t.data or None, t.be or None)
            if req is not None:
                break
            assert r.step(), "request refused and the router cannot move"   # ROB full
            check()
        assert req.err == OK, f"trace request {t} rejected ({req.err})"
        pending[req.uid] = (t.addr, nb, t.wr)
        if t.wr:
            for k in range(nb):
                ref.write(t.addr + 32 * k, t.data[k], t.be[k], req.uid)
                dirty.add(t.addr + 32 * k)
        r.tick(nb if t.wr else 1)
        if actions is None:
            r.settle()
        else:
            for _ in range(actions):
                if not r.step():
                    break
        check()
        if not pending and len(dirty) > 0:
            assert not r.dropped
            for a in dirty:             # every read before these writes has been checked
                _fold(ref, a)
            dirty.clear()
    r.settle()
    check()
    assert not pending and r.idle(), "MR-V4: requests left in flight"
    assert not r.dropped and r.counters["ERR_POISON"] == 0
    csr.write("CMD", 2)                 # final FLUSH, then MR-V3 on the whole memory
    r.settle()
    check_final(r, ref)
    c = r.counters
    total = sum(c[s] for s in SECTS)
    out = {"F_" + s[5:]: c[s] / total for s in SECTS}
    out.update({s: c[s] for s in SECTS})
    out.update(migrations=sum(1 for e in r.events if e[0] == EV_DONE), aborts=c["MIG_ABORT"],
               evicts=c["EVICTS"], requests=len(reqs), reads_checked=checked,
               distinct_pages=rep["distinct_pages"], pages_folded=rep["pages_folded"],
               cycles=r.cyc, sectors=total)
    assert out["migrations"] == c["MIG_DONE"]
    return out


def main(argv=None):
    import argparse
    import time
    ap = argparse.ArgumentParser(prog="python -m golden.memrouter.trace_run",
                                 description="MR-P9 golden fractions of a program trace")
    ap.add_argument("trace")
    ap.add_argument("-n", type=int, default=N_TRACE, help="expanded accesses (N_TRACE)")
    ap.add_argument("--actions", type=int, default=None,
                    help="router actions per request (default: settle after each)")
    ns = ap.parse_args(argv)
    tr = load_mtrace(ns.trace)
    for migrate in (False, True):
        t0 = time.perf_counter()
        f = trace_fractions(tr, migrate, ns.n, ns.actions)
        dt = time.perf_counter() - t0
        print(f"{'run 2 (migration)' if migrate else 'run 1 (static)   '}: "
              + " ".join(f"{k} {f[k]:.4f}" for k in ("F_HBM", "F_NEARM", "F_LINE", "F_FILL",
                                                       "F_FARD"))
              + f" migrations {f['migrations']} requests {f['requests']} pages "
                f"{f['distinct_pages']} folded {f['pages_folded']} ({dt:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
