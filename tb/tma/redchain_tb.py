"""cocotb testbench of the TMA unit with its memory-side reduction unit
(``tb.tma.redchain.TmaRedChain``: ``Tma`` -> ``TmaRedUnit`` -> memory; spec tma.md §2.2,
TMA-F41..F44, I4, I5, I11, V13).

``TopBench`` (tb/tma/top_tb.py) drives the chain as it drives the bare ``Tma``, with two
differences:

* the memory on ``l2_req`` / ``l2_resp`` (the reduction unit's ``dn_req`` / ``dn_resp``) is
  :class:`ReadWriteMemory`: it performs READ and WRITE (and takes PREFETCH without a
  response), with random latency, out-of-order responses, junk in unrequested sectors and
  random back-pressure; a RED reaching it fails the test at once;
* the per-request comparison with the golden model runs on the TMA's own requests, which the
  chain exposes as the passive port ``tma_l2_req`` (the RED requests the golden model lists).

:class:`ReadWriteMemory` also checks the memory side online, request by request, against the
TMA's requests in order: a READ / WRITE / PREFETCH reaches the memory unchanged (every field,
tag included; TMA-F42); a RED becomes a READ of its line (same line, sectors, tag; dtype, data,
be zero) and then, as the very next request the memory accepts, a WRITE of that line with the
same sectors, tag and ``be`` whose enabled bytes are golden ``red_line`` applied to the line
the READ returned (TMA-F42, F43, F44); the line is unchanged between the two. The end-of-test
check of ``TopBench`` then compares the ``err`` and ``done`` streams, every request of the TMA,
the smem images, every global line written (every RED line equals the golden model's),
the barrier totals, ``idle`` = 1 and ``outstanding`` = 0; on top of that the memory wrote
exactly the golden model's WRITE/RED lines (nothing else in global memory changed: TMA-V13)
and performed one read-modify-write per golden RED request.
"""

import os
from collections import Counter, deque

import cocotb

from golden.tma.formats import LINE, RED_OK, CmdOp, L2Op, Mode, TmaCmd, l2_req_fields
from golden.tma.l2req import block_pieces, row_pieces
from golden.tma.reduce import red_line
from golden.tma.tile import rows as box_rows
from tb.common import env
from tb.common.stream import StreamMonitor, sim_cycle
from tb.tma.setup_tb import (Case, mutate, random_block, random_control, random_im2col,
                             random_tile)
from tb.tma.top_tb import WRITE_PATH, TopBench, start, top_params
from tb.tma.tracker_tb import L2Memory

__all__ = ["ReadWriteMemory", "chain_cases"]

PASS_OPS = (L2Op.READ, L2Op.WRITE, L2Op.PREFETCH)
RED_PAIRS = sorted(RED_OK)


