"""cocotb testbench of the TMA request queue and descriptor cache, ``hw.tma.reqqueue.TmaReqQueue``
-> ``hw.tma.desccache.TmaDescCache`` (spec tma.md §2.2, §4.12; TMA-F1, F2, F4..F8, E1, I1, I3,
V15).

The DUT is the test top ``TmaCacheTop`` of ``tests/rtl/test_tma_desccache.py``: ports ``cmd``
(in), ``o`` (the Setup input: command + descriptor), ``desc_rd_req`` / ``desc_rd_resp`` and
``head_seq``. ``cmd`` is driven with random valid gaps, ``o`` sees random back-pressure, the
descriptor memory (``tb.common.memory.MemoryModel``) answers with random latency and random
``desc_rd_req.ready``; every stream has a protocol checker.

Stimulus: random command streams of cache users (tensor ops on a few descriptor lines, more than
DC_ENTRIES in some epochs), tensor ops failing rules 0x01-0x04 (misaligned ``desc_addr``, bad
multicast), block ops, WAIT_ALL, DESC_INVAL (some rejected by rule 0x02), reserved opcodes. Every
command field carries random values. The descriptor memory holds a different random line per
DESC_INVAL epoch: the testbench rewrites every line when an accepted DESC_INVAL moves on to Setup
(the spec's coherence model, §6 item 25), so a command must carry the line of its own epoch.

One observer samples every port each cycle and keeps a model of the queue (accepted, not yet
taken by Setup), the read in flight and, in epochs with at most DC_ENTRIES lines, the exact set
of cached lines (nothing is evicted there: every install finds an invalid entry). It checks:

- ``o`` carries exactly the commands in acceptance order, each with its epoch's descriptor
  (cache users) or zero (everything else), and ``head_seq`` is the acceptance index (TMA-F1);
- ``cmd.ready`` is high exactly while the queue has a free entry (TMA-F2);
- every ``desc_rd_req`` is 128-byte aligned, for the line of the head (a cache user) or of the
  command behind it (a cache user, head not DESC_INVAL): bypassing commands cause no read
  (TMA-F4); no read is issued while one is outstanding and no response comes without one
  (TMA-F7);
- the sequence of read addresses equals the golden ``golden.tma.desccache.DescCache`` (LRU,
  look-ahead, epochs), and the count equals the §4.12 golden count when every epoch has
  <= DC_ENTRIES lines, else lies within its bounds (TMA-F5, F8, V15);
- look-ahead timing (TMA-F6), measured in epochs with an exact cache model: for the command
  behind the head, the cycles in which the head is presented (a hit or a bypass, not
  DESC_INVAL), the command is a cache user whose line is neither cached nor being read, no read
  is outstanding and ``desc_rd_req.ready`` is high are counted until its read transfers; at
  most 2 such cycles may pass without the read;
- the hit path: a command that hits (or bypasses) is valid on ``o`` in the cycle it becomes the
  head, so one accepted into an empty queue in cycle t is presented in cycle t + 1.

Testcases: ``random_streams`` (segments with different line counts, DESC_INVAL rates, gaps and
back-pressure) and ``timing`` (directed: hit and bypass latency from an idle queue, look-ahead
behind a held head, no look-ahead behind DESC_INVAL, a changed descriptor refetched after
DESC_INVAL; figures written with ``env.write_result``).
"""

import random
from collections import deque

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from golden.tma.desccache import DescCache, golden_desc_reads
from golden.tma.formats import (DESC_BYTES, LINE, CmdOp, TmaCmd, cmd_fields, desc_rd_req_fields,
                                desc_rd_resp_fields)
from golden.tma.params import TmaParams
from golden.tma.validate import is_cache_user, precheck
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.memory import MemoryModel, SparseMemory
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int, sim_cycle

__all__ = ["params_from_env", "make_lines", "random_command", "golden_reads", "CacheBench"]

SEQ_MOD = 256
STREAMS = ("cmd", "o", "desc_rd_req", "desc_rd_resp")


