"""The TMA transaction-level golden model (spec tma.md §2.2, §4; part 1 scope).

:class:`TmaModel` holds the state a TMA unit and its surroundings carry from one command to the
next: global memory, the 16 CTAs' shared memory, the descriptor cache, the tracker and the
completion bookkeeping. :meth:`TmaModel.run` takes commands in acceptance order and, for each,
follows the module chain of §2.2:

``ReqQueue`` (FIFO, TMA-F1) -> descriptor cache lookup of the head and look-ahead of the entry behind
it (§4.12) -> ``Setup``: decode (§4.2) and validate (§4.4); a rejected command emits ``err`` and
nothing else -> ``ReqGen``: rows and 128-byte line pieces in traversal order (§4.5, §4.7) and fill
jobs -> ``Tracker``: a free tag per tracked request; responses come back in the order chosen by
``response_order`` and are matched by tag -> ``SmemWriter``: the piece's bytes of the returned
line, placed at ``swz(smem_addr + dense)`` in 128-byte beats with byte enables (§4.8), OOB fill
beats, one ``mbar`` update per beat -> ``Completion``: ``done`` in acceptance order.

Everything observable is recorded, per command (:class:`CmdResult`) and as one chronological event
list: ``("desc_rd", DescRead)``, ``("err", id, code)``, ``("l2_req", L2Req)``, ``("l2_resp", tag)``,
``("smem_rd", row, cta)``, ``("smem_wr", SmemBeat)``, ``("mbar", MbarUpdate)``, ``("done", id)``.

Normative (bit-exact, compared with the RTL): the smem and global images, the L2 request list
(order, line, sectors, op, dtype, data, be), the tx total per command and destination CTA, the
``err`` codes, the order of ``done`` and the ``desc_rd`` count (§4.12). Informative (any partition
obeying TMA-F30/F33/F35 is legal): the tags, the response order, the beat partition (one beat per
smem row a piece touches, one fill beat per smem row holding OOB bytes) and the ``mbar`` partition
(one update per beat).

It executes every op: TENSOR_LOAD (tile and im2col, multicast), TENSOR_STORE / TENSOR_RED /
TENSOR_PREFETCH (``golden.tma.store``), BLOCK_G2S / S2G / S2S / RED / PREFETCH, block NOPs,
WAIT_ALL and DESC_INVAL. The memory performs WRITE and RED requests when they are accepted, in
acceptance order (TMA-I4; RED through ``red_line``, what ``TmaRedUnit`` does).
"""

import random
from collections import Counter
from dataclasses import dataclass, field, replace

import numpy as np

from golden.tma.completion import Completion, CompletionError
from golden.tma.copy import block_bytes, g2s_pieces, s2g_requests, s2s_plan
from golden.tma.desccache import DescCache
from golden.tma.encode import decode_desc
from golden.tma.formats import (DESC_BYTES, LINE, N_CTA, SECTOR, TENSOR_OPS, CmdOp, L2Op,
                                MbarUpdate, Swizzle, TmaCmd)
from golden.tma.geometry import geometry
from golden.tma.l2req import read_requests, row_pieces
from golden.tma.memory import GlobalMemory, SharedMemory
from golden.tma.params import TmaParams
from golden.tma.reqqueue import ReqQueue
from golden.tma.store import (apply_to_memory, block_prefetch_requests, block_red_requests,
                              prefetch_requests, store_requests)
from golden.tma.swizzle import range_beats, scatter_beats
from golden.tma.tile import fill_bytes, rows
from golden.tma.tracker import Placement, Tracker
from golden.tma.validate import is_cache_user, precheck, validate

__all__ = ["TmaModel", "CmdResult", "RunResult", "run_command", "RESPONSE_ORDERS"]

RESPONSE_ORDERS = ("fifo", "lifo", "random")


@dataclass
class CmdResult:
    """What one command did. ``code`` is its error code (0: accepted); ``desc_reads`` the
    ``desc_rd`` reads of its descriptor (by its setup lookup, or a look-ahead made while the command
    before it was in setup); ``requests`` are its
    ``l2_req`` transfers in issue order (with golden tags), ``responses`` the tags in response
    order, ``beats`` / ``mbar`` / ``smem_reads`` its smem traffic, ``tx`` the bytes credited per
    destination CTA, ``done`` whether it emitted ``done``."""
    seq: int
    cmd: TmaCmd
    code: int = 0
    desc: object = None
    cache_hit: object = None
    desc_reads: list = field(default_factory=list)
    requests: list = field(default_factory=list)
    responses: list = field(default_factory=list)
    beats: list = field(default_factory=list)
    mbar: list = field(default_factory=list)
    smem_reads: list = field(default_factory=list)
    tx: Counter = field(default_factory=Counter)
    box_bytes: int = 0
    rows: list = None
    done: bool = False

    @property
    def rejected(self):
        return self.code != 0

    def request_keys(self):
        """The TMA-V6 comparison keys of the requests (all port fields except the tag)."""
        return [r.key() for r in self.requests]

    @property
    def traffic(self):
        """Number of l2_req, smem_rd, smem_wr and mbar transfers (0 for a rejected command)."""
        return len(self.requests) + len(self.smem_reads) + len(self.beats) + len(self.mbar)


