"""cocotb testbench of ``hw.tma.tracker.TmaTracker`` (spec tma.md TMA-F27..F29, I4, I5, V6, V8,
V11).

The tracker sits between a random request source and an L2 memory model with random latency,
out-of-order responses and random back-pressure (``tb.common.memory.MemoryModel``). The memory
fills the lanes of unrequested sectors of every READ response with random bytes (TMA-V11), applies
WRITE/RED requests (byte enables) in acceptance order, acknowledges them with junk data, and never
answers PREFETCH. Every stream has a protocol checker; ``o`` sees random back-pressure.

Checked against a cycle-ordered replay of the observed handshakes:

- the ``l2_req`` sequence equals the input sequence (line, sectors, op, dtype, data, be), tags of
  tracked requests distinct among outstanding ones and never reissued before their response was
  accepted, PREFETCH tag 0 (TMA-F27, TMA-V6);
- each READ response goes out on ``o`` with its request's placement and the returned line, in
  response order; each WRITE/RED response gives one ``ack`` with its seq (TMA-F28);
- ``outstanding`` in every cycle = tracked request handshakes - response handshakes so far
  (TMA-F29);
- a table-full phase: with responses withheld, exactly TRK_ENTRIES requests go out, carrying every
  tag once, and the next one stalls (TMA-F27, TMA-C6, no tag leak: TMA-V8); then everything drains
  to ``outstanding`` = 0 with nothing left in flight.
"""

import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from golden.tma.formats import LINE, RED_OK, SECTOR, L2Op, l2_req_fields, l2_resp_fields
from golden.tma.l2req import sectors_of
from golden.tma.params import TmaParams
from golden.tma.reduce import red_line
from hw.tma.tracker import line_fields, track_fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.memory import MemoryModel, SparseMemory
from tb.common.protocol import StreamProtocolChecker
from tb.common.stream import StreamDriver, StreamMonitor, read_int, sim_cycle

STREAMS = ("i", "l2_req", "l2_resp", "o")


def tb_params():
    prm = env.params()
    return TmaParams(TRK_ENTRIES=prm.get("trk_entries", 32), ADDR_W=prm.get("addr_w", 64))


class _Never:
    """A gate that is never on (withholds responses)."""

    def next(self):
        return False