class ReadWriteMemory(L2Memory):
    """A memory that performs only READ and WRITE (PREFETCH: accepted, no response), behind the
    reduction unit, with the online TMA-F42 / F43 / F44 check described in the module
    docstring. ``up_port`` is the chain's copy of the TMA's own ``l2_req``."""

    def __init__(self, dut, clk, p, rng, memory=None, up_port="tma_l2_req", **kw):
        super().__init__(dut, clk, p, rng, memory=memory, **kw)
        self.p = p
        self.expect = deque()           # (kind, upstream request fields) in TMA order
        self.rmw = None                 # the RED whose READ was accepted, WRITE not yet
        self.written = set()            # lines the memory wrote
        self.counts = Counter()
        self.rmw_edges = []             # edges from an RMW's READ to its WRITE
        self.up = StreamMonitor(dut, up_port, clk, fields=l2_req_fields(p), passive=True,
                                callback=self._upstream)

    def _upstream(self, t):
        f = t.fields
        if f["op"] >= L2Op.RED_ADD:
            self.expect.append(("rmw_read", f))
            self.expect.append(("rmw_write", f))
        else:
            self.expect.append(("pass", f))

    def _fail(self, msg):
        msg = (f"memory side, cycle {sim_cycle()}, downstream request "
               f"{self.counts['requests']}: {msg}")
        self.errors.append(msg)
        raise AssertionError(msg)

    def make_responses(self, req):
        op = req["op"]
        if op not in PASS_OPS:          # the memory cannot reduce: a RED must never get here
            self._fail(f"op {op} ({L2Op(op).name if op in L2Op._value2member_map_ else '?'}) "
                       f"reached a read/write-only memory: {self._show(req)}")
        if not self.expect:
            self._fail(f"request with no TMA request behind it: {self._show(req)}")
        kind, up = self.expect.popleft()
        addr = req["line"] << 7
        if kind == "pass":
            if req != up:
                self._fail(f"TMA-F42: forwarded request {self._show(req)} != the TMA's "
                           f"{self._show(up)}")
        elif kind == "rmw_read":
            want = dict(up, op=int(L2Op.READ), dtype=0, data=0, be=0)
            if req != want:
                self._fail(f"TMA-F42: the READ of RED {self._show(up)} expected, got "
                           f"{self._show(req)}")
            self.rmw = dict(up=up, old=bytes(self.memory.read(addr, LINE)), edge=self.edges)
        else:
            rmw, self.rmw = self.rmw, None
            same = (op == L2Op.WRITE and req["line"] == up["line"] and req["tag"] == up["tag"])
            if not same:
                self._fail(f"TMA-F43: {self._show(req)} accepted between the READ and the WRITE "
                           f"of RED {self._show(up)}")
            if req["sectors"] != up["sectors"] or req["be"] != up["be"] or req["dtype"] != 0:
                self._fail(f"TMA-F42: RMW WRITE {self._show(req)}: sectors/be/dtype differ from "
                           f"RED {self._show(up)}")
            if bytes(self.memory.read(addr, LINE)) != rmw["old"]:
                self._fail("line changed between the RMW's READ and WRITE")
            want = red_line(up["op"] - L2Op.RED_ADD, up["dtype"], rmw["old"],
                            int(up["data"]).to_bytes(LINE, "little"), up["be"])
            got = int(req["data"]).to_bytes(LINE, "little")
            bad = [j for j in range(LINE) if up["be"] >> j & 1 and got[j] != want[j]]
            if bad:
                self._fail(f"TMA-F44: RED_{L2Op(up['op']).name[4:]} dtype {up['dtype']} line "
                           f"{up['line']:#x}: lanes {bad[:8]} got {[got[j] for j in bad[:8]]}, "
                           f"golden red_line {[want[j] for j in bad[:8]]}")
            self.counts["rmw"] += 1
            self.counts[("pair", up["op"] - L2Op.RED_ADD, up["dtype"])] += 1
            self.rmw_edges.append(self.edges - rmw["edge"])
        self.counts["requests"] += 1
        self.counts[L2Op(op).name] += 1
        if op == L2Op.WRITE:
            self.written.add(req["line"])
        return super().make_responses(req)

    @staticmethod
    def _show(f):
        op = f["op"]
        name = L2Op(op).name if op in L2Op._value2member_map_ else str(op)
        return (f"{{{name} line {f['line']:#x} sectors {f['sectors']:#x} tag {f['tag']} "
                f"dtype {f['dtype']} be {f['be']:#x}}}")

    def check_idle(self):
        super().check_idle()
        assert not self.expect, (f"{len(self.expect)} TMA request(s) never reached the memory: "
                                 f"{[(k, self._show(f)) for k, f in list(self.expect)[:4]]}")
        assert self.rmw is None, "a read-modify-write never wrote"


# -- stimulus ---------------------------------------------------------------------------------
def _pair(case):
    """(red_op, dtype) of a RED case: the descriptor's element type for TENSOR_RED."""
    c = case.cmd
    return int(c.red_op), int(case.desc.dtype if c.op == CmdOp.TENSOR_RED else c.dtype)


def _pieces(case, p):
    c = case.cmd
    if c.op == CmdOp.BLOCK_RED:
        return len(block_pieces(c.gaddr, 16 * c.num_blocks, p.ADDR_W))
    return len(row_pieces(box_rows(case.desc, c, p.ADDR_W), p.ADDR_W))


