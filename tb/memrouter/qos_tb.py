"""cocotb testbench of ``QosArbiter`` (hw/memrouter/qos.py) against golden ``QosArbiter``
(golden/memrouter/qos.py, spec §4.10), cycle by cycle.

Every input is driven right after a rising edge; in the ReadOnly phase of the same cycle the
testbench reads the selection (``sel_valid``, ``sel_cls``, ``sel_paid``, ``sel_nb``), ``busy``
and the buckets (``tok_n``, ``tok_f``, "as of the start of the cycle") and compares them with
the golden model before and after its ``cycle()``.

- ``gv15``: every MR-GV15 vector a..i, driven the way golden ``run_qos`` drives it (infinite
  class sources with the vector's valid pattern, ``mreq.ready`` = t mod 8 = 7 or as the vector
  says, single-beat reads of the vector's nb). The presented request, its transfers and the
  idle ready cycles are kept from the RTL's own selections; the counts of the spec table
  (golden/memrouter/vectors.py) are asserted on them. Each vector starts from reset.
- ``random_configs``: QOS_SEGMENTS segments, each from reset with a random configuration
  (RATE 0..65535 with 0 and 65535 often, BURST 1..255, UW 1..65535 with 1 often,
  MIG_STARVE 0/1/small/large, both UTH modes), random head valid patterns and nb 1..MAX_LEN
  (persistent heads popped at selection, or new ones every cycle), random ``xfer`` patterns
  while busy; RATE, BURST, UTH, QOS_UTH_EN and MIG_STARVE also change in the middle of a
  segment (mirrored into the golden model). Coverage is asserted at the end: each rule 1..6 of
  MR-F40 selected, starvation (rule 3), far held back by the UTH rule, both buckets ≤ 0 and
  back above 0.
"""

import os

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.memrouter import vectors as gv
from golden.memrouter.formats import FAR, MIG, NEAR
from golden.memrouter.qos import QosArbiter as GoldQos
from hw.memrouter.qos import TOK_W
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.stream import read_int

NAMES = {NEAR: "N", FAR: "F", MIG: "M"}
PORT = {NEAR: "n", FAR: "f", MIG: "m"}
CFG_INPUTS = ("rate_n", "rate_f", "burst_n", "burst_f", "uth_en", "uth", "uw", "mig_starve")


def _signed(v, width=TOK_W):
    return v - (1 << width) if v >> (width - 1) else v


