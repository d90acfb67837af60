"""MR-V15: random stress of the memory router RTL (hw.memrouter.top.Memrouter) with MR-V2..V9
checked throughout.

One run takes from the environment STRESS_CFG (A, B, C or D: the build must have its hardware,
CFG-D runs on the CFG-A build), MODE (0 exclusive, 1 inclusive), MIG_STALL, CYCLES and EPOCH.
The router runs with FAR_ALLOC = 1 and the ACC and SECT triggers on. Each epoch of EPOCH cycles
draws a new working set of pages. Every processor port sends random reads and writes of lengths
1..MAX_LEN on it (35 % on hot sectors, 2 % beyond PAGES·G, random partial byte enables).
Random MIG_CMDs come every 200..2500 cycles: PROMOTE, DEMOTE, SWAP, mostly on pages the PT
mirror says can move, a fifth on any page or with a bad op. Poison is switched on and off at
random on sectors of two read-only pages, at the device sector the PT mirror names; a PT_UPDATE
of such a page switches its poison off, so a poisoned frame never passes to another page. An
epoch ends with a drain, a quiet engine and a FLUSH, and then the checks run on everything the
epoch did:

- MR-V2: every NEAR / FAR request addresses a frame its page held then in the PT mirror, and
  every MIG request a frame of the running command's pages (router_tb.check_map).
- MR-V3, V4, V6: every response beat, in per-port order, against the flat reference in
  acceptance order. A read beat of a sector that had poison may carry E_POISON; any other beat
  has err 0 and the reference's data. PREQ/PRSP_BEATS match the requests. After the FLUSH,
  every page is STABLE, no line is valid, and every sector of the epoch's pages and of the
  pages that moved, read back door through the PT mirror, equals the reference.
- MR-V5: for each line a command fills, no sector of its source frame is read twice between
  the line's lock and its LINE_FULL. For each command that ends DONE, WALK + DEMAND + PREVALID +
  FULL_WRITES = NS x LINE_FULL events, and the DONE arg equals WALK. The counters are sampled
  back door in the cycle after MIG_DONE, before the next command's MIG_START clears them.
- MR-V7: at each PT_UPDATE of a page the command filled a line for, the new frame has received
  NS distinct MIG sector writes and all of them are acknowledged. A PT_UPDATE with MIG writes
  to the new frame but no LINE_FULL for the page is a failure.
- MR-V8: no ALLOC or EVICT names a locked line. A line is locked from the START that names it,
  or from the ALLOC of the line that later reports LINE_FULL, until the PT_UPDATE of its page
  (which releases it), DONE or ABORT. An ABORT may evict its line B just before the ABORT
  event.
- MR-V9: every 64 cycles LINE_STATUS of every line is read. A line holding a page whose
  mirrored entry is NEAR and STABLE is a failure, unless that page's command ended, or its
  PT_UPDATE arrived, within the last 64 cycles.
"""

import collections
import os

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.memrouter.formats import (E_POISON, E_RANGE, EV_ABORT, EV_ALLOC, EV_DONE, EV_EVICT,
                                      EV_LINE_FULL, EV_PT_UPDATE, EV_START, EVENT_NAMES, FULL_BE,
                                      PTE)
from golden.memrouter.ifmap import pt_init
from golden.memrouter.merge import merge
from golden.memrouter.params import reference
from golden.memrouter.reference import FlatReference
from golden.memrouter.router import COUNTERS
from tb.common.stream import sim_cycle
from tb.memrouter.router_tb import Bench, check_map, pick_command, range_error

V5_COUNTERS = ("MIG_WALK_FILLS", "MIG_DEMAND_FILLS", "MIG_PREVALID", "MIG_FULL_WRITES")
RECENT = 64                     # MR-V9 slack: the sampling period


