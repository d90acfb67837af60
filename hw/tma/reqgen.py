"""TMA request generator: tile mode, im2col mode and block ops (spec tma.md §2.2 ReqGen, §4.5,
§4.6, §4.7, §4.10; TMA-F12..F26, F39..F41, F45..F50)."""

from amaranth import C, Cat, Module, Mux, Signal, signed
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import L2Op
from golden.tma.jobs import (OUTER, PIECE_S2S, POS_W, PX_W, SPATIAL, fill_fields, fin_fields,
                             job_fields, piece_fields, span_w)
from golden.tma.params import RANGES, TmaParams
from hw.common.layout import struct_layout
from hw.common.params import check_int
from hw.tma.completion import open_fields
from hw.tma.validate import eqc, le, lt

__all__ = ["TmaReqGen"]


class TmaReqGen(wiring.Component):
    """Walks the rows of a job and emits one request piece per cycle.

    A job (``golden.tma.jobs.job_fields``) stays on ``job`` while it is walked: ReqGen reads its
    fields there and takes it (``job.ready``) in the cycle it emits the job's ``fin``, so Setup's
    output register is the job register and Setup works on the next commands meanwhile (TMA-F11).

    Rows are visited in traversal order (TMA-F12, F19, F26) by one odometer of four levels shared
    by both modes: tile levels are dimensions 1..4; im2col levels are the spatial dimensions W,
    (H, (D)) and then the image index n (a row is one pixel of ``range_c`` channels, TMA-F16,
    F18, F21). Per level: a visit index (tile), the exact 34-bit signed coordinate (TMA-F15; tile
    ``coord + i * ts``, im2col the pixel coordinate ``pos + off`` and n) and the address of the
    current row with the levels below at their restart coordinate, modulo 2^ADDR_W. A level is
    at its end when its index is the last (tile) or its pixel coordinate lies above ``wrap_at``
    (im2col: the next base position would pass hi_s; the n level never ends). Advancing one row
    is one adder on the address (the lowest level not at its end gets ``+ step``, the levels
    below restart at that address, at their start coordinate in tile mode and at ``lo_s +
    off_s`` in im2col mode, TMA-F17, F19, F20) and one small adder per coordinate, so a row is
    consumed every cycle whatever its width; an im2col walk ends after ``range_ndhw`` pixels (a
    pixel counter). A row is in bounds when every level coordinate lies in ``[0, size)`` and
    dimension 0 (the channels) has an in-bounds span (precomputed by Setup); its span ``[base,
    base + span_bytes)`` is cut only at 128-byte lines (TMA-F24): the first piece is emitted in
    the cycle the row is consumed, the rest from a split register one per cycle. ``sectors`` are
    the 32-byte sectors a piece intersects (TMA-F25), 0xF for PREFETCH, where a piece on the same
    line as the command's previous one is dropped (TMA-F45). OOB rows and row ends produce no
    piece (TMA-F23).
    Loads, stores, reductions and prefetches of either mode share these pieces; only their op
    differs (TMA-F39..F41).

    A TENSOR_LOAD's OOB bytes become ``fill`` jobs (TMA-F22): consecutive OOB dense bytes, across
    rows, are merged into one maximal run, emitted when in-bounds bytes or the end of the job
    break it; a wholly OOB box gives a single fill job and no piece. Block ops are a single row
    (``gaddr``, 16 * num_blocks bytes) split the same way (TMA-F47, F48); BLOCK_S2S is split at
    128-byte source smem rows into ``PIECE_S2S`` pieces (TMA-F49); NOPs and control ops produce
    only ``fin`` (TMA-F50). Each job ends with one ``fin`` record (tracked pieces, barrier bytes).

    A job is opened before any of its output: ``open`` {seq, id} (the completion unit's slot,
    ``hw.tma.completion``) handshakes in the job's first cycle or earlier, and nothing of the job
    is emitted while ``open.ready`` is low (the completion unit is full). ``open.valid`` is the
    job's valid while it is not opened yet, so it never waits on ``open.ready``.

    Timing: a job valid in cycle t whose first row is in bounds has its first piece valid in cycle
    t + 1 (piece output register). Rows of n pieces take n cycles, OOB rows one cycle; a job ends
    two cycles after its last piece (one when the last row is consumed with nothing to split),
    and the next job starts the cycle after that. Back-pressure on ``piece``, ``fill`` or ``fin``
    stalls generation without loss; no output valid depends on a ``ready``.

    Parameters
    ----------
    addr_w : int
        ADDR_W, 40..64 (TMA-C1).
    smem_aw : int
        SMEM_AW, 11..24 (TMA-C2).
    nb_w : int
        NB_W, 1..28 (TMA-C7).
    id_w : int
        ID_W, 1..16 (TMA-C3).

    Members
    -------
    job : In(stream.Signature(job layout))
        Jobs from Setup.
    open : Out(stream.Signature(open layout))
        One {seq, id} per job, before its first piece, fill or fin.
    piece : Out(stream.Signature(piece layout))
        Request pieces in traversal order (``golden.tma.jobs.piece_fields``).
    fill : Out(stream.Signature(fill layout))
        Fill jobs of TENSOR_LOAD commands (``golden.tma.jobs.fill_fields``).
    fin : Out(stream.Signature(fin layout))
        One record per job after its last piece and fill (``golden.tma.jobs.fin_fields``).
    """

    def __init__(self, addr_w=64, smem_aw=18, nb_w=20, id_w=8):
        check_int(self, "addr_w", addr_w, *RANGES["ADDR_W"])
        check_int(self, "smem_aw", smem_aw, *RANGES["SMEM_AW"])
        check_int(self, "nb_w", nb_w, *RANGES["NB_W"])
        check_int(self, "id_w", id_w, *RANGES["ID_W"])
        self.p = TmaParams(ADDR_W=addr_w, SMEM_AW=smem_aw, NB_W=nb_w, ID_W=id_w)
        self.piece_layout = struct_layout(piece_fields(self.p))
        super().__init__({
            "job": In(stream.Signature(struct_layout(job_fields(self.p)))),
            "open": Out(stream.Signature(struct_layout(open_fields(self.p)))),
            "piece": Out(stream.Signature(self.piece_layout)),
            "fill": Out(stream.Signature(struct_layout(fill_fields(self.p)))),
            "fin": Out(stream.Signature(struct_layout(fin_fields(self.p)))),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        aw, sw = p.ADDR_W, p.SMEM_AW
        spw = span_w(p)
        j = self.job.payload

        # ---------------------------------------------------------------- state
        run = Signal()                 # the job's first row has entered the odometer
        rows_left = Signal()           # the odometer holds a row not yet consumed
        idx = [Signal(8, name=f"i{k + 1}") for k in range(OUTER)]
        crd = [Signal(signed(POS_W), name=f"c{k + 1}") for k in range(OUTER)]
        px = Signal(PX_W)              # im2col pixel index of the current row
        adr = [Signal(aw, name=f"a{k + 1}") for k in range(OUTER)]
        rd = Signal(sw)                # dense offset of the current row (mod 2^SMEM_AW)
        cur_v = Signal()               # split register: rest of a row's span
        cur_addr = Signal(aw)
        cur_rem = Signal(spw)
        cur_dst = Signal(sw)
        pf_v = Signal()                # pending fill run
        pf_dst = Signal(sw)
        pf_n = Signal(sw + 1)
        pl_v = Signal()                # line of the previous piece (prefetch dedup)
        pl_line = Signal(aw - 7)
        tracked = Signal(sw + 1)

        # ---------------------------------------------------------------- open
        opened = Signal()              # the job on ``job`` has handshaken its ``open``
        m.d.comb += [self.open.valid.eq(self.job.valid & ~opened),
                     self.open.payload.seq.eq(j.seq), self.open.payload.id.eq(j.id)]
        jv = Signal()                  # the job may emit this cycle
        m.d.comb += jv.eq(self.job.valid & (opened | self.open.ready))

        # ---------------------------------------------------------------- current row (view)
        walk = j.gen
        i2c = j.mode                                           # im2col (tensor jobs only)
        first = jv & walk & ~run
        start_a = [j.base] + [j.base_lvl[k] for k in range(OUTER - 1)]
        vi = [Mux(first, C(0, 8), idx[k]) for k in range(OUTER)]
        vc = [Mux(first, j.coord[k], crd[k]) for k in range(OUTER)]
        va = [Mux(first, start_a[k], adr[k]) for k in range(OUTER)]
        vrd = Mux(first, C(0, sw), rd)
        vpx = Mux(first, C(0, PX_W), px)
        view_valid = first | (run & rows_left)
        # level ends: tile, the last visit; im2col, a spatial level whose next base position
        # passes hi_s (pixel coordinate above wrap_at), never the n level, always the unused ones
        at_last = []
        for k in range(OUTER):
            end = Signal(name=f"end{k + 1}")
            if k < SPATIAL:
                i2c_end = Mux(lt(k + 2, j.rank), lt(j.wrap_at[k], vc[k]), ~eqc(j.rank, k + 2))
            else:
                i2c_end = ~eqc(j.rank, k + 2)
            m.d.comb += end.eq(Mux(i2c, i2c_end, vi[k] == j.last_i[k]))
            at_last.append(end)
        row_last = Mux(i2c, vpx == j.last_px, Cat(*at_last).all())
        row_ib = Signal()
        m.d.comb += row_ib.eq(Cat(*(~vc[k][-1] & lt(vc[k], j.size[k])
                                    for k in range(OUTER))).all() & j.span_bytes.any())
        # odometer step: the lowest level not at its end advances
        inc = [~at_last[k] & Cat(*at_last[:k], C(1, 1)).all() for k in range(OUTER)]
        sel_a, sel_step = C(0, aw), C(0, aw)
        for k in reversed(range(OUTER)):
            sel_a = Mux(inc[k], va[k], sel_a)
            sel_step = Mux(inc[k], j.step[k], sel_step)
        new_a = (sel_a + sel_step)[:aw]
        restart = [Mux(i2c, j.restart[k], j.coord[k]) if k < SPATIAL else j.coord[k]
                   for k in range(OUTER)]

        # ---------------------------------------------------------------- piece computation
        p_addr = Mux(cur_v, cur_addr, va[0])
        p_rem = Mux(cur_v, cur_rem, j.span_bytes)
        p_dst = Mux(cur_v, cur_dst, (j.dst0 + vrd)[:sw])
        lane = p_addr[:7]
        room = (C(128, 8) - lane)[:8]
        fits = le(p_rem, room)
        nbytes = Mux(fits, p_rem[:8], room)
        end = (lane + nbytes)[:8]
        sectors = Cat(*(lt(lane, 32 * (s + 1)) & lt(32 * s, end) for s in range(4)))
        line = p_addr[7:]
        prefetch = eqc(j.l2op, L2Op.PREFETCH)
        is_tracked = ~prefetch & ~eqc(j.l2op, PIECE_S2S)
        pc = ~self.piece.valid | self.piece.ready
        piece = Signal(self.piece_layout)
        m.d.comb += [
            piece.seq.eq(j.seq), piece.op.eq(j.l2op), piece.dst.eq(p_dst), piece.lane.eq(lane),
            piece.nbytes.eq(nbytes), piece.swizzle.eq(j.swizzle), piece.mask.eq(j.mask),
            piece.mbar.eq(j.mbar), piece.line.eq(line),
            piece.sectors.eq(Mux(prefetch, 0xF, sectors)), piece.dtype.eq(j.dtype),
            piece.cta.eq(j.cta),
        ]

        # ---------------------------------------------------------------- control
        fc = ~self.fill.valid | self.fill.ready
        nc = ~self.fin.valid | self.fin.ready
        has_left = j.span_off.any()
        flush = row_ib & j.fill & (pf_v | has_left)
        do_cur = cur_v & pc
        do_row = Signal()
        m.d.comb += do_row.eq(~cur_v & view_valid & Mux(row_ib, pc & (fc | ~flush), 1))
        emit = do_cur | (do_row & row_ib)
        drop = prefetch & pl_v & (line == pl_line)
        tail_phase = jv & run & ~rows_left & ~cur_v
        fin_go = jv & nc & Mux(walk, tail_phase & ~pf_v, 1)
        m.d.comb += self.job.ready.eq(fin_go)
        with m.If(fin_go):
            m.d.sync += opened.eq(0)
        with m.Elif(self.open.valid & self.open.ready):
            m.d.sync += opened.eq(1)

        # piece output register
        with m.If(self.piece.ready):
            m.d.sync += self.piece.valid.eq(0)
        with m.If(emit):
            m.d.sync += pl_v.eq(1)
            m.d.sync += pl_line.eq(line)
            with m.If(~drop):
                m.d.sync += [self.piece.valid.eq(1), self.piece.payload.eq(piece)]
                with m.If(is_tracked):
                    m.d.sync += tracked.eq((tracked + 1)[:sw + 1])
            # split register
            with m.If(fits):
                m.d.sync += cur_v.eq(0)
            with m.Else():
                m.d.sync += [cur_v.eq(1), cur_addr.eq((p_addr + nbytes)[:aw]),
                             cur_rem.eq((p_rem - nbytes)[:spw]), cur_dst.eq((p_dst + nbytes)[:sw])]

        # odometer
        with m.If(do_row):
            m.d.sync += [run.eq(1), rows_left.eq(~row_last), rd.eq((vrd + j.row_bytes)[:sw]),
                         px.eq((vpx + 1)[:PX_W])]
            for k in range(OUTER):
                below = at_last[k] & Cat(*inc[k + 1:], C(0, 1)).any()
                with m.If(inc[k]):
                    m.d.sync += [idx[k].eq((vi[k] + 1)[:8]),
                                 crd[k].eq((vc[k] + j.ts[k])[:POS_W]), adr[k].eq(new_a)]
                with m.Elif(below):
                    m.d.sync += [idx[k].eq(0), crd[k].eq(restart[k]), adr[k].eq(new_a)]
                with m.Else():
                    m.d.sync += [idx[k].eq(vi[k]), crd[k].eq(vc[k]), adr[k].eq(va[k])]
        with m.Elif(first):
            m.d.sync += [run.eq(1), rows_left.eq(1), rd.eq(0), px.eq(0)]
            for k in range(OUTER):
                m.d.sync += [idx[k].eq(0), crd[k].eq(j.coord[k]), adr[k].eq(start_a[k])]

        # fill runs
        fr = (j.smem_addr + vrd)[:sw]
        with m.If(self.fill.ready):
            m.d.sync += self.fill.valid.eq(0)
        fpay = self.fill.payload
        fill_common = [fpay.seq.eq(j.seq), fpay.pattern.eq(j.pattern),
                       fpay.swizzle.eq(j.swizzle), fpay.mask.eq(j.mask), fpay.mbar.eq(j.mbar)]
        with m.If(do_row & j.fill):
            with m.If(~row_ib):
                with m.If(pf_v):
                    m.d.sync += pf_n.eq((pf_n + j.row_bytes)[:sw + 1])
                with m.Else():
                    m.d.sync += [pf_v.eq(1), pf_dst.eq(fr), pf_n.eq(j.row_bytes)]
            with m.Else():
                with m.If(flush):
                    m.d.sync += ([self.fill.valid.eq(1), fpay.dst.eq(Mux(pf_v, pf_dst, fr)),
                                 fpay.nbytes.eq((Mux(pf_v, pf_n, 0) + j.span_off)[:sw + 1])]
                             + fill_common)
                m.d.sync += [pf_v.eq(j.tail_bytes.any()),
                             pf_dst.eq((fr + j.span_off + j.span_bytes)[:sw]),
                             pf_n.eq(j.tail_bytes)]
        with m.If(tail_phase & pf_v & fc):
            m.d.sync += [self.fill.valid.eq(1), fpay.dst.eq(pf_dst), fpay.nbytes.eq(pf_n),
                         pf_v.eq(0)] + fill_common

        # end of job
        with m.If(self.fin.ready):
            m.d.sync += self.fin.valid.eq(0)
        with m.If(fin_go):
            m.d.sync += [self.fin.valid.eq(1), self.fin.payload.seq.eq(j.seq),
                         self.fin.payload.op.eq(j.op), self.fin.payload.tracked.eq(tracked),
                         self.fin.payload.tx.eq(j.tx),
                         run.eq(0), rows_left.eq(0), tracked.eq(0), pl_v.eq(0)]
        return m