class ArbEnv:
    """Drives one QosArbiter and its golden twin."""

    def __init__(self, dut):
        self.dut = dut
        p = env.params()
        self.qden, self.max_len = p["QDEN"], p["MAX_LEN"]
        self.gold = None
        self.cfg = None
        self.cycle_no = 0
        self.last_in = {}
        self.rules = {r: 0 for r in range(1, 7)}
        self.uth_hold = 0
        self.tok_state = {NEAR: "pos", FAR: "pos"}     # pos -> low (<= 0) -> back
        self.tok_back = {NEAR: 0, FAR: 0}

    def _set(self, name, value):
        if self.last_in.get(name) != value:
            getattr(self.dut, name).value = value
            self.last_in[name] = value

    async def start(self, cfg):
        """Apply ``cfg`` and reset: cycle 0 of the golden model is the first one after."""
        for name in CFG_INPUTS:
            self._set(name, cfg[name])
        for c in (NEAR, FAR, MIG):
            self._set(f"{PORT[c]}_valid", 0)
        self._set("xfer", 0)
        await reset(self.dut)
        self.cfg = dict(cfg)
        self.gold = GoldQos(qden=self.qden, rate_n=cfg["rate_n"], rate_f=cfg["rate_f"],
                            burst_n=cfg["burst_n"], burst_f=cfg["burst_f"],
                            uth_en=cfg["uth_en"], uth=cfg["uth"], uw=cfg["uw"],
                            mig_starve=cfg["mig_starve"])

    def retune(self, **changes):
        """Change configuration inputs from this cycle on (not UW), in RTL and golden."""
        g = self.gold
        for name, value in changes.items():
            self.cfg[name] = value
            self._set(name, value)
        g.rate = {NEAR: self.cfg["rate_n"], FAR: self.cfg["rate_f"]}
        g.cap = {NEAR: self.cfg["burst_n"] * self.qden, FAR: self.cfg["burst_f"] * self.qden}
        g.uth_en, g.uth, g.mig_starve = self.cfg["uth_en"], self.cfg["uth"], self.cfg["mig_starve"]
        if g.t == 0:        # the RTL fills the buckets from the BURST inputs of cycle 0
            g.tok = dict(g.cap)

    async def cycle(self, heads, xfer):
        """One cycle: drive ``heads`` ({cls: nb}) and ``xfer``, compare with golden.
        Returns (selected class or None, paid)."""
        dut, g = self.dut, self.gold
        for c in (NEAR, FAR, MIG):
            self._set(f"{PORT[c]}_valid", int(c in heads))
            if c in heads:
                self._set(f"{PORT[c]}_nb", heads[c])
        self._set("xfer", int(xfer))
        await ReadOnly()
        v = {k: read_int(getattr(dut, k)) for k in (
            "sel_valid", "sel_cls", "sel_paid", "sel_nb", "busy", "tok_n", "tok_f")}
        assert None not in v.values(), f"cycle {self.cycle_no}: X/Z on an output: {v}"
        where = f"cycle {self.cycle_no} (heads {heads}, xfer {int(xfer)}, cfg {self.cfg})"
        tok = {NEAR: _signed(v["tok_n"]), FAR: _signed(v["tok_f"])}
        assert tok == g.tok, f"{where}: buckets RTL {tok} golden {g.tok}"
        assert v["busy"] == int(g.busy), f"{where}: busy RTL {v['busy']} golden {g.busy}"
        pre_wait, busy = g.mig_wait, g.busy
        sel, paid = g.cycle(heads, xfer)
        got = (v["sel_cls"], bool(v["sel_paid"]), v["sel_nb"]) if v["sel_valid"] else None
        exp = (sel, paid, heads[sel]) if sel is not None else None
        assert got == exp, f"{where}: selection RTL {got} golden {exp}"
        self._cover(sel, paid, heads, pre_wait, busy, xfer, tok)
        self.cycle_no += 1
        await RisingEdge(dut.clk)
        return sel, paid

    def _cover(self, sel, paid, heads, pre_wait, busy, xfer, tok):
        g = self.gold
        if sel == MIG:
            ms = g.mig_starve
            self.rules[3 if ms and pre_wait >= ms else 6] += 1
        elif sel is not None:
            self.rules[{(NEAR, True): 1, (FAR, True): 2, (NEAR, False): 4,
                        (FAR, False): 5}[(sel, paid)]] += 1
        elif (not busy or xfer) and FAR in heads:
            self.uth_hold += 1                  # far present, nothing selected: the UTH rule
        for c in (NEAR, FAR):
            if self.tok_state[c] == "pos" and tok[c] <= 0:
                self.tok_state[c] = "low"
            elif self.tok_state[c] == "low" and tok[c] > 0:
                self.tok_state[c] = "pos"
                self.tok_back[c] += 1


async def _env(dut):
    start_clock(dut)
    e = ArbEnv(dut)
    dut._log.info("seed %d, QDEN %d, MAX_LEN %d", env.seed(), e.qden, e.max_len)
    return e


def _vector_cfg(name):
    rn, rf, kw, exp = gv.GV15[name]
    kw = dict(kw)
    stim = dict(near=kw.pop("near", True), far=kw.pop("far", True), mig=kw.pop("mig", False),
                gate=kw.pop("near_gate", False), nb=kw.pop("nb", 1), period=kw.pop("ready", 8))
    cfg = dict(rate_n=rn, rate_f=rf, burst_n=8, burst_f=8, uth_en=kw.pop("uth_en", 0),
               uth=kw.pop("uth", 0), uw=kw.pop("uw", 1024), mig_starve=kw.pop("mig_starve", 1024))
    assert not kw, kw
    return cfg, stim, exp


