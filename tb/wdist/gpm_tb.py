"""cocotb testbench of ``Gpm`` (hw/wdist/gpm.py, ``wd_gpm[g]``) against golden
``golden.wdist.gpm.Gpm``, driven identically every cycle in the golden top's order (beat,
``flush_req`` transfer, ``cga_complete`` transfer, ``cta_complete``, ``dsmem_flush_done``,
``tick``).

The testbench plays the parent of GPC G (build parameter ``G``): it drives ``beat_mine``,
``cc_mine`` and ``fd_mine`` from the payloads as ``WdTop`` does (``beat.gpc == G``, ``sm`` in
GPC G; random while the stream is not valid) and compares ``flush_req`` / ``cga_complete``
(which carry no ``gpc``) with golden's records of GPC G.

Every cycle the testbench runs the golden model first (it decides the inputs, including which
``cta_complete`` / ``dsmem_flush_done`` to send, from the golden state), then drives the DUT and
compares in the ReadOnly phase: ``beat_stall``, ``beat_cga_id``, ``flush_req`` and
``cga_complete`` (valid and payload, from the golden queues as they stood at the start of the
cycle), ``credit_ret``, ``cc_bad_cga``, the E7 / E8 strobes and infos, ``free_ids``,
``alloc_ids`` and ``idle``. Protocol checkers watch all four streams.

Closed loop: an SM model completes each launched CTA of the GPC after a random delay (0 = the
cycle of the beat itself) and answers each ``flush_req`` with ``n_ctas`` ``dsmem_flush_done``
after random delays (0 = the cycle of the ``flush_req`` transfer); ``flush_req`` and
``cga_complete`` see random back-pressure. Bookkeeping per GPC CGA checks WD-V9: exactly one
``flush_req``, after its last ``cta_complete``, with ``n_ctas`` = its CTAs; exactly one
``cga_complete``, after its ``n_ctas``-th flush done, with its ``grid_id`` and ``seq``; an ID is
never held twice. At the end: everything drained, the pool full, ``idle``.

Testcases:

- ``random_traffic``: WD_UNITS random units (GPC CGAs of 1..8 CTAs (1..16 on wide builds)
  over 1..4 beats, some with an empty last beat; is_cga = 0 beats; beats of other GPCs;
  GRID beats), gaps and fork back-pressure, bad ``cta_complete`` (unallocated ID, counter 0,
  not RUN; some with ``cc_underflow``), bogus completions with ``cc_underflow`` for a running
  ID (ignored), completions of other GPCs, unexpected ``dsmem_flush_done`` (unallocated, not
  waiting, one more than ``n_ctas``) and flush dones of other GPCs.
- ``golden_vector_gv12``: WD-GV12 cycle by cycle (GPC_CGA_ID_W = 2 builds).
- ``id_exhaustion``: WD-V12: 40 GPC CGAs of 1..8 CTAs back to back through 4 IDs with slow
  completions; stalls observed, every CGA launched exactly once, V9 holds.
- ``two_flush_reqs_one_cycle``: an empty ``gcga_last`` beat completes one CGA while a
  ``cta_complete`` completes another in the same cycle: both ``flush_req`` in golden order.
"""

import os
from types import SimpleNamespace

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from golden.wdist.formats import Err, Kind, bcast_fields, cta_complete_fields, flush_done_fields
from golden.wdist.gpm import CgaComplete, FlushReq, Gpm as GoldGpm
from golden.wdist.params import WdistParams
from hw.wdist.gpm import gpm_cga_complete_fields, gpm_flush_req_fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import read_int, sim_cycle


class Cga:
    """Testbench record of one GPC CGA of this GPC."""

    def __init__(self, key, ctas, grid_id, seq):
        self.key, self.ctas, self.grid_id, self.seq = key, ctas, grid_id, seq
        self.cga_id = None
        self.alloc_t = None
        self.completed = 0
        self.last_cc_t = None
        self.launched_beats = 0
        self.flush_reqs = []       # (t, n_ctas)
        self.flush_dones = 0
        self.last_fd_t = None
        self.cga_completes = []    # (t, payload)