def params_from_env():
    """TmaParams of the build (``q_depth``, ``dc_entries``, ``addr_w``, ``smem_aw``, ``id_w``,
    ``nb_w`` of the top)."""
    q = env.params()
    return TmaParams(ADDR_W=q.get("addr_w", 64), SMEM_AW=q.get("smem_aw", 18),
                     ID_W=q.get("id_w", 8), NB_W=q.get("nb_w", 20),
                     Q_DEPTH=q.get("q_depth", 4), DC_ENTRIES=q.get("dc_entries", 4))


# ------------------------------------------------------------------------------------------------
# Stimulus
# ------------------------------------------------------------------------------------------------

def make_lines(rng, p, n):
    """``n`` distinct 128-byte aligned descriptor addresses: low, random full-width and at the top
    of the 2^ADDR_W address space (every tag bit exercised)."""
    out = set()
    while len(out) < n:
        x = rng.random()
        if x < 0.3:
            a = LINE * rng.randrange(1, 64)
        elif x < 0.5:
            a = (1 << p.ADDR_W) - LINE * rng.randrange(1, 8)
        else:
            a = LINE * rng.getrandbits(p.ADDR_W - 7)
        out.add(a)
    return sorted(out, key=lambda _: rng.random())


def _random_fields(rng, p):
    return dict(id=rng.getrandbits(p.ID_W), mode=rng.getrandbits(1), rank=rng.getrandbits(3),
                red_op=rng.getrandbits(3), dtype=rng.getrandbits(4),
                desc_addr=rng.getrandbits(p.ADDR_W),
                coord=[rng.randint(-2 ** 31, 2 ** 31 - 1) for _ in range(5)],
                im2col_off=rng.getrandbits(16), gaddr=rng.getrandbits(p.ADDR_W),
                num_blocks=rng.getrandbits(p.NB_W), smem_addr=rng.getrandbits(p.SMEM_AW),
                smem_dst=rng.getrandbits(p.SMEM_AW), mbar_addr=rng.getrandbits(p.SMEM_AW),
                cta_id=rng.getrandbits(4), mcast=0, cta_mask=rng.getrandbits(16))


KINDS = ("user", "bad_align", "bad_mcast", "block", "wait", "inval", "reserved")


def random_command(rng, p, lines, kind):
    """One command of ``kind`` (see ``KINDS``) with random don't-care fields; cache users take a
    line from ``lines``."""
    f = _random_fields(rng, p)
    line = rng.choice(lines)
    if kind == "user":
        f.update(op=rng.choice([0, 0, 1, 2, 3]), desc_addr=line)
        if f["op"] == CmdOp.TENSOR_LOAD and rng.random() < 0.3:
            f.update(mcast=1, cta_mask=rng.randrange(1, 1 << 16))
    elif kind == "bad_align":                                       # rule 0x04
        f.update(op=rng.randrange(4),
                 desc_addr=line + rng.choice([0x40, 0x8, 0x1, 0x7F, rng.randrange(1, LINE)]))
    elif kind == "bad_mcast":                                       # rules 0x02 / 0x03
        if rng.random() < 0.5:
            f.update(op=rng.randrange(1, 4), desc_addr=line, mcast=1)
        else:
            f.update(op=CmdOp.TENSOR_LOAD, desc_addr=line, mcast=1, cta_mask=0)
    elif kind == "block":
        f.update(op=rng.randrange(4, 9))
        if rng.random() < 0.5:
            f["desc_addr"] = line                                   # a line, yet no lookup
        f["mcast"] = int(rng.random() < 0.3)
    elif kind == "wait":
        f.update(op=CmdOp.WAIT_ALL, desc_addr=line if rng.random() < 0.5 else f["desc_addr"])
    elif kind == "inval":
        f.update(op=CmdOp.DESC_INVAL, mcast=int(rng.random() < 0.15))   # mcast: rejected (0x02)
    elif kind == "reserved":
        f.update(op=rng.randrange(11, 16), desc_addr=line)
    else:
        raise ValueError(kind)
    return TmaCmd(**f)


