"""cocotb testbench of the memory router (hw.memrouter.top.Memrouter) with cycle-exact port
models on its memory ports, against the golden transaction-level router.

The processor ports are driven with random requests (random gaps; write beats may have gaps
but stay contiguous per port), ``prsp`` with random back-pressure. The golden model is fed the
requests in the RTL's header-acceptance order (the global order, MR-F1) and settled after each
one; with no migration that gives the only legal result. Checked: every response (id, beats,
data, err) per port in order (MR-F44, MR-V3, MR-V4, MR-E14), the multiset of memory requests
(port, class, device address, length, direction; MR-F4, MR-F39, MR-V2), the counters and the
per-port beat counters read through the CSRs, and the touched device sectors of the port
models.

With ``FAR_ALLOC=1`` in the environment, CTRL.FAR_ALLOC is set after reset: far pages are then
served through the migration cache's lines (allocation, demand fills, eviction), and the
events (ALLOC, EVICT) and LINE_STATUS are compared as well; the run ends with a FLUSH.

Testcases: ``random_traffic``.
"""

import bisect
import collections
import os

import cocotb
from cocotb.triggers import Lock, ReadOnly, RisingEdge

from golden.memrouter.csr import Csr, OFFSETS
from golden.memrouter.formats import (CSRREQ, CSRRSP, E_POISON, E_RANGE, EV_DONE,
                                      EV_PT_UPDATE, EVENT_NAMES, EVT, FULL_BE, PREQ, PRSP, PTE,
                                      UNMAPPED_PTE)
from golden.memrouter.reference import FlatReference
from golden.memrouter.ifmap import pt_init
from golden.memrouter.router import COUNTERS, Router
from sim.blocks.memrouter import mr_config
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.stream import StreamDriver, StreamMonitor, read_int, sim_cycle
from tb.memrouter.flag_contract import FlagContract
from tb.memrouter.portsim import PyPorts
from hw.memrouter.csr import CFG_REGS, PORT_REGS

EXTRA_CMDS = 8                  # random_migrations: PROMOTEs added while MIN_DONE is not reached
PORT_BEATS = ((0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2))      # (wr, cls): RD_N .. WR_M


def config():
    """(MemrouterParams, Config) of a tb.memrouter.builds build: GPUBLOCKS_PARAMS CFG (index
    into CFG_NAMES) and the hardware parameters (``mr_config``, which leaves out the build's
    POISON); reset FAR_ALLOC = 0 (tests set it through CTRL)."""
    return mr_config(**env.params(), FAR_ALLOC=0)


def mreq_keys(port, cls, addr, nb, wr):
    """The keys a memory request counts under: (port, class, device address, length,
    direction); a walker fill (a MIG read) per sector, since how the walker cuts the page
    into runs depends on when earlier fills come back (MIG_OUTSTANDING)."""
    if cls == 2 and not wr:
        return [(port, cls, addr + 32 * k, 1, 0) for k in range(nb)]
    return [(port, cls, addr, nb, wr)]