class GpmTb:
    def __init__(self, dut, fr_ready=0.6, cq_ready=0.6):
        prm = env.params()
        self.dut = dut
        self.p = p = WdistParams(
            N_GPC=prm["N_GPC"], SM_PER_GPC=(prm["SM_PER_GPC"],) * prm["N_GPC"],
            GPC_CGA_ID_W=prm["GPC_CGA_ID_W"], CTA_SLOTS=prm["CTA_SLOTS"],
            MAX_CGA_CTAS=prm["MAX_CGA_CTAS"], MAX_OUTER=prm["MAX_OUTER"],
            MAX_FLAT_CTAS=prm["MAX_FLAT_CTAS"], GRID_ID_W=prm["GRID_ID_W"], SEQ_W=prm["SEQ_W"])
        self.g = prm["G"]
        self.gold = GoldGpm(p, self.g)
        self.n_ids = 1 << p.GPC_CGA_ID_W
        self.bf = bcast_fields(p)
        self.ccf = cta_complete_fields(p)
        self.fdf = flush_done_fields(p)
        self.frf = gpm_flush_req_fields(p)        # no gpc: the parent adds it
        self.cqf = gpm_cga_complete_fields(p)
        self.sms = list(p.sms(self.g))
        self.other_sms = [s for s in range(p.N_SM) if s not in self.sms]
        self.rng = env.rng(12)
        self.fr_gate = RandomGate(fr_ready, self.rng)
        self.cq_gate = RandomGate(cq_ready, self.rng)
        self.checkers = [StreamProtocolChecker(dut, name, dut.clk) for name in
                         ("flush_req", "cga_complete", "cta_complete", "dsmem_flush_done")]
        self.t = 0
        self.beats = []            # pending beats: dicts with "_cga" (Cga or None)
        self.due_cc = []           # (due t, sm, cga_id, Cga or None)
        self.due_fd = []           # (due t, sm, cga_id)
        self.cgas = []
        self.by_id = {}            # cga_id -> Cga currently holding it
        self.next_key = 0
        self.seq = 0
        self.stalls = 0
        self.errs = {Err.COMPLETE_BAD_CGA: 0, Err.FLUSH_UNEXPECTED: 0}
        self.log = []              # (t, event) for the directed tests
        self.cc_delay = (0, 30)
        self.fd_delay = (0, 12)

    # ---- stimulus construction ------------------------------------------------------------
    def _beat(self, gpc, cnt, is_cga=0, first=0, last=0, kind=Kind.LAUNCH, grid_id=0, seq=0,
              cga=None):
        full = list(cnt) + [0] * (self.p.S_MAX - len(cnt))
        return dict(kind=int(kind), gpc=gpc, cnt=full, is_cga=is_cga, gcga_first=first,
                    gcga_last=last, end_of_cga=last, grid_id=grid_id, seq=seq, _cga=cga)

    def _split_cnt(self, n, sm_count, rng):
        """A cnt vector over ``sm_count`` SMs with total ``n`` (each entry below CNT limit)."""
        cnt = [0] * sm_count
        cmax = (1 << self.p.CNT_W) - 1
        for _ in range(n):
            while True:
                k = rng.randrange(sm_count)
                if cnt[k] < cmax:
                    cnt[k] += 1
                    break
        return cnt

    def add_cga(self, ctas, n_beats=1, empty_last=False, gpc=None, rng=None):
        """Queue the beats of one GPC CGA of ``ctas`` CTAs (on GPC ``gpc``, default this one)."""
        rng = rng or self.rng
        gpc = self.g if gpc is None else gpc
        mask = (1 << self.p.SEQ_W) - 1
        seq, self.seq = self.seq & mask, self.seq + 1
        grid_id = rng.randrange(1 << self.p.GRID_ID_W)
        cga = None
        if gpc == self.g:
            cga = Cga(self.next_key, ctas, grid_id, seq)
            self.next_key += 1
            self.cgas.append(cga)
        n_beats = max(1, min(n_beats, ctas))
        cuts = sorted(rng.sample(range(1, ctas), n_beats - 1)) if n_beats > 1 else []
        sizes = [b - a for a, b in zip([0] + cuts, cuts + [ctas])]
        if empty_last:
            sizes.append(0)
        s_g = self.p.SM_PER_GPC[gpc]
        for k, n in enumerate(sizes):
            self.beats.append(self._beat(gpc, self._split_cnt(n, s_g, rng), is_cga=1,
                                         first=int(k == 0), last=int(k == len(sizes) - 1),
                                         grid_id=grid_id, seq=seq, cga=cga))
        return cga

    def add_plain(self, gpc=None, rng=None):
        rng = rng or self.rng
        gpc = self.g if gpc is None else gpc
        n = rng.randint(1, 6)
        self.beats.append(self._beat(gpc, self._split_cnt(n, self.p.SM_PER_GPC[gpc], rng),
                                     grid_id=rng.randrange(1 << self.p.GRID_ID_W),
                                     seq=self.seq & ((1 << self.p.SEQ_W) - 1), last=1))
        self.seq += 1

    def add_grid(self, rng=None):
        """A GRID beat with LAUNCH-looking fields: the GPM must ignore it."""
        rng = rng or self.rng
        b = self._beat(self.g, [1], is_cga=1, first=1, last=1, kind=Kind.GRID,
                       grid_id=rng.randrange(1 << self.p.GRID_ID_W))
        self.beats.append(b)

    # ---- one cycle --------------------------------------------------------------------------
    def _in_gpc(self, sm):
        return sm in self.sms

    async def step(self, present=True, fork_ready=True, fr_ready=None, cq_ready=None,
                   cc_policy=None, fd_policy=None):
        """One cycle: called just after a rising edge; returns just before the next."""
        dut, gold, t = self.dut, self.gold, self.t
        fr_ready = self.fr_gate.next() if fr_ready is None else fr_ready
        cq_ready = self.cq_gate.next() if cq_ready is None else cq_ready
        # start of cycle: what the registered outputs must show
        exp_free = len(gold.pool.free)
        exp_idle = gold.idle()
        exp_fr = gold.flush_q[0] if gold.flush_q else None
        exp_cq = gold.complete_q[0] if gold.complete_q else None

        # 1. beat
        beat = self.beats[0] if (present and self.beats) else None
        exp_stall, exp_cid, take, mine = 0, None, False, False
        if beat is not None:
            mine = beat["kind"] != Kind.GRID and beat["gpc"] == self.g
            if mine and beat["is_cga"]:
                ns = SimpleNamespace(**{k: v for k, v in beat.items() if k != "_cga"})
                cid = gold.try_alloc(ns)
                exp_stall = int(cid is None)
                exp_cid = cid
            elif mine:
                exp_cid = 0
            take = fork_ready and not exp_stall
            if take:
                self.beats.pop(0)
                if mine and beat["is_cga"]:
                    ns.cga_id = exp_cid
                    gold.accept_beat(ns, exp_cid)
                    self._launched(beat, exp_cid)
                elif beat["kind"] != Kind.GRID:
                    self._launched_other(beat)
        self.stalls += exp_stall

        # 2, 3. flush_req / cga_complete transfers
        fr_x = exp_fr is not None and fr_ready
        if fr_x:
            r = gold.flush_q.popleft()
            assert r == exp_fr
            gold.flush_sent(r)
            self._flush_sent(r)
        cq_x = exp_cq is not None and cq_ready
        if cq_x:
            r = gold.complete_q.popleft()
            gold.complete_sent(r)
            self._complete_sent(r)

        # 4. cta_complete
        cc = (cc_policy or self.random_cc)()
        exp_bad, exp_e7 = 0, None
        if cc is not None:
            sm, is_cga, cga_id, underflow, rec = cc
            if is_cga and self._in_gpc(sm):
                e = gold.cta_complete_error(cga_id)
                exp_bad = int(e is not None)
                if not underflow:
                    if e is not None:
                        exp_e7 = cga_id
                        self.errs[Err.COMPLETE_BAD_CGA] += 1
                    else:
                        gold.cta_complete(cga_id)
                        assert rec is not None and rec.cga_id == cga_id, (t, cc)
                        rec.completed += 1
                        rec.last_cc_t = t
                        self.log.append((t, "cc", cga_id))
        # 5. dsmem_flush_done
        fd = (fd_policy or self.random_fd)()
        exp_e8 = None
        if fd is not None:
            sm, cga_id = fd
            if self._in_gpc(sm):
                e = gold.flush_done_error(cga_id)
                if e is not None:
                    exp_e8 = cga_id
                    self.errs[Err.FLUSH_UNEXPECTED] += 1
                else:
                    gold.flush_done(cga_id)
                    rec = self.by_id[cga_id]
                    rec.flush_dones += 1
                    rec.last_fd_t = t

        # drive
        junk = self.rng.getrandbits
        dut.beat_valid.value = int(beat is not None)
        dut.beat.value = (self.bf.pack(**{k: v for k, v in beat.items() if k != "_cga"})
                          if beat is not None else junk(self.bf.width))
        # the parent's decodes (WdTop: beat.gpc == G, sm in GPC G); junk while not valid
        dut.beat_mine.value = int(beat["gpc"] == self.g) if beat is not None else junk(1)
        dut.cc_mine.value = int(self._in_gpc(cc[0])) if cc is not None else junk(1)
        dut.fd_mine.value = int(self._in_gpc(fd[0])) if fd is not None else junk(1)
        dut.beat_take.value = int(take)
        dut.flush_req__ready.value = int(fr_ready)
        dut.cga_complete__ready.value = int(cq_ready)
        dut.cta_complete__valid.value = int(cc is not None)
        dut.cc_underflow.value = int(cc[3]) if cc is not None else self.rng.getrandbits(1)
        dut.cta_complete__payload.value = (
            self.ccf.pack(sm=cc[0], is_cga=cc[1], cga_id=cc[2],
                          regs_g=junk(9), smem_g=junk(10), warps=junk(7))
            if cc is not None else junk(self.ccf.width))
        dut.dsmem_flush_done__valid.value = int(fd is not None)
        dut.dsmem_flush_done__payload.value = (self.fdf.pack(sm=fd[0], cga_id=fd[1])
                                               if fd is not None else junk(self.fdf.width))
        await ReadOnly()
        where = f"cycle {t} (sim {sim_cycle()})"

        def chk(name, got, exp):
            assert got == exp, f"{where}: {name} = {got}, golden {exp}"

        if beat is not None and mine:
            chk("beat_stall", read_int(dut.beat_stall), exp_stall)
            if not exp_stall:
                chk("beat_cga_id", read_int(dut.beat_cga_id), exp_cid)
        elif beat is not None:
            chk(f"beat_stall (not this GPC's: {beat})", read_int(dut.beat_stall), 0)
        chk("flush_req.valid", read_int(dut.flush_req__valid), int(exp_fr is not None))
        if exp_fr is not None:
            got = self.frf.unpack(read_int(dut.flush_req__payload))
            chk("flush_req", FlushReq(self.g, got["cga_id"], got["n_ctas"]), exp_fr)
        chk("cga_complete.valid", read_int(dut.cga_complete__valid), int(exp_cq is not None))
        if exp_cq is not None:
            got = self.cqf.unpack(read_int(dut.cga_complete__payload))
            chk("cga_complete", CgaComplete(self.g, got["cga_id"], got["grid_id"],
                                            got["seq"]), exp_cq)
        chk("credit_ret", read_int(dut.credit_ret), int(cq_x))
        chk("cc_bad_cga", read_int(dut.cc_bad_cga), exp_bad)
        chk("err_cc_valid", read_int(dut.err_cc_valid), int(exp_e7 is not None))
        chk("err_fd_valid", read_int(dut.err_fd_valid), int(exp_e8 is not None))
        chk("free_ids", read_int(dut.free_ids), exp_free)
        chk("alloc_ids", read_int(dut.alloc_ids), self.n_ids - exp_free)
        chk("idle", read_int(dut.idle), int(exp_idle))
        chk("cta_complete.ready", read_int(dut.cta_complete__ready), 1)
        chk("dsmem_flush_done.ready", read_int(dut.dsmem_flush_done__ready), 1)
        self.result = dict(stall=exp_stall, cid=exp_cid if take else None, fr=fr_x and exp_fr,
                           cq=cq_x and exp_cq)
        gold.tick()
        self.t += 1
        await RisingEdge(dut.clk)
        return self.result

    # ---- the SM model -------------------------------------------------------------------------
    def _launched(self, beat, cid):
        rec = beat["_cga"]
        if beat["gcga_first"]:
            assert cid not in self.by_id, f"cycle {self.t}: ID {cid} held twice"
            self.by_id[cid] = rec
            rec.cga_id, rec.alloc_t = cid, self.t
        assert rec.cga_id == cid, f"cycle {self.t}: beat of CGA {rec.key} got ID {cid}"
        rec.launched_beats += 1
        base = self.p.base(self.g)
        for k, c in enumerate(beat["cnt"]):
            for _ in range(c):
                self.due_cc.append((self.t + self.rng.randint(*self.cc_delay), base + k, cid,
                                    rec))

    def _launched_other(self, beat):
        """CTAs of plain beats or of other GPCs also complete (the GPM must ignore them)."""
        base = self.p.base(beat["gpc"])
        for k, c in enumerate(beat["cnt"]):
            for _ in range(c):
                self.due_cc.append((self.t + self.rng.randint(*self.cc_delay), base + k,
                                    beat["is_cga"], None))

    def _flush_sent(self, r):
        rec = self.by_id[r.cga_id]
        rec.flush_reqs.append((self.t, r.n_ctas))
        self.log.append((self.t, "flush_req", r.cga_id))
        for _ in range(r.n_ctas):
            self.due_fd.append((self.t + self.rng.randint(*self.fd_delay),
                                self.rng.choice(self.sms), r.cga_id))

    def _complete_sent(self, r):
        rec = self.by_id.pop(r.cga_id)
        rec.cga_completes.append((self.t, r))
        self.log.append((self.t, "cga_complete", r.cga_id))

    def _take_due(self, due):
        ready = [k for k, d in enumerate(due) if d[0] <= self.t]
        if not ready:
            return None
        return due.pop(self.rng.choice(ready))

    def random_cc(self, p_bad=0.08, p_bogus=0.03):
        """A due completion (any GPC), else sometimes a bad one for this GPC."""
        rng, gold = self.rng, self.gold
        x = rng.random()
        if x < p_bad:
            bad = [i for i in range(self.n_ids) if gold.cta_complete_error(i) is not None]
            if bad:
                return (rng.choice(self.sms), 1, rng.choice(bad), rng.random() < 0.2, None)
        elif x < p_bad + p_bogus:
            good = [i for i in range(self.n_ids) if gold.cta_complete_error(i) is None]
            if good:       # a bogus completion the tracker rejects: ignored entirely
                return (rng.choice(self.sms), 1, rng.choice(good), True, None)
        d = self._take_due(self.due_cc)
        if d is None:
            return None
        _, sm, what, rec = d
        if rec is None:            # plain CTA (is_cga 0) or another GPC's CTA
            cga_id = rng.randrange(self.n_ids)
            return (sm, what if sm not in self.sms else 0, cga_id, False, None)
        return (sm, 1, what, False, rec)

    def random_fd(self, p_bad=0.06, p_other=0.04):
        rng, gold = self.rng, self.gold
        x = rng.random()
        if x < p_bad:
            bad = [i for i in range(self.n_ids) if gold.flush_done_error(i) is not None]
            if bad:
                return (rng.choice(self.sms), rng.choice(bad))
        elif x < p_bad + p_other and self.other_sms:
            return (rng.choice(self.other_sms), rng.randrange(self.n_ids))
        d = self._take_due(self.due_fd)
        return None if d is None else (d[1], d[2])

    # ---- end checks ---------------------------------------------------------------------------
    def busy(self):
        return bool(self.beats or self.due_cc or self.due_fd or self.gold.flush_q
                    or self.gold.complete_q or not self.gold.idle())

    async def drain(self, limit=20000, **kw):
        for _ in range(limit):
            if not self.busy():
                break
            await self.step(**kw)
        assert not self.busy(), (f"not drained after {limit} cycles: beats {len(self.beats)}, "
                                 f"cc {len(self.due_cc)}, fd {len(self.due_fd)}")
        for _ in range(3):        # settle: nothing more may appear
            await self.step()

    def check_v9(self):
        """WD-V9 / WD-F22 / WD-F23 per GPC CGA; protocol checkers clean."""
        for rec in self.cgas:
            assert rec.cga_id is not None, f"CGA {rec.key} never launched"
            assert rec.completed == rec.ctas, (rec.key, rec.completed, rec.ctas)
            assert len(rec.flush_reqs) == 1, (rec.key, rec.flush_reqs)
            t_fr, n = rec.flush_reqs[0]
            assert n == rec.ctas, (rec.key, n, rec.ctas)
            assert t_fr > rec.last_cc_t, (rec.key, t_fr, rec.last_cc_t)
            assert rec.flush_dones == rec.ctas, (rec.key, rec.flush_dones)
            assert len(rec.cga_completes) == 1, (rec.key, rec.cga_completes)
            t_cq, r = rec.cga_completes[0]
            assert t_cq > rec.last_fd_t, (rec.key, t_cq, rec.last_fd_t)
            assert (r.gpc, r.cga_id, r.grid_id, r.seq) == (self.g, rec.cga_id, rec.grid_id,
                                                           rec.seq), (rec.key, r)
        assert not self.by_id
        assert len(self.gold.pool.free) == self.n_ids
        assert read_int(self.dut.idle) == 1
        for c in self.checkers:
            c.check()

    def report(self, name):
        self.dut._log.info(
            f"{name}: seed {env.seed()}, {self.t} cycles, {len(self.cgas)} GPC CGAs of GPC "
            f"{self.g}, {self.stalls} WAIT_CGA_ID cycles, E7 {self.errs[Err.COMPLETE_BAD_CGA]}, "
            f"E8 {self.errs[Err.FLUSH_UNEXPECTED]}, flush_req {self.checkers[0].transfers}, "
            f"cga_complete {self.checkers[1].transfers}")