class Mirror:
    """The PT mirror and the running command, kept from the events as they arrive; MR-V7 and
    MR-V8 are checked here, MR-V5's per-line reads when a LINE_FULL arrives."""

    def __init__(self, b, init, poison):
        self.b, self.p, self.poison = b, b.p, poison
        self.pt = {q: init.pt[q] for q in range(init.pages)}
        self.cmd = None
        self.done = []              # finished commands ending DONE, in order
        self.ended = {}             # page -> cycle its last command ended
        self.updated = {}           # page -> cycle of its last PT_UPDATE
        self.failures = []
        self.counts = collections.Counter()
        b.on_event.append(self.event)

    def fail(self, msg):
        self.failures.append(f"cycle {sim_cycle()}: {msg}")

    def event(self, t, e):
        code, line, ppn, arg = e
        self.counts[EVENT_NAMES.get(code, code)] += 1
        c = self.cmd
        if code == EV_START:
            if c is not None:
                self.fail(f"START of page {ppn} while the command of page {c['p']} runs")
            c = self.cmd = dict(start=t, p=ppn, arg=arg, pages={ppn}, locked={},
                                allocs=[], evicts=[], fulls=[], m0=len(self.b.mlog))
            if arg >> 6 & 1:
                c["locked"][line] = t
            if arg & 0xF == 3:
                c["pages"].add(arg >> 16)
        elif code in (EV_ALLOC, EV_EVICT):
            if c is None:
                return
            if line in c["locked"]:
                if code == EV_EVICT:
                    c["evicts"].append((t, line, ppn))      # allowed only right before ABORT
                else:
                    self.fail(f"ALLOC of locked line {line} (page {ppn}) (MR-V8)")
            if code == EV_ALLOC:
                c["allocs"].append((t, line, ppn))
                if self.pt[ppn].pool == 0:       # a near page: the command's line B (victim)
                    c["pages"].add(ppn)
        elif code == EV_LINE_FULL:
            if c is None:
                self.fail(f"LINE_FULL of line {line} outside a command")
                return
            c["pages"].add(ppn)
            since = c["locked"].get(line)
            if since is None:
                alloc = [a for a in c["allocs"] if a[1] == line]
                if not alloc or alloc[-1][2] != ppn:
                    self.fail(f"LINE_FULL of line {line} (page {ppn}) neither locked at START "
                              f"nor allocated for the page in the command (MR-V8)")
                    return
                since = alloc[-1][0]
                c["locked"][line] = since
            c["fulls"].append((t, line, ppn))
            self._no_double_fetch(c, since, t, ppn)
        elif code == EV_PT_UPDATE:
            if c is None:
                self.fail(f"PT_UPDATE of page {ppn} outside a command")
                return
            new = PTE.decode(arg)
            self._pt_update_after_full(c, t, ppn, new)
            # the line filled with the page is released right after its PT update (§4.8), so
            # a later ALLOC in the same command may take it (inclusive copy-home's line B)
            for _, line, q in c["fulls"]:
                if q == ppn:
                    c["locked"].pop(line, None)
            self.poison.pt_update(ppn, self.pt[ppn], new)
            self.pt[ppn] = new
            self.updated[ppn] = t
        elif code in (EV_DONE, EV_ABORT):
            if c is None:
                self.fail(f"{EVENT_NAMES[code]} of page {ppn} outside a command")
                return
            if c["evicts"] and not (code == EV_ABORT and self._evicts_end_command(c)):
                self.fail(f"EVICT of locked line(s) {c['evicts']} during the command of page "
                          f"{c['p']} (MR-V8)")
            c["end"], c["code"], c["done_arg"] = t, code, arg
            for q in c["pages"]:
                self.ended[q] = t
            if code == EV_DONE:
                self.done.append(c)
            self.cmd = None

    def _evicts_end_command(self, c):
        """An ABORT evicts line B (MR-E9) right before its own event: no event after it."""
        last = self.b.tevents[-2][1] if len(self.b.tevents) >= 2 else None
        return last is not None and last[0] == EV_EVICT and len(c["evicts"]) == 1

    def _no_double_fetch(self, c, since, t, ppn):
        """MR-V5: the source frame's sectors are read at most once between lock and LINE_FULL."""
        src = self.pt[ppn]
        lg = self.p.LOG2G
        reads = collections.Counter()
        for when, j, cls, addr, nb, wr in self.b.mlog[c["m0"]:]:
            if when < since or when > t or wr or j != src.port or addr >> lg != src.frame:
                continue
            for k in range(nb):
                reads[addr + 32 * k] += 1
        twice = sorted(a for a, n in reads.items() if n > 1)
        if twice:
            self.fail(f"page {ppn}: sectors {[hex(a) for a in twice[:4]]} of its source "
                      f"({src.port}, frame {src.frame}) read twice before LINE_FULL (MR-V5)")
        c.setdefault("fetched", 0)
        c["fetched"] += len(reads)

    def _pt_update_after_full(self, c, t, ppn, new):
        """MR-V7: a copied page's new frame holds NS acknowledged sector writes of the command."""
        lg, ns = self.p.LOG2G, self.p.NS
        writes = {}
        for k in range(c["m0"], len(self.b.mlog)):
            when, j, cls, addr, nb, wr = self.b.mlog[k]
            if wr and cls == 2 and j == new.port and addr >> lg == new.frame:
                for s in range(nb):
                    writes[addr + 32 * s] = k
        filled = any(f[2] == ppn for f in c["fulls"])
        if not filled:
            if writes:
                self.fail(f"PT_UPDATE of page {ppn} after MIG writes to its new frame without "
                          f"a LINE_FULL of the page (MR-V7)")
            return
        self.counts["V7 copies"] += 1
        if len(writes) != ns:
            self.fail(f"PT_UPDATE of page {ppn} to {new}: {len(writes)} of {ns} sectors written "
                      f"(MR-V7)")
        late = [k for k in set(writes.values()) if (self.b.acked_at(k) or 1 << 62) > t]
        if late:
            self.fail(f"PT_UPDATE of page {ppn} before the acknowledgement of "
                      f"{len(late)} write(s) (MR-V7)")

    def busy_pages(self, now):
        """Pages a command names now or named within the last RECENT cycles, or recently moved."""
        out = set(self.cmd["pages"]) if self.cmd else set()
        out |= {q for q, t in self.ended.items() if now - t <= RECENT}
        out |= {q for q, t in self.updated.items() if now - t <= RECENT}
        return out


