"""cocotb testbench of ``SingleFifo`` (hw/trackq/fifo.py): lockstep with
``golden.trackq.fifo.SingleFifoModel`` on every port every cycle, and TQ-V15 on the RTL.

- ``random_lockstep``: closed-loop random runs of ``RandomEnv`` restricted to the equivalence
  domain of TQ-V15 (``fifo_domain``), with random resp back-pressure; every cycle the RTL is
  compared with ``SingleFifoModel`` (req.ready, pop, cmt, resp, ready, pool_used, pool_full,
  counters) and its req.ready, pop and resp with ``TrackingQueuesModel`` in mode 1 stepped with
  the same inputs (TQ-V15, TQ-F46).
- ``golden_vectors``: the SingleFifo rows of TQ-GV1 and TQ-GV17 with this build's parameters.
"""

import os
import random

import cocotb

from golden.trackq.fifo import SingleFifoModel
from golden.trackq.model import TrackingQueuesModel
from golden.trackq.stimulus import RandomEnv
from tb.common import env
from tb.trackq.tq_tb import TqHarness, build_params, run_vector, vectors_for


@cocotb.test()
async def random_lockstep(dut):
    p = build_params()
    runs = int(os.environ.get("TQ_RUNS", "20"))
    n_req = int(os.environ.get("TQ_NREQ", "60"))
    rng = random.Random(env.seed())
    h = TqHarness(dut, p, model_cls=SingleFifoModel)
    v15 = []
    total = 0
    for k in range(runs):
        run_seed = rng.getrandbits(32)
        await h.start()
        tq = TrackingQueuesModel(p)
        stim = RandomEnv(p, run_seed, n_req=n_req, fifo_domain=True,
                         p_ready=rng.choice((0.3, 0.75, 1.0)), p_req=rng.choice((0.5, 1.0)))
        extra = 0
        while True:
            if stim.idle() and h.model.is_empty():
                extra += 1
                if extra > 2:
                    break
            assert h.cycle < 40 * n_req + 200, f"run {k} (seed {run_seed}) did not drain"
            inp = stim.inputs(h.cycle)
            got, _ = await h.step(inp)
            ref = tq.step(**inp)
            for key in ("req_ready", "pop", "resp"):
                if getattr(got, key) != getattr(ref, key) and len(v15) < 20:
                    v15.append(f"run {k} seed {run_seed} cycle {h.cycle - 1}: {key}: "
                               f"SingleFifo {getattr(got, key)} TrackingQueues mode 1 "
                               f"{getattr(ref, key)}")
            stim.update(h.cycle - 1, inp, got)
        await h.final_counters()
        h.check(f"run {k} seed {run_seed}")
        total += h.cycle
    assert not v15, "TQ-V15 violations:\n" + "\n".join(v15)
    dut._log.info("SingleFifo random_lockstep: %d runs, %d cycles (seed %d)", runs, total,
                  env.seed())


@cocotb.test()
async def golden_vectors(dut):
    p = build_params()
    h = TqHarness(dut, p, model_cls=SingleFifoModel)
    done = [v.name for v in vectors_for(p, "fifo")]
    for v in vectors_for(p, "fifo"):
        await run_vector(h, v)
    dut._log.info("SingleFifo vectors: %s", ", ".join(done) or "none")