async def _start(dut, **kw):
    start_clock(dut)
    dut.beat_valid.value = 0
    dut.beat_mine.value = 0
    dut.cc_mine.value = 0
    dut.fd_mine.value = 0
    dut.beat_take.value = 0
    dut.cta_complete__valid.value = 0
    dut.dsmem_flush_done__valid.value = 0
    dut.flush_req__ready.value = 0
    dut.cga_complete__ready.value = 0
    dut.cc_underflow.value = 0
    await reset(dut)
    await RisingEdge(dut.clk)
    tb = GpmTb(dut, **kw)
    dut._log.info(f"seed {env.seed()} (GPUBLOCKS_SEED), params {env.params()}")
    return tb


@cocotb.test()
async def random_traffic(dut):
    tb = await _start(dut)
    rng = tb.rng
    units = int(os.environ.get("WD_UNITS", "300"))
    cmax = min(tb.p.MAX_CGA_CTAS, 16)
    others = [h for h in range(tb.p.N_GPC) if h != tb.g]
    fork = RandomGate(0.8, rng)
    present = RandomGate(0.85, rng)
    for _ in range(units):
        x = rng.random()
        if x < 0.6:
            n = rng.randint(1, cmax)
            tb.add_cga(n, n_beats=rng.randint(1, 4), empty_last=rng.random() < 0.08)
        elif x < 0.75:
            tb.add_plain()
        elif x < 0.92 and others:
            tb.add_cga(rng.randint(1, cmax), n_beats=rng.randint(1, 3), gpc=rng.choice(others))
        elif x < 0.97 and others:
            tb.add_plain(gpc=rng.choice(others))
        else:
            tb.add_grid()
        # keep the queue short so that stimulus and completions interleave
        while len(tb.beats) > 6:
            await tb.step(present=present.next(), fork_ready=fork.next())
    await tb.drain()
    tb.check_v9()
    assert tb.errs[Err.COMPLETE_BAD_CGA] > 0 and tb.errs[Err.FLUSH_UNEXPECTED] > 0
    tb.report("random_traffic")


