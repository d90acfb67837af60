"""cocotb testbench of tb.common.memory.MemoryModel, through tb.common.harness.StreamLoopbackHarness.

A StreamDriver sends random reads and writes (hot addresses for read-after-write hazards,
unaligned addresses across a page boundary, random byte enables, tags from a free pool) into
``req_in``; the memory model serves ``req_out``/``resp_in`` with random latency, reordering and
an outstanding limit; a StreamMonitor with random back-pressure takes ``resp_out``.

Checks: every response equals the one computed from a flat reference memory (a bytearray
updated in request order = accept order) by an unordered, tag-keyed scoreboard (every tag
answered exactly once); out-of-order responses occur (or never occur, for ``in_order``);
requests in flight at the memory never exceed the limit and reach it; latency >= min_latency;
protocol checkers on all four streams; the final memory equals the reference; the model is
idle at the end.

The configuration comes from the ``MEMTB_CONFIG`` environment variable (JSON, see
:data:`DEFAULT_CONFIG`); :func:`memtb_fields` gives the payload layouts for it.
"""

import json
import os

import cocotb
from cocotb.triggers import RisingEdge

from golden.common.fields import Fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.memory import MemoryModel
from tb.common.protocol import StreamProtocolChecker
from tb.common.scoreboard import Scoreboard
from tb.common.stream import StreamDriver, StreamMonitor

DEFAULT_CONFIG = {
    "data_bytes": 8, "addr_bits": 13, "tag_bits": 4, "order": "random",
    "min_latency": 1, "max_latency": 12, "max_outstanding": 6, "requests": 400,
    "beats": 2,
}


def config():
    cfg = dict(DEFAULT_CONFIG)
    cfg.update(json.loads(os.environ.get("MEMTB_CONFIG", "{}")))
    return cfg


def memtb_fields(cfg):
    """(request Fields, response Fields) for a configuration."""
    db = cfg["data_bytes"]
    req = Fields(("addr", cfg["addr_bits"]), ("tag", cfg["tag_bits"]), ("write", 1),
                 ("wdata", 8 * db), ("be", db))
    resp = Fields(("tag", cfg["tag_bits"]), ("write", 1), ("rdata", 8 * db))
    return req, resp


class BeatMemory(MemoryModel):
    """Reads return ``beats`` consecutive ``data_bytes`` chunks (the multi-beat hook)."""

    def __init__(self, *args, beats=2, **kwargs):
        self.beats = beats
        super().__init__(*args, **kwargs)

    def make_responses(self, req):
        out = super().make_responses(req)
        if req["write"]:
            return out
        addr = req["addr"]
        return [{"tag": req["tag"], "rdata": self.memory.read_int(addr + k * self.data_bytes,
                                                                 self.data_bytes)}
                for k in range(self.beats)]