class Bench:
    """Clock, reset, drivers, monitors and the golden model of one run."""

    def __init__(self, dut, ready_prob=0.8, gap_prob=0.3, reset=None):
        """``reset``: (params, Config) of the build when it is not a tb.memrouter.builds one
        (whose reset configuration has FAR_ALLOC = 0)."""
        self.dut = dut
        self.p, self.cfg = reset or config()
        self.rng = env.rng(1)
        self.golden = Router(self.p, self.cfg)
        self.gcsr = Csr(self.golden)
        self.nports = self.p.N_OFF + 1
        start_clock(dut)
        self.drivers = [StreamDriver(dut, f"preq__{i}", dut.clk, PREQ, gap_prob=gap_prob)
                        for i in range(self.p.N_PROC)]
        self.rsp = [StreamMonitor(dut, f"prsp__{i}", dut.clk, PRSP, ready_prob=ready_prob)
                    for i in range(self.p.N_PROC)]
        self.csr_drv = StreamDriver(dut, "csr_req", dut.clk, CSRREQ, gap_prob=0.0)
        self.csr_mon = StreamMonitor(dut, "csr_rsp", dut.clk, CSRRSP, ready_prob=1.0)
        self.mreqs = collections.Counter()
        self.mlog = []                      # (cycle, port, class, address, sectors, wr)
        self.mend = []                      # per mlog entry: its port's mrsp beats through it
        self._mbeats = [0] * (self.p.N_OFF + 1)
        self.ports = PyPorts(dut, self.p, self.cfg, self._mreq)
        self.reqs = [[] for _ in range(self.p.N_PROC)]     # (nb, wr) per request, per port
        self.stopped = set()
        self.events = []                    # (code, line, ppn, arg)
        self.tevents = []                   # (cycle, (code, line, ppn, arg))
        self.on_event = []                  # callables (cycle, event), called as events arrive
        self._csr_lock = Lock()
        cocotb.start_soon(self._watch_events())
        self.flags = FlagContract(dut)
        self.port_waits = 0                 # cycles a write-out beat waited for the read port
        cocotb.start_soon(self._watch_port_waits())

    async def _watch_port_waits(self):
        """Count the cycles in which the engine offers a write-out beat whose sector the line
        store's one read port did not read (the routing stage had it): the beat waits."""
        beat, ok = self.dut.engine.iss_wr, self.dut.lines.rd2_ok
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            self.port_waits += read_int(beat) == 1 and read_int(ok) == 0

    async def _watch_events(self):
        """Record every ``evt`` beat (the stream has no ready), with its cycle."""
        valid, payload = self.dut.evt__valid, self.dut.evt__payload
        while True:
            await RisingEdge(self.dut.clk)
            if int(valid.value):
                ev = EVT.unpack(int(payload.value))
                e = (ev["code"], ev["line"], ev["ppn"], ev["arg"])
                self.events.append(e)
                self.tevents.append((sim_cycle(), e))
                for hook in self.on_event:
                    hook(sim_cycle(), e)

    async def wait_engine_quiet(self, timeout=100_000):
        """Until STATUS shows no migration command queued or running (bits 2 and 3 clear). The
        timeout is for NS = 128 and grows with the page (a command copies NS sectors)."""
        timeout *= max(1, self.p.NS // 128)
        t0 = sim_cycle()
        while sim_cycle() - t0 < timeout:
            st, _ = await self.csr("STATUS")
            if not st >> 2 & 3:
                return
            await self.cycles(32)
        raise AssertionError(f"migration engine still busy after {timeout} cycles (MR-V4)")

    def _mreq(self, j, beat):
        for key in mreq_keys(j, beat["cls"], beat["addr"], beat["len"] + 1, beat["wr"]):
            self.mreqs[key] += 1
        self.mlog.append((sim_cycle(), j, beat["cls"], beat["addr"], beat["len"] + 1,
                          beat["wr"]))
        self._mbeats[j] += 1 if beat["wr"] else beat["len"] + 1
        self.mend.append(self._mbeats[j])

    def acked_at(self, k):
        """The cycle the last response beat of memory request ``k`` (an ``mlog`` index)
        transferred (the port models answer in order), or None while it is outstanding."""
        cycles = self.ports.rsp_cycles[self.mlog[k][1]]
        end = self.mend[k]
        return cycles[end - 1] if len(cycles) >= end else None

    async def start(self):
        await reset(self.dut)
        await self.wait_idle()

    async def cycles(self, n):
        for _ in range(n):
            await RisingEdge(self.dut.clk)

    async def csr(self, name_or_off, we=False, wdata=0):
        """One CSR access on the RTL; returns (rdata, err). Concurrent callers take turns."""
        off = OFFSETS[name_or_off] if isinstance(name_or_off, str) else name_or_off
        async with self._csr_lock:
            n = self.csr_mon.count
            self.csr_drv.append(dict(addr=off, we=int(we), wdata=wdata))
            await self.csr_mon.wait_for(n + 1, timeout_cycles=20_000)
            rsp = self.csr_mon.transfers[n].fields
        return rsp["rdata"], rsp["err"]

    async def csr_both(self, name_or_off, we=False, wdata=0):
        """The same access on the RTL and the golden CSR block; asserts equal answers."""
        got = await self.csr(name_or_off, we, wdata)
        off = OFFSETS[name_or_off] if isinstance(name_or_off, str) else name_or_off
        want = self.gcsr.access(off, we, wdata)
        assert got == want, f"CSR {off:#x} we={we} wdata={wdata:#x}: RTL {got}, golden {want}"
        return got

    async def wait_idle(self, timeout=200_000):
        """Until STATUS.IDLE with no INIT_BUSY."""
        for _ in range(timeout // 16):
            rdata, _ = await self.csr("STATUS")
            if rdata & 3 == 2:
                return
            await self.cycles(8)
        raise AssertionError("router never idle")

    async def reconfigure(self, cfg):
        """Program ``cfg`` (a golden Config) through the CSRs and run PT_INIT, on the RTL and on
        the golden router alike; the build's hardware parameters stay."""
        await self.csr_both("CTRL", True, cfg.ctrl)
        for s, v in enumerate(cfg.SLOTS):
            await self.csr_both(0x080 + 4 * s, True, v)
        await self.csr_both("SLOT_LEN", True, len(cfg.SLOTS))
        for name in CFG_REGS:
            await self.csr_both(name, True, getattr(cfg, name))
        for j in range(self.nports):
            for k, name in enumerate(PORT_REGS):
                await self.csr_both(0x100 + 0x20 * j + 4 * k, True, getattr(cfg.QOS[j], name))
        assert (await self.csr_both("CMD", True, 1))[1] == 0, "PT_INIT refused"
        await self.wait_idle()
        self.cfg = self.golden.cfg

    def send(self, proc, addr, nb, wr, rid, data=None, be=None):
        """Queue one request on preq[proc]."""
        if wr:
            data = data or [self.rng.getrandbits(256) for _ in range(nb)]
            be = be or [FULL_BE] * nb
            for k in range(nb):
                self.drivers[proc].append(dict(id=rid, addr=addr, len=nb - 1, wr=1, data=data[k],
                                               be=be[k], last=int(k == nb - 1)))
        else:
            self.drivers[proc].append(dict(id=rid, addr=addr, len=nb - 1, wr=0, data=0, be=0,
                                           last=1))
        self.reqs[proc].append((nb, wr))

    def accepted(self):
        """Requests in RTL acceptance order: (cycle, proc, header beat, [write beats])."""
        out = []
        for i, drv in enumerate(self.drivers):
            k = 0
            tr = drv.transfers
            while k < len(tr):
                hdr = tr[k].fields
                n = hdr["len"] + 1 if hdr["wr"] else 1
                out.append((tr[k].cycle, i, hdr, [t.fields for t in tr[k:k + n]]))
                k += n
        out.sort(key=lambda x: (x[0], x[1]))
        cycles = [x[0] for x in out]
        assert len(set(cycles)) == len(cycles), "two headers accepted in one cycle (MR-F1)"
        return out

    def stop_drivers(self):
        """Stop offering requests (what is queued and not yet accepted is dropped)."""
        for k, drv in enumerate(self.drivers):
            drv.stop()
            self.stopped.add(k)

    def cycles_since(self, t0):
        return sim_cycle() - t0

    async def drain(self, timeout=200_000):
        """Wait until every accepted request is answered (drivers stopped early leave the rest
        of their queue unsent); the 200,000-cycle bound is MR-V4's watchdog."""
        for k, drv in enumerate(self.drivers):
            if k not in self.stopped:
                await drv.idle(timeout_cycles=timeout)
        want = [0] * self.p.N_PROC
        for _, proc, hdr, _ in self.accepted():
            want[proc] += 1 if hdr["wr"] else hdr["len"] + 1
        for i in range(self.p.N_PROC):
            await self.rsp[i].wait_for(want[i], timeout_cycles=timeout)
        await self.cycles(50)
        for i in range(self.p.N_PROC):
            assert self.rsp[i].count == want[i], f"prsp[{i}]: extra beats"

    def run_golden(self):
        """Feed the golden router in acceptance order; expected responses per port."""
        g = self.golden
        for _, proc, hdr, beats in self.accepted():
            nb = hdr["len"] + 1
            if hdr["wr"]:
                req = g.request(proc, hdr["id"], hdr["addr"], nb, True,
                                [b["data"] for b in beats], [b["be"] for b in beats])
            else:
                req = g.request(proc, hdr["id"], hdr["addr"], nb, False)
            assert req is not None
            g.settle()
        return [g.responses(i) for i in range(self.p.N_PROC)]

    async def flush(self):
        """CMD = FLUSH on both, then wait until the RTL's flush is over (STATUS[4]) and nothing
        is in flight (STATUS[1]): FLUSH_BUSY clears when the last write-back is issued, and the
        port models store its beats up to LAT + nb * BW_DEN cycles later, so a back-door read
        right after FLUSH_BUSY could miss it (seed 561384387 on CFG-G64, whose few pages left
        too few CSR reads in between)."""
        await self.csr_both("CMD", True, 2)
        self.golden.settle()
        for _ in range(20_000):
            rdata, _ = await self.csr("STATUS")
            if not rdata >> 4 & 1:
                await self.wait_idle()
                return
        raise AssertionError("FLUSH never ended")

    async def check(self, flush=False):
        """Compare responses, memory requests, counters, events, LINE_STATUS and touched memory
        with golden (after a FLUSH of both when ``flush``)."""
        expected = self.run_golden()
        for k in range(self.p.NUM_LINES):
            rdata, _ = await self.csr(0x400 + 4 * k)
            assert rdata == self.golden.lines[k].status(), \
                f"LINE_STATUS {k}: RTL {rdata:#x}, golden {self.golden.lines[k].status():#x}"
        if flush:
            await self.flush()
            await self.cycles(200)
        first = next((k for k, (x, y) in enumerate(zip(self.events, self.golden.events))
                      if x != y), None)
        assert self.events == self.golden.events, (
            f"events differ (RTL {len(self.events)}, golden {len(self.golden.events)}; first "
            f"difference at {first}: RTL {self.events[first:first + 3] if first is not None else ''}, "
            f"golden {self.golden.events[first:first + 3] if first is not None else ''})")
        for i in range(self.p.N_PROC):
            got = [t.fields for t in self.rsp[i].transfers]
            k = 0
            for n, rsp in enumerate(expected[i]):
                for b, (data, err) in enumerate(rsp.beats):
                    beat = got[k]
                    where = f"prsp[{i}] response {n} (id {rsp.id}) beat {b}"
                    assert beat["id"] == rsp.id, f"{where}: id {beat['id']}"
                    assert beat["err"] == err, f"{where}: err {beat['err']} != {err}"
                    assert beat["data"] == data, f"{where}: data {beat['data']:#x} != {data:#x}"
                    assert beat["last"] == int(b == len(rsp.beats) - 1), f"{where}: last"
                    k += 1
            assert k == len(got)
        want = collections.Counter(key for r in self.golden.ports.log
                                   for key in mreq_keys(r.port, r.cls, r.addr, r.nb, int(r.wr)))
        assert self.mreqs == want, (f"memory requests differ: RTL-only "
                                    f"{list((self.mreqs - want).items())[:5]}, golden-only "
                                    f"{list((want - self.mreqs).items())[:5]}")
        for k, name in enumerate(COUNTERS):
            rdata, err = await self.csr(0x200 + 4 * k)
            assert err == 0 and rdata == self.golden.counters[name] & 0xFFFFFFFF, \
                f"counter {name}: RTL {rdata}, golden {self.golden.counters[name]}"
        for j in range(self.nports):
            for k, key in enumerate(PORT_BEATS):
                rdata, _ = await self.csr(0x300 + 0x20 * j + 4 * k)
                assert rdata == self.golden.ports[j].beats[key], \
                    f"port {j} beats {key}: RTL {rdata}, golden {self.golden.ports[j].beats[key]}"
        touched = {(r.port, r.addr + 32 * k) for r in self.golden.ports.log if r.wr
                   for k in range(r.nb)}
        for j, a in sorted(touched):
            got = self.ports.models[j].read_sector(a)
            assert got == self.golden.ports[j].read_sector(a), f"port {j} sector {a:#x}"

    async def settled_pt(self, npages):
        """After a FLUSH: the PT entries of pages 0..npages-1, each asserted STABLE, and no line
        valid (MR-F47)."""
        final = {}
        for q in range(npages):
            await self.csr("PT_ADDR", True, q)
            word, _ = await self.csr("PT_DATA")
            final[q] = PTE.decode(word)
            assert final[q].state == 1, f"page {q} not STABLE at the end: {final[q]}"
        for k in range(self.p.NUM_LINES):
            rdata, _ = await self.csr(0x400 + 4 * k)
            assert rdata & 1 == 0, f"line {k} valid after FLUSH (MR-F47)"
        return final

    async def check_reference(self, init, pages, poisoned=frozenset()):
        """The flat reference in acceptance order (MR-V3), after a final FLUSH: every response
        beat (id, last, err, read data), PREQ/PRSP_BEATS (MR-V6), every page STABLE, no valid
        line, and every sector of ``pages`` and of the remapped pages read through the final
        PT. ``init`` is the PT_INIT result the run started from; a read beat of a sector in
        ``poisoned`` (partition addresses of never-written sectors whose device sector is
        poisoned) must be E_POISON. Returns (read beats checked, remapped pages)."""
        b, p = self, self.p
        npages = init.pages
        ref = FlatReference(init, p)
        expect = [[] for _ in range(p.N_PROC)]
        preq = prsp = 0
        for uid, (_, proc, hdr, beats) in enumerate(b.accepted()):
            nb, wr, addr = hdr["len"] + 1, hdr["wr"], hdr["addr"]
            bad = range_error(p, npages, addr, nb)
            preq += nb if wr else 1
            prsp += 1 if wr else nb
            if wr and not bad:
                for k, beat in enumerate(beats):
                    ref.write(addr + 32 * k, beat["data"], beat["be"], uid)
            expect[proc].append((uid, hdr["id"], nb, wr, addr, bad))
        checked = 0
        for proc in range(p.N_PROC):
            got = [t.fields for t in b.rsp[proc].transfers]
            k = 0
            for uid, rid, nb, wr, addr, bad in expect[proc]:
                n_beats = 1 if wr else nb
                for j in range(n_beats):
                    beat = got[k]
                    k += 1
                    where = f"prsp[{proc}] request {uid} (id {rid}, addr {addr:#x}) beat {j}"
                    assert beat["id"] == rid, f"{where}: id {beat['id']} (MR-V4)"
                    assert beat["last"] == int(j == n_beats - 1), f"{where}: last"
                    sick = not wr and not bad and addr + 32 * j in poisoned
                    want_err = E_RANGE if bad else E_POISON if sick else 0
                    assert beat["err"] == want_err, f"{where}: err {beat['err']} != {want_err}"
                    if not wr and not bad and not sick:
                        want = ref.read(addr + 32 * j, uid)
                        assert beat["data"] == want, \
                            f"{where}: data {beat['data']:#x} != reference {want:#x} (MR-V3)"
                        checked += 1
            assert k == len(got), f"prsp[{proc}]: {len(got) - k} extra beats"
        for name, want in (("PREQ_BEATS", preq), ("PRSP_BEATS", prsp)):
            rdata, _ = await b.csr(0x200 + 4 * COUNTERS.index(name))
            assert rdata == want, f"{name}: {rdata}, requests imply {want} (MR-V6)"
        # the final page table, LINE_STATUS (all invalid after FLUSH), the back-door contents
        final = await b.settled_pt(npages)
        moved = [q for q in range(npages) if final[q] != init.pt[q]]
        for q in sorted(set(pages) | set(moved)):
            e = final[q]
            for s in range(p.NS):
                got = b.ports.models[e.port].read_sector(e.desc.dev(32 * s, p.LOG2G))
                want = ref.read((q << p.LOG2G) + 32 * s)
                assert got == want, f"page {q} sector {s} at {e}: {got:#x} != reference {want:#x}"
        return checked, moved


def random_request(b, hot, pages_g):
    """(addr, nb, wr, be list) of one random request: ~2% each misaligned, too long, beyond
    PAGES·G; 35% on the hot sectors (MR-V11); random partial byte enables on writes."""
    p, rng = b.p, b.rng
    nb = rng.randint(1, p.MAX_LEN)
    roll = rng.random()
    if roll < 0.35:
        addr = rng.choice(hot)
    else:
        addr = rng.randrange(0, pages_g, 32)
    if roll > 0.98:
        addr += rng.choice((4, 8, 16))
    elif roll > 0.96:
        nb = rng.randint(p.MAX_LEN + 1, 16)
    elif roll > 0.94:
        addr = pages_g - 32 * rng.randint(0, nb - 1)
    wr = rng.random() < 0.5
    be = [rng.choice((FULL_BE, rng.getrandbits(32))) for _ in range(nb)] if wr else None
    return addr, nb, wr, be


@cocotb.test()
async def random_traffic(dut):
    """Random reads and writes from every port, errors and poison included."""
    b = Bench(dut)
    await b.start()
    rng = b.rng
    far_alloc = int(os.environ.get("FAR_ALLOC", "0"))
    if far_alloc:
        await b.csr_both("CTRL", True, b.cfg.ctrl | 1 << 5)
    pages = pt_init(b.p, b.cfg).pages
    pages_g = pages << b.p.LOG2G
    # one page unmapped (E_UNMAPPED), poison on two HBM sectors of page 0 (MR-E6)
    unm = rng.randrange(pages)
    await b.csr_both("PT_ADDR", True, unm)
    await b.csr_both("PT_DATA", True, UNMAPPED_PTE.encode())
    poison = [pt_init(b.p, b.cfg).pt[0].desc.dev(32 * s, b.p.LOG2G) for s in (1, 2)]
    port0 = pt_init(b.p, b.cfg).pt[0].port
    for k, a in enumerate(poison):
        b.ports.models[port0].poison[k] = a
        b.golden.ports[port0].poison.add(a)
    hot = ([rng.randrange(0, pages_g, 32) for _ in range(8)] + [32, 64]
           + [(unm << b.p.LOG2G) + 32 * rng.randrange(b.p.NS)])
    if far_alloc:
        # two more poisoned sectors, of a far page (poisoned fills, MR-E7, MR-E8)
        init = pt_init(b.p, b.cfg)
        far = [q for q in range(pages) if init.pt[q].pool == 1 and q != unm]
        fp = rng.choice(far)
        for k, s in enumerate((rng.randrange(b.p.NS), rng.randrange(b.p.NS)), start=2):
            a = init.pt[fp].desc.dev(32 * s, b.p.LOG2G)
            b.ports.models[init.pt[fp].port].poison[k] = a
            b.golden.ports[init.pt[fp].port].poison.add(a)
            hot.append((fp << b.p.LOG2G) + 32 * s)
        dut._log.info(f"poisoned far page {fp}, hot {hot}")
    n = int(env.params().get("REQS", 600))
    for k in range(n):
        proc = rng.randrange(b.p.N_PROC)
        addr, nb, wr, be = random_request(b, hot, pages_g)
        b.send(proc, addr, nb, wr, k & 0xFF, be=be)
    await b.drain()
    await b.check(flush=bool(far_alloc))
    errs = collections.Counter(beat["err"] for mon in b.rsp for beat in
                               (t.fields for t in mon.transfers))
    dut._log.info(f"{n} requests, {sim_cycle()} cycles, beats by err {dict(errs)}, "
                  f"{sum(b.mreqs.values())} memory requests, counters "
                  f"{ {k: v for k, v in b.golden.counters.items() if v} }, {len(b.events)} events")
    assert errs[1] and errs[2] and errs[E_POISON], f"error coverage {dict(errs)}"


def check_map(b, init, slack=2, since=0):
    """MR-V2 on the RTL, after the run: a mirror of the PT built from PT_INIT and the PT_UPDATE
    events gives every page's (port, frame, pool) over time. Every NEAR or FAR memory request
    must address a frame that a page held, with that pool, within ``slack`` cycles of the
    request; every MIG request must come inside a command (START to DONE / ABORT) and address
    a frame that a page named by the command (START, its victim, ALLOC, LINE_FULL, PT_UPDATE)
    held then. Only ``b.mlog[since:]`` is checked. Returns the number of requests checked."""
    lg = b.p.LOG2G
    held = collections.defaultdict(list)        # (port, frame) -> [(ppn, pool, first, last)]
    cur = {q: (init.pt[q].port, init.pt[q].frame, init.pt[q].pool, 0)
           for q in range(init.pages) if init.pt[q].state}
    cmds = []                                   # (start, end, pages)
    for t, (code, _, ppn, arg) in b.tevents:
        if code == 3:
            cmds.append([t, None, {ppn} | ({arg >> 16} if arg & 0xF == 3 else set())])
        elif code in (1, 4, 5) and cmds and cmds[-1][1] is None:
            cmds[-1][2].add(ppn)
        if code in (6, 7) and cmds and cmds[-1][1] is None:
            cmds[-1][1] = t
        if code == 5:
            e = PTE.decode(arg)
            port, frame, pool, held_from = cur[ppn]
            held[(port, frame)].append((ppn, pool, held_from, t))
            cur[ppn] = (e.port, e.frame, e.pool, t)
    for q, (port, frame, pool, held_from) in cur.items():
        held[(port, frame)].append((q, pool, held_from, 1 << 62))
    starts = [c[0] for c in cmds]
    for t, j, cls, addr, nb, wr in b.mlog[since:]:
        owners = held.get((j, addr >> lg), [])
        where = f"mreq at cycle {t}: port {j} class {cls} address {addr:#x} ({nb}, wr {wr})"
        if cls != 2:
            assert any(pool == cls and first - slack <= t <= last + slack
                       for _, pool, first, last in owners), \
                f"{where} is no page's frame in that pool then (MR-V2): {owners}"
        else:
            k = bisect.bisect_right(starts, t + slack)
            cmd = next((c for c in cmds[max(0, k - 2):k]
                        if c[0] - slack <= t <= (c[1] or 1 << 62) + slack), None)
            assert cmd is not None, f"{where}: a MIG request outside a command (MR-V2)"
            end = cmd[1] if cmd[1] is not None else 1 << 62
            assert any(q in cmd[2] and first - slack <= end and cmd[0] - slack <= last
                       for q, _, first, last in owners), \
                f"{where}: not a frame of the command's pages {sorted(cmd[2])} (MR-V2)"
    return len(b.mlog) - since


def pick_command(rng, pages, pool, swap=True, wild=0.2, promote=False):
    """A random MIG_CMD as (op, page, MIG_ARG) on ``pages``, ``pool`` mapping a page to its
    pool now: mostly one the PT lets start (PROMOTE or, with ``swap``, SWAP of a far page,
    DEMOTE of a near one, a near SWAP victim); a fraction ``wild`` on any page or with a bad
    op, so that REJ_STATE and REJ_NOFRAME come up too. ``promote``: a PROMOTE of a far page,
    the one op that always starts (it swaps or demotes a victim when no near frame is free,
    while a DEMOTE needs a free far frame: CI seed 1578396570 drew two DEMOTEs on CFG-G64,
    where every far frame was in use, and both were rejected with REJ_NOFRAME)."""
    near = [q for q in pages if pool[q] == 0]
    far = [q for q in pages if pool[q] == 1]
    # a startable op: DEMOTE needs a near page, PROMOTE a far one, SWAP both (in inclusive mode
    # every page starts far: a DEMOTE drawn then was rejected, CI seed 802814493)
    ops = (1, 1, 1, 2, 2, 3) if swap else (1, 1, 1, 2, 2)
    if promote and far:
        ops = (1,)
    op = rng.choice([o for o in ops if (near if o == 2 else far) and (o != 3 or near)] or ops)
    if rng.random() < wild:
        return rng.choice((op, 5)), rng.choice(pages), rng.choice(pages)
    near, far = near or pages, far or pages
    return op, rng.choice(near if op == 2 else far), rng.choice(near)


def range_error(p, pages, addr, nb):
    """True when the request fails the range checks (MR-E1..E3)."""
    return bool(addr & 31 or nb > p.MAX_LEN or addr + 32 * nb > pages * p.G)


@cocotb.test()
async def random_migrations(dut):
    """Random traffic on a few pages (near and far) with FAR_ALLOC = 1, random MIG_CMDs and
    automatic triggers (ACC and SECT), in the MODE and MIG_STALL of the environment, two
    read-only pages with a poisoned sector. The golden router's interleaving of engine steps is
    not the RTL's, so the checks are the flat reference in acceptance order (MR-V3: every read
    beat; after a final FLUSH, every sector of the touched and remapped pages through the final
    PT), ids and order (MR-V4), the processor-link counters (MR-V6), the PT mirror (MR-V2,
    :func:`check_map`), every page STABLE and no line valid at the end."""
    b = Bench(dut, ready_prob=0.9, gap_prob=0.4)
    await b.start()
    rng = b.rng
    mode = int(os.environ.get("MODE", "0"))
    stall = int(os.environ.get("MIG_STALL", "0"))
    cfg = b.cfg.copy(FAR_ALLOC=1, MODE=mode, MIG_STALL=stall, EN_ACC=1, EN_SECT=1, T_ACC=6,
                     T_SECT=b.p.NS // 4, WINDOW=700)
    await b.reconfigure(cfg)
    p = b.p
    init = pt_init(p, cfg)
    npages = init.pages
    near = [q for q in range(npages) if init.pt[q].pool == 0]
    far = [q for q in range(npages) if init.pt[q].pool == 1]
    k_near = min(5, len(near))                  # (inclusive mode: every page starts far)
    pages = sorted(set(rng.sample(near, k_near) + rng.sample(far, min(len(far), 12 - k_near))))
    # two read-only pages (a near one if any, a far one) with a poisoned sector each: their
    # commands abort (MR-E9), so the poisoned device sector stays theirs (MR-E6, E7)
    ro = [q for q in pages if init.pt[q].pool == 0][:1] + \
        [q for q in pages if init.pt[q].pool == 1][:1]
    poisoned = set()
    for k, q in enumerate(ro):
        sect = rng.randrange(p.NS)
        b.ports.models[init.pt[q].port].poison[k] = init.pt[q].desc.dev(32 * sect, p.LOG2G)
        poisoned.add((q << p.LOG2G) + 32 * sect)
    hot = [(rng.choice(pages) << p.LOG2G) + 32 * rng.randrange(p.NS) for _ in range(6)]
    hot += sorted(poisoned)
    n = int(os.environ.get("REQS", "500"))
    for k in range(n):
        proc = rng.randrange(p.N_PROC)
        nb = rng.randint(1, p.MAX_LEN)
        x = rng.random()
        if x < 0.35:
            addr = rng.choice(hot)
        elif x < 0.37:
            addr = npages * p.G - 32 * rng.randint(0, 2)
        else:
            addr = (rng.choice(pages) << p.LOG2G) + 32 * rng.randrange(p.NS)
        wr = rng.random() < 0.5 and addr >> p.LOG2G not in ro
        be = [rng.choice((FULL_BE, rng.getrandbits(32))) for _ in range(nb)] if wr else None
        b.send(proc, addr, nb, wr, k & 0xFF, be=be)

    cmds = collections.Counter()
    pool = {q: init.pt[q].pool for q in range(npages)}

    def track_pool(t, e):
        if e[0] == EV_PT_UPDATE:
            pool[e[2]] = PTE.decode(e[3]).pool
    b.on_event.append(track_pool)

    min_done = int(os.environ.get("MIN_DONE", "2"))
    n_cmds = int(os.environ.get("CMDS", "12"))

    def done_so_far():
        return sum(1 for ev in b.events if ev[0] == EV_DONE)

    async def commands():
        # CMDS random commands; then, while fewer than MIN_DONE have completed (a command can
        # still abort: a CLOCK victim may be a poisoned page), up to EXTRA_CMDS PROMOTEs of
        # clean pages, each after the engine has gone quiet
        clean = [q for q in pages if q not in ro]
        k = 0
        while k < n_cmds or (done_so_far() < min_done and k < n_cmds + EXTRA_CMDS):
            if k >= n_cmds:
                await b.wait_engine_quiet()
                if done_so_far() >= min_done:
                    break
                cmds["extra"] += 1
            await b.cycles(rng.randint(200, 2500))
            # the first one (and every extra one) a PROMOTE on a page without poison
            first = k == 0 or k >= n_cmds
            op, page, arg = pick_command(rng, clean if first else pages, pool,
                                         swap=mode == 0, wild=0 if first else 0.2, promote=first)
            await b.csr("MIG_ARG", True, arg)
            _, err = await b.csr("MIG_CMD", True, op | page << 16)
            cmds["rejected_full" if err else "queued"] += 1
            k += 1
    await commands()
    await b.drain()
    await b.wait_engine_quiet()
    await b.flush()

    checked, moved = await b.check_reference(init, pages, poisoned)
    mirrored = check_map(b, init)
    codes = collections.Counter(ev[0] for ev in b.events)
    dut._log.info(f"{n} requests, {checked} read beats checked, MIG_CMDs {dict(cmds)}, events "
                  f"{ {EVENT_NAMES[c]: v for c, v in sorted(codes.items())} }, "
                  f"{len(moved)} pages remapped, {mirrored} memory requests checked against "
                  f"the PT mirror, {sim_cycle()} cycles; REF / ND sets waiting for the port "
                  f"in {b.flags.waits} cycles; write-out beats waiting for the sector read "
                  f"port in {b.port_waits} cycles")
    assert codes[EV_DONE] >= min_done, f"too few migrations completed: {dict(codes)}"