@cocotb.test()
async def golden_vector_gv12(dut):
    """WD-GV12: allocations A-D get 0-3; E stalls at 4 and 5 (B's release at 5 is visible at
    6); E gets 1 at 6; 0 released at 7, 2 at 8; F gets 0 at 9."""
    tb = await _start(dut)
    assert tb.n_ids == 4, "WD-GV12 needs GPC_CGA_ID_W = 2"
    A, B, C, D, E, F = [tb.add_cga(1) for _ in range(6)]      # one CTA each
    sm = tb.sms[0]
    # completions, flush dones and ready of the script (cycles relative to A's allocation)
    cc_at = {2: B, 3: A, 4: C}
    fd_at = {4: B, 5: A, 6: C}
    fr_ready_at = {3, 4, 5}
    cq_ready_at = {5, 7, 8}
    t0 = tb.t

    def cc_pol():
        rec = cc_at.get(tb.t - t0)
        return None if rec is None else (sm, 1, rec.cga_id, False, rec)

    def fd_pol():
        rec = fd_at.get(tb.t - t0)
        return None if rec is None else (sm, rec.cga_id)

    got = {}
    for c in range(10):
        got[c] = await tb.step(present=c not in (7, 8), fork_ready=True,
                               fr_ready=c in fr_ready_at, cq_ready=c in cq_ready_at,
                               cc_policy=cc_pol, fd_policy=fd_pol)
    ids = {c: got[c]["cid"] for c in range(10)}
    assert [ids[c] for c in range(4)] == [0, 1, 2, 3], ids
    assert got[4]["stall"] == 1 and got[5]["stall"] == 1, got
    assert got[5]["cq"] and got[5]["cq"].cga_id == B.cga_id == 1, got[5]
    assert ids[6] == 1 and E.cga_id == 1, ids
    assert got[7]["cq"].cga_id == 0 and got[8]["cq"].cga_id == 2, got
    assert ids[9] == 0 and F.cga_id == 0, ids
    # the rest: D, E and F complete; the scripted ones are done
    tb.due_cc = [(tb.t + 2, sm, rec.cga_id, rec) for rec in (D, E, F)]
    tb.due_fd = []
    await tb.drain()
    tb.check_v9()
    tb.report("golden_vector_gv12")