class Traffic:
    """Random request generator with a tag pool and a flat reference memory."""

    def __init__(self, dut, cfg, req_fields, resp_fields, memory_cls=MemoryModel, beats=1):
        self.dut = dut
        self.cfg = cfg
        self.beats = beats
        clk = dut.clk
        self.clk = clk
        self.rng = env.rng(21)
        db = cfg["data_bytes"]
        self.db = db
        self.span = 1 << cfg["addr_bits"]
        self.ref = bytearray(self.rng.getrandbits(8) for _ in range(self.span + db * beats))
        kwargs = {"beats": beats} if memory_cls is not MemoryModel else {}
        self.mem = memory_cls(dut, clk, "req_out", "resp_in", req_fields, resp_fields,
                              min_latency=cfg["min_latency"], max_latency=cfg["max_latency"],
                              order=cfg["order"], max_outstanding=cfg["max_outstanding"],
                              req_ready_prob=0.8, resp_gap_prob=0.1, rng=env.rng(22), **kwargs)
        self.mem.write(0, bytes(self.ref))
        self.sb = Scoreboard("resp_out", ordered=False, key=lambda r: r["tag"])
        self.checkers = [StreamProtocolChecker(dut, p, clk)
                         for p in ("req_in", "req_out", "resp_in", "resp_out")]
        self.driver = StreamDriver(dut, "req_in", clk, req_fields, rng=env.rng(23), gap_prob=0.2)
        self.responses = StreamMonitor(dut, "resp_out", clk, resp_fields, rng=env.rng(24),
                                       ready_prob=0.6, burst=3.0, callback=self._on_response)
        self.at_req = StreamMonitor(dut, "req_out", clk, req_fields, passive=True,
                                    callback=self._on_accept)
        self.at_resp = StreamMonitor(dut, "resp_in", clk, resp_fields, passive=True,
                                     callback=self._on_mem_response)
        self.free = list(range(1 << cfg["tag_bits"]))
        self.beats_left = {}           # tag -> beats still to come on resp_out
        self.seq_of = {}               # tag -> request sequence number
        self.max_seq_done = -1
        self.out_of_order = 0
        self.accept_cycle = {}
        self.latencies = []
        self.sent = 0

    def _on_response(self, t):
        tag = t.fields["tag"]
        self.sb.observe(t.fields, t.cycle)
        if tag not in self.beats_left:
            return                      # unexpected: the scoreboard has recorded it
        self.beats_left[tag] -= 1
        if self.beats_left[tag] == 0:
            del self.beats_left[tag]
            seq = self.seq_of.pop(tag)
            if seq < self.max_seq_done:
                self.out_of_order += 1
            self.max_seq_done = max(self.max_seq_done, seq)
            self.free.append(tag)

    def _on_accept(self, t):
        self.accept_cycle[t.fields["tag"]] = t.cycle

    def _on_mem_response(self, t):
        start = self.accept_cycle.pop(t.fields["tag"], None)
        if start is not None:          # first beat
            self.latencies.append(t.cycle - start)

    def _request(self):
        rng, db = self.rng, self.db
        if rng.random() < 0.4:
            addr = rng.choice([a for a in (0x10, 0x18, 0x7F9, 0xFFC, 0x1000, 0x1003)
                               if a < self.span] + [self.span - 1])
        else:
            addr = rng.randrange(self.span)
        tag = self.free.pop(rng.randrange(len(self.free)))
        write = int(rng.random() < 0.45)
        req = {"addr": addr, "tag": tag, "write": write, "wdata": 0, "be": 0}
        if write:
            req["wdata"] = rng.getrandbits(8 * db)
            req["be"] = rng.choice([(1 << db) - 1, rng.getrandbits(db), 1, 1 << (db - 1)])
            data = req["wdata"].to_bytes(db, "little")
            for k in range(db):
                if (req["be"] >> k) & 1:
                    self.ref[addr + k] = data[k]
            expected = [{"tag": tag, "write": 1, "rdata": 0}]
        else:
            expected = [{"tag": tag, "write": 0,
                         "rdata": int.from_bytes(self.ref[addr + k * db:addr + (k + 1) * db],
                                                 "little")}
                        for k in range(self.beats)]
        self.sb.expect_all(expected)
        self.beats_left[tag] = len(expected)
        self.seq_of[tag] = self.sent
        self.sent += 1
        return req

    async def run(self, n):
        for _ in range(n):
            for _ in range(20_000):
                if self.free:
                    break
                await RisingEdge(self.clk)
            else:
                raise AssertionError(f"no tag came back for 20000 cycles; waiting for "
                                     f"{sorted(self.beats_left)}")
            self.driver.append(self._request())
            if self.rng.random() < 0.1:
                await RisingEdge(self.clk)
        await self.driver.idle(20_000)
        for _ in range(20_000):
            if not self.sb.pending:
                break
            await RisingEdge(self.clk)
        for _ in range(5):
            await RisingEdge(self.clk)

    def peak_in_flight(self):
        """Requests accepted by the memory and not fully answered, after each cycle."""
        beats_per = {}
        # a request leaves when its last beat transfers: count requests, not beats
        done = []
        for t in self.at_resp.transfers:
            tag = t.fields["tag"]
            beats_per[tag] = beats_per.get(tag, 0) + 1
            expected = 1 if t.fields["write"] else self.beats
            if beats_per[tag] == expected:
                beats_per[tag] = 0
                done.append((t.cycle, -1))
        events = sorted([(t.cycle, +1) for t in self.at_req.transfers] + done)
        level, peak = 0, 0
        for i, (cycle, delta) in enumerate(events):
            level += delta
            if i + 1 == len(events) or events[i + 1][0] != cycle:
                peak = max(peak, level)
        return peak

    def check(self):
        cfg = self.cfg
        self.sb.check_done()
        for checker in self.checkers:
            checker.check()
        self.mem.check_idle()
        assert self.sent == self.mem.stats["requests"] == self.at_req.count, \
            (self.sent, self.mem.stats, self.at_req.count)
        assert not self.beats_left, f"tags never answered: {sorted(self.beats_left)}"
        assert bytes(self.ref) == self.mem.read(0, len(self.ref)), \
            "final memory differs from the reference memory"
        assert min(self.latencies) >= cfg["min_latency"], \
            f"latency {min(self.latencies)} below min_latency {cfg['min_latency']}"
        peak = self.peak_in_flight()
        limit = cfg["max_outstanding"]
        if limit is not None:
            assert peak <= limit, f"{peak} requests in flight, limit {limit}"
            assert peak == limit, f"the outstanding limit {limit} was never reached (peak {peak})"
            assert self.mem.stats["max_outstanding"] <= limit
        if cfg["order"] == "in_order":
            assert self.out_of_order == 0, f"{self.out_of_order} out-of-order responses in order mode"
        else:
            assert self.out_of_order > 0, "no response ever overtook an older one"
        self.dut._log.info("%s; out of order %d; peak in flight %d; latency %d..%d; stats %s",
                           self.sb.summary(), self.out_of_order, peak, min(self.latencies),
                           max(self.latencies), self.mem.stats)


async def _start(dut):
    for name in ("req_in__valid", "resp_in__valid", "req_out__ready", "resp_out__ready"):
        getattr(dut, name).value = 0
    start_clock(dut)
    await reset(dut)


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def random_reads_writes(dut):
    """Random reads/writes: data vs flat reference, tags once each, reordering, limit, idle."""
    cfg = config()
    await _start(dut)
    traffic = Traffic(dut, cfg, *memtb_fields(cfg))
    await traffic.run(cfg["requests"])
    traffic.check()


@cocotb.test(timeout_time=5, timeout_unit="ms")
async def multi_beat_reads(dut):
    """make_responses hook: reads answered with several beats, kept together and in order."""
    cfg = config()
    await _start(dut)
    traffic = Traffic(dut, cfg, *memtb_fields(cfg), memory_cls=BeatMemory, beats=cfg["beats"])
    await traffic.run(cfg["requests"] // 2)
    traffic.check()
    # the beats of one read are adjacent on resp_in (an entry is sent as a whole)
    tags = [t.fields["tag"] for t in traffic.at_resp.transfers]
    writes = [t.fields["write"] for t in traffic.at_resp.transfers]
    i = 0
    while i < len(tags):
        n = 1 if writes[i] else cfg["beats"]
        assert tags[i:i + n] == [tags[i]] * n, f"beats of tag {tags[i]} interleaved at {i}: {tags[i:i + n]}"
        i += n