def is_inval(cmd):
    """An accepted DESC_INVAL: it invalidates the cache and starts a new epoch (TMA-F8)."""
    return cmd.op == CmdOp.DESC_INVAL and precheck(cmd) == 0


def golden_reads(cmds, dc_entries):
    """Line addresses of the golden ``desc_rd`` sequence of a command stream: each command's setup
    lookup, then the look-ahead of the command behind it (none behind DESC_INVAL), then its
    invalidation. The sequence does not depend on whether the look-ahead found the next command
    queued in time (``golden.tma.desccache``)."""
    dc = DescCache(dc_entries, lambda addr: bytes(DESC_BYTES))
    for k, cmd in enumerate(cmds):
        if is_cache_user(cmd):
            dc.lookup(cmd.desc_addr, k)
        nxt = cmds[k + 1] if k + 1 < len(cmds) else None
        if cmd.op != CmdOp.DESC_INVAL and nxt is not None and is_cache_user(nxt):
            dc.lookahead(nxt.desc_addr, cmd.desc_addr if is_cache_user(cmd) else None, k + 1)
        if is_inval(cmd):
            dc.invalidate()
    return [r.addr for r in dc.reads]


# ------------------------------------------------------------------------------------------------
# Bench
# ------------------------------------------------------------------------------------------------

class _Entry:
    """A queued command as the observer tracks it."""
    __slots__ = ("k", "cmd", "user", "line", "t_acc", "t_head", "t_next", "first_valid",
                 "elig", "la_wait", "la_cycle", "hit")

    def __init__(self, k, cmd, t_acc):
        self.k, self.cmd, self.t_acc = k, cmd, t_acc
        self.user = is_cache_user(cmd)
        self.line = cmd.desc_addr // LINE if self.user else None
        self.t_head = self.t_next = self.first_valid = self.la_cycle = None
        self.elig = 0
        self.la_wait = None
        self.hit = None