def _cover(rng, p, make, max_pieces, tries=4000):
    """One case per RED_OK pair from ``make(rng, p)`` (which draws the pair at random), each with
    1..``max_pieces`` RED requests."""
    got = {}
    for _ in range(tries):
        if len(got) == len(RED_PAIRS):
            break
        c = make(rng, p)
        pair = _pair(c)
        if pair not in got and 1 <= _pieces(c, p) <= max_pieces:
            got[pair] = c
    missing = set(RED_PAIRS) - set(got)
    assert not missing, f"no case for the pairs {sorted(missing)}"
    return [got[k] for k in RED_PAIRS]


MIX = ([("tile", CmdOp.TENSOR_RED)] * 4 + [("im2col", CmdOp.TENSOR_RED)] * 2
       + [("tile", CmdOp.TENSOR_STORE)] * 2 + [("im2col", CmdOp.TENSOR_STORE)]
       + [("tile", CmdOp.TENSOR_LOAD)] * 2 + [("im2col", CmdOp.TENSOR_LOAD)]
       + [("tile", CmdOp.TENSOR_PREFETCH), ("im2col", CmdOp.TENSOR_PREFETCH)]
       + [("block", CmdOp.BLOCK_RED)] * 3 + [("block", None)] * 3 + [("control", None)])


def _mix_case(rng, p):
    kind, op = rng.choice(MIX)
    if kind == "tile":
        return random_tile(rng, p, op=op, max_rows=10)
    if kind == "im2col":
        return random_im2col(rng, p, op=op, max_px=10, max_pieces=24)
    if kind == "block":
        return random_block(rng, p, op=op, max_blocks=32)
    return random_control(rng, p)


def chain_cases(rng, p, n_mix, error_rate=0.25):
    """Every RED_OK (op, dtype) pair as a tile TENSOR_RED, an im2col TENSOR_RED and a BLOCK_RED
    (each with at least one RED request), ``n_mix`` random commands weighted towards reductions
    (tile/im2col reductions, stores, loads, prefetches, every block op, control ops; a share
    mutated into mostly rejected commands), and BLOCK_REDs with pairs outside RED_OK (rejected,
    rule 0x1C); shuffled."""
    cases = _cover(rng, p, lambda r, q: random_tile(r, q, op=CmdOp.TENSOR_RED, max_rows=8), 24)
    cases += _cover(rng, p, lambda r, q: random_im2col(r, q, op=CmdOp.TENSOR_RED, max_px=8,
                                                        max_pieces=24), 24)
    cases += _cover(rng, p, lambda r, q: random_block(r, q, op=CmdOp.BLOCK_RED, max_blocks=32),
                    32)
    for _ in range(n_mix):
        c = _mix_case(rng, p)
        if rng.random() < error_rate:
            c = mutate(c, rng, p)
        cases.append(c)
    bad_pairs = [(o, d) for o in range(8) for d in range(13) if (o, d) not in RED_OK]
    while len(cases) < 3 * len(RED_PAIRS) + n_mix + 4:
        c = random_block(rng, p, op=CmdOp.BLOCK_RED, max_blocks=8)
        if c.cmd.num_blocks == 0:           # a NOP: no rule checked
            continue
        o, d = rng.choice(bad_pairs)
        c = Case(TmaCmd(**{**vars(c.cmd), "red_op": o, "dtype": d}), 0, "bad pair")
        assert c.code(p), f"BLOCK_RED with ({o}, {d}) accepted"
        cases.append(c)
    rng.shuffle(cases)
    return cases


# memory and port timing of the two testcases (TopBench keyword arguments)
PROFILES = {
    "red_chain": dict(l2_latency=(1, 30), l2_order="random", l2_ready=0.75),
    "red_chain_stress": dict(ready=0.6, l2_latency=(1, 64), l2_order="random", l2_ready=0.5,
                             gaps=0.4, desc_latency=(1, 64), smem_latency=(1, 16)),
}