class L2Memory(MemoryModel):
    """L2 model for ``l2_req``/``l2_resp`` (TMA-I4, I5): one response per READ/WRITE/RED, none
    for PREFETCH; READ data is the line with random bytes in unrequested sectors (TMA-V11);
    WRITE and RED change memory when accepted, in order (RED through golden ``red_line``)."""

    def __init__(self, dut, clk, p, rng, memory=None, **kw):
        self.junk = random.Random(rng.getrandbits(32))
        super().__init__(dut, clk, "l2_req", "l2_resp", l2_req_fields(p), l2_resp_fields(p),
                         rng=rng, names={"addr": "line", "rdata": "data"}, addr_shift=7,
                         memory=memory if memory is not None else SparseMemory(),
                         check_tags=False, **kw)

    def make_responses(self, req):
        op = req["op"]
        if op == L2Op.PREFETCH:
            return []
        addr = req["line"] << 7
        if op == L2Op.READ:
            data = bytearray(self.memory.read(addr, LINE))
            for s in range(LINE // SECTOR):
                if not req["sectors"] >> s & 1:
                    data[SECTOR * s:SECTOR * (s + 1)] = self.junk.randbytes(SECTOR)
            return [{"tag": req["tag"], "data": int.from_bytes(data, "little")}]
        data = int(req["data"]).to_bytes(LINE, "little")
        if op >= L2Op.RED_ADD:                  # the memory-side reduction (§4.9, TmaRedUnit)
            data = red_line(op - L2Op.RED_ADD, req["dtype"], bytes(self.memory.read(addr, LINE)),
                            data, req["be"])
        self.memory.write(addr, data, req["be"])
        return [{"tag": req["tag"], "data": self.junk.getrandbits(8 * LINE)}]


def random_piece(rng, p, ops=None):
    """One tracker input item (``track_fields``) with a random op, line piece and placement."""
    op = rng.choice(ops or [L2Op.READ] * 14 + [L2Op.WRITE] * 3 + [L2Op.PREFETCH] * 2
                    + [L2Op.RED_ADD, L2Op.RED_XOR])
    lane = rng.randrange(LINE)
    nbytes = rng.randint(1, LINE - lane)
    piece = dict(line=0x4000 + rng.randrange(64), sectors=sectors_of(lane, nbytes), op=int(op),
                 dtype=rng.randrange(16), data=0, be=0, seq=rng.randrange(256),
                 dst=rng.randrange(1 << p.SMEM_AW), lane=lane, nbytes=nbytes,
                 swizzle=rng.randrange(4), mask=rng.randrange(1 << 16),
                 mbar=rng.randrange(1 << p.SMEM_AW))
    if op >= L2Op.RED_ADD:                      # a legal (op, dtype): the memory reduces
        piece["dtype"] = rng.choice(sorted(dt for o, dt in RED_OK if o == op - L2Op.RED_ADD))
    if op == L2Op.PREFETCH:
        piece["sectors"] = 0xF
    elif op != L2Op.READ:
        piece["data"] = rng.getrandbits(8 * LINE)
        piece["be"] = ((1 << nbytes) - 1) << lane
    return piece


class TrackerEnv:
    def __init__(self, dut, rng):
        self.dut = dut
        self.p = p = tb_params()
        self.rng = rng
        clk = dut.clk
        self.drv = StreamDriver(dut, "i", clk, fields=track_fields(p), rng=rng, gap_prob=0.25)
        self.mem = L2Memory(dut, clk, p, random.Random(rng.getrandbits(32)), min_latency=1,
                            max_latency=64, order="random", req_ready_prob=0.8,
                            resp_gap_prob=0.2)
        self.req_mon = StreamMonitor(dut, "l2_req", clk, fields=l2_req_fields(p), passive=True)
        self.resp_mon = StreamMonitor(dut, "l2_resp", clk, fields=l2_resp_fields(p),
                                      passive=True)
        self.o_mon = StreamMonitor(dut, "o", clk, fields=line_fields(p), rng=rng, ready_prob=0.7)
        self.checkers = [StreamProtocolChecker(dut, s, clk) for s in STREAMS]
        self.acks = []
        self.outstanding = {}
        self.sent = []
        cocotb.start_soon(self._sample())

    async def _sample(self):
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            if read_int(self.dut.rst):
                continue
            cyc = sim_cycle()
            self.outstanding[cyc] = read_int(self.dut.outstanding)
            if read_int(self.dut.ack_valid) == 1:
                self.acks.append((cyc, read_int(self.dut.ack_seq)))

    def send(self, pieces):
        self.sent.extend(pieces)
        self.drv.extend(pieces)

    async def drain(self):
        await self.drv.idle()
        await self.mem.wait_idle()
        for _ in range(200):
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            if read_int(self.dut.busy) == 0:
                break
        await RisingEdge(self.dut.clk)

    def check(self):
        """The cycle-ordered replay described in the module docstring."""
        p = self.p
        req_keys = ("line", "sectors", "op", "dtype", "data", "be")
        reqs = self.req_mon.transfers
        assert len(reqs) == len(self.sent), f"{len(reqs)} l2_req for {len(self.sent)} pieces"
        for k, (t, s) in enumerate(zip(reqs, self.sent)):
            got = {f: t.fields[f] for f in req_keys}
            want = {f: s[f] for f in req_keys}
            assert got == want, f"l2_req {k} in cycle {t.cycle}: {got} != {want}"
        events = sorted([(t.cycle, 0, k) for k, t in enumerate(reqs)]
                        + [(t.cycle, 1, k) for k, t in enumerate(self.resp_mon.transfers)])
        held = {}                                     # tag -> piece index
        o_want, ack_want = [], []
        tracked_so_far = resp_so_far = 0
        count_at = {}                                 # cycle -> requests/responses before it
        for cyc, kind, k in events:
            if kind == 0:
                tag = reqs[k].fields["tag"]
                if self.sent[k]["op"] == L2Op.PREFETCH:
                    assert tag == 0, f"PREFETCH {k} carries tag {tag}"
                    continue
                assert tag not in held, (f"cycle {cyc}: tag {tag} reissued while request "
                                         f"{held.get(tag)} is outstanding (TMA-F27)")
                held[tag] = k
                tracked_so_far += 1
            else:
                tr = self.resp_mon.transfers[k]
                tag = tr.fields["tag"]
                assert tag in held, f"cycle {cyc}: response with tag {tag} not outstanding"
                s = self.sent[held.pop(tag)]
                resp_so_far += 1
                if s["op"] == L2Op.READ:
                    want = {f: s[f] for f in line_fields(p).names if f != "data"}
                    want["data"] = tr.fields["data"]
                    o_want.append(want)
                else:
                    ack_want.append(s["seq"])
            count_at[cyc + 1] = tracked_so_far - resp_so_far
        assert not held, f"{len(held)} requests never answered"
        got_o = self.o_mon.items()
        assert len(got_o) == len(o_want), f"{len(got_o)} o transfers, want {len(o_want)}"
        for k, (g, w) in enumerate(zip(got_o, o_want)):
            assert g == w, f"o transfer {k}: {g} != {w}"
        assert [s for _, s in self.acks] == ack_want, "ack sequence differs"
        # outstanding(t) = tracked handshakes before t - responses before t (TMA-F29)
        value = 0
        for cyc in sorted(self.outstanding):
            value = count_at.get(cyc, value)
            assert self.outstanding[cyc] == value, (f"cycle {cyc}: outstanding "
                                                    f"{self.outstanding[cyc]}, want {value}")
        for chk in self.checkers:
            chk.check()
        self.mem.check_idle()


async def start(dut):
    seed = env.seed()
    dut._log.info(f"seed {seed} params {env.params()}")
    start_clock(dut)
    dut.i__valid.value = 0
    dut.o__ready.value = 0
    dut.l2_req__ready.value = 0
    dut.l2_resp__valid.value = 0
    await reset(dut)
    return env.rng(1)


@cocotb.test()
async def random_traffic(dut):
    """Random pieces, random latency 1..64 out of order, then long latencies (table full)."""
    rng = await start(dut)
    e = TrackerEnv(dut, rng)
    n = e.p.TRK_ENTRIES
    e.send([random_piece(rng, e.p) for _ in range(600)])
    await e.drain()
    # long latencies: the table fills up and generation stalls (TMA-F27)
    e.mem.scheduler.min_latency, e.mem.scheduler.max_latency = n, 3 * n + 40
    e.send([random_piece(rng, e.p) for _ in range(max(300, 3 * n))])
    await e.drain()
    assert read_int(dut.outstanding) == 0
    e.check()
    dut._log.info(f"{len(e.sent)} pieces, memory stats {e.mem.stats}")


@cocotb.test()
async def table_full_no_leak(dut):
    """After random traffic every tag is free again: TRK_ENTRIES requests issue with all tags,
    the next stalls (TMA-F27, C6, V8)."""
    rng = await start(dut)
    e = TrackerEnv(dut, rng)
    n = e.p.TRK_ENTRIES
    e.send([random_piece(rng, e.p) for _ in range(300)])
    await e.drain()
    before = len(e.req_mon.transfers)
    e.mem.resp_gate = _Never()
    e.mem.req_gate = type("_Always", (), {"next": staticmethod(lambda: True)})()
    e.send([random_piece(rng, e.p, ops=[L2Op.READ]) for _ in range(n + 1)])
    await ClockCycles(dut.clk, 2 * n + 60)
    issued = e.req_mon.transfers[before:]
    tags = sorted(t.fields["tag"] for t in issued)
    assert tags == list(range(n)), f"table-full phase issued tags {tags}, want 0..{n - 1}"
    assert e.drv.count() == 1, f"{e.drv.count()} pieces pending, want 1 stalled"
    await ReadOnly()
    assert read_int(dut.outstanding) == n
    assert read_int(dut.i__ready) == 0
    await RisingEdge(dut.clk)
    e.mem.resp_gate = type("_Always", (), {"next": staticmethod(lambda: True)})()
    await e.drain()
    assert read_int(dut.outstanding) == 0
    e.check()