class CacheBench:
    """Drivers, the descriptor memory, protocol checkers and the cycle observer around the DUT.

    ``add(cmds)`` appends commands (the expectation follows from the order); ``finish()`` waits
    until everything has gone through and runs the end-of-test checks.
    """

    def __init__(self, dut, p, rng, gap_prob=0.3, o_ready=0.7, mem_ready=0.7, min_lat=1,
                 max_lat=12, burst=3.0):
        self.dut, self.p, self.rng = dut, p, rng
        self.clk = dut.clk
        self.cmd_w = cmd_fields(p).width
        self.cmds = []
        self.epoch_of = []                    # epoch of each command
        self.epoch_lines = [set()]            # cache-user lines per epoch
        self.contents = {}                    # (epoch, line) -> descriptor int
        self.lines = set()
        self.n_epochs = 1
        self.errors = []
        self.driver = StreamDriver(dut, "cmd", self.clk, fields=cmd_fields(p), rng=env.rng(21),
                                   gap_prob=gap_prob, burst=burst)
        self.out = StreamMonitor(dut, "o", self.clk, rng=env.rng(22), ready_prob=o_ready,
                                 burst=burst)
        self.mem = MemoryModel(dut, self.clk, "desc_rd_req", "desc_rd_resp",
                               desc_rd_req_fields(p), desc_rd_resp_fields(),
                               names={"rdata": "data"}, memory=SparseMemory(),
                               min_latency=min_lat, max_latency=max_lat, order="in_order",
                               req_ready_prob=mem_ready, burst=burst, rng=env.rng(23),
                               check_tags=False, name="desc_mem")
        self.checks = [StreamProtocolChecker(dut, s, self.clk) for s in STREAMS]
        # observer state
        self.q = deque()
        self.accepted = 0
        self.taken = 0
        self.epoch = 0                        # DESC_INVALs taken by Setup so far
        self.cached = set()                   # exact in epochs with <= DC_ENTRIES lines
        self.outstanding = None               # line being read
        self.reads = []                       # (cycle, addr, "head"/"lookahead", seq)
        self.entries = []                     # every _Entry, in acceptance order
        self._task = cocotb.start_soon(self._observe())

    # -- stimulus ------------------------------------------------------------------------------

    def _content(self, epoch, line):
        """The descriptor line ``line`` holds in ``epoch``: random, fixed by the seed."""
        key = (epoch, line)
        if key not in self.contents:
            self.contents[key] = random.Random(f"{env.seed()}:{epoch}:{line}").getrandbits(
                8 * DESC_BYTES)
        return self.contents[key]

    def add(self, cmds):
        """Queue ``cmds`` for driving (the expectation follows from the order)."""
        for cmd in cmds:
            cmd.check(self.p)
            e = self.n_epochs - 1
            self.cmds.append(cmd)
            self.epoch_of.append(e)
            if is_cache_user(cmd):
                line = cmd.desc_addr // LINE
                self.epoch_lines[e].add(line)
                if line not in self.lines:
                    self.lines.add(line)
                    if e == self.epoch:            # else stored when epoch e begins
                        self._store(e, line)
            if is_inval(cmd):
                self.n_epochs += 1
                self.epoch_lines.append(set())
            self.driver.append(cmd.pack(self.p))

    def _store(self, epoch, line):
        self.mem.write(line * LINE, self._content(epoch, line).to_bytes(DESC_BYTES, "little"))

    def expected(self, k):
        cmd = self.cmds[k]
        desc = self._content(self.epoch_of[k], cmd.desc_addr // LINE) if is_cache_user(cmd) else 0
        return cmd.pack(self.p) | desc << self.cmd_w

    def exact_epoch(self, e):
        """True when epoch ``e`` has at most DC_ENTRIES lines (nothing is evicted in it)."""
        return len(self.epoch_lines[e]) <= self.p.DC_ENTRIES

    # -- observer ------------------------------------------------------------------------------

    def _err(self, text):
        if len(self.errors) < 50:
            self.errors.append(f"cycle {sim_cycle()}: {text}")

    async def _observe(self):
        d = self.dut
        while True:
            await RisingEdge(self.clk)
            await ReadOnly()
            if read_int(d.rst) != 0:
                continue
            self._step(sim_cycle())

    def _step(self, c):
        d, p, q = self.dut, self.p, self.q
        cv, cr = read_int(d.cmd__valid), read_int(d.cmd__ready)
        ov, orr = read_int(d.o__valid), read_int(d.o__ready)
        rv, rr = read_int(d.desc_rd_req__valid), read_int(d.desc_rd_req__ready)
        sv, sr = read_int(d.desc_rd_resp__valid), read_int(d.desc_rd_resp__ready)
        exact = self.exact_epoch(self.epoch)
        for pos, e in enumerate(list(q)[:2]):
            if pos == 0 and e.t_head is None:
                e.t_head = c
                e.hit = (not e.user) or (e.line in self.cached if exact else None)
            if pos == 1 and e.t_next is None:
                e.t_next = c
        # TMA-F2: ready exactly while an entry is free
        if cr != int(len(q) < p.Q_DEPTH):
            self._err(f"cmd.ready = {cr} with {len(q)} of {p.Q_DEPTH} entries used")
        # Setup input: the head command with its descriptor (TMA-F1, F4)
        if ov == 1:
            if not q:
                self._err("o.valid with an empty queue")
            else:
                h = q[0]
                if h.first_valid is None:
                    h.first_valid = c
                    word = read_int(d.o__payload)
                    if word != self.expected(h.k):
                        self._err(f"command {h.k} ({CmdOp(h.cmd.op).name if h.cmd.op <= 10 else h.cmd.op}): "
                                  f"o payload differs from golden (cmd equal: "
                                  f"{(word or 0) % (1 << self.cmd_w) == h.cmd.pack(p)})")
                    if read_int(d.head_seq) != h.k % SEQ_MOD:
                        self._err(f"head_seq {read_int(d.head_seq)} for command {h.k}")
        # look-ahead eligibility of the command behind the head (TMA-F6), exact epochs only
        la_target = None
        if len(q) >= 2:
            h, n = q[0], q[1]
            if h.cmd.op != CmdOp.DESC_INVAL and n.user and n.line != (h.line if h.user else None):
                la_target = n
            if (exact and la_target is not None and n.la_wait is None
                    and n.line not in self.cached and self.outstanding is None
                    and (not h.user or h.line in self.cached) and rr == 1):
                fire_for_n = rv == 1 and read_int(d.desc_rd_req__payload) == n.line * LINE
                if not fire_for_n:
                    n.elig += 1
        # descriptor reads (TMA-F4, F5, F7)
        new_outstanding = self.outstanding
        if rv == 1 and rr == 1:
            addr = read_int(d.desc_rd_req__payload)
            line = addr // LINE
            if addr % LINE:
                self._err(f"desc_rd_req address {addr:#x} not 128-byte aligned")
            if self.outstanding is not None:
                self._err(f"desc_rd_req {addr:#x} while line {self.outstanding * LINE:#x} is "
                          "outstanding (TMA-F7)")
            if q and q[0].user and q[0].line == line:
                kind, seq = "head", q[0].k
                if exact and line in self.cached:
                    self._err(f"read of cached line {addr:#x} for the head")
            elif la_target is not None and la_target.line == line:
                kind, seq = "lookahead", la_target.k
                la_target.la_wait = la_target.elig
                la_target.la_cycle = c
                if exact and line in self.cached:
                    self._err(f"look-ahead read of cached line {addr:#x}")
            else:
                kind, seq = "stray", None
                self._err(f"desc_rd_req {addr:#x} is for neither the head nor a look-ahead "
                          "(TMA-F4)")
            self.reads.append((c, addr, kind, seq))
            new_outstanding = line
        if sv == 1 and sr == 1:
            if self.outstanding is None:
                self._err("desc_rd_resp accepted with no read outstanding (TMA-F7)")
            else:
                self.cached.add(self.outstanding)
                if new_outstanding == self.outstanding:
                    new_outstanding = None
        self.outstanding = new_outstanding
        # handshakes take effect at the edge
        if ov == 1 and orr == 1 and q:
            h = q.popleft()
            self.taken += 1
            if is_inval(h.cmd):
                if self.outstanding is not None:
                    self._err("DESC_INVAL taken while a read is outstanding")
                self.epoch += 1
                self.cached = set()
                for line in self.lines:                   # the descriptors change (TMA-V15)
                    self._store(self.epoch, line)
        if cv == 1 and cr == 1:
            k = self.accepted
            word = read_int(d.cmd__payload)
            if k >= len(self.cmds) or word != self.cmds[k].pack(p):
                self._err(f"unexpected command accepted ({k})")
            else:
                e = _Entry(k, self.cmds[k], c)
                q.append(e)
                self.entries.append(e)
            self.accepted += 1

    # -- end of test ---------------------------------------------------------------------------

    async def finish(self, timeout=400_000):
        await self.driver.idle(timeout)
        for _ in range(timeout):
            if self.taken >= len(self.cmds):
                break
            await RisingEdge(self.clk)
        for _ in range(30):                        # anything extra would show up here
            await RisingEdge(self.clk)
        await self.mem.wait_idle(1000)
        self.mem.check_idle()
        for ch in self.checks:
            ch.check()
        assert not self.errors, "\n".join(self.errors)
        assert self.taken == len(self.cmds) == self.accepted, \
            f"{self.taken} of {len(self.cmds)} commands reached Setup ({self.accepted} accepted)"
        assert not self.q and self.outstanding is None
        got = [a for _, a, _, _ in self.reads]
        want = golden_reads(self.cmds, self.p.DC_ENTRIES)
        low, high = golden_desc_reads(self.cmds, self.p.DC_ENTRIES)
        assert low <= len(got) <= high, f"{len(got)} desc_rd outside the §4.12 bounds [{low}, {high}]"
        if low == high:
            assert len(got) == low, f"{len(got)} desc_rd, golden count {low}"
        if got != want:
            first = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b),
                         min(len(got), len(want)))
            raise AssertionError(f"desc_rd sequence differs from golden at read {first}: "
                                 f"{[hex(a) for a in got[first:first + 5]]} vs "
                                 f"{[hex(a) for a in want[first:first + 5]]} "
                                 f"({len(got)} vs {len(want)} reads)")
        return self.figures()

    def figures(self):
        """Timing figures of the run (see module docstring), and the TMA-F6 / hit-path checks."""
        la = [e for e in self.entries if e.la_wait is not None]
        waits = [e.la_wait for e in la]
        missed = [e.elig for e in self.entries if e.la_wait is None and e.elig]
        hits = [e for e in self.entries if e.hit and e.first_valid is not None]
        head_lat = [e.first_valid - e.t_head for e in hits]
        idle_lat = [e.first_valid - e.t_acc for e in hits if e.t_head == e.t_acc + 1]
        misses = [e for e in self.entries if e.user and e.hit is False]
        fig = {
            "commands": len(self.entries),
            "desc_reads": len(self.reads),
            "lookahead_reads": sum(1 for r in self.reads if r[2] == "lookahead"),
            "head_reads": sum(1 for r in self.reads if r[2] == "head"),
            "epochs": self.epoch + 1,
            "lookahead_wait_max": max(waits, default=0),
            "lookahead_wait_hist": _hist(waits),
            "lookahead_from_next_hist": _hist(e.la_cycle - e.t_next for e in la),
            "missed_lookahead_eligible": _hist(missed),
            "hit_head_to_valid_hist": _hist(head_lat),
            "hit_idle_cmd_to_valid_hist": _hist(idle_lat),
            "miss_head_to_valid_hist": _hist(e.first_valid - e.t_head for e in misses
                                             if e.first_valid is not None),
        }
        problems = []
        if any(w > 2 for w in waits) or any(m > 2 for m in missed):
            problems.append(f"TMA-F6: look-ahead read later than 2 eligible cycles: {fig}")
        if any(x != 0 for x in head_lat) or any(x != 1 for x in idle_lat):
            problems.append(f"hit path: a hit or bypass not presented at once: {fig}")
        assert not problems, "\n".join(problems)
        return fig


