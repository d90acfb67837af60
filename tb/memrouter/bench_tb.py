"""cocotb benchmarks of the memory router on the RTL (spec §3.5 MR-P1..P5, workloads §4.14),
with the cycle-exact port models of MR-F51 at the MR-C29/C30 defaults and prsp.ready = 1.

* ``streaming`` (MR-P1..P3): NSTR = SLOT_LEN streams of len-7 reads over the used near pages,
  one request per stream per round, offered whenever preq.ready allows (the driver always has
  the next request presented); bandwidth = prsp beats in cycles [5000, 15000) of the run / 10000.
* ``qos`` (MR-P4, P5): CFG-C, two processor ports: preq[0] reads the carve-out pages round robin
  over the modules, preq[1] the far pages in ppn order (either may be off: QOS_NEAR / QOS_FAR);
  OFF-port RATE_N / RATE_F from QOS_RATE ("2,1"), written through the CSRs before the run;
  per OFF port the near and far sectors transferred on mreq in [5000, 15000); with
  QOS_SAMPLE = w > 0 also per w-cycle window over [0, 15000) (``samples``, for the plot of
  ``gpublocks bench memrouter``).

Cycles count from the first request header the router accepts. Every run ends with a drain and
the full golden comparison of router_tb (responses, memory requests, counters), so a benchmark
that is fast but wrong fails. Figures go to GPUBLOCKS_RESULT as JSON.
"""

import os

import cocotb

from golden.memrouter.bench import carveout_requests, far_requests, streaming_requests
from golden.memrouter.formats import FAR, NEAR
from golden.memrouter.ifmap import pt_init
from golden.memrouter.params import reference
from tb.common import env
from tb.memrouter.router_tb import Bench

WINDOW = (5000, 15000)
AHEAD = 4                       # requests queued in each driver


async def _run(b, gens, cycles):
    """Offer len-7 reads from ``gens`` (one address generator or None per port) until the
    window has passed; returns the cycle of the first accepted header."""
    t0 = None
    rid = 0
    for _ in range(cycles + 20_000):
        for proc, gen in enumerate(gens):
            if gen is not None and b.drivers[proc].count() < AHEAD:
                b.send(proc, next(gen), 8, False, rid & 0xFF)
                rid += 1
        await b.cycles(1)
        if t0 is None:
            first = [d.transfers[0].cycle for d in b.drivers if d.transfers]
            t0 = min(first) if first else None
        elif b.cycles_since(t0) >= cycles:
            return t0
    raise AssertionError("benchmark did not reach its window")


async def _configure(b):
    """Switch to reference configuration RUN_CFG (e.g. CFG-D on an N_OFF = 2 build whose reset
    configuration is CFG-A) through the CSRs and PT_INIT."""
    name = os.environ.get("RUN_CFG")
    if name:
        _, cfg = reference(name, dict(N_OFF=b.p.N_OFF), FAR_ALLOC=b.cfg.FAR_ALLOC)
        await b.reconfigure(cfg)


def _window_beats(monitor, t0):
    lo, hi = t0 + WINDOW[0], t0 + WINDOW[1]
    return sum(1 for t in monitor.transfers if lo <= t.cycle < hi)


def _samples(b, t0, width):
    """Per OFF port, near and far sectors on mreq per ``width`` cycles over [0, WINDOW[1])
    (cycles from t0); {} when ``width`` is 0."""
    if width <= 0:
        return {}
    n = WINDOW[1] // width
    out = {str(j): {"near": [0] * n, "far": [0] * n} for j in range(1, b.nports)}
    for t, j, cls, nb in b.ports.headers:
        k = (t - t0) // width
        if j and 0 <= k < n and cls in (NEAR, FAR):
            out[str(j)]["near" if cls == NEAR else "far"][k] += nb
    return out


@cocotb.test()
async def streaming(dut):
    """MR-P1..P3 streaming workload on the build's configuration."""
    b = Bench(dut, ready_prob=1.0, gap_prob=0.0)
    await b.start()
    await _configure(b)
    init = pt_init(b.p, b.cfg)
    t0 = await _run(b, [streaming_requests(b.p, b.cfg, init)], WINDOW[1])
    beats = _window_beats(b.rsp[0], t0)
    b.stop_drivers()
    await b.drain()
    await b.check()
    bw = beats / (WINDOW[1] - WINDOW[0])
    dut._log.info(f"streaming: {beats} prsp beats in {WINDOW} -> {bw:.4f} beats/cycle")
    env.write_result(dict(beats=beats, bandwidth=bw, t0=t0, slot_len=len(b.cfg.SLOTS)))


@cocotb.test()
async def qos(dut):
    """MR-P4 / P5 workload: near (carve-out) and far streams on CFG-C."""
    b = Bench(dut, ready_prob=1.0, gap_prob=0.0)
    await b.start()
    await _configure(b)
    rate_n, rate_f = (int(x) for x in os.environ.get("QOS_RATE", "2,1").split(","))
    for j in range(1, b.nports):
        await b.csr_both(0x100 + 0x20 * j, True, rate_n)
        await b.csr_both(0x100 + 0x20 * j + 4, True, rate_f)
    init = pt_init(b.p, b.cfg)
    near = os.environ.get("QOS_NEAR", "1") == "1"
    far = os.environ.get("QOS_FAR", "1") == "1"
    gens = [carveout_requests(b.p, b.cfg, init) if near else None,
            far_requests(b.p, b.cfg, init) if far else None]
    t0 = await _run(b, gens, WINDOW[1])
    lo, hi = t0 + WINDOW[0], t0 + WINDOW[1]
    shares = {}
    for j in range(1, b.nports):
        n = sum(nb for t, jj, cls, nb in b.ports.headers if jj == j and cls == NEAR
                and lo <= t < hi)
        f = sum(nb for t, jj, cls, nb in b.ports.headers if jj == j and cls == FAR
                and lo <= t < hi)
        shares[j] = (n, f)
    samples = _samples(b, t0, int(os.environ.get("QOS_SAMPLE", "0")))
    b.stop_drivers()
    await b.drain()
    await b.check()
    dut._log.info(f"qos RATE {rate_n}/{rate_f} near={near} far={far}: per OFF port "
                  f"(near, far) sectors in {WINDOW}: {shares}")
    env.write_result(dict(rate=[rate_n, rate_f], near=near, far=far,
                          shares={str(j): v for j, v in shares.items()}, t0=t0,
                          **({"samples": samples} if samples else {})))

