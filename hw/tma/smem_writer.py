"""The TMA shared-memory writer: byte rotation, beat split, swizzle, fill and barrier updates
(spec tma.md §2.2 SmemWriter; TMA-F22, F30, F31, F33, F34, F35, TMA-I6, I8, §4.8).

Two kinds of work arrive, each describing one contiguous destination range
``[dst, dst + nbytes)`` (CTA-relative, before swizzle, 1..128 bytes, so it touches one or two
128-byte smem rows):

- a READ response from the tracker (:func:`hw.tma.tracker.line_fields`): line lanes
  ``[lane, lane + nbytes)`` go to ``dst``;
- a fill job (``golden.tma.jobs.fill_fields``): a maximal run of OOB bytes ``[dst, dst +
  nbytes)`` (1..2^SMEM_AW bytes) in which the byte at address A gets byte ``A % 8`` of the 8-byte
  ``pattern`` (the element fill replicated by ReqGen; tensor loads have ``smem_addr`` 128-byte
  aligned, so this is byte ``dense % esize`` of the element fill, §4.8 ``fill``, TMA-F22). The
  writer cuts a run at 128-byte smem rows, one piece per cycle.

Each range becomes one beat per smem row it touches (the golden ``swizzle.range_beats``
partition, TMA-F33), each followed by one ``mbar`` update with ``tx`` = the beat's byte count
(the golden ``mbar`` partition). A smem row holding two separate OOB runs gets two fill beats,
where the golden model merges them into one (an informative partition, docs/tma.md).
"""

from amaranth import Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.common.fields import Fields
from golden.tma.formats import (BE_W, CTA_MASK_W, DATA_W, LINE, SEQ_W, mbar_fields,
                                smem_wr_fields)
from golden.tma.jobs import fill_fields
from hw.common.layout import struct_layout
from hw.common.skid import SkidBuffer
from hw.tma.lanes import LANE_W, gt_const, range_mask, rotate_left_bytes
from hw.tma.swizzle import RowSwizzle
from hw.tma.tracker import check_params, line_fields

__all__ = ["fill_fields", "written_fields", "TmaSmemWriter"]   # fill_fields: golden.tma.jobs

_NB_W = 8                      # nbytes 1..128


def written_fields(p):
    """What the writer reports to the completion unit per accepted ``mbar`` update."""
    return Fields(("seq", SEQ_W), ("nbytes", _NB_W))


