"""cocotb benchmark MR-P9 of the memory router: the recorded program trace (spec §4.13,
tb/memrouter/traces/gzip.mtrace.gz) on CFG-D, exclusive, NUM_LINES 8, FAR_ALLOC = 1,
MIG_STALL = 0, one processor port (§4.14 "Program trace").

Environment: MIGRATE = 0 (run 1: EN_ACC = EN_SECT = 0) or 1 (run 2: EN_ACC = 1, T_ACC 16,
WINDOW 4096, EN_SECT = 1, T_SECT 32); TRACE_N = the expanded accesses used (the first N of
the trace, default 4000). The requests of ``golden.memrouter.trace.scale`` are offered in trace
order whenever ``preq.ready`` allows. The run is checked by MR-V3 (every read beat against the
acceptance-ordered flat reference, and after a final FLUSH every sector of the pages the trace
touched through the final page table). Result (GPUBLOCKS_RESULT): the five SECT_* counters,
F_HBM, F_NEARM, F_LINE, F_FILL, F_FARD, migrations (DONE events), aborts, requests, cycles.
"""

import os
from pathlib import Path

import cocotb

from golden.memrouter.ifmap import pt_init
from golden.memrouter.router import COUNTERS
from golden.memrouter.trace import load_mtrace, scale
from golden.memrouter.params import reference
from golden.memrouter.trace_run import SECTS
from tb.common import env
from tb.common.stream import sim_cycle
from tb.memrouter.router_tb import Bench

TRACE = Path(__file__).parent / "traces" / "gzip.mtrace.gz"
AHEAD = 4


@cocotb.test()
async def program_trace(dut):
    b = Bench(dut, ready_prob=1.0, gap_prob=0.0)
    await b.start()
    migrate = int(os.environ.get("MIGRATE", "0"))
    n = int(os.environ.get("TRACE_N", "4000"))
    # §4.14's configuration on this build's hardware (CFG-D through the CSRs and PT_INIT)
    trig = dict(EN_ACC=1, T_ACC=16, WINDOW=4096, EN_SECT=1, T_SECT=32) if migrate else \
        dict(EN_ACC=0, EN_SECT=0)
    _, cfg = reference("D", dict(N_OFF=b.p.N_OFF, N_PROC=b.p.N_PROC), MODE=0, FAR_ALLOC=1,
                       MIG_STALL=0, **trig)
    await b.reconfigure(cfg)
    init = pt_init(b.p, cfg)
    reqs, rep = scale(load_mtrace(TRACE).accesses, b.p.LOG2G, init.pages, b.p.MAX_LEN, n)
    t0 = sim_cycle()
    for k, r in enumerate(reqs):
        while b.drivers[0].count() >= AHEAD:
            await b.cycles(1)
        b.send(0, r.addr, r.len + 1, r.wr, k & 0xFF, data=list(r.data) or None,
               be=list(r.be) or None)
    await b.drain()
    cycles = sim_cycle() - t0
    await b.wait_engine_quiet()
    counts = {}
    for name in SECTS:
        rdata, _ = await b.csr(0x200 + 4 * COUNTERS.index(name))
        counts[name] = rdata
    await b.flush()
    touched = sorted({r.addr >> b.p.LOG2G for r in reqs})
    checked, moved = await b.check_reference(init, touched)
    total = sum(counts.values())
    res = dict(counts, **{f"F_{k[5:]}": counts[k] / total for k in SECTS},
               migrations=sum(1 for e in b.events if e[0] == 6),
               aborts=sum(1 for e in b.events if e[0] == 7),
               requests=len(reqs), accesses=n, cycles=cycles, reads_checked=checked,
               pages_remapped=len(moved), distinct_pages=rep["distinct_pages"])
    dut._log.info(f"MR-P9 migrate={migrate}: {res}")
    env.write_result(res)
