"""cocotb testbench of ``hw.tma.TmaRedUnit``, the memory-side reduction unit (spec tma.md §2.2,
§4.9; TMA-F41..F44, TMA-I11, TMA-V12).

Environment: an upstream source on ``up_req`` (random valid gaps; tags unique among the requests
awaiting a response, as the TMA's tracker issues them, TMA-F27) and a random-``ready`` sink on
``up_resp``; downstream, a memory model on ``dn_req``/``dn_resp`` that performs READ, WRITE and
PREFETCH in acceptance order, answers with random latency and in random order, fills unrequested
sectors of READ data with random bytes, back-pressures requests and pauses responses at random,
and records any other op as an error (TMA-I11: ``dn_req.op`` is READ, WRITE or PREFETCH).
Protocol checkers watch all four streams.

Checks, against a flat reference memory that applies the accepted upstream requests in order
(RED through golden ``red_line``):

- the ``dn_req`` sequence is exactly the upstream sequence with every READ / WRITE / PREFETCH
  unchanged (all fields) and every RED replaced by READ {line, sectors, tag} immediately followed
  by WRITE {line, sectors, tag, be} whose enabled bytes are golden ``red_line`` of the line as
  the memory holds it at that point (TMA-F42, F44);
- an online monitor on ``dn_req``: after the READ of a read-modify-write the next request is its
  WRITE (TMA-F43);
- tags of outstanding downstream requests are distinct; every downstream response answers an
  outstanding request;
- ``up_resp``: exactly one per READ / WRITE / RED and none for PREFETCH, each equal to the
  downstream response of its request (for a RED, of its WRITE), a RED's only after its WRITE was
  acknowledged; READ data in the requested sectors equals the reference memory (so the memory
  saw WRITE / RED in upstream order);
- at the end the memory equals the reference, nothing is in flight and every tag is free.

A RED with a pair outside RED_OK (which the TMA never sends, rule 0x1C) must leave memory
unchanged: ``TmaRedUnit``'s documented choice; ``mixed_traffic`` sends a few.

Test cases: ``arith_edges`` (every RED_OK pair on every combination of edge values, TMA-V12),
``arith_random`` (>= 10 000 random operand pairs per pair, packed many elements per line, random
``be`` per element), ``mixed_traffic`` (READ / WRITE / PREFETCH / RED on a few shared lines,
latency 1..64 out of order, back-pressure everywhere), ``throughput`` (cycles per RED line and
pass-through rate, no stalls; figures to ``GPUBLOCKS_RESULT``).
"""

import copy
import random

import cocotb
from cocotb.triggers import ClockCycles, ReadOnly, RisingEdge

from golden.tma.formats import (ESIZE, LINE, RED_OK, SECTOR, DType, L2Op, RedOp, l2_req_fields,
                                l2_resp_fields)
from golden.tma import vectors as gv
from golden.tma.params import TmaParams
from golden.tma.reduce import FLOAT_FORMATS, red_line
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.memory import MemoryCore, MemoryModel, SparseMemory
from tb.common.protocol import StreamProtocolChecker, StreamRules
from golden.common.stream import RandomGate, decode_word
from tb.common.stream import StreamDriver, StreamMonitor, Transfer, read_int, sim_cycle

STREAMS = ("up_req", "up_resp", "dn_req", "dn_resp")
PAIRS = sorted(RED_OK)
BAD_PAIRS = [(op, dt) for op in RedOp for dt in DType if (op, dt) not in RED_OK]
TRACKED = (L2Op.READ, L2Op.WRITE)


def tb_params():
    prm = env.params()
    return TmaParams(ADDR_W=prm.get("addr_w", 64), TRK_ENTRIES=prm.get("trk_entries", 32)), prm