class Poison:
    """Poison switched on and off on device sectors of the read-only pages' frames (4 slots per
    port model). ``ever`` holds the partition sectors that may read as E_POISON: those poisoned,
    and those of a page that took over a frame poisoned then or within RECENT cycles (the
    events reach the testbench a few cycles after the PT changes)."""

    def __init__(self, b, pages):
        self.b, self.pages = b, pages
        self.mirror = None
        self.hot = []               # the epoch's hot sectors of the read-only pages
        self.slots = {}             # (port, slot) -> device sector address
        self.recent = {}            # (port, device sector address) -> cycle switched off
        self.ever = set()
        self.switches = 0

    def toggle(self):
        b, p, rng = self.b, self.b.p, self.b.rng
        if self.slots and rng.random() < 0.5:
            self._off(rng.choice(sorted(self.slots)))
            return
        if self.hot and rng.random() < 0.5:         # a hot sector: reads will meet it
            a = rng.choice(self.hot)
            q, s = a >> p.LOG2G, (a & (p.G - 1)) // 32
        else:
            q, s = rng.choice(self.pages), rng.randrange(p.NS)
        e = self.mirror.pt[q]
        free = [k for k in range(4) if (e.port, k) not in self.slots]
        if not free:
            return
        b.ports.models[e.port].poison[free[0]] = e.desc.dev(32 * s, p.LOG2G)
        self.slots[(e.port, free[0])] = e.desc.dev(32 * s, p.LOG2G)
        self.ever.add((q << p.LOG2G) + 32 * s)
        self.switches += 1

    def _off(self, key):
        self.b.ports.models[key[0]].poison[key[1]] = None
        self.recent[(key[0], self.slots.pop(key))] = sim_cycle()
        self.switches += 1

    def pt_update(self, q, old, new):
        """Page ``q`` moves from frame ``old`` to ``new``: poison leaves both frames."""
        lg, now = self.b.p.LOG2G, sim_cycle()
        for key in [k for k, d in self.slots.items()
                    if (k[0], d >> lg) in ((old.port, old.frame), (new.port, new.frame))]:
            self._off(key)
        for (port, d), t in self.recent.items():
            if port == new.port and d >> lg == new.frame and now - t <= RECENT:
                self.ever.add((q << lg) + (d & ((1 << lg) - 1)))

    def all_off(self):
        for key in list(self.slots):
            self._off(key)
        self.recent.clear()