def _hist(values):
    out = {}
    for v in values:
        out[v] = out.get(v, 0) + 1
    return {str(k): out[k] for k in sorted(out)}


async def _start(dut):
    start_clock(dut)
    dut.cmd__valid.value = 0
    dut.o__ready.value = 0
    dut.desc_rd_req__ready.value = 0
    dut.desc_rd_resp__valid.value = 0
    await reset(dut)


def _segment(rng, p, bench, n, n_lines, weights, inval_every=None):
    lines = make_lines(rng, p, n_lines)
    out = []
    for _ in range(n):
        kind = rng.choices(KINDS, weights)[0]
        out.append(random_command(rng, p, lines, kind))
        if inval_every and rng.random() < 1 / inval_every:
            out.append(random_command(rng, p, lines, "inval"))
    bench.add(out)
    return out


@cocotb.test()
async def random_streams(dut):
    """Random command streams in segments: few lines (exact golden count), more lines than
    entries (LRU, bounds), dense DESC_INVALs, idle stretches; random gaps, back-pressure and
    descriptor latency."""
    p = params_from_env()
    seed = env.seed()
    dut._log.info("seed %d, params %s", seed, env.params())
    rng = random.Random(seed * 7 + 3)
    await _start(dut)
    bench = CacheBench(dut, p, rng)
    E = p.DC_ENTRIES
    few = (8, 1, 1, 2, 1, 0, 1)                  # weights over KINDS (DESC_INVAL added apart)
    plan = [
        # (commands, lines, weights, inval_every, cmd gap, o ready, mem ready, latency)
        (300, max(1, E - 1), few, 40, 0.2, 0.6, 0.8, (1, 8)),
        (300, E, few, 25, 0.5, 0.9, 0.5, (1, 30)),
        (300, E + 3, few, 60, 0.1, 0.5, 0.7, (1, 12)),
        (300, 2 * E + 2, (12, 1, 1, 1, 1, 0, 1), None, 0.3, 0.8, 0.9, (1, 6)),
        (200, 3, few, 6, 0.2, 0.7, 0.7, (1, 10)),
        (150, E, few, 30, 0.9, 1.0, 1.0, (1, 4)),      # idle queue: hit path from empty
        (300, E + 1, (10, 1, 1, 1, 1, 0, 1), 50, 0.05, 0.3, 1.0, (20, 50)),  # held head
    ]
    for n, n_lines, weights, inval_every, gap, o_ready, mem_ready, lat in plan:
        await bench.driver.idle(400_000)
        bench.driver.gate = RandomGate(1.0 - gap, bench.driver.rng, 3.0)
        bench.out.set_ready_prob(o_ready, 3.0)
        bench.mem.req_gate = RandomGate(mem_ready, bench.mem.rng, 3.0)
        bench.mem.scheduler.min_latency, bench.mem.scheduler.max_latency = lat
        _segment(rng, p, bench, n, n_lines, weights, inval_every)
        bench.add([random_command(rng, p, make_lines(rng, p, 1), "inval")])
    fig = await bench.finish()
    dut._log.info("figures: %s", fig)
    env.write_result(fig)


