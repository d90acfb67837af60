"""cocotb testbench of the round-robin arbiter: lockstep with the golden model every cycle.

Each cycle the inputs are driven after the rising edge and ``grant``, ``grant_idx`` and
``valid`` are compared in the ReadOnly phase with ``RoundRobinArbiterModel``; the model then
takes the same clock edge. The internal ``ptr`` is observed only through the outputs.
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.arbiter import RoundRobinArbiterModel
from golden.common.arbiter_vectors import TQ_GV16, TQ_GV16_N
from tb.common import env
from tb.common.clock import reset, start_clock


class ArbiterHarness:
    """Drives one cycle at a time and checks the DUT against the golden model."""

    def __init__(self, dut):
        self.dut = dut
        self.n = env.params()["n"]
        self.model = RoundRobinArbiterModel(self.n)
        self.cycle = 0
        self.mismatches = []
        self.grants = 0

    async def start(self):
        self.dut.req.value = 0
        self.dut.advance.value = 0
        start_clock(self.dut)
        await reset(self.dut)
        self.model = RoundRobinArbiterModel(self.n)

    async def step(self, req, advance, rst=0):
        """One cycle: drive, compare, clock. Returns the DUT's (grant, grant_idx, valid)."""
        dut = self.dut
        dut.req.value = req
        dut.advance.value = advance
        dut.rst.value = rst
        await ReadOnly()
        got = (int(dut.grant.value), int(dut.grant_idx.value), int(dut.valid.value))
        ptr_before = self.model.ptr
        want = self.model.outputs(req)
        if got != want and len(self.mismatches) < 1000:
            self.mismatches.append(
                f"cycle {self.cycle}: req={req:#x} advance={advance} ptr={ptr_before}: "
                f"DUT (grant, idx, valid)={got}, golden={want}")
        if rst:
            self.model = RoundRobinArbiterModel(self.n)
        else:
            self.model.clock(req, advance)
        if advance and got[2] and not rst:
            self.grants += 1
        self.cycle += 1
        await RisingEdge(dut.clk)
        return got, ptr_before

    def check(self):
        assert not self.mismatches, (
            f"{len(self.mismatches)} mismatching cycles (seed {env.seed()}):\n"
            + "\n".join(self.mismatches[:20]))


@cocotb.test()
async def ports(dut):
    """TQ-I12: port widths and the valid = OR(req) output."""
    n = env.params()["n"]
    assert len(dut.req) == n and len(dut.grant) == n
    assert len(dut.advance) == 1 and len(dut.valid) == 1
    assert len(dut.grant_idx) == max(1, (n - 1).bit_length())


@cocotb.test()
async def golden_vector_tq_gv16(dut):
    """TQ-GV16 as printed in the spec (only for n = 4)."""
    h = ArbiterHarness(dut)
    if h.n != TQ_GV16_N:
        dut._log.info("TQ-GV16 needs n = 4; this build has n = %d", h.n)
        return
    await h.start()
    for row, (req_text, advance, want_idx, want_ptr_after) in enumerate(TQ_GV16):
        (grant, idx, valid), _ = await h.step(int(req_text, 2), advance)
        if want_idx is None:
            assert (grant, valid) == (0, 0), f"GV16 row {row}: grant {grant:04b}, expected 0000"
        else:
            assert (grant, idx, valid) == (1 << want_idx, want_idx, 1), \
                f"GV16 row {row}: grant {grant:04b} idx {idx}, expected idx {want_idx}"
        assert h.model.ptr == want_ptr_after, f"GV16 row {row}: golden ptr {h.model.ptr}"
    # ptr after the last row is observed through the next grant with every bit requesting
    (grant, idx, valid), _ = await h.step(0b1111, 0)
    assert idx == TQ_GV16[-1][3], f"ptr after the last row is {idx}, expected {TQ_GV16[-1][3]}"
    h.check()


@cocotb.test()
async def exhaustive(dut):
    """TQ-V16: every (req, ptr, advance) for this n, each followed by a probe of the new ptr.

    ptr is set to p by granting requester p-1 with advance (for n = 1, p is always 0); after the
    case, an all-request cycle without advance shows the new ptr on grant_idx.
    """
    h = ArbiterHarness(dut)
    n = h.n
    if n > 8:
        dut._log.info("exhaustive check is for n <= 8; n = %d", n)
        return
    await h.start()
    covered = set()
    everyone = (1 << n) - 1
    for p in range(n):
        for req in range(1 << n):
            for advance in (0, 1):
                if n > 1:
                    await h.step(1 << ((p - 1) % n), 1)          # ptr := p
                _, ptr_before = await h.step(req, advance)      # the case
                covered.add((ptr_before, req, advance))
                (_, idx, _), _ = await h.step(everyone, 0)      # probe: grant_idx = ptr
                assert idx == h.model.ptr
    assert len(covered) == n * (1 << n) * 2, f"covered {len(covered)} cases"
    h.check()
    dut._log.info("exhaustive: %d (ptr, req, advance) cases, %d cycles", len(covered), h.cycle)