class Reference:
    """The flat reference memory, applied in acceptance order: a read sees exactly the writes
    accepted before it (MR-V3), kept as the current value of every touched sector."""

    def __init__(self, init, p):
        self.initial = FlatReference(init, p).initial      # contents after PT_INIT (§4.12)
        self.mem = {}
        self.unknown = set()        # sectors a write acknowledged E_POISON may have left alone

    def read(self, addr):
        v = self.mem.get(addr)
        return self.initial(addr) if v is None else v

    def write(self, addr, data, be, applied=True):
        """One accepted sector write; ``applied`` False: it may not have been (MR-E8)."""
        self.mem[addr] = merge(self.read(addr), data, be)
        if not applied:
            self.unknown.add(addr)
        elif be == FULL_BE:
            self.unknown.discard(addr)


class Stress:
    def __init__(self, dut):
        self.b = b = Bench(dut, ready_prob=0.9, gap_prob=0.3)
        self.dut = dut
        self.name = os.environ["STRESS_CFG"]
        self.mode = int(os.environ.get("MODE", "0"))
        self.stall = int(os.environ.get("MIG_STALL", "0"))
        self.total = int(os.environ.get("CYCLES", "1000000"))
        self.epoch = int(os.environ.get("EPOCH", "50000"))
        self.p = b.p
        self.uid = 0                    # requests accepted and checked so far
        self.sent = 0                   # requests queued (their ids count up mod 256)
        self.rsp_seen = [0] * self.p.N_PROC
        self.beats = [0, 0]             # PREQ_BEATS, PRSP_BEATS the requests imply
        self.checked = 0
        self.samples = 0
        self.v5_cmds = 0
        self.done_counts = []
        self.cmds = collections.Counter()

    async def setup(self):
        b, p = self.b, self.p
        await b.start()
        rp, cfg = reference(self.name, dict(N_PROC=p.N_PROC, ROB_BEATS=p.ROB_BEATS),
                            FAR_ALLOC=1, MODE=self.mode, MIG_STALL=self.stall, EN_ACC=1,
                            EN_SECT=1, T_ACC=6, T_SECT=p.NS // 4, WINDOW=700)
        assert rp == p, f"CFG-{self.name} needs other hardware than this build ({rp} vs {p})"
        await b.reconfigure(cfg)
        self.init = init = pt_init(p, cfg)
        self.npages = init.pages
        near = [q for q in range(init.pages) if init.pt[q].pool == 0]
        far = [q for q in range(init.pages) if init.pt[q].pool == 1]
        ro = b.rng.sample(near, 1) + b.rng.sample(far, 1) if near else b.rng.sample(far, 2)
        self.ro = ro
        self.poison = Poison(b, ro)
        self.mirror = Mirror(b, init, self.poison)
        self.poison.mirror = self.mirror
        self.ref = Reference(init, p)
        cocotb.start_soon(self._sample_done_counters())

    async def _sample_done_counters(self):
        """MR-V5's counters of each command ending DONE, read back door in the cycle after
        MIG_DONE (the next MIG_START clears them)."""
        dut = self.dut
        done = dut.engine.inc_done
        regs = [getattr(dut.csr, f"cnt_{n.lower()}") for n in V5_COUNTERS]
        while True:
            await RisingEdge(done)
            await RisingEdge(dut.clk)
            await ReadOnly()
            self.done_counts.append(tuple(int(r.value) for r in regs))

    async def run_epoch(self, end):
        b, p, rng = self.b, self.p, self.b.rng
        near = [q for q in range(self.npages) if self.mirror.pt[q].pool == 0 and q not in self.ro]
        far = [q for q in range(self.npages) if self.mirror.pt[q].pool == 1 and q not in self.ro]
        k_near = min(5, len(near))
        pages = sorted(rng.sample(near, k_near) + rng.sample(far, 12 - k_near) + self.ro)
        hot = [(rng.choice(pages) << p.LOG2G) + 32 * rng.randrange(p.NS) for _ in range(6)]
        self.poison.hot = [(q << p.LOG2G) + 32 * rng.randrange(p.NS) for q in self.ro]
        hot += self.poison.hot
        running = [True]

        async def feed():
            while sim_cycle() < end:
                for proc in range(p.N_PROC):
                    while b.drivers[proc].count() < 6:
                        self._request(proc, pages, hot)
                await b.cycles(4)

        async def commands():
            while running[0]:
                await b.cycles(rng.randint(200, 2500))
                if not running[0]:
                    break
                pool = {q: self.mirror.pt[q].pool for q in pages}
                op, page, arg = pick_command(rng, pages, pool, swap=self.mode == 0)
                await b.csr("MIG_ARG", True, arg)
                _, err = await b.csr("MIG_CMD", True, op | page << 16)
                self.cmds["rejected_full" if err else "queued"] += 1

        async def toggle_poison():
            while running[0]:
                await b.cycles(rng.randint(300, 3000))
                if running[0]:
                    self.poison.toggle()

        async def sample_lines():
            while running[0]:
                await b.cycles(RECENT)
                await self._sample_lines()

        tasks = [cocotb.start_soon(f()) for f in (commands, toggle_poison, sample_lines)]
        await feed()
        running[0] = False
        for task in tasks:
            await task
        await b.drain(timeout=400_000)
        await b.wait_engine_quiet(timeout=400_000)
        self.poison.all_off()
        await b.flush()
        return pages

    def _request(self, proc, pages, hot):
        b, p, rng = self.b, self.p, self.b.rng
        nb = rng.randint(1, p.MAX_LEN)
        x = rng.random()
        if x < 0.35:
            addr = rng.choice(hot)
        elif x < 0.37:
            addr = self.npages * p.G - 32 * rng.randint(0, 2)
        else:
            addr = (rng.choice(pages) << p.LOG2G) + 32 * rng.randrange(p.NS)
        wr = rng.random() < 0.5 and addr >> p.LOG2G not in self.ro
        be = [rng.choice((FULL_BE, rng.getrandbits(32))) for _ in range(nb)] if wr else None
        b.send(proc, addr, nb, wr, self.sent & 0xFF, be=be)
        self.sent += 1

    async def _sample_lines(self):
        """MR-V9: LINE_STATUS of every line against the PT mirror."""
        b, m = self.b, self.mirror
        self.samples += 1
        for k in range(self.p.NUM_LINES):
            word, _ = await b.csr(0x400 + 4 * k)
            if not word & 1:
                continue
            q = word >> 16
            e = m.pt.get(q)
            if e is not None and e.pool == 0 and q not in m.busy_pages(sim_cycle()):
                cmd = m.cmd and {k: m.cmd[k] for k in ("p", "arg", "start", "pages")}
                m.fail(f"line {k} holds page {q}, NEAR and STABLE ({e}) outside its migration "
                       f"(LINE_STATUS {word:#x}; running command {cmd}; its last events "
                       f"{[ev for ev in b.tevents if ev[1][2] == q or ev[1][1] == k][-8:]}) "
                       f"(MR-V9)")

    async def check_epoch(self, pages, m0):
        """The epoch's checks (see the module docstring), after the FLUSH."""
        b, p, m = self.b, self.p, self.mirror
        assert not m.failures, "\n".join(m.failures[:5])
        self._check_responses()
        for name, want in zip(("PREQ_BEATS", "PRSP_BEATS"), self.beats):
            rdata, _ = await b.csr(0x200 + 4 * COUNTERS.index(name))
            assert rdata == want & 0xFFFFFFFF, f"{name}: {rdata}, requests imply {want} (MR-V6)"
        check_map(b, self.init, since=m0)
        # MR-V5's identity on every command ending DONE
        assert len(self.done_counts) == len(m.done), \
            f"{len(self.done_counts)} MIG_DONE pulses, {len(m.done)} DONE events"
        for c, (walk, demand, prevalid, full_writes) in list(zip(m.done, self.done_counts))[
                self.v5_cmds:]:
            fulls = len(c["fulls"])
            assert walk + demand + prevalid + full_writes == p.NS * fulls, (
                f"command of page {c['p']} (START arg {c['arg']:#x}, cycles {c['start']}.."
                f"{c['end']}): WALK {walk} + DEMAND {demand} + PREVALID {prevalid} + FULL_WRITES "
                f"{full_writes} != {p.NS} x {fulls} LINE_FULL (MR-V5)")
            assert c["done_arg"] == walk, f"DONE arg {c['done_arg']} != MIG_WALK_FILLS {walk}"
        self.v5_cmds = len(m.done)
        # after the FLUSH: every page STABLE, no valid line, the contents through the mirror
        for q, e in (await b.settled_pt(self.npages)).items():
            assert e == m.pt[q].with_state(1), f"page {q}: PT {e}, mirror {m.pt[q]}"
        moved = {q for q, t in m.updated.items()}
        for q in sorted(set(pages) | moved):
            e = m.pt[q]
            for s in range(p.NS):
                a = (q << p.LOG2G) + 32 * s
                if a in self.ref.unknown:
                    continue
                got = b.ports.models[e.port].read_sector(e.desc.dev(32 * s, p.LOG2G))
                assert got == self.ref.read(a), \
                    f"page {q} sector {s} at {e}: {got:#x} != reference {self.ref.read(a):#x}"

    def _check_responses(self):
        """MR-V3, V4: the new requests in acceptance order against the reference."""
        b, p = self.b, self.p
        got = [[t.fields for t in mon.transfers] for mon in b.rsp]
        for _, proc, hdr, beats in b.accepted()[self.uid:]:
            nb, wr, addr = hdr["len"] + 1, hdr["wr"], hdr["addr"]
            bad = range_error(p, self.npages, addr, nb)
            self.beats[0] += nb if wr else 1
            self.beats[1] += 1 if wr else nb
            n_beats = 1 if wr else nb
            for j in range(n_beats):
                beat = got[proc][self.rsp_seen[proc]]
                self.rsp_seen[proc] += 1
                a = addr + 32 * j
                where = f"prsp[{proc}] request {self.uid} (id {hdr['id']}, addr {addr:#x}) beat {j}"
                assert beat["id"] == hdr["id"], f"{where}: id {beat['id']} (MR-V4)"
                assert beat["last"] == int(j == n_beats - 1), f"{where}: last"
                ack = beat["err"]
                if bad:
                    assert beat["err"] == E_RANGE, f"{where}: err {beat['err']} != E_RANGE"
                elif wr:
                    exposed = any(addr + 32 * k in self.poison.ever for k in range(nb))
                    assert ack == 0 or ack == E_POISON and exposed, \
                        f"{where}: write ack err {ack} (MR-E8)"
                elif beat["err"] == E_POISON and a in self.poison.ever:
                    pass
                elif a in self.ref.unknown:
                    assert beat["err"] == 0, f"{where}: err {beat['err']}"
                else:
                    assert beat["err"] == 0, f"{where}: err {beat['err']} (MR-E6)"
                    want = self.ref.read(a)
                    assert beat["data"] == want, \
                        f"{where}: data {beat['data']:#x} != reference {want:#x} (MR-V3)"
                    self.checked += 1
            if wr and not bad:
                for k, beat in enumerate(beats):
                    a = addr + 32 * k
                    self.ref.write(a, beat["data"], beat["be"],
                                   applied=ack == 0 or a not in self.poison.ever)
            self.uid += 1
        for proc in range(p.N_PROC):
            assert self.rsp_seen[proc] == len(got[proc]), f"prsp[{proc}]: extra beats"


@cocotb.test()
async def stress(dut):
    """MR-V15 (see the module docstring)."""
    st = Stress(dut)
    await st.setup()
    b = st.b
    epochs = 0
    while sim_cycle() < st.total:
        m0 = len(b.mlog)
        pages = await st.run_epoch(min(st.total, sim_cycle() + st.epoch))
        await st.check_epoch(pages, m0)
        epochs += 1
        dut._log.info(f"epoch {epochs} to cycle {sim_cycle()}: {st.uid} requests, "
                      f"{st.checked} read beats checked, events {dict(st.mirror.counts)}, "
                      f"{st.poison.switches} poison switches, {st.samples} LINE_STATUS samples, "
                      f"MIG_CMDs {dict(st.cmds)}")
    counts = st.mirror.counts
    poisoned = sum(1 for mon in b.rsp for t in mon.transfers if t.fields["err"] == E_POISON)
    dut._log.info(f"CFG-{st.name} MODE {st.mode} MIG_STALL {st.stall}: {sim_cycle()} cycles, "
                  f"{epochs} epochs, {st.uid} requests, {st.checked} read beats checked, "
                  f"{poisoned} E_POISON beats, {len(b.mlog)} memory requests, "
                  f"{len(st.mirror.done)} commands DONE")
    # not vacuous: commands ran (a short run under heavy traffic may complete only one, or
    # have its only other one abort on poison); a long run completes several
    if st.total >= 100_000:
        assert counts["DONE"] >= 2 and counts["LINE_FULL"] >= 2, \
            f"too few migrations: {dict(counts)}"
    else:
        assert counts["START"] >= 1 and counts["DONE"] + counts["ABORT"] >= 1, \
            f"no migration command ran: {dict(counts)}"