@cocotb.test()
async def timing(dut):
    """Directed timing: hit and bypass latency from an idle queue (cmd handshake -> o.valid),
    look-ahead behind a head held by Setup back-pressure, none behind DESC_INVAL, a changed
    descriptor refetched after DESC_INVAL (TMA-V15)."""
    p = params_from_env()
    seed = env.seed()
    dut._log.info("seed %d, params %s", seed, env.params())
    rng = random.Random(seed * 7 + 5)
    await _start(dut)
    bench = CacheBench(dut, p, rng, gap_prob=0.0, o_ready=1.0, mem_ready=1.0, min_lat=20,
                       max_lat=20)
    la, lb, lc = (LINE * k for k in (0x100, 0x200, 0x300))

    def user(addr):
        return random_command(rng, p, [addr], "user")

    async def settle(cycles=40):
        await bench.driver.idle(10_000)
        for _ in range(cycles):
            await RisingEdge(bench.clk)

    result = {}
    # 1. miss, then hits and bypasses entering an idle queue
    bench.add([user(la)])
    await settle()
    for kind in ("user", "block", "wait", "bad_align", "reserved", "user"):
        bench.add([user(la) if kind == "user" else random_command(rng, p, [la], kind)])
        await settle(10)
    # 2. look-ahead: the head (a hit) is held by Setup back-pressure, the next one misses
    bench.out.set_ready_prob(0.0)
    bench.add([user(la), user(lb)])
    await settle(60)
    bench.out.set_ready_prob(1.0)
    await settle()
    # 3. DESC_INVAL at the head (held): no look-ahead for the miss behind it; once it has gone
    #    on, lc is read, and la and lb are read again with their new contents (TMA-V15)
    bench.out.set_ready_prob(0.0)
    bench.add([TmaCmd(op=CmdOp.DESC_INVAL), user(lc)])
    await settle(60)
    result["reads_while_desc_inval_held"] = len(bench.reads) - 2     # la (1.), lb (2.)
    bench.out.set_ready_prob(1.0)
    await settle()
    bench.add([user(la), user(lb), user(lc)])
    fig = await bench.finish()
    fig.update(result)
    dut._log.info("figures: %s", fig)
    assert result["reads_while_desc_inval_held"] == 0
    assert [hex(a) for _, a, _, _ in bench.reads] == [hex(a) for a in (la, lb, lc, la, lb)]
    assert [r[2] for r in bench.reads][:2] == ["head", "lookahead"]
    hist = fig["hit_idle_cmd_to_valid_hist"]
    assert set(hist) == {"1"} and hist["1"] >= 6, fig
    env.write_result(fig)