@cocotb.test()
async def id_exhaustion(dut):
    """WD-V12: more GPC CGAs in flight than IDs; the beat waits (WAIT_CGA_ID), nothing is
    dropped or duplicated, V9 holds."""
    tb = await _start(dut)
    rng = tb.rng
    tb.cc_delay = (5, 40)
    n = 10 * tb.n_ids if tb.n_ids <= 16 else 300
    for _ in range(n):
        tb.add_cga(rng.randint(1, min(tb.p.MAX_CGA_CTAS, 8)), n_beats=rng.randint(1, 3))
    while tb.beats:
        await tb.step(fork_ready=rng.random() < 0.9)
    await tb.drain()
    tb.check_v9()
    launched = sorted(r.key for r in tb.cgas if r.alloc_t is not None)
    assert launched == list(range(n))
    assert all(r.launched_beats >= 1 for r in tb.cgas)
    if tb.n_ids <= 16:
        assert tb.stalls > 0, "WAIT_CGA_ID never observed"
    tb.report("id_exhaustion")


@cocotb.test()
async def two_flush_reqs_one_cycle(dut):
    """Y: one beat of 1 CTA; X: a beat of 2 CTAs, then an empty gcga_last beat. X's CTAs
    complete first; then in one cycle X's empty last beat (X done by the beat) and Y's
    completion (Y done): flush_req X, then Y (golden order)."""
    tb = await _start(dut, fr_ready=1.0, cq_ready=1.0)
    sm = tb.sms[0]
    Y = tb.add_cga(1)
    X = tb.add_cga(2, n_beats=1, empty_last=True)
    assert [b["gcga_last"] for b in tb.beats] == [1, 0, 1]
    # no completions but the script's: a random one could complete Y's CTA here (its due
    # delay may be 0 or 1 cycles; seed 657518986 did) and Y would finish before X
    await tb.step(present=True, cc_policy=lambda: None)    # Y allocated
    await tb.step(present=True, cc_policy=lambda: None)    # X's first beat
    tb.due_cc.clear()
    script = {tb.t: (sm, 1, X.cga_id, False, X), tb.t + 1: (sm, 1, X.cga_id, False, X),
              tb.t + 2: (sm, 1, Y.cga_id, False, Y)}

    def cc_pol():
        return script.get(tb.t)

    await tb.step(present=False, cc_policy=cc_pol)
    await tb.step(present=False, cc_policy=cc_pol)
    assert tb.gold.cgas[X.cga_id].active == 0 and not tb.gold.flush_q
    await tb.step(present=True, cc_policy=cc_pol)  # X's empty last beat + Y's completion
    assert [r.cga_id for r in tb.gold.flush_q] == [X.cga_id, Y.cga_id]
    r1 = await tb.step(present=False, fr_ready=True)
    r2 = await tb.step(present=False, fr_ready=True)
    assert r1["fr"].cga_id == X.cga_id and r2["fr"].cga_id == Y.cga_id
    await tb.drain()
    tb.check_v9()
    tb.report("two_flush_reqs_one_cycle")