@cocotb.test()
async def red_chain(dut):
    """Random commands with every RED_OK pair (tile, im2col, block) through Tma -> TmaRedUnit ->
    a read/write-only memory with random latency 1..30, out-of-order responses and memory
    ready 0.75, against the golden model (TMA-F41..F44, I4, I5, I11, V13)."""
    await _chain(dut, "red_chain", 21)


@cocotb.test()
async def red_chain_stress(dut):
    """The same with memory latency 1..64, memory ready 0.5, ready 0.6 on every output,
    desc/smem latency up to 64/16 and command gaps 0.4."""
    await _chain(dut, "red_chain_stress", 22)


async def _chain(dut, profile, stream):
    p = top_params()
    rng = env.rng(stream)
    dut._log.info(f"seed {env.seed()}, profile {profile}: {PROFILES[profile]}")
    await start(dut)
    bench = TopBench(dut, p, rng, l2_model=ReadWriteMemory, req_port="tma_l2_req",
                     **PROFILES[profile])
    n_mix = int(os.environ.get("TMA_CHAIN_MIX", "100"))
    cases = chain_cases(rng, p, n_mix)
    await bench.run(cases)
    figures = await bench.check()
    mem = bench.l2
    golden = [r for c in bench.golden_cmds for r in c.requests]
    red = [r for r in golden if r.op >= L2Op.RED_ADD]
    g_lines = {r.line for r in golden if r.op in WRITE_PATH}
    # TMA-V13: the memory wrote exactly the golden model's WRITE/RED lines (each equal to the
    # golden line, TopBench.check); every other byte of global memory is untouched
    assert mem.written == g_lines, (f"lines written {len(mem.written)}, golden {len(g_lines)}; "
                                    f"extra {sorted(mem.written - g_lines)[:4]}, missing "
                                    f"{sorted(g_lines - mem.written)[:4]}")
    assert mem.counts["rmw"] == len(red), f"{mem.counts['rmw']} RMWs, golden REDs {len(red)}"
    assert mem.counts["requests"] == len(golden) + len(red)
    # coverage: every RED_OK pair reduced in memory, in tile, im2col and block commands
    by_kind = {k: set() for k in ("tile", "im2col", "block")}
    for c in bench.golden_cmds:
        if c.code or not c.requests or c.cmd.op not in (CmdOp.TENSOR_RED, CmdOp.BLOCK_RED):
            continue
        kind = ("block" if c.cmd.op == CmdOp.BLOCK_RED
                else "im2col" if c.cmd.mode == Mode.IM2COL else "tile")
        by_kind[kind] |= {(r.op - L2Op.RED_ADD, r.dtype) for r in c.requests}
    for kind, pairs in by_kind.items():
        assert pairs == set(RED_OK), f"{kind}: pairs not covered {sorted(set(RED_OK) - pairs)}"
    ops = Counter(CmdOp(c.cmd.op).name if c.cmd.op in CmdOp._value2member_map_ else "reserved"
                  for c in bench.cases)
    edges = mem.rmw_edges
    figures.update(
        red_commands=sum(1 for c in bench.golden_cmds if not c.code
                         and c.cmd.op in (CmdOp.TENSOR_RED, CmdOp.BLOCK_RED)),
        red_lines=len(red), rmw=mem.counts["rmw"], lines_written=len(mem.written),
        downstream=dict(requests=mem.counts["requests"], read=mem.counts["READ"],
                        write=mem.counts["WRITE"], prefetch=mem.counts["PREFETCH"]),
        rmw_read_to_write=dict(min=min(edges, default=None), max=max(edges, default=None),
                               mean=round(sum(edges) / len(edges), 2) if edges else None),
        pairs={k: len(v) for k, v in by_kind.items()}, ops=dict(ops), profile=profile,
        memory=dict(reordered=mem.stats["reordered"],
                    max_outstanding=mem.stats["max_outstanding"]))
    dut._log.info(f"figures {figures}")
    env.write_result(figures)
