"""The TMA unit top level ``hw.tma.Tma`` (spec tma.md §2.2, TMA-I1..I10, I13).

Wiring of the modules of Fig 6, one file each::

    cmd -> TmaReqQueue -> TmaDescCache -> TmaSetup -> TmaReqGen -+- READ / PREFETCH ----+-> TmaTracker -> l2_req
              (desc_rd_req / desc_rd_resp)      |        |       +- WRITE / RED / S2S -> TmaStorePath (smem_rd)
                                               err       |            WRITE/RED ------'        |
                                                         | open, fin  S2S rows --+   l2_resp ->+ READ lines
                                                         v                       v             v
                                                   TmaCompletion <------- TmaSmemWriter <------+ (and fill jobs)
                                                     done, idle              smem_wr, mbar

ReqGen opens each command in the completion unit before any of its output and closes it with
its ``fin`` record, turned here into the number of completion units due: the barrier bytes
(``tx``) of a load (TENSOR_LOAD, BLOCK_G2S, BLOCK_S2S), the tracked requests of a store or
reduction (one acknowledgement each), 0 otherwise. The writer reports every accepted barrier
update and the tracker every WRITE/RED acknowledgement; the completion unit retires commands in
order into ``done``. ``idle`` is the completion unit's: no unretired command, no ``done``
waiting, and no module holding work (TMA-F38).

Pieces from ReqGen go straight to the tracker (READ, PREFETCH) or through the store path
(WRITE, RED_*, PIECE_S2S); the tracker takes the store path's requests first. The writer takes
S2S rows from the store path before READ lines from the tracker.
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import (CmdOp, L2Op, cmd_fields, desc_rd_req_fields, desc_rd_resp_fields,
                                done_fields, err_fields, l2_req_fields, l2_resp_fields,
                                mbar_fields, smem_rd_req_fields, smem_rd_resp_fields,
                                smem_wr_fields)
from golden.tma.jobs import PIECE_S2S
from golden.tma.params import TmaParams
from hw.common.layout import struct_layout
from hw.tma.completion import TmaCompletion
from hw.tma.desccache import TmaDescCache
from hw.tma.reqgen import TmaReqGen
from hw.tma.reqqueue import TmaReqQueue
from hw.tma.setup import TmaSetup
from hw.tma.smem_writer import TmaSmemWriter
from hw.tma.storepath import TmaStorePath
from hw.tma.tracker import TmaTracker
from hw.tma.validate import in_set

__all__ = ["Tma"]

_LOAD_OPS = (CmdOp.TENSOR_LOAD, CmdOp.BLOCK_G2S, CmdOp.BLOCK_S2S)


class Tma(wiring.Component):
    """Tensor memory access unit (spec tma.md), part 1: tile loads, block copies, completion.

    Parameters (spec §3.3; ``ValueError`` outside the legal ranges)
    ----------
    addr_w : int
        ADDR_W, global byte-address width, 40..64 (TMA-C1).
    smem_aw : int
        SMEM_AW, CTA-relative smem address width, 11..24 (TMA-C2).
    id_w : int
        ID_W, command id width, 1..16 (TMA-C3).
    q_depth : int
        Q_DEPTH, request FIFO depth, 2..16 (TMA-C4).
    dc_entries : int
        DC_ENTRIES, descriptor cache entries, 2..16 (TMA-C5).
    trk_entries : int
        TRK_ENTRIES, tracker entries, a power of two in 4..256 (TMA-C6).
    nb_w : int
        NB_W, width of ``num_blocks``, 1..28 (TMA-C7).
    swz_table, nan_pattern : optional
        SWZ_TABLE and NAN_PATTERN (TMA-C8, C9), elaboration-time; default the spec's.
    done_depth : int
        Commands the completion unit tracks between open and ``done`` (a power of two, 2..64).

    Members (TMA-I2..I10)
    -------
    cmd : In(stream TmaCmd)
    desc_rd_req : Out(stream {addr})
    desc_rd_resp : In(stream {data})
    l2_req : Out(stream {line, sectors, tag, op, dtype, data, be})
    l2_resp : In(stream {tag, data})
    smem_wr : Out(stream {row, data, be, mask})
    smem_rd_req : Out(stream {row, cta})
    smem_rd_resp : In(stream {data})
    mbar : Out(stream {addr, tx, mask})
    err : Out(stream {id, code})
    done : Out(stream {id})
    idle : Out(1)
    outstanding : Out(TAG_W + 1)
    """

    def __init__(self, addr_w=64, smem_aw=18, id_w=8, q_depth=4, dc_entries=4, trk_entries=32,
                 nb_w=20, swz_table=None, nan_pattern=None, done_depth=8):
        p = self.p = TmaParams(ADDR_W=addr_w, SMEM_AW=smem_aw, ID_W=id_w, Q_DEPTH=q_depth,
                               DC_ENTRIES=dc_entries, TRK_ENTRIES=trk_entries, NB_W=nb_w,
                               SWZ_TABLE=swz_table, NAN_PATTERN=nan_pattern)
        self.queue = TmaReqQueue(q_depth, addr_w, smem_aw, id_w, nb_w)
        self.cache = TmaDescCache(dc_entries, addr_w, smem_aw, id_w, nb_w)
        self.setup = TmaSetup(addr_w, smem_aw, id_w, nb_w, p.NAN_PATTERN)
        self.reqgen = TmaReqGen(addr_w, smem_aw, nb_w, id_w)
        self.tracker = TmaTracker(p)
        self.storepath = TmaStorePath(p)
        self.writer = TmaSmemWriter(p)
        self.completion = TmaCompletion(p, done_depth)
        layout = struct_layout
        super().__init__({
            "cmd": In(stream.Signature(layout(cmd_fields(p)))),
            "desc_rd_req": Out(stream.Signature(layout(desc_rd_req_fields(p)))),
            "desc_rd_resp": In(stream.Signature(layout(desc_rd_resp_fields()))),
            "l2_req": Out(stream.Signature(layout(l2_req_fields(p)))),
            "l2_resp": In(stream.Signature(layout(l2_resp_fields(p)))),
            "smem_wr": Out(stream.Signature(layout(smem_wr_fields(p)))),
            "smem_rd_req": Out(stream.Signature(layout(smem_rd_req_fields(p)))),
            "smem_rd_resp": In(stream.Signature(layout(smem_rd_resp_fields()))),
            "mbar": Out(stream.Signature(layout(mbar_fields(p)))),
            "err": Out(stream.Signature(layout(err_fields(p)))),
            "done": Out(stream.Signature(layout(done_fields(p)))),
            "idle": Out(1),
            "outstanding": Out(p.TAG_W + 1),
        })

    def elaborate(self, platform):
        m = Module()
        q, dc, su, rg = self.queue, self.cache, self.setup, self.reqgen
        trk, sp, wr, cp = self.tracker, self.storepath, self.writer, self.completion
        for name in ("queue", "cache", "setup", "reqgen", "tracker", "storepath", "writer",
                     "completion"):
            m.submodules[name] = getattr(self, name)
        flip = wiring.flipped

        # ---------------------------------------------------------------- front end
        wiring.connect(m, flip(self.cmd), q.cmd)
        wiring.connect(m, q.head, dc.head)
        wiring.connect(m, q.next, dc.next)
        wiring.connect(m, dc.desc_rd_req, flip(self.desc_rd_req))
        wiring.connect(m, flip(self.desc_rd_resp), dc.desc_rd_resp)
        wiring.connect(m, dc.o, su.i)
        wiring.connect(m, su.err, flip(self.err))
        wiring.connect(m, su.job, rg.job)
        wiring.connect(m, rg.open, cp.open)

        # ---------------------------------------------------------------- pieces
        pc = rg.piece
        via_sp = in_set(pc.payload.op, (L2Op.WRITE, PIECE_S2S) + tuple(L2Op(8 + k) for k in range(8)))
        # the store path's request goes first, but a request the tracker is holding back keeps
        # its source until it issues (the tracker passes it straight to l2_req, which must not
        # change under valid)
        held, held_sp = Signal(), Signal()
        sp_first = Mux(held, held_sp, sp.track.valid)
        ti, tp = trk.i, trk.i.payload
        st, d = sp.track.payload, pc.payload
        m.d.comb += [
            sp.i.valid.eq(pc.valid & via_sp),
            sp.i.payload.eq(pc.payload),
            pc.ready.eq(Mux(via_sp, sp.i.ready, ~sp_first & ti.ready)),
            sp.track.ready.eq(sp_first & ti.ready),
            ti.valid.eq(sp_first | (pc.valid & ~via_sp)),
        ]
        with m.If(sp_first):
            m.d.comb += ti.payload.eq(st)
        with m.Else():
            m.d.comb += [tp.line.eq(d.line), tp.sectors.eq(d.sectors), tp.op.eq(d.op),
                         tp.dtype.eq(d.dtype), tp.data.eq(0), tp.be.eq(0), tp.seq.eq(d.seq),
                         tp.dst.eq(d.dst), tp.lane.eq(d.lane), tp.nbytes.eq(d.nbytes),
                         tp.swizzle.eq(d.swizzle), tp.mask.eq(d.mask), tp.mbar.eq(d.mbar)]
        m.d.sync += [held.eq(ti.valid & ~ti.ready), held_sp.eq(sp_first)]
        wiring.connect(m, trk.l2_req, flip(self.l2_req))
        wiring.connect(m, flip(self.l2_resp), trk.l2_resp)
        wiring.connect(m, sp.smem_rd_req, flip(self.smem_rd_req))
        wiring.connect(m, flip(self.smem_rd_resp), sp.smem_rd_resp)

        # ---------------------------------------------------------------- writer
        s2s_first = sp.line.valid
        wi = wr.resp
        m.d.comb += [
            wi.valid.eq(s2s_first | trk.o.valid),
            wi.payload.eq(Mux(s2s_first, sp.line.payload.as_value(), trk.o.payload.as_value())),
            sp.line.ready.eq(wi.ready),
            trk.o.ready.eq(~s2s_first & wi.ready),
        ]
        wiring.connect(m, rg.fill, wr.fill)
        wiring.connect(m, wr.smem_wr, flip(self.smem_wr))
        wiring.connect(m, wr.mbar, flip(self.mbar))

        # ---------------------------------------------------------------- completion
        fin = rg.fin.payload
        m.d.comb += [
            cp.close.valid.eq(rg.fin.valid),
            rg.fin.ready.eq(cp.close.ready),
            cp.close.payload.seq.eq(fin.seq),
            cp.close.payload.total.eq(Mux(in_set(fin.op, _LOAD_OPS), fin.tx, fin.tracked)),
            cp.wr_valid.eq(wr.wr_valid), cp.wr_seq.eq(wr.wr_seq), cp.wr_bytes.eq(wr.wr_bytes),
            cp.ack_valid.eq(trk.ack_valid), cp.ack_seq.eq(trk.ack_seq),
        ]
        busy = Signal()
        m.d.comb += [
            busy.eq(q.head.valid | dc.o.valid | dc.desc_rd_req.valid | dc.desc_rd_resp.ready
                    | su.busy | rg.piece.valid | rg.fill.valid | rg.fin.valid | sp.busy
                    | trk.busy | wr.busy),
            cp.busy.eq(busy),
        ]
        wiring.connect(m, cp.done, flip(self.done))
        m.d.comb += [self.idle.eq(cp.idle), self.outstanding.eq(trk.outstanding)]
        return m