@cocotb.test()
async def gv15(dut):
    """MR-GV15 a..i on the RTL's own transfers (MR-V10)."""
    e = await _env(dut)
    assert e.qden == 24, "MR-GV15 is stated for QDEN 24"
    names = os.environ.get("QOS_VECTORS", "".join(sorted(gv.GV15)))
    for name in names:
        cfg, stim, exp = _vector_cfg(name)
        cycles = 15000 if "N2" in exp else 10000
        await e.start(cfg)
        transfers, selections, idle = [], [], []
        presented = None                             # (cls, nb), from the RTL's selections
        period = stim["period"]
        for t in range(cycles):
            rdy = t % period == period - 1
            xfer = presented is not None and rdy
            if xfer:
                transfers.append((t, presented[0], presented[1]))
            elif rdy:
                idle.append(t)
            heads = {}
            if stim["near"] and (not stim["gate"] or t % 64 < 16):
                heads[NEAR] = stim["nb"]
            if stim["far"]:
                heads[FAR] = stim["nb"]
            if stim["mig"]:
                heads[MIG] = stim["nb"]
            can = presented is None or xfer
            sel, _ = await e.cycle(heads, xfer)
            if can:
                presented = (sel, heads[sel]) if sel is not None else None
                if sel is not None:
                    selections.append((t, sel))

        def sectors(cls, lo, hi):
            return sum(nb for t, c, nb in transfers if c == cls and lo <= t < hi)
        got = dict(N=sectors(NEAR, 0, 10000), F=sectors(FAR, 0, 10000))
        want = dict(N=exp["N"], F=exp["F"])
        if "M" in exp:
            got["M"] = sum(1 for t, c, _ in transfers if c == MIG and t < 10000)
            want["M"] = exp["M"]
        if "N2" in exp:
            got.update(N2=sectors(NEAR, 5000, 15000), F2=sectors(FAR, 5000, 15000))
            want.update(N2=exp["N2"], F2=exp["F2"])
        if "head" in exp:
            seq = selections if name == "i" else [(t, c) for t, c, _ in transfers]
            got["head"] = "".join(NAMES[c] for _, c in seq[:len(exp["head"])])
            want["head"] = exp["head"]
        if "first" in exp:
            got["first"] = [t for t, _, _ in transfers[:3]]
            want["first"] = exp["first"]
        if "idle" in exp:
            got["idle"] = len([t for t in idle if t < 10000])
            want["idle"] = exp["idle"]
        if "F_first_epoch" in exp:
            got.update(F_first_epoch=sectors(FAR, 0, 1000), F_rest=sectors(FAR, 1000, 10000))
            want.update(F_first_epoch=exp["F_first_epoch"], F_rest=exp["F_rest"])
        if "mig_first" in exp:
            got["mig_first"] = [t for t, c in selections if c == MIG][:4]
            want["mig_first"] = exp["mig_first"]
        dut._log.info("MR-GV15%s: %s", name, got)
        assert got == want, f"MR-GV15{name}: RTL {got}, spec {want}"


def _random_cfg(rng):
    def rate():
        return rng.choice([0, 0, 1, 2, 3, 12, rng.randint(0, 64), rng.randint(0, 65535), 65535])
    return dict(rate_n=rate(), rate_f=rate(),
                burst_n=rng.choice([1, 255, rng.randint(1, 16), rng.randint(1, 255)]),
                burst_f=rng.choice([1, 255, rng.randint(1, 16), rng.randint(1, 255)]),
                uth_en=rng.randint(0, 1),
                uth=rng.choice([0, 1, rng.randint(0, 40), rng.randint(0, 65535), 65535]),
                uw=rng.choice([1, 1, 2, rng.randint(1, 64), rng.randint(1, 1000), 65535]),
                mig_starve=rng.choice([0, 1, 1, rng.randint(1, 40), rng.randint(1, 65535)]))


@cocotb.test()
async def random_configs(dut):
    """Random configurations, heads and xfer patterns, cycle by cycle against golden."""
    e = await _env(dut)
    rng = env.rng(3)
    segments = int(os.environ.get("QOS_SEGMENTS", "24"))
    for seg in range(segments):
        cfg = _random_cfg(rng)
        p_valid = {c: rng.choice([0.0, 0.2, 0.5, 0.9, 1.0]) for c in (NEAR, FAR, MIG)}
        if seg % 4 == 3:            # far capped by the UTH rule: near busy, far over its cap
            cfg.update(uth_en=1, uth=rng.choice([0, rng.randint(0, 8)]), rate_f=0,
                       burst_f=rng.randint(1, 8), uw=rng.randint(1, 64))
            p_valid.update({NEAR: rng.choice([0.2, 0.5]), FAR: 1.0, MIG: 0.0})
        await e.start(cfg)
        cycles = rng.randint(200, 1500)
        p_xfer = rng.choice([0.05, 0.3, 0.7, 1.0])
        sticky = rng.random() < 0.6                  # heads stay until selected
        held = {}
        for _ in range(cycles):
            if rng.random() < 0.01:
                e.retune(**{k: v for k, v in _random_cfg(rng).items()
                            if k != "uw" and rng.random() < 0.5})
            heads = {}
            for c in (NEAR, FAR, MIG):
                if sticky and c in held:
                    heads[c] = held[c]
                elif rng.random() < p_valid[c]:
                    heads[c] = rng.randint(1, e.max_len)
            xfer = e.gold.busy and rng.random() < p_xfer
            sel, _ = await e.cycle(heads, xfer)
            held = {c: nb for c, nb in heads.items() if c != sel}
        dut._log.info("segment %d: %d cycles, cfg %s, tokens %s", seg, cycles, cfg, e.gold.tok)
    dut._log.info("rules %s, UTH holds %d, buckets back above 0 %s", e.rules, e.uth_hold,
                  e.tok_back)
    assert all(e.rules.values()), f"an MR-F40 rule never fired: {e.rules}"
    assert e.uth_hold, "far was never held back by the UTH rule"
    assert all(e.tok_back.values()), f"a bucket never went <= 0 and back: {e.tok_back}"