@dataclass
class RunResult:
    """One :meth:`TmaModel.run`: per-command results in acceptance order, the ``err`` and ``done``
    streams, the ``desc_rd`` reads and the chronological event list of this run (the model keeps
    the cumulative ones), and the counters at its end."""
    commands: list
    errs: list
    done: list
    desc_reads: list
    events: list
    outstanding: int
    idle: bool
    max_outstanding: int


class TmaModel:
    """Golden TMA unit with its memories.

    Parameters
    ----------
    params : TmaParams
        ADDR_W, SMEM_AW, DC_ENTRIES, SWZ_TABLE, NAN_PATTERN (TMA-C11), plus Q_DEPTH, TRK_ENTRIES,
        ID_W and NB_W for the queue, the tracker and the command field widths.
    gmem : GlobalMemory, optional
    smem : SharedMemory, optional
    response_order : "fifo" | "lifo" | "random"
        Which outstanding request the memory answers next when the tracker is full or generation
        has ended; "random" also answers at random while generation runs.
    seed : int
        Seeds the random response order and the junk bytes returned in unrequested sectors
        (TMA-V11); neither may change any normative result.
    """

    def __init__(self, params=None, gmem=None, smem=None, response_order="fifo", seed=0):
        self.p = params or TmaParams()
        self.gmem = gmem if gmem is not None else GlobalMemory(self.p.ADDR_W)
        self.smem = smem if smem is not None else SharedMemory(self.p.SMEM_AW)
        if self.gmem.addr_bits != self.p.ADDR_W or self.smem.smem_aw != self.p.SMEM_AW:
            raise ValueError("memory address widths must match ADDR_W and SMEM_AW")
        if response_order not in RESPONSE_ORDERS:
            raise ValueError(f"response_order must be one of {RESPONSE_ORDERS}")
        self.response_order = response_order
        self.rng = random.Random(seed)
        self.events = []
        self.cache = DescCache(self.p.DC_ENTRIES, lambda a: self.gmem.read(a, DESC_BYTES))
        self.tracker = Tracker(self.p.TRK_ENTRIES)
        self.completion = Completion(self.events)
        self.queue = ReqQueue(self.p.Q_DEPTH)
        self.results = []
        self._inflight = {}
        self._reads_for = {}            # seq -> desc reads made for that command's descriptor

    # -- command stream ---------------------------------------------------------------------
    def run(self, cmds):
        """Accept ``cmds`` in order (as fast as the FIFO allows) and process them all."""
        pending = iter(cmds)
        first = len(self.results)
        marks = (len(self.completion.errs), len(self.completion.done), len(self.cache.reads),
                 len(self.events))
        exhausted = False

        def feed():
            nonlocal exhausted
            while not exhausted and self.queue.ready:
                cmd = next(pending, None)
                if cmd is None:
                    exhausted = True
                    return
                cmd.check(self.p)
                seq = self.queue.accepted
                self.queue.push((seq, cmd))
                self.completion.accept(seq, cmd.id, cmd.op)

        feed()
        while len(self.queue):
            seq, cmd = self.queue.pop()
            feed()
            self.results.append(self._process(seq, cmd))
        return RunResult(commands=self.results[first:], errs=self.completion.errs[marks[0]:],
                         done=self.completion.done[marks[1]:], desc_reads=self.cache.reads[marks[2]:],
                         events=self.events[marks[3]:], outstanding=self.completion.outstanding,
                         idle=self.idle, max_outstanding=self.tracker.max_outstanding)

    @property
    def idle(self):
        """TMA-F38: nothing queued, in flight or waiting to retire."""
        return not len(self.queue) and self.tracker.outstanding == 0 and self.completion.idle

    # -- setup ------------------------------------------------------------------------------
    def _log_reads(self, before):
        for r in self.cache.reads[before:]:
            self.events.append(("desc_rd", r))
            self._reads_for.setdefault(r.seq, []).append(r)

    def _process(self, seq, cmd):
        res = CmdResult(seq, cmd)
        res.desc_reads = self._reads_for.setdefault(seq, [])     # look-ahead reads land here too
        code = precheck(cmd)
        d = None
        if code == 0 and cmd.op in TENSOR_OPS:
            before = len(self.cache.reads)
            data, res.cache_hit = self.cache.lookup(cmd.desc_addr, seq)
            self._log_reads(before)
            d = res.desc = decode_desc(data)
        nxt = self.queue.peek(0)
        if cmd.op != CmdOp.DESC_INVAL and nxt is not None and is_cache_user(nxt[1]):
            before = len(self.cache.reads)
            held = cmd.desc_addr if is_cache_user(cmd) else None
            self.cache.lookahead(nxt[1].desc_addr, held, nxt[0])
            self._log_reads(before)
        if code == 0:
            code = validate(cmd, d, self.p)
        res.code = int(code)
        if code:
            self.completion.reject(seq, code)
            return res
        op = cmd.op
        if op == CmdOp.TENSOR_LOAD:
            self._tensor_load(res, cmd, d)
        elif op == CmdOp.DESC_INVAL:
            self.cache.invalidate()
        elif op == CmdOp.WAIT_ALL or (op in (CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2G, CmdOp.BLOCK_S2S,
                                             CmdOp.BLOCK_RED, CmdOp.BLOCK_PREFETCH)
                                      and cmd.num_blocks == 0):
            pass                                       # WAIT_ALL retires in order; NOP (TMA-F50)
        elif op == CmdOp.BLOCK_G2S:
            self._block_g2s(res, cmd)
        elif op == CmdOp.BLOCK_S2G:
            self._block_s2g(res, cmd)
        elif op == CmdOp.BLOCK_S2S:
            self._block_s2s(res, cmd)
        elif op in (CmdOp.TENSOR_STORE, CmdOp.TENSOR_RED):
            self._tensor_store(res, cmd, d)
        elif op == CmdOp.TENSOR_PREFETCH:
            res.rows = rows(d, cmd, self.p.ADDR_W)
            self._prefetch(res, prefetch_requests(res.rows, self.p.ADDR_W))
        elif op == CmdOp.BLOCK_RED:
            res.box_bytes = block_bytes(cmd)
            self._tracked_writes(res, *block_red_requests(cmd, self.smem, self.p.ADDR_W))
        elif op == CmdOp.BLOCK_PREFETCH:
            self._prefetch(res, block_prefetch_requests(cmd))
        else:                                          # validation rejects reserved op codes
            raise AssertionError(f"op {op} passed validation")
        self.completion.finish(seq)          # WAIT_ALL: retires once everything before it has
        res.done = True
        return res

    # -- tracked requests and responses ------------------------------------------------------
    def _issue(self, res, reqs, placements):
        for req, pl in zip(reqs, placements):
            while self.tracker.full:
                self._respond(res)
            tag = self.tracker.issue(pl)
            req = _with_tag(req, tag)
            self._inflight[tag] = req
            res.requests.append(req)
            self.events.append(("l2_req", req))
            self.completion.request(True)
            apply_to_memory(self.gmem, req)            # WRITE / RED, in acceptance order
            if self.response_order == "random" and self.rng.random() < 0.5:
                self._respond(res)

    def _drain(self, res):
        while self.tracker.outstanding:
            self._respond(res)

    def _respond(self, res):
        tags = self.tracker.outstanding_tags()
        if self.response_order == "fifo":
            tag = tags[0]
        elif self.response_order == "lifo":
            tag = tags[-1]
        else:
            tag = self.rng.choice(tags)
        req = self._inflight.pop(tag)
        pl = self.tracker.respond(tag)
        self.completion.response()
        res.responses.append(tag)
        self.events.append(("l2_resp", tag))
        if pl.kind == L2Op.READ:
            line = self._line_data(req)
            piece = line[pl.lane:pl.lane + pl.nbytes]
            for beat in range_beats(pl.smem_addr + pl.dense, piece, pl.swizzle, pl.mask,
                                    self.p.SWZ_TABLE):
                self._write_beat(res, beat, pl.mbar_addr)

    def _line_data(self, req):
        """The ``l2_resp.data`` of a READ: the line from global memory, with random bytes in the
        sectors not requested (TMA-I5, V11)."""
        data = self.gmem.read(req.line * LINE, LINE)
        for s in range(LINE // SECTOR):
            if not req.sectors >> s & 1:
                data[SECTOR * s:SECTOR * (s + 1)] = [self.rng.randrange(256) for _ in range(SECTOR)]
        return data.tobytes()

    # -- smem writer --------------------------------------------------------------------------
    def _write_beat(self, res, beat, mbar_addr):
        self.smem.apply_beat(beat)
        res.beats.append(beat)
        self.events.append(("smem_wr", beat))
        self.completion.beat(beat.mask, beat.nbytes, mbar_addr)
        update = MbarUpdate(mbar_addr, beat.nbytes, beat.mask)
        res.mbar.append(update)
        self.events.append(("mbar", update))
        self.completion.mbar(update)
        for cta in range(N_CTA):
            if beat.mask >> cta & 1:
                res.tx[cta] += beat.nbytes

    def _check_tx(self, res, total):
        for cta in range(N_CTA):
            if res.cmd.dest_mask >> cta & 1 and res.tx[cta] != total:
                raise CompletionError(f"CTA {cta}: tx {res.tx[cta]} != {total} bytes (TMA-F35)")

    # -- operations ---------------------------------------------------------------------------
    def _tensor_load(self, res, cmd, d):
        g = geometry(d)
        res.box_bytes = g.box_bytes
        res.rows = rows(d, cmd, self.p.ADDR_W)
        ps = row_pieces(res.rows, self.p.ADDR_W)
        mask = cmd.dest_mask
        placements = [Placement(res.seq, L2Op.READ, p.dense, p.lane, p.nbytes, cmd.smem_addr,
                                d.swizzle, mask, cmd.mbar_addr) for p in ps]
        self._issue(res, read_requests(ps), placements)
        # fill jobs: every OOB byte of the box, one beat per smem row that holds any (TMA-F22/F23)
        spans = [rng for r in res.rows for rng in r.oob_ranges()]
        if spans:
            edges = np.zeros(g.box_bytes + 1, dtype=np.int32)
            np.add.at(edges, [lo for lo, _ in spans], 1)
            np.add.at(edges, [hi for _, hi in spans], -1)
            pos = np.flatnonzero(np.cumsum(edges[:-1]) > 0)
            pattern = np.frombuffer(fill_bytes(d, self.p.NAN_PATTERN), dtype=np.uint8)
            for beat in scatter_beats(cmd.smem_addr + pos, pattern[pos % g.esize], d.swizzle,
                                      mask, self.p.SWZ_TABLE):
                self._write_beat(res, beat, cmd.mbar_addr)
        self._drain(res)
        self._check_tx(res, g.box_bytes)

    def _block_g2s(self, res, cmd):
        res.box_bytes = block_bytes(cmd)
        ps = g2s_pieces(cmd, self.p.ADDR_W)
        placements = [Placement(res.seq, L2Op.READ, p.dense, p.lane, p.nbytes, cmd.smem_addr,
                                Swizzle.NONE, cmd.dest_mask, cmd.mbar_addr) for p in ps]
        self._issue(res, read_requests(ps), placements)
        self._drain(res)
        self._check_tx(res, res.box_bytes)

    def _block_s2g(self, res, cmd):
        res.box_bytes = block_bytes(cmd)
        self._tracked_writes(res, *s2g_requests(cmd, self.smem, self.p.ADDR_W))

    def _tensor_store(self, res, cmd, d):
        res.box_bytes = geometry(d).box_bytes
        res.rows = rows(d, cmd, self.p.ADDR_W)
        self._tracked_writes(res, *store_requests(cmd, d, res.rows, self.smem,
                                                  self.p.SWZ_TABLE, self.p.ADDR_W))

    def _tracked_writes(self, res, reqs, reads):
        """WRITE / RED requests after their smem reads; ``done`` once every one is
        acknowledged (TMA-F36)."""
        self._smem_reads(res, reads)
        self._issue(res, reqs, [Placement(res.seq, r.op) for r in reqs])
        self._drain(res)

    def _prefetch(self, res, reqs):
        """PREFETCH requests: no tag (0), no response, no tracker or smem traffic; ``done`` once
        they are issued (TMA-F36, §4.11)."""
        for req in reqs:
            res.requests.append(req)
            self.events.append(("l2_req", req))
            self.completion.request(False)

    def _block_s2s(self, res, cmd):
        res.box_bytes = block_bytes(cmd)
        beats, reads = s2s_plan(cmd, self.smem)
        self._smem_reads(res, reads)
        for beat in beats:
            self._write_beat(res, beat, cmd.mbar_addr)
        self._check_tx(res, res.box_bytes)

    def _smem_reads(self, res, reads):
        for row, cta in reads:
            res.smem_reads.append((row, cta))
            self.events.append(("smem_rd", row, cta))


def _with_tag(req, tag):
    return replace(req, tag=tag)


def run_command(cmd, gmem=None, smem=None, params=None, **kw):
    """§4 ``run_command``: one command on a fresh unit (cold descriptor cache) over the given
    memories, which are updated in place. Returns its :class:`CmdResult`; ``gmem`` and ``smem``
    are attached to it as the resulting images."""
    model = TmaModel(params, gmem, smem, **kw)
    res = model.run([cmd]).commands[0]
    res.gmem, res.smem = model.gmem, model.smem
    return res