@cocotb.test()
async def random_lockstep(dut):
    """TQ-F45: random requests (varied density), random advance and occasional resets."""
    h = ArbiterHarness(dut)
    rng = env.rng(1)
    await h.start()
    n = h.n
    for _ in range(4000):
        density = rng.choice([0.05, 0.3, 0.5, 0.9, 1.0])
        req = sum(1 << i for i in range(n) if rng.random() < density)
        await h.step(req, int(rng.random() < 0.8), rst=int(rng.random() < 0.005))
    h.check()


@cocotb.test()
async def fairness(dut):
    """Each requester holds its request until granted; it is granted within n grants.

    A grant counts when ``advance`` is high (the client consumed it). Requesters raise their
    requests at random and drop them only after their own grant is consumed.
    """
    h = ArbiterHarness(dut)
    rng = env.rng(2)
    await h.start()
    n = h.n
    pending = [False] * n
    grants_seen = [0] * n        # consumed grants to anyone since the request was raised
    worst = 0
    for _ in range(6000):
        for i in range(n):
            if not pending[i] and rng.random() < 0.4:
                pending[i] = True
                grants_seen[i] = 0
        req = sum(1 << i for i in range(n) if pending[i])
        advance = int(rng.random() < 0.85)
        (grant, idx, valid), _ = await h.step(req, advance)
        if advance and valid:
            for i in range(n):
                if pending[i]:
                    grants_seen[i] += 1
            worst = max(worst, grants_seen[idx])
            assert grants_seen[idx] <= n, (
                f"requester {idx} waited {grants_seen[idx]} grants (bound n = {n}), seed {env.seed()}")
            pending[idx] = False
    h.check()
    dut._log.info("fairness: worst wait %d grants (bound %d), %d grants", worst, n, h.grants)


@cocotb.test()
async def run_stimulus(dut):
    """``gpublocks run arbiter``: play a user's cycles and report what the RTL did."""
    stim = env.stimulus()
    if stim is None or "cycles" not in stim:
        return
    h = ArbiterHarness(dut)
    await h.start()
    outputs = []
    for cycle in stim["cycles"]:
        (grant, idx, valid), _ = await h.step(cycle["req"], cycle["advance"], cycle["reset"])
        outputs.append({"grant": grant, "grant_idx": idx, "valid": valid})
    env.write_result({"cycles": outputs})


@cocotb.test()
async def bench(dut):
    """``gpublocks bench arbiter``: grants per cycle and waits under open-loop request loads.

    Each requester not already waiting raises a request with probability ``load`` per cycle and
    holds it until granted; ``advance`` is always 1. Every cycle is also checked against the model.
    """
    stim = env.stimulus()
    if stim is None or "bench" not in stim:
        return
    cfg = stim["bench"]
    h = ArbiterHarness(dut)
    rng = env.rng(3)
    await h.start()
    n = h.n
    loads = {}
    for load in cfg["loads"]:
        pending = [None] * n            # cycle the request was raised, or None
        seen = [0] * n
        grants = worst = 0
        waits = []
        for c in range(cfg["cycles_per_load"]):
            for i in range(n):
                if pending[i] is None and rng.random() < load:
                    pending[i], seen[i] = c, 0
            req = sum(1 << i for i in range(n) if pending[i] is not None)
            (grant, idx, valid), _ = await h.step(req, 1)
            if valid:
                grants += 1
                for i in range(n):
                    if pending[i] is not None:
                        seen[i] += 1
                worst = max(worst, seen[idx])
                waits.append(c - pending[idx])
                pending[idx] = None
        loads[str(load)] = {
            "cycles": cfg["cycles_per_load"], "grants": grants,
            "grants_per_cycle": grants / cfg["cycles_per_load"],
            "worst_wait_grants": worst,
            "mean_wait_cycles": sum(waits) / len(waits) if waits else 0.0,
        }
    h.check()
    env.write_result({"n": n, "loads": loads})
