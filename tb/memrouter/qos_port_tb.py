"""cocotb testbench of ``QosPort`` (hw/memrouter/qos_port.py): class queues, the §4.10 arbiter
and the ``mreq`` output, against golden ``QosArbiter`` (golden/memrouter/qos.py).

``random_traffic``: random reads (1 beat) and writes (nb beats), nb 1..MAX_LEN, on the near, far
and mig inputs with random valid gaps (also between the beats of a write), random
``mig_block`` and random ``mreq.ready`` back-pressure, in phases with different rates and
configurations (RATE, BURST, UTH, QOS_UTH_EN, MIG_STARVE changed at run time), then a drain.

The testbench keeps its own model of the queues: a request becomes its class's head from the
cycle after its ``last`` beat was accepted, and leaves the heads when selected; MIG heads are
hidden while ``mig_block`` is 1. Every cycle it feeds those heads and ``xfer`` (the last beat of
the presented request transfers) to golden ``QosArbiter`` and checks the DUT's ``sel_*``
outputs against it. A request selected in cycle t must be presented from t + 1 with its beats
in order and back to back (``mreq.valid`` high in every cycle until its last beat transfers),
each beat equal to the one sent; ``mreq.valid`` is low when nothing is selected. Counter hooks
(``beat_xfer``, ``beat_cls``, ``beat_wr``) are checked per cycle, the stream rules on ``mreq`` by
``StreamProtocolChecker``. At the end every request sent has come out exactly once and nothing
is left in the DUT. Coverage: every MR-F40 rule, reads and writes of every class, full-length
writes, input back-pressure, ``mreq`` stalls, a MIG head hidden by ``mig_block``.
"""

import os
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from golden.memrouter.formats import FAR, MIG, MREQ, NEAR
from golden.memrouter.qos import QosArbiter as GoldQos
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import read_int

PORT = {NEAR: "near", FAR: "far", MIG: "mig"}
CFG_INPUTS = ("rate_n", "rate_f", "burst_n", "burst_f", "uth_en", "uth", "uw", "mig_starve")


class Request:
    """A request as sent: its class, nb, wr and beat words."""
    seq = 0

    def __init__(self, cls, nb, wr, beats):
        self.cls, self.nb, self.wr, self.beats = cls, nb, wr, beats
        self.id = Request.seq
        Request.seq += 1

    def __repr__(self):
        return f"Req#{self.id}({'NFM'[self.cls]}, nb {self.nb}, {'wr' if self.wr else 'rd'})"


class Source:
    """One class input: holds valid and payload until ready; random gaps."""

    def __init__(self, dut, cls, rng):
        self.dut, self.cls, self.rng = dut, cls, rng
        self.valid = getattr(dut, f"{PORT[cls]}__valid")
        self.ready = getattr(dut, f"{PORT[cls]}__ready")
        self.payload = getattr(dut, f"{PORT[cls]}__payload")
        self.pending = deque()            # beats (word, request, index) not yet presented
        self.cur = None
        self.gate = RandomGate(0.7, rng, 2.0)
        self.valid.value = 0

    def drive(self):
        if self.cur is None and self.pending and self.gate.next():
            self.cur = self.pending.popleft()
            self.payload.value = self.cur[0]
            self.valid.value = 1

    def accepted(self):
        """In ReadOnly: the presented beat transferred in this cycle (returns it or None)."""
        if self.cur is None or read_int(self.ready) != 1:
            return None
        beat, self.cur = self.cur, None
        return beat

    def after_edge(self):
        if self.cur is None:
            self.valid.value = 0


