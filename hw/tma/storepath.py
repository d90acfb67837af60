"""The TMA store path: pieces that read shared memory (spec tma.md §2.2 StorePath, §4.10; TMA-I7,
TMA-F39, F48, F49).

Two kinds of piece come in (``golden.tma.jobs.piece_fields``):

- WRITE and RED_* pieces (BLOCK_S2G, BLOCK_RED, TENSOR_STORE, TENSOR_RED): the ``nbytes``
  source bytes start at CTA-relative smem address ``dst`` (before swizzle) of CTA ``cta`` and go
  to line lanes ``[lane, lane + nbytes)``. They span one or two smem rows. The path reads them,
  puts each row back into dense order when the piece is swizzled (the chunks a load with the same
  descriptor would have moved: TMA-F32; the swizzle keeps bytes in their row), aligns them to
  their lanes and hands a tracker request (``hw.tma.tracker.track_fields``) with ``data`` (zero
  outside the piece) and ``be`` to the tracker.
- ``PIECE_S2S`` pieces (BLOCK_S2S): ``line`` is the source smem row, ``lane`` the first source
  byte in it (pieces are cut at source rows, so one read each). The row goes out unchanged as a
  writer record (``hw.tma.tracker.line_fields``), exactly like a READ response: the writer
  rotates lanes ``[lane, lane + nbytes)`` to ``dst``.

Consecutive pieces of one command walk smem upward, so a piece's first row is often the second
row of the piece before it. A read is then skipped: the path remembers the last row it asked for
(within the same command only, since anything may write smem between commands), and the
assembly stage keeps the last row it received. In steady state a row-misaligned block store costs
one read per 128-byte piece.

Pipeline: (1) issue: a piece is accepted into a pending FIFO while its first read (if any) is
loaded into the ``smem_rd_req`` output register; a second read follows in the next free cycle;
(2) assemble: the FIFO head waits for its responses (``smem_rd_resp``, in request order), the
two rows are merged byte by byte and rotated into lanes, and the result is loaded into the
output register of its kind. ``smem_rd_resp.ready`` is high only when a response can be used
in that cycle, so back-pressure on the outputs stalls the memory side and nothing is lost.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.common.fields import Fields
from golden.tma.formats import (BE_W, DATA_W, LINE, smem_rd_req_fields, smem_rd_resp_fields)
from golden.tma.jobs import PIECE_S2S, piece_fields
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const
from hw.common.regfifo import RegFifo
from hw.tma.lanes import LANE_W, gt_const, range_mask, rotate_left_bytes
from hw.tma.swizzle import RowSwizzle
from hw.tma.tracker import check_params, line_fields, track_fields
from hw.tma.validate import eqc

__all__ = ["TmaStorePath"]


class TmaStorePath(wiring.Component):
    """Shared-memory reads for WRITE/RED and BLOCK_S2S pieces (see the module docstring).

    Parameters
    ----------
    params : TmaParams, optional
        Uses ADDR_W and SMEM_AW.
    depth : int
        Pieces between issue and assembly (pending FIFO depth), 2..16; 4 covers a smem read
        latency of 2 at one piece per cycle.

    Members
    -------
    i : In(stream.Signature(piece layout))
        WRITE, RED_* and PIECE_S2S pieces, in order.
    smem_rd_req : Out(stream.Signature(smem_rd_req layout))
        TMA-I7 ``{row, cta}``; ``valid`` and the payload are a register.
    smem_rd_resp : In(stream.Signature(smem_rd_resp layout))
        TMA-I7 ``{data}``, in request order.
    track : Out(stream.Signature(track_fields))
        WRITE/RED requests with data and byte enables, for the tracker.
    line : Out(stream.Signature(line_fields))
        S2S source rows with their placement, for the writer.
    busy : Out(1)
        A piece or read is held inside.
    """

    def __init__(self, params=None, depth=4):
        p = self.p = check_params(self, params)
        if not isinstance(depth, int) or isinstance(depth, bool) or not 2 <= depth <= 16:
            raise ValueError(f"TmaStorePath: depth must be an integer in 2..16, got {depth!r}")
        self.depth = depth
        self.piece = piece_fields(p)
        self.entry = Fields(*self.piece.fields, ("reuse", 1), ("two", 1))
        super().__init__({
            "i": In(stream.Signature(struct_layout(self.piece))),
            "smem_rd_req": Out(stream.Signature(struct_layout(smem_rd_req_fields(p)))),
            "smem_rd_resp": In(stream.Signature(struct_layout(smem_rd_resp_fields()))),
            "track": Out(stream.Signature(struct_layout(track_fields(p)))),
            "line": Out(stream.Signature(struct_layout(line_fields(p)))),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        rw = p.SMEM_AW - 7
        layout = struct_layout(self.entry)
        m.submodules.pend = pend = RegFifo(layout.size, self.depth)
        pend_room = ~eq_const(pend.level, self.depth)

        # ---------------------------------------------------------------- issue
        pc = self.i.payload
        s2s = eqc(pc.op, PIECE_S2S)
        r0 = Signal(rw)
        m.d.comb += r0.eq(Mux(s2s, pc.line[:rw], pc.dst[7:]))
        end = Signal(LANE_W + 2)
        m.d.comb += end.eq(pc.dst[:LANE_W] + pc.nbytes)
        two = ~s2s & gt_const(end, LINE)
        last_v = Signal()                  # last_row/last_seq hold the last read asked for
        last_row = Signal(rw)
        last_seq = Signal(len(pc.seq))
        reuse = Signal()
        m.d.comb += reuse.eq(~s2s & last_v & (last_seq == pc.seq) & (last_row == r0))
        second = Signal()                  # the accepted piece's second row is still to read
        second_row = Signal(rw)
        second_cta = Signal(4)

        req = self.smem_rd_req
        can_load = ~req.valid | req.ready
        with m.If(req.ready):
            m.d.sync += req.valid.eq(0)
        no_read = reuse & ~two
        accept = self.i.ready
        m.d.comb += [
            accept.eq(self.i.valid & ~second & pend_room & (no_read | can_load)),
            pend.w_en.eq(accept),
        ]
        entry = Signal(layout)
        m.d.comb += [entry.as_value()[:len(pc.as_value())].eq(pc.as_value()),
                     entry.reuse.eq(reuse), entry.two.eq(two), pend.w_data.eq(entry)]
        next_row = (r0 + 1)[:rw]
        with m.If(second & can_load):
            m.d.sync += [req.valid.eq(1), req.payload.row.eq(second_row),
                         req.payload.cta.eq(second_cta), second.eq(0), last_row.eq(second_row)]
        with m.Elif(accept & ~no_read):
            m.d.sync += [req.valid.eq(1), req.payload.row.eq(Mux(reuse, next_row, r0)),
                         req.payload.cta.eq(pc.cta), last_v.eq(1), last_seq.eq(pc.seq),
                         last_row.eq(Mux(reuse, next_row, r0))]
            with m.If(~reuse & two):
                m.d.sync += [second.eq(1), second_row.eq(next_row), second_cta.eq(pc.cta)]
        with m.If(~self.i.valid & ~pend.r_rdy & ~second):
            # idle: forget the last row (seq numbers wrap, and smem may change meanwhile)
            m.d.sync += last_v.eq(0)

        # ---------------------------------------------------------------- assemble
        h = layout(pend.r_data)
        resp = self.smem_rd_resp
        prev = Signal(DATA_W)              # the last row received
        have0 = Signal()                   # the head's first row (not reused) is in ``prev``
        h_s2s = eqc(h.op, PIECE_S2S)
        need_resp = ~(h.reuse & ~h.two)
        final = ~(~h.reuse & h.two & ~have0)
        trk, line = self.track, self.line
        out_free = Mux(h_s2s, ~line.valid | line.ready, ~trk.valid | trk.ready)
        emit = Signal()
        m.d.comb += [
            emit.eq(pend.r_rdy & final & out_free & (resp.valid | ~need_resp)),
            resp.ready.eq(pend.r_rdy & need_resp & (out_free | ~final)),
            pend.r_en.eq(emit),
        ]
        # the response row in dense order: it is the head's first row unless that one was
        # reused or has arrived already
        m.submodules.unswizzle = unswz = RowSwizzle(p.SWZ_TABLE, unswizzle=True, with_be=False)
        rdata = unswz.o_data
        m.d.comb += [unswz.data.eq(resp.payload.data), unswz.mode.eq(h.swizzle),
                     unswz.row.eq((h.dst[7:10] + (h.reuse | have0))[:3])]
        with m.If(resp.valid & resp.ready):
            m.d.sync += prev.eq(rdata)
            with m.If(~final):
                m.d.sync += have0.eq(1)
        with m.If(emit):
            m.d.sync += have0.eq(0)

        # a WRITE piece's bytes: row0[off..] then row1[..], rotated so that byte off lands on
        # ``lane``: pre[k] = row0[k] for k >= off, row1[k] below; out = pre rotated by lane - off
        off = h.dst[:LANE_W]
        row0 = Mux(h.reuse | have0, prev, rdata)
        pre = Signal(DATA_W)
        m.d.comb += [pre.word_select(k, 8).eq(Mux(gt_const(off, k), rdata.word_select(k, 8),
                                                  row0.word_select(k, 8)))
                     for k in range(BE_W)]
        rotated = rotate_left_bytes(m, pre, (h.lane - off)[:LANE_W], "st_rot")
        hi = Signal(LANE_W + 2)
        m.d.comb += hi.eq(h.lane + h.nbytes)
        be = Signal(BE_W)
        m.d.comb += [be[j].eq(v) for j, v in range_mask(h.lane, hi)]
        be_bytes = Cat(*[be[j].replicate(8) for j in range(BE_W)])

        with m.If(trk.ready):
            m.d.sync += trk.valid.eq(0)
        with m.If(line.ready):
            m.d.sync += line.valid.eq(0)
        t, ln = trk.payload, line.payload
        with m.If(emit & ~h_s2s):
            m.d.sync += [trk.valid.eq(1), t.line.eq(h.line), t.sectors.eq(h.sectors),
                         t.op.eq(h.op), t.dtype.eq(h.dtype), t.data.eq(rotated & be_bytes),
                         t.be.eq(be), t.seq.eq(h.seq), t.dst.eq(h.dst), t.lane.eq(h.lane),
                         t.nbytes.eq(h.nbytes), t.swizzle.eq(h.swizzle), t.mask.eq(h.mask),
                         t.mbar.eq(h.mbar)]
        with m.If(emit & h_s2s):
            m.d.sync += [line.valid.eq(1), ln.seq.eq(h.seq), ln.dst.eq(h.dst), ln.lane.eq(h.lane),
                         ln.nbytes.eq(h.nbytes), ln.swizzle.eq(h.swizzle), ln.mask.eq(h.mask),
                         ln.mbar.eq(h.mbar), ln.data.eq(resp.payload.data)]

        m.d.comb += self.busy.eq(second | req.valid | pend.r_rdy | trk.valid | line.valid)
        return m