def sectors_of_be(be):
    return sum(1 << s for s in range(LINE // SECTOR) if be >> (SECTOR * s) & ((1 << SECTOR) - 1))


def sector_mask(sectors):
    """Byte mask (bit j = lane j) of the sectors in ``sectors``."""
    return sum(((1 << SECTOR) - 1) << (SECTOR * s) for s in range(4) if sectors >> s & 1)


def masked(data, mask):
    return bytes(b if mask >> j & 1 else 0 for j, b in enumerate(data))


# ---------------------------------------------------------------------------------------------
# Operands
def edge_values(dtype):
    """Edge-case bit patterns of ``dtype``: 0, extremes, +-0, +-inf, NaNs, subnormals, wrap
    boundaries."""
    bits = 8 * ESIZE[dtype]
    top = 1 << bits
    if dtype in FLOAT_FORMATS:
        ew, fw = FLOAT_FORMATS[dtype]
        sign = 1 << (ew + fw)
        inf = ((1 << ew) - 1) << fw
        one = ((1 << (ew - 1)) - 1) << fw
        pos = [0, 1, 2, (1 << fw) - 1, 1 << (fw - 1), 1 << fw, (1 << fw) + 1, inf - 1, inf - 2,
               inf, inf | 1, inf | 1 << (fw - 1), sign - 1, one, one | 1, one - 1,
               one - ((fw + 1) << fw)]
        return sorted({v for x in pos for v in (x, x | sign)})
    return sorted({0, 1, 2, 3, 5, top - 1, top - 2, top >> 1, (top >> 1) - 1, (top >> 1) + 1,
                   0x0FF00FF0 % top, 0xF0F0F0F0F0F0F0F0 % top, 0x100000000 % top,
                   0xFFFFFFFF % top})


def random_operand_pair(rng, dtype):
    """One (old, b) pair from a mix of uniform bits, edge values, cancellation, equal exponents
    and tiny values (floats), or equal / adjacent values (integers)."""
    bits = 8 * ESIZE[dtype]
    mask = (1 << bits) - 1
    a, b = rng.getrandbits(bits), rng.getrandbits(bits)
    kind = rng.randrange(6)
    edges = edge_values(dtype)
    if kind == 1:
        a, b = rng.choice(edges), rng.choice(edges)
    elif kind == 2:
        b = rng.choice(edges)
    elif dtype in FLOAT_FORMATS:
        ew, fw = FLOAT_FORMATS[dtype]
        sign = 1 << (ew + fw)
        if kind == 3:                                       # massive cancellation
            b = ((a ^ sign) + rng.randrange(1 << min(fw, 6))) & mask
        elif kind == 4:                                     # exponents 0..2 apart
            b = ((a & (((1 << ew) - 1) << fw)) + (rng.randrange(3) << fw)
                 + rng.getrandbits(fw) + rng.randrange(2) * sign) & mask
        elif kind == 5:                                     # subnormal / tiny
            a = rng.randrange(3 << fw) | rng.randrange(2) * sign
    elif kind == 3:
        b = a
    elif kind == 4:
        b = (a + rng.choice((-1, 1))) & mask
    return a, b


# ---------------------------------------------------------------------------------------------
class _DnResponses:
    """The downstream memory's behaviour (TMA-I11): READ, WRITE, PREFETCH in acceptance order;
    one response per READ / WRITE, in any order; random bytes in unrequested sectors of READ
    data; any other op is an error."""

    def make_responses(self, req):
        op = req["op"]
        addr = req["line"] << 7
        if op == L2Op.PREFETCH:
            return []
        if op == L2Op.READ:
            data = bytearray(self.memory.read(addr, LINE))
            for s in range(LINE // SECTOR):
                if not req["sectors"] >> s & 1:
                    data[SECTOR * s:SECTOR * (s + 1)] = self.junk.randbytes(SECTOR)
            return [{"tag": req["tag"], "data": int.from_bytes(data, "little")}]
        if op == L2Op.WRITE:
            self.memory.write(addr, int(req["data"]).to_bytes(LINE, "little"), req["be"])
            return [{"tag": req["tag"], "data": self.junk.getrandbits(8 * LINE)}]
        raise ValueError(f"dn_req op {op} is not READ, WRITE or PREFETCH (TMA-I11)")


def _mem_args(p, rng, memory):
    return dict(rng=rng, names={"addr": "line", "rdata": "data"}, addr_shift=7, memory=memory,
                check_tags=False, name="dn_mem")


class DnMemory(_DnResponses, MemoryModel):
    """The downstream memory bound to ``dn_req`` / ``dn_resp`` (its own coroutine)."""

    def __init__(self, dut, clk, p, rng, memory, **kw):
        self.junk = random.Random(rng.getrandbits(32))
        super().__init__(dut, clk, "dn_req", "dn_resp", l2_req_fields(p), l2_resp_fields(p),
                         **_mem_args(p, rng, memory), **kw)


class DnCore(_DnResponses, MemoryCore):
    """The same memory as a cycle core, stepped by :meth:`RedEnv.run_lean`."""

    def __init__(self, p, rng, memory, **kw):
        self.junk = random.Random(rng.getrandbits(32))
        super().__init__(l2_req_fields(p), l2_resp_fields(p), **_mem_args(p, rng, memory), **kw)


class _Record:
    """Transfers of one stream (the lean loop's stand-in for a monitor or driver)."""

    def __init__(self):
        self.transfers = []


class RedEnv:
    """Drivers, memory, monitors and checkers around the DUT (see the module docstring)."""

    def __init__(self, dut, rng, gap_prob=0.3, resp_ready=0.7, min_latency=1, max_latency=64,
                 order="random", req_ready=0.7, resp_gap=0.3, lean=False):
        self.dut = dut
        self.p, self.prm = tb_params()
        self.rng = rng
        clk = self.clk = dut.clk
        self.req_fields = l2_req_fields(self.p)
        self.resp_fields = l2_resp_fields(self.p)
        self.memory = SparseMemory()
        self.ref = SparseMemory()             # initial contents of every line used
        self.lines = set()
        self.free = set(range(self.p.TRK_ENTRIES))
        self.f43_errors = []
        self._rmw = None                      # (tag, line) of a READ whose WRITE is due next
        self._red_open = {}                   # tag -> line of accepted REDs not yet read
        self._seen_up = 0
        self.rmw_count = 0
        mem_rng = random.Random(rng.getrandbits(32))
        mem_kw = dict(min_latency=min_latency, max_latency=max_latency, order=order,
                      req_ready_prob=req_ready, resp_gap_prob=resp_gap)
        self.lean = lean
        if lean:
            # one coroutine drives and samples all four streams (run_lean); the project's rule
            # engine checks each stream's protocol every cycle
            self.mem = DnCore(self.p, mem_rng, self.memory, **mem_kw)
            self.drv, self.up_resp, self.dn_req, self.dn_resp = (_Record() for _ in range(4))
            self.checkers = [StreamRules(s) for s in STREAMS]
            self.up_gate = RandomGate(1.0 - gap_prob, random.Random(rng.getrandbits(32)))
            self.resp_gate = RandomGate(resp_ready, random.Random(rng.getrandbits(32)))
            return
        self.drv = StreamDriver(dut, "up_req", clk, fields=self.req_fields,
                                rng=random.Random(rng.getrandbits(32)), gap_prob=gap_prob)
        self.mem = DnMemory(dut, clk, self.p, mem_rng, self.memory, **mem_kw)
        self.up_resp = StreamMonitor(dut, "up_resp", clk, fields=self.resp_fields,
                                     rng=random.Random(rng.getrandbits(32)),
                                     ready_prob=resp_ready, callback=self._on_up_resp)
        self.dn_req = StreamMonitor(dut, "dn_req", clk, fields=self.req_fields, passive=True,
                                    callback=self._on_dn_req)
        self.dn_resp = StreamMonitor(dut, "dn_resp", clk, fields=self.resp_fields,
                                     passive=True)
        self.checkers = [StreamProtocolChecker(dut, s, clk) for s in STREAMS]

    async def run_lean(self, items, timeout=2_000_000):
        """Send ``items`` and run until everything is answered, in one coroutine: the upstream
        source (tags as in :meth:`feed`), the ``up_resp`` sink, the downstream memory core and
        the four streams' protocol rules. Same timing convention as ``tb.common.stream``:
        drive after the rising edge, sample in ReadOnly."""
        dut, mem = self.dut, self.mem
        up_valid, up_payload, up_ready = dut.up_req__valid, dut.up_req__payload, dut.up_req__ready
        ur_valid, ur_payload, ur_ready_h = (dut.up_resp__valid, dut.up_resp__payload,
                                            dut.up_resp__ready)
        dn_valid, dn_payload, dn_ready = dut.dn_req__valid, dut.dn_req__payload, dut.dn_req__ready
        dr_valid, dr_payload, dr_ready = (dut.dn_resp__valid, dut.dn_resp__payload,
                                          dut.dn_resp__ready)
        r_up, r_ur, r_dn, r_dr = self.checkers
        clk, req_fields, resp_fields = self.clk, self.req_fields, self.resp_fields
        queue = list(reversed(items))
        cur = None                            # (word, fields) presented on up_req
        up_fire = dn_fire = dresp_fire = False
        dn_word = None
        settle = 0
        driven = {}                           # handle -> value last written

        def drive(handle, value):
            if driven.get(handle) != value:
                handle.value = value
                driven[handle] = value

        for _ in range(timeout):
            await RisingEdge(clk)
            mem.edge(dn_word if dn_fire else None, dresp_fire)
            if up_fire:
                cur = None
            if cur is None and queue and self.up_gate.next():
                item = dict(queue[-1])
                if item["op"] == L2Op.PREFETCH:
                    item["tag"] = self.rng.randrange(self.p.TRK_ENTRIES)
                elif self.free:
                    item["tag"] = self.rng.choice(sorted(self.free))
                    self.free.discard(item["tag"])
                else:
                    item = None
                if item is not None:
                    queue.pop()
                    self.lines.add(item["line"])
                    cur = (req_fields.pack(**item), item)
                    drive(up_payload, cur[0])
            drive(up_valid, int(cur is not None))
            ur_ready = self.resp_gate.next()
            drive(ur_ready_h, int(ur_ready))
            drive(dn_ready, int(mem.req_ready))
            drive(dr_valid, int(mem.resp_valid))
            if mem.resp_valid:
                drive(dr_payload, mem.resp_payload)
            await ReadOnly()
            cyc = sim_cycle()
            # up_req (ready matters only under valid: the rules ignore it otherwise)
            ready = read_int(up_ready) if cur is not None else 0
            up_fire = cur is not None and ready == 1
            r_up.step(int(cur is not None), ready, cur[0] if cur else 0, cyc)
            if up_fire:
                self.drv.transfers.append(Transfer(cyc, cur[0], decode_word(cur[0], req_fields)))
            # dn_req
            valid = read_int(dn_valid)
            dn_word = read_int(dn_payload) if valid else 0
            dn_fire = valid == 1 and mem.req_ready
            r_dn.step(valid, int(mem.req_ready), dn_word, cyc)
            if dn_fire:
                t = Transfer(cyc, dn_word, decode_word(dn_word, req_fields))
                self.dn_req.transfers.append(t)
                self._on_dn_req(t)
            # dn_resp
            ready = read_int(dr_ready) if mem.resp_valid else 0
            dresp_fire = mem.resp_valid and ready == 1
            r_dr.step(int(mem.resp_valid), ready, mem.resp_payload if mem.resp_valid else 0, cyc)
            if dresp_fire:
                self.dn_resp.transfers.append(Transfer(cyc, mem.resp_payload, decode_word(
                    mem.resp_payload, resp_fields)))
            # up_resp
            valid_u = read_int(ur_valid)
            word = read_int(ur_payload) if valid_u else 0
            r_ur.step(valid_u, int(ur_ready), word, cyc)
            if valid_u == 1 and ur_ready:
                t = Transfer(cyc, word, decode_word(word, resp_fields))
                self.up_resp.transfers.append(t)
                self._on_up_resp(t)
            done = (not queue and cur is None and mem.idle and not valid and not valid_u
                    and len(self.free) == self.p.TRK_ENTRIES)
            settle = settle + 1 if done else 0
            if settle > 8:
                break
        else:
            raise AssertionError(f"not finished after {timeout} cycles: {len(queue)} requests "
                                 f"unsent, {mem.outstanding} in flight")
        await RisingEdge(self.clk)
        dut.up_req__valid.value = 0
        dut.dn_resp__valid.value = 0

    # -- stimulus ---------------------------------------------------------------------------
    def init_line(self, line, data):
        """Back-door contents of ``line`` in both the memory and the reference."""
        self.memory.write(line * LINE, data)
        self.ref.write(line * LINE, data)

    async def feed(self, items, depth=2):
        """Send ``items`` (request dicts without tags) in order; READ / WRITE / RED take a free
        tag (waiting for one), PREFETCH a random tag."""
        for item in items:
            item = dict(item)
            self.lines.add(item["line"])
            if item["op"] == L2Op.PREFETCH:
                item["tag"] = self.rng.randrange(self.p.TRK_ENTRIES)
            else:
                while not self.free:
                    await RisingEdge(self.clk)
                tag = self.rng.choice(sorted(self.free))
                self.free.discard(tag)
                item["tag"] = tag
            while self.drv.count() >= depth:
                await RisingEdge(self.clk)
            self.drv.append(item)

    def _on_up_resp(self, t):
        self.free.add(t.fields["tag"])

    def _on_dn_req(self, t):
        """TMA-F43 monitor: after the READ of a read-modify-write the next ``dn_req`` transfer
        is that RMW's WRITE."""
        ups = self.drv.transfers
        while self._seen_up < len(ups):
            u = ups[self._seen_up].fields
            if u["op"] >= L2Op.RED_ADD:
                self._red_open[u["tag"]] = u["line"]
            self._seen_up += 1
        f = t.fields
        if self._rmw is not None:
            tag, line = self._rmw
            if not (f["op"] == L2Op.WRITE and f["tag"] == tag and f["line"] == line):
                self.f43_errors.append(f"cycle {t.cycle}: {L2Op(f['op']).name} tag {f['tag']} "
                                       f"between the READ and the WRITE of RED tag {tag}")
            self._rmw = None
            self.rmw_count += 1
        elif f["op"] == L2Op.READ and f["tag"] in self._red_open:
            self._rmw = (f["tag"], self._red_open.pop(f["tag"]))

    async def drain(self, timeout=200_000):
        await self.drv.idle(timeout)
        for _ in range(timeout):
            if self.mem.idle and len(self.free) == self.p.TRK_ENTRIES \
                    and read_int(self.dut.up_resp__valid) == 0:
                break
            await RisingEdge(self.clk)
        await ClockCycles(self.clk, 10)

    # -- checks -----------------------------------------------------------------------------
    def check(self):
        """Everything listed in the module docstring; returns counters."""
        assert not self.f43_errors, "TMA-F43: " + "; ".join(self.f43_errors[:5])
        ups = [t.fields for t in self.drv.transfers]
        up_cycles = [t.cycle for t in self.drv.transfers]
        dns = self.dn_req.transfers
        ref = copy.deepcopy(self.ref)         # the initial image, replayed from the start
        expect = []          # (up index, kind, fields) per downstream request
        read_data = {}       # up index -> reference line at the READ
        for i, u in enumerate(ups):
            base = u["line"] * LINE
            if u["op"] >= L2Op.RED_ADD:
                expect.append((i, "rmw_read", u))
                old = ref.read(base, LINE)
                if (u["op"] - L2Op.RED_ADD, u["dtype"]) in RED_OK:
                    new = red_line(u["op"] - L2Op.RED_ADD, u["dtype"], old,
                                   int(u["data"]).to_bytes(LINE, "little"), u["be"])
                else:                         # documented choice: memory unchanged
                    new = old
                ref.write(base, new, u["be"])
                expect.append((i, "rmw_write", dict(u, data=new)))
            else:
                expect.append((i, "pass", u))
                if u["op"] == L2Op.READ:
                    read_data[i] = ref.read(base, LINE)
                elif u["op"] == L2Op.WRITE:
                    ref.write(base, int(u["data"]).to_bytes(LINE, "little"), u["be"])
        assert len(dns) == len(expect), f"{len(dns)} dn_req transfers, expected {len(expect)}"
        answered_by = {}     # up index -> dn index whose response is the up response
        for j, (t, (i, kind, u)) in enumerate(zip(dns, expect)):
            g = t.fields
            where = f"dn_req {j} (cycle {t.cycle}, upstream request {i})"
            if kind == "pass":
                assert g == u, f"{where}: {g} is not the unchanged request {u} (TMA-F42)"
                if u["op"] != L2Op.PREFETCH:
                    answered_by[i] = j
                continue
            want_op = L2Op.READ if kind == "rmw_read" else L2Op.WRITE
            got = (g["op"], g["line"], g["sectors"], g["tag"])
            want = (want_op, u["line"], u["sectors"], u["tag"])
            assert got == want, f"{where}: (op, line, sectors, tag) {got} != {want} (TMA-F42)"
            if kind == "rmw_write":
                assert g["be"] == u["be"], f"{where}: be {g['be']:#x} != {u['be']:#x}"
                data = int(g["data"]).to_bytes(LINE, "little")
                if masked(data, u["be"]) != masked(u["data"], u["be"]):
                    self._report_arith(where, u, data, ups, i)
                answered_by[i] = j
        # downstream tags and responses, in cycle order (responses after requests of a cycle)
        dresp = self.dn_resp.transfers
        events = sorted([(t.cycle, 0, j) for j, t in enumerate(dns)]
                        + [(t.cycle, 1, k) for k, t in enumerate(dresp)])
        pending, resp_of = {}, {}
        for cyc, kind, k in events:
            if kind == 0:
                f = dns[k].fields
                if f["op"] == L2Op.PREFETCH:
                    continue
                assert f["tag"] not in pending, (f"cycle {cyc}: dn_req {k} reuses tag "
                                                 f"{f['tag']} of outstanding dn_req "
                                                 f"{pending.get(f['tag'])}")
                pending[f["tag"]] = k
            else:
                tag = dresp[k].fields["tag"]
                assert tag in pending, f"cycle {cyc}: dn_resp tag {tag} answers nothing"
                resp_of[pending.pop(tag)] = dresp[k]
        assert not pending, f"dn_req never answered: {sorted(pending.values())[:10]}"
        # upstream responses
        ur = self.up_resp.transfers
        events = sorted([(c, 0, i) for i, c in enumerate(up_cycles)]
                        + [(t.cycle, 1, k) for k, t in enumerate(ur)])
        outstanding = {}
        got_resp = set()
        for cyc, kind, k in events:
            if kind == 0:
                if ups[k]["op"] != L2Op.PREFETCH:
                    tag = ups[k]["tag"]
                    assert tag not in outstanding, f"testbench reused tag {tag}"
                    outstanding[tag] = k
                continue
            t = ur[k]
            tag = t.fields["tag"]
            assert tag in outstanding, f"cycle {cyc}: up_resp tag {tag} answers no request"
            i = outstanding.pop(tag)
            got_resp.add(i)
            dn = resp_of[answered_by[i]]
            assert t.fields == dn.fields, (f"cycle {cyc}: up_resp of request {i} is not the "
                                           f"downstream response (TMA-F42)")
            assert t.cycle > dn.cycle, f"request {i}: up_resp in cycle {t.cycle} before dn_resp"
            if i in read_data:
                mask = sector_mask(ups[i]["sectors"])
                data = int(t.fields["data"]).to_bytes(LINE, "little")
                assert masked(data, mask) == masked(read_data[i], mask), (
                    f"READ {i} (line {ups[i]['line']:#x}) returned data that differs from the "
                    f"memory at that point of the request order")
        assert not outstanding, f"{len(outstanding)} requests never answered upstream"
        n_tracked = sum(u["op"] != L2Op.PREFETCH for u in ups)
        assert len(got_resp) == n_tracked
        # final memory image
        for line in sorted(self.lines):
            a = line * LINE
            assert self.memory.read(a, LINE) == ref.read(a, LINE), \
                f"final memory of line {line:#x} differs from the reference"
        for chk in self.checkers:
            chk.check()
        self.mem.check_idle()
        assert len(self.free) == self.p.TRK_ENTRIES
        ops = [u["op"] for u in ups]
        return {"requests": len(ups), "red": sum(o >= L2Op.RED_ADD for o in ops),
                "read": ops.count(L2Op.READ), "write": ops.count(L2Op.WRITE),
                "prefetch": ops.count(L2Op.PREFETCH), "rmw": self.rmw_count,
                "reordered": self.mem.stats["reordered"]}

    @staticmethod
    def _report_arith(where, u, data, ups, i):
        op, dt = RedOp(u["op"] - L2Op.RED_ADD), DType(u["dtype"])
        es = ESIZE[dt]
        bad = []
        for k in range(0, LINE, es):
            if u["be"] >> k & 1 and data[k:k + es] != u["data"][k:k + es]:
                bad.append(f"lane {k}: got {data[k:k + es][::-1].hex()} want "
                           f"{u['data'][k:k + es][::-1].hex()} (b "
                           f"{int(ups[i]['data']).to_bytes(LINE, 'little')[k:k + es][::-1].hex()})")
        raise AssertionError(f"{where}: {op.name} {dt.name} result differs from golden red_line "
                             f"(TMA-F44) in {len(bad)} elements:\n  " + "\n  ".join(bad[:8]))


# ---------------------------------------------------------------------------------------------
def red_lines(rng, op, dtype, pairs, enable_prob, base_line):
    """RED requests (and initial old lines) packing ``pairs`` of (old, b) elements; each element
    enabled with ``enable_prob`` (an enabled element consumes a pair). Returns (items, inits,
    enabled pair count)."""
    es = ESIZE[dtype]
    n = LINE // es
    items, inits = [], []
    k = 0
    line = base_line
    while k < len(pairs):
        old, data = bytearray(rng.randbytes(LINE)), bytearray(rng.randbytes(LINE))
        be = 0
        for e in range(n):
            if k < len(pairs) and (rng.random() < enable_prob or (e == n - 1 and not be)):
                a, b = pairs[k]
                k += 1
                old[e * es:(e + 1) * es] = a.to_bytes(es, "little")
                data[e * es:(e + 1) * es] = b.to_bytes(es, "little")
                be |= ((1 << es) - 1) << (e * es)
        sectors = sectors_of_be(be) | (rng.randrange(16) if rng.random() < 0.2 else 0)
        items.append(dict(op=L2Op.RED_ADD + op, dtype=dtype, line=line, sectors=sectors,
                          data=int.from_bytes(data, "little"), be=be))
        inits.append((line, bytes(old)))
        line += 1
    return items, inits, k


async def start(dut, **kw):
    seed = env.seed()
    dut._log.info(f"seed {seed} params {env.params()}")
    start_clock(dut)
    dut.up_req__valid.value = 0
    dut.up_resp__ready.value = 0
    dut.dn_req__ready.value = 0
    dut.dn_resp__valid.value = 0
    await reset(dut)
    rng = env.rng(1)
    return RedEnv(dut, rng, **kw), rng


async def run_lines(e, items, inits):
    for line, data in inits:
        e.init_line(line, data)
    if e.lean:
        await e.run_lean(items)
    else:
        await e.feed(items)
        await e.drain()
    return e.check()


@cocotb.test()
async def arith_edges(dut):
    """TMA-V12 edge cases: every RED_OK pair on every (old, b) combination of edge values,
    all elements enabled, under random latency, order and back-pressure."""
    e, rng = await start(dut, min_latency=1, max_latency=12, lean=True)
    items, inits = [], []
    line = 0x10000
    total = 0
    for op, dt in PAIRS:
        edges = edge_values(dt)
        pairs = [(a, b) for a in edges for b in edges]
        it, ini, n = red_lines(rng, op, dt, pairs, 1.0, line)
        items += it
        inits += ini
        line += len(it)
        total += n
    stats = await run_lines(e, items, inits)
    dut._log.info(f"edge pairs {total}, {stats}")
    env.write_result({"pairs": total, **stats})


@cocotb.test()
async def vectors(dut):
    """TMA-GV37..GV72 through the RTL: each vector is one RED of one enabled element (in lane
    slot ``k mod elements``), whose written result must be the spec's printed value."""
    e, rng = await start(dut, min_latency=1, max_latency=6, lean=True)
    items, inits, want = [], [], {}
    line = 0x20000
    for k, (gv_id, (op, dt, old, b, result)) in enumerate(sorted(gv.RED.items())):
        es = ESIZE[dt]
        slot = k % (LINE // es)
        old_line, data = bytearray(rng.randbytes(LINE)), bytearray(rng.randbytes(LINE))
        old_line[slot * es:(slot + 1) * es] = old.to_bytes(es, "little")
        data[slot * es:(slot + 1) * es] = b.to_bytes(es, "little")
        be = ((1 << es) - 1) << (slot * es)
        items.append(dict(op=L2Op.RED_ADD + op, dtype=dt, line=line + k, sectors=sectors_of_be(be),
                          data=int.from_bytes(data, "little"), be=be))
        inits.append((line + k, bytes(old_line)))
        want[line + k] = (gv_id, slot * es, result.to_bytes(es, "little"))
    stats = await run_lines(e, items, inits)
    for ln, (gv_id, lane, result) in want.items():
        got = e.memory.read(ln * LINE + lane, len(result))
        assert got == result, f"{gv_id}: memory holds {got[::-1].hex()}, spec {result[::-1].hex()}"
    dut._log.info(f"vectors {sorted(w[0] for w in want.values())}: {stats}")
    env.write_result({"vectors": sorted(w[0] for w in want.values()), **stats})


@cocotb.test()
async def arith_random(dut):
    """TMA-V12: >= 10 000 random operand pairs per RED_OK pair, random per-element ``be``
    (95 % enabled), packed into lines; low latency and light back-pressure keep it fast."""
    e, rng = await start(dut, gap_prob=0.05, resp_ready=0.9, min_latency=1, max_latency=2,
                         req_ready=0.95, resp_gap=0.05, lean=True)
    per_pair = 10_000
    items, inits = [], []
    line = 0x40000
    counts = {}
    for op, dt in PAIRS:
        pairs = [random_operand_pair(rng, dt) for _ in range(per_pair)]
        it, ini, n = red_lines(rng, op, dt, pairs, 0.95, line)
        items += it
        inits += ini
        line += len(it)
        counts[f"{op.name}-{dt.name}"] = n
    order = list(range(len(items)))
    rng.shuffle(order)                       # interleave the pairs
    stats = await run_lines(e, [items[k] for k in order], inits)
    assert min(counts.values()) >= 10_000, counts
    dut._log.info(f"random pairs per (op, dtype): {counts}; {stats}")
    env.write_result({"pairs": counts, **stats})


def _mixed_items(rng, n, lines):
    items = []
    for _ in range(n):
        line = rng.choice(lines)
        op = rng.choice([L2Op.READ] * 4 + [L2Op.WRITE] * 3 + [L2Op.PREFETCH] + ["red"] * 6)
        if op == "red":
            op_, dt = rng.choice(PAIRS)
            if rng.random() < 0.03:           # a pair outside RED_OK (the TMA never sends one)
                op_, dt = rng.choice(BAD_PAIRS)
            es = ESIZE[dt]
            data = bytearray(LINE)
            be = 0
            for e in range(LINE // es):
                if rng.random() < 0.5:
                    a, b = random_operand_pair(rng, dt)
                    data[e * es:(e + 1) * es] = b.to_bytes(es, "little")
                    be |= ((1 << es) - 1) << (e * es)
            be = be or (1 << es) - 1
            sectors = sectors_of_be(be) | (rng.randrange(16) if rng.random() < 0.3 else 0)
            items.append(dict(op=L2Op.RED_ADD + op_, dtype=dt, line=line, sectors=sectors,
                              data=int.from_bytes(data, "little"), be=be))
            continue
        item = dict(op=op, line=line, sectors=rng.randrange(1, 16), dtype=rng.randrange(16),
                    data=rng.getrandbits(8 * LINE), be=rng.getrandbits(LINE))
        if op == L2Op.WRITE:
            lane = rng.randrange(LINE)
            nbytes = rng.randint(1, LINE - lane)
            item["be"] = ((1 << nbytes) - 1) << lane
            item["sectors"] = sectors_of_be(item["be"])
        items.append(item)
    return items


@cocotb.test()
async def mixed_traffic(dut):
    """READ / WRITE / PREFETCH / RED on 6 shared lines (so WRITE -> RED -> READ hazards occur),
    latency 1..64 in random order, random valid gaps and ready on every stream."""
    e, rng = await start(dut, gap_prob=0.4, resp_ready=0.6, min_latency=1, max_latency=64,
                         req_ready=0.6, resp_gap=0.3)
    top = (1 << (e.p.ADDR_W - 7)) - 1
    lines = [0, 1, 0x1234, top - 1, top, rng.randrange(top)]
    for line in lines:
        e.init_line(line, rng.randbytes(LINE))
    items = _mixed_items(rng, 1000, lines)
    await e.feed(items, depth=3)
    await e.drain()
    stats = e.check()
    assert stats["reordered"] > 0 and stats["rmw"] == stats["red"]
    dut._log.info(f"mixed traffic: {stats}")
    env.write_result(stats)


@cocotb.test()
async def throughput(dut):
    """Cycles per RED line and pass-through rate with no stalls, for read latencies 1 and 20
    (in order); figures to GPUBLOCKS_RESULT."""
    e, rng = await start(dut, gap_prob=0.0, resp_ready=1.0, min_latency=1, max_latency=1,
                         order="in_order", req_ready=1.0, resp_gap=0.0)
    prm = e.prm
    lanes, stages = prm.get("lanes", 2), prm.get("stages", 1)
    passes = 16 // lanes
    out = {"lanes": lanes, "stages": stages, "passes": passes}
    line = 0x80000
    for lat in (1, 20):
        e.mem.scheduler.min_latency = e.mem.scheduler.max_latency = lat
        op, dt = RedOp.ADD, DType.F32
        pairs = [random_operand_pair(rng, dt) for _ in range(32 * 20)]
        items, inits, _ = red_lines(rng, op, dt, pairs, 1.0, line)
        line += len(items)
        first = len(e.drv.transfers)
        await run_lines(e, items, inits)
        cyc = [t.cycle for t in e.drv.transfers[first:]]
        gaps = sorted({b - a for a, b in zip(cyc, cyc[1:])})
        out[f"red_cycles_L{lat}"] = gaps
        want = 2 + lat + passes + stages
        assert gaps == [want], f"latency {lat}: RED spacing {gaps}, documented {want}"
    # pass-through: 64 READs back to back
    first = len(e.drv.transfers)
    items = [dict(op=L2Op.READ, line=line + k, sectors=0xF, dtype=0, data=0, be=0)
             for k in range(24)]
    for k in range(24):
        e.init_line(line + k, bytes(LINE))
    await e.feed(items, depth=4)
    await e.drain()
    e.check()
    cyc = [t.cycle for t in e.drv.transfers[first:]]
    out["pass_cycles_per_request"] = (cyc[-1] - cyc[0]) / (len(cyc) - 1)
    assert out["pass_cycles_per_request"] == 1.0
    dut._log.info(f"throughput: {out}")
    env.write_result(out)