class PortEnv:
    def __init__(self, dut):
        self.dut = dut
        p = env.params()
        self.qden, self.max_len = p["QDEN"], p["MAX_LEN"]
        self.rng = env.rng(5)
        self.sources = {c: Source(dut, c, env.rng(10 + c)) for c in (NEAR, FAR, MIG)}
        self.complete = {c: deque() for c in (NEAR, FAR, MIG)}   # heads, oldest first
        self.incoming = {c: [] for c in (NEAR, FAR, MIG)}
        self.sent = []
        self.done = []
        self.presented = None            # [request, next beat index]
        self.gold = None
        self.cfg = None
        self.t = 0
        self.cov = {k: 0 for k in ("in_stall", "out_stall", "mig_hidden", "full_write")}
        self.cov.update({f"rule{r}": 0 for r in range(1, 7)})
        self.cov.update({f"{'NFM'[c]}{'wr' if w else 'rd'}": 0 for c in (NEAR, FAR, MIG)
                         for w in (0, 1)})
        self.checker = StreamProtocolChecker(dut, "mreq", dut.clk)

    def set_cfg(self, cfg, first=False):
        for name in CFG_INPUTS:
            getattr(self.dut, name).value = cfg[name]
        self.cfg = dict(cfg)
        if first:
            self.gold = GoldQos(qden=self.qden, rate_n=cfg["rate_n"], rate_f=cfg["rate_f"],
                                burst_n=cfg["burst_n"], burst_f=cfg["burst_f"],
                                uth_en=cfg["uth_en"], uth=cfg["uth"], uw=cfg["uw"],
                                mig_starve=cfg["mig_starve"])
        else:
            g = self.gold
            assert cfg["uw"] == g.uw, "UW is not changed at run time here"
            g.rate = {NEAR: cfg["rate_n"], FAR: cfg["rate_f"]}
            g.cap = {NEAR: cfg["burst_n"] * self.qden, FAR: cfg["burst_f"] * self.qden}
            g.uth_en, g.uth, g.mig_starve = cfg["uth_en"], cfg["uth"], cfg["mig_starve"]

    def new_request(self, cls):
        rng = self.rng
        nb = rng.choice([1, self.max_len, rng.randint(1, self.max_len)])
        wr = rng.randint(0, 1)
        tag, addr = rng.getrandbits(8), rng.getrandbits(19) << 5
        n = nb if wr else 1
        words = [MREQ.pack(tag=tag, addr=addr, len=nb - 1, wr=wr, cls=cls,
                           data=rng.getrandbits(256), be=rng.getrandbits(32),
                           last=int(k == n - 1)) for k in range(n)]
        req = Request(cls, nb, wr, words)
        self.sent.append(req)
        self.sources[cls].pending.extend((w, req, k) for k, w in enumerate(words))

    async def cycle(self, p_new, ready_gate, block_gate):
        dut, g = self.dut, self.gold
        for c, src in self.sources.items():
            if not src.pending and src.cur is None and self.rng.random() < p_new[c]:
                self.new_request(c)
            src.drive()
        rdy = int(ready_gate.next())
        blk = int(block_gate.next())
        dut.mreq__ready.value = rdy
        dut.mig_block.value = blk
        await ReadOnly()
        t = self.t
        v = {k: read_int(getattr(dut, k)) for k in (
            "mreq__valid", "mreq__payload", "sel_valid", "sel_cls", "sel_paid", "sel_nb",
            "beat_xfer", "beat_cls", "beat_wr")}
        assert None not in (v["mreq__valid"], v["sel_valid"], v["beat_xfer"]), \
            f"cycle {t}: X/Z on an output: {v}"
        heads = {c: q[0].nb for c, q in self.complete.items() if q and not (c == MIG and blk)}
        if blk and self.complete[MIG]:
            self.cov["mig_hidden"] += 1

        # ---- the presented request --------------------------------------------------------
        xfer = False
        pr = self.presented
        if pr is None:
            assert v["mreq__valid"] == 0, f"cycle {t}: mreq.valid with nothing selected"
            assert v["beat_xfer"] == 0, f"cycle {t}: beat_xfer with nothing selected"
        else:
            req, k = pr
            assert v["mreq__valid"] == 1, \
                f"cycle {t}: {req} beat {k} not presented (beats must be back to back)"
            got = MREQ.unpack(v["mreq__payload"])
            want = MREQ.unpack(req.beats[k])
            assert got == want, f"cycle {t}: {req} beat {k}: mreq {got}, sent {want}"
            assert v["beat_xfer"] == rdy, f"cycle {t}: beat_xfer {v['beat_xfer']}, ready {rdy}"
            if rdy:
                assert (v["beat_cls"], v["beat_wr"]) == (req.cls, req.wr), \
                    f"cycle {t}: beat_cls/beat_wr {v['beat_cls']}/{v['beat_wr']} for {req}"
                pr[1] += 1
                if pr[1] == len(req.beats):
                    xfer = True
                    self.done.append(req)
                    self.cov[f"{'NFM'[req.cls]}{'wr' if req.wr else 'rd'}"] += 1
                    if req.wr and req.nb == self.max_len:
                        self.cov["full_write"] += 1
            else:
                self.cov["out_stall"] += 1

        # ---- the decision ---------------------------------------------------------------------
        pre_wait, can = g.mig_wait, pr is None or xfer
        sel, paid = g.cycle(heads, xfer)
        got = (v["sel_cls"], bool(v["sel_paid"]), v["sel_nb"]) if v["sel_valid"] else None
        exp = (sel, paid, heads[sel]) if sel is not None else None
        assert got == exp, (f"cycle {t}: selection RTL {got}, golden {exp} (heads {heads}, "
                            f"xfer {xfer}, cfg {self.cfg})")
        if sel is not None:
            rule = {(NEAR, True): 1, (FAR, True): 2, (NEAR, False): 4, (FAR, False): 5}.get(
                (sel, paid), 3 if g.mig_starve and pre_wait >= g.mig_starve else 6)
            self.cov[f"rule{rule}"] += 1
        if can:
            self.presented = [self.complete[sel].popleft(), 0] if sel is not None else None

        # ---- inputs: a request is a head from the cycle after its last beat ------------------
        for c, src in self.sources.items():
            if src.cur is not None and read_int(src.ready) == 0:
                self.cov["in_stall"] += 1
            beat = src.accepted()
            if beat is not None:
                word, req, k = beat
                self.incoming[c].append(word)
                if k == len(req.beats) - 1:
                    assert self.incoming[c] == req.beats
                    self.incoming[c] = []
                    self.complete[c].append(req)
        self.t += 1
        await RisingEdge(dut.clk)
        for src in self.sources.values():
            src.after_edge()