class TmaSmemWriter(wiring.Component):
    """Writes READ responses and fill jobs into shared memory as 128-byte beats.

    Pipeline, one beat per cycle when the outputs are ready (TMA-P5, P6):

    0. fill runs wait in a register that hands out one row-bounded piece per cycle
       (``min(left, 128 - dst mod 128)`` bytes); ``fill.ready`` is high when it is empty;
    1. select: a response or a fill piece (round robin when both wait), normalised to
       (destination range, 128-byte source, byte rotation): a response's rotation is
       ``(dst - lane) mod 128``, a fill piece's source is the pattern repeated over the row,
       unrotated;
    2. rotate: source byte ``lane + k`` moves to lane ``(dst + k) mod 128``;
    3. split: beat 1 covers row ``dst >> 7`` lanes ``[dst mod 128, min(128, dst mod 128 + nbytes))``;
       a range crossing the row end gives beat 2 on the next row, lanes ``[0, rest)``;
    4. swizzle: chunks move to their ``SWZ_TABLE`` slots (:class:`~hw.tma.swizzle.RowSwizzle`),
       data lanes without ``be`` are zeroed; the beat waits in the ``smem_wr`` register;
    5. barrier: each accepted beat queues ``{mbar, tx = its bytes, mask}`` for ``mbar`` (a skid
       buffer), so an update never precedes its beat (TMA-F35). ``smem_wr.valid`` is held low
       while that buffer is full (it cannot become full while a beat is being presented). When
       an update is accepted, ``wr_valid``/``wr_seq``/``wr_bytes`` report it for one cycle.

    Every ``valid`` is a register output; ``ready`` paths run from ``smem_wr.ready`` back to
    ``resp.ready``/``fill.ready`` (ready to ready only).

    Parameters
    ----------
    params : TmaParams, optional
        Uses SMEM_AW and SWZ_TABLE (TMA-C2, C8).

    Members
    -------
    resp : In(stream.Signature(line_fields(params)))
        READ responses with their placements (from :class:`~hw.tma.tracker.TmaTracker`).
    fill : In(stream.Signature(golden.tma.jobs.fill_fields(params)))
        Fill runs.
    smem_wr : Out(stream.Signature(smem_wr_fields(params)))
        TMA-I6.
    mbar : Out(stream.Signature(mbar_fields(params)))
        TMA-I8.
    wr_valid : Out(1)
        An ``mbar`` update was accepted this cycle.
    wr_seq : Out(SEQ_W)
        Its command.
    wr_bytes : Out(8)
        Its ``tx`` (1..128).
    busy : Out(1)
        A range or beat is inside the writer or an update waits.
    """

    def __init__(self, params=None):
        p = self.p = check_params(self, params)
        self.smem_aw = p.SMEM_AW
        super().__init__({
            "resp": In(stream.Signature(struct_layout(line_fields(p)))),
            "fill": In(stream.Signature(struct_layout(fill_fields(p)))),
            "smem_wr": Out(stream.Signature(struct_layout(smem_wr_fields(p)))),
            "mbar": Out(stream.Signature(struct_layout(mbar_fields(p)))),
            "wr_valid": Out(1),
            "wr_seq": Out(SEQ_W),
            "wr_bytes": Out(_NB_W),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        aw = self.smem_aw
        rw = aw - 7
        resp, fill, wr = self.resp, self.fill, self.smem_wr

        def stage(prefix, with_data=True):
            regs = {
                "valid": Signal(name=f"{prefix}_valid"),
                "dst": Signal(aw, name=f"{prefix}_dst"),
                "n": Signal(_NB_W, name=f"{prefix}_n"),
                "swz": Signal(2, name=f"{prefix}_swz"),
                "mask": Signal(CTA_MASK_W, name=f"{prefix}_mask"),
                "mbar": Signal(aw, name=f"{prefix}_mbar"),
                "seq": Signal(SEQ_W, name=f"{prefix}_seq"),
            }
            if with_data:
                regs["data"] = Signal(DATA_W, name=f"{prefix}_data")
            return regs

        def copy(dst, src):
            return [dst[k].eq(src[k]) for k in ("dst", "n", "swz", "mask", "mbar", "seq")]

        s1 = stage("s1")
        s1_rot = Signal(LANE_W, name="s1_rot")
        s2 = stage("s2")
        s2_second = Signal(name="s2_second")
        s3_valid = Signal(name="s3_valid")
        # stage 3's data and mode registers are the row swizzle's inputs themselves (no copies)
        m.submodules.swizzle = sw = RowSwizzle(self.p.SWZ_TABLE)
        s3 = {"row": Signal(rw, name="s3_row"), "lo": Signal(LANE_W, name="s3_lo"),
              "hi": Signal(_NB_W, name="s3_hi"), "data": sw.data, "swz": sw.mode,
              "mask": Signal(CTA_MASK_W, name="s3_mask"),
              "mbar": Signal(aw, name="s3_mbar"), "seq": Signal(SEQ_W, name="s3_seq")}

        # -- output register and barrier buffer ------------------------------------------------
        bar_layout = struct_layout(Fields(("addr", aw), ("tx", _NB_W), ("mask", CTA_MASK_W),
                                          ("seq", SEQ_W)))
        m.submodules.bar = bar = SkidBuffer(bar_layout.size)      # plain bits: no field views
        out_valid = Signal(name="out_valid")
        out_bar = data.View(bar_layout, bar.i.payload)   # the beat's update, in the skid input
        m.d.comb += wr.valid.eq(out_valid & bar.i.ready)
        wr_hs = wr.valid & wr.ready
        out_free = ~out_valid | wr_hs
        m.d.comb += bar.i.valid.eq(wr_hs)

        bo = data.View(bar_layout, bar.o.payload)
        m.d.comb += [
            self.mbar.valid.eq(bar.o.valid), bar.o.ready.eq(self.mbar.ready),
            self.mbar.payload.addr.eq(bo.addr), self.mbar.payload.tx.eq(bo.tx),
            self.mbar.payload.mask.eq(bo.mask),
            self.wr_valid.eq(bar.o.valid & self.mbar.ready), self.wr_seq.eq(bo.seq),
            self.wr_bytes.eq(bo.tx),
        ]

        # -- stage 4 (comb): be, swizzle, zero unwritten lanes -> output register ----------------
        be_bytes = Signal(DATA_W, name="be_bytes")
        m.d.comb += sw.row.eq(s3["row"][:3])
        m.d.comb += [sw.be[j].eq(v) for j, v in range_mask(s3["lo"], s3["hi"])]
        m.d.comb += [be_bytes.word_select(j, 8).eq(sw.o_be[j].replicate(8)) for j in range(BE_W)]
        with m.If(out_free):
            m.d.sync += out_valid.eq(s3_valid)
            with m.If(s3_valid):
                m.d.sync += [
                    wr.payload.row.eq(s3["row"]), wr.payload.data.eq(sw.o_data & be_bytes),
                    wr.payload.be.eq(sw.o_be), wr.payload.mask.eq(s3["mask"]),
                    out_bar.addr.eq(s3["mbar"]), out_bar.tx.eq(s3["hi"] - s3["lo"]),
                    out_bar.mask.eq(s3["mask"]), out_bar.seq.eq(s3["seq"]),
                ]
        s3_free = out_free

        # -- stage 3: split the range of s2 into one or two beats -------------------------------
        lo = s2["dst"][:LANE_W]
        end = Signal(_NB_W + 1, name="s2_end")             # lo + n, 1..255
        m.d.comb += end.eq(lo + s2["n"])
        crosses = gt_const(end, LINE)
        last_beat = s2_second | ~crosses
        s2_free = ~s2["valid"] | (s3_free & last_beat)
        with m.If(s3_free):
            m.d.sync += s3_valid.eq(s2["valid"])
            with m.If(s2["valid"]):
                m.d.sync += [s3["data"].eq(s2["data"]), s3["swz"].eq(s2["swz"]),
                             s3["mask"].eq(s2["mask"]), s3["mbar"].eq(s2["mbar"]),
                             s3["seq"].eq(s2["seq"])]
                with m.If(s2_second):
                    m.d.sync += [s3["row"].eq(s2["dst"][7:] + 1), s3["lo"].eq(0),
                                 s3["hi"].eq(end - LINE), s2_second.eq(0)]
                with m.Else():
                    m.d.sync += [s3["row"].eq(s2["dst"][7:]), s3["lo"].eq(lo),
                                 s3["hi"].eq(Mux(crosses, LINE, end)), s2_second.eq(crosses)]

        # -- stage 2: rotate the source bytes into their lanes -----------------------------------
        rotated = rotate_left_bytes(m, s1["data"], s1_rot, "rot")
        s1_free = ~s1["valid"] | s2_free
        with m.If(s2_free):
            m.d.sync += s2["valid"].eq(s1["valid"])
            with m.If(s1["valid"]):
                m.d.sync += copy(s2, s1) + [s2["data"].eq(rotated)]

        # -- stage 0: fill runs, cut at smem rows ------------------------------------------------
        fp = fill.payload
        f0_valid = Signal(name="f0_valid")
        f0_dst = Signal(aw, name="f0_dst")
        f0_left = Signal(aw + 1, name="f0_left")
        f0 = {"pattern": Signal(64, name="f0_pattern"), "swz": Signal(2, name="f0_swz"),
              "mask": Signal(CTA_MASK_W, name="f0_mask"), "mbar": Signal(aw, name="f0_mbar"),
              "seq": Signal(SEQ_W, name="f0_seq")}
        room = Signal(_NB_W, name="f0_room")                   # bytes to the end of the row
        f0_n = Signal(aw + 1, name="f0_n")                     # this piece: 1..128 bytes
        f0_last = Signal(name="f0_last")
        m.d.comb += [room.eq((~f0_dst[:LANE_W]) + 1), f0_last.eq(~(f0_left[_NB_W:].any() | (f0_left[:_NB_W] > room))),
                     f0_n.eq(Mux(f0_last, f0_left, room)), fill.ready.eq(~f0_valid)]
        with m.If(fill.valid & ~f0_valid):
            m.d.sync += [f0_valid.eq(fp.nbytes.any()), f0_dst.eq(fp.dst), f0_left.eq(fp.nbytes),
                         f0["pattern"].eq(fp.pattern), f0["swz"].eq(fp.swizzle),
                         f0["mask"].eq(fp.mask), f0["mbar"].eq(fp.mbar), f0["seq"].eq(fp.seq)]

        # -- stage 1: select a response or a fill piece ----------------------------------------
        prio_fill = Signal(name="prio_fill")                  # round robin on conflicts
        pick_fill = f0_valid & (~resp.valid | prio_fill)
        pick_resp = resp.valid & ~pick_fill
        m.d.comb += resp.ready.eq(s1_free & pick_resp)
        with m.If(s1_free & resp.valid & f0_valid):
            m.d.sync += prio_fill.eq(~prio_fill)
        with m.If(s1_free & pick_fill):
            m.d.sync += [f0_dst.eq(f0_dst + f0_n), f0_left.eq(f0_left - f0_n)]
            with m.If(f0_last):
                m.d.sync += f0_valid.eq(0)
        rp = resp.payload
        with m.If(s1_free):
            m.d.sync += s1["valid"].eq(resp.valid | f0_valid)
            with m.If(pick_fill):
                m.d.sync += [s1["dst"].eq(f0_dst), s1["n"].eq(f0_n[:_NB_W]), s1["swz"].eq(f0["swz"]),
                             s1["mask"].eq(f0["mask"]), s1["mbar"].eq(f0["mbar"]),
                             s1["seq"].eq(f0["seq"]),
                             s1["data"].eq(f0["pattern"].replicate(LINE // 8)), s1_rot.eq(0)]
            with m.Elif(pick_resp):
                m.d.sync += [s1["dst"].eq(rp.dst), s1["n"].eq(rp.nbytes), s1["swz"].eq(rp.swizzle),
                             s1["mask"].eq(rp.mask), s1["mbar"].eq(rp.mbar), s1["seq"].eq(rp.seq),
                             s1["data"].eq(rp.data),
                             s1_rot.eq(rp.dst[:LANE_W] - rp.lane)]

        m.d.comb += self.busy.eq(f0_valid | s1["valid"] | s2["valid"] | s3_valid | out_valid
                                 | bar.o.valid | ~bar.i.ready)
        return m