def _cfg(rng, uw):
    return dict(rate_n=rng.choice([0, 1, 2, 3, 12, rng.randint(0, 40)]),
                rate_f=rng.choice([0, 1, 2, 3, 12, rng.randint(0, 40)]),
                burst_n=rng.choice([1, 2, 8, rng.randint(1, 255)]),
                burst_f=rng.choice([1, 2, 8, rng.randint(1, 255)]),
                uth_en=int(rng.random() < 0.3), uth=rng.randint(0, 30), uw=uw,
                mig_starve=rng.choice([0, 1, rng.randint(2, 60), rng.randint(2, 300)]))


@cocotb.test()
async def random_traffic(dut):
    start_clock(dut)
    e = PortEnv(dut)
    rng = e.rng
    dut._log.info("seed %d, QDEN %d, MAX_LEN %d", env.seed(), e.qden, e.max_len)
    uw = rng.choice([1, rng.randint(2, 50), 1024])
    e.set_cfg(_cfg(rng, uw), first=True)
    dut.mreq__ready.value = 0
    dut.mig_block.value = 0
    await reset(dut)
    cycles = int(os.environ.get("QOS_PORT_CYCLES", "6000"))
    left = 0
    # past ``cycles``, new random segments follow while a coverage point is still missing (up
    # to 4 x ``cycles``): seed 103236916 drew configurations that never needed rule 3 in 6,000
    while e.t < cycles or (e.t < 4 * cycles and not all(e.cov.values())):
        if left == 0:
            left = rng.randint(200, 800)
            if e.t:
                e.set_cfg(_cfg(rng, uw))
            p_new = {c: rng.choice([0.0, 0.05, 0.2, 0.6, 1.0]) for c in (NEAR, FAR, MIG)}
            ready_gate = RandomGate(rng.choice([0.15, 0.5, 0.9, 1.0]), rng, rng.choice([1, 4]))
            block_gate = RandomGate(rng.choice([0.0, 0.3, 0.8]), rng, 8.0)
        await e.cycle(p_new, ready_gate, block_gate)
        left -= 1
    # drain: work-conserving, MIG visible, port mostly ready
    e.set_cfg(dict(e.cfg, uth_en=0))
    ready_gate, block_gate = RandomGate(0.8, rng), RandomGate(0.0, rng)
    stop = {c: 0.0 for c in (NEAR, FAR, MIG)}
    for _ in range(20000):
        if (len(e.done) == len(e.sent) and e.presented is None
                and not any(s.pending or s.cur for s in e.sources.values())):
            break
        await e.cycle(stop, ready_gate, block_gate)
    for _ in range(5):
        await e.cycle(stop, ready_gate, block_gate)
    assert read_int(dut.mreq__valid) == 0
    e.checker.check()
    sent = sorted(r.id for r in e.sent)
    done = sorted(r.id for r in e.done)
    assert done == sent, f"{len(sent)} requests sent, {len(done)} out (lost or duplicated)"
    for c in (NEAR, FAR, MIG):
        order = [r.id for r in e.done if r.cls == c]
        assert order == sorted(order), f"class {c} out of order"
    assert e.checker.transfers == sum(len(r.beats) for r in e.sent)
    dut._log.info("%d requests, %d cycles, coverage %s", len(e.sent), e.t, e.cov)
    missing = [k for k, n in e.cov.items() if n == 0]
    assert not missing, f"not covered: {missing} ({e.cov})"
