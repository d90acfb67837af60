"""``wd_raster[s]``: the per-SM distributed rasterizer (WD-F25, WD-F26, WD-F27; G-RAST, A9).

No CTA ID travels on the broadcast. Every SM watches every beat and counts the units that went
by since its last own CTA (delta); when its own CTAs arrive it moves its stored position forward
by delta and emits one ``cta_id`` record per CTA. Three stages, so beats are taken every cycle
while IDs are computed behind them:

- **front** (one beat per cycle): counts delta (CTAs for PLAIN, ``end_of_cga`` beats for the CGA
  levels) and pushes an entry into the run FIFO (RASTER_FIFO_DEPTH): a GRID marker, a run (the
  delta to advance by, the own CTA count, the first own rank), a fold (delta about to overflow
  DELTA_W bits, WD-F26) or a LAUNCH_ID copy. The beat waits only while the FIFO is full.
- **divide**: one run at a time, DELTA_W + 1 chained restoring-division steps (one dividend
  bit per step; the first as the run is taken from the FIFO, then one per cycle): delta →
  (xd, yd, zd) of A9 on the unit grid (U_x, U_y), and the first rank ρ0 → its in-CGA digits
  ``lin2xyz(ρ0 mod isz; I)``, ``lin2xyz(ρ0 div isz; O)``.
- **emit**: adds the digits to the position with A9's two carries into the emit state, then
  emits the run's records from that state, one per cycle, stepping the position (PLAIN) or the
  rank digits (CGA levels) by +1; the next run's division overlaps the emission, and the next
  run is taken in the cycle of the last record. The record's ID products start from registers
  (issue 9: with the first record in the cycle the run was taken, they sat behind the A9 update).

The unit grid U comes with the GRID beat (``unit_x``, ``unit_y``, computed once at the command
head), so no SM divides by a grid-wide value.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.formats import Kind, Level, cta_id_fields, raster_beat_fields
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import eq, eq_const, ge, ge_const, is_zero, nonzero
from hw.common.params import reject
from hw.common.regfifo import RegFifo
from hw.common.serialdiv import div_step

__all__ = ["Rasterizer", "prefix_width"]

# run FIFO entry kinds
_GRID, _RUN, _COPY = 0, 1, 2


def prefix_width(params):
    """Bits of the CTAs on the SMs before one SM of a beat's GPC (at most S_MAX − 1 full SMs)."""
    return max(1, (params.CTA_SLOTS * (params.S_MAX - 1)).bit_length())


class Rasterizer(wiring.Component):
    """One SM's rasterizer (A9, G-RAST). The broadcast fork (``RasterArray``) picks the SM's
    own count and the count before it in its GPC out of each beat, so every SM's rasterizer is
    the same module (one copy in the Verilog) and the GPC prefix sums are shared.

    Parameters
    ----------
    params : WdistParams
        The build (N_GPC, SM_PER_GPC, DELTA_W, RASTER_FIFO_DEPTH and the widths of §3.2).

    Members
    -------
    mine : In(CNT_W)
        With ``beat``: this SM's ``cnt`` entry when the beat is for its GPC, else 0.
    prefix : In(prefix_width(params))
        With ``beat``: the ``cnt`` entries before this SM's in its GPC when the beat is for its
        GPC, else 0.
    beat : In(stream.Signature(raster_beat_fields))
        The broadcast (GRID, LAUNCH, LAUNCH_ID beats) plus the grid's unit dimensions on GRID
        beats. ``ready`` is low only while the run FIFO is full.
    cta_id : Out(stream.Signature(cta_id_fields))
        One record per CTA placed on this SM, in global launch order (WD-I4).
    idle : Out(1)
        Nothing pending: FIFO empty, no run dividing or emitting, no record waiting.
    """

    def __init__(self, params):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        self.p = params
        self.beat_layout = struct_layout(raster_beat_fields(params))
        self.rec_layout = struct_layout(cta_id_fields(params))
        super().__init__({
            "mine": In(params.CNT_W),
            "prefix": In(prefix_width(params)),
            "beat": In(stream.Signature(self.beat_layout)),
            "cta_id": Out(stream.Signature(self.rec_layout)),
            "idle": Out(1),
        })

    def elaborate(self, platform):
        p = self.p
        m = Module()
        dw = p.DELTA_W
        run_w = dw + 1                       # delta + prefix never leaves DELTA_W + 1 bits
        steps = max(run_w, p.RANK_W)          # division cycles per run
        cnt_w, rank_w = p.CNT_W, p.RANK_W
        limit = 1 << dw

        # ---------------- run FIFO entry ------------------------------------------------------
        grid_l = data.StructLayout({
            "level": 3, "unit_x": p.GX_W, "unit_y": p.GY_W,
            "in_x": 6, "in_y": 6, "in_z": 6, "out_x": 5, "out_y": 5, "out_z": 5})
        run_l = data.StructLayout({"delta": run_w, "mine": cnt_w, "rho0": rank_w})
        copy_l = data.StructLayout({"ctaid_x": p.GX_W, "ctaid_y": p.GY_W, "ctaid_z": p.GZ_W,
                                    "cga_cta_id": rank_w})
        entry_l = data.StructLayout({
            "kind": 2, "grid_id": p.GRID_ID_W, "seq": p.SEQ_W, "is_cga": 1,
            "cga_id": p.GPC_CGA_ID_W,
            "body": data.UnionLayout({"grid": grid_l, "run": run_l, "copy": copy_l})})
        m.submodules.fifo = fifo = RegFifo(entry_l.size, p.RASTER_FIFO_DEPTH)
        w_rdy = ~eq_const(fifo.level, p.RASTER_FIFO_DEPTH)

        # ---------------- front: delta counting ------------------------------------------------
        b = self.beat.payload
        delta = Signal(dw)
        cur_plain = Signal(init=1)
        mine, prefix = self.mine, self.prefix
        cnt = [b.cnt[i] for i in range(p.S_MAX)]
        total = sum(cnt[1:], cnt[0])
        entry = Signal(entry_l)
        push = Signal()
        m.d.comb += [
            entry.grid_id.eq(b.grid_id), entry.seq.eq(b.seq), entry.is_cga.eq(b.is_cga),
            entry.cga_id.eq(b.cga_id),
            fifo.w_data.eq(entry), fifo.w_en.eq(push & self.beat.valid & w_rdy),
            self.beat.ready.eq(w_rdy),
        ]
        take = self.beat.valid & self.beat.ready
        run = entry.body.run
        with m.If(eq_const(b.kind, Kind.GRID)):
            g = entry.body.grid
            m.d.comb += [push.eq(1), entry.kind.eq(_GRID), g.level.eq(b.level),
                         g.unit_x.eq(b.unit_x), g.unit_y.eq(b.unit_y),
                         g.in_x.eq(b.in_x), g.in_y.eq(b.in_y), g.in_z.eq(b.in_z),
                         g.out_x.eq(b.out_x), g.out_y.eq(b.out_y), g.out_z.eq(b.out_z)]
            with m.If(take):
                m.d.sync += [delta.eq(0), cur_plain.eq(eq_const(b.level, Level.PLAIN))]
        with m.Elif(eq_const(b.kind, Kind.LAUNCH)):
            m.d.comb += entry.kind.eq(_RUN)
            with m.If(nonzero(mine)):
                # a run: advance by the units before the first own CTA, then emit `mine`
                m.d.comb += [push.eq(1), run.mine.eq(mine)]
                with m.If(cur_plain):
                    m.d.comb += run.delta.eq(delta + prefix)
                    with m.If(take):   # the next delta counts from the last own CTA + 1
                        m.d.sync += delta.eq(total - prefix - mine + 1)
                with m.Else():
                    m.d.comb += [run.delta.eq(delta), run.rho0.eq(b.first_rank + prefix)]
                    with m.If(take):
                        m.d.sync += delta.eq(b.end_of_cga)
            with m.Else():
                # not ours: count; fold the delta into the position before it overflows
                extra = Mux(cur_plain, total, b.end_of_cga)
                over = ge_const(delta + extra, limit)
                m.d.comb += [push.eq(over), run.delta.eq(delta)]
                with m.If(take):
                    m.d.sync += delta.eq(Mux(over, extra, delta + extra))
        with m.Elif(eq_const(b.kind, Kind.LAUNCH_ID)):
            c = entry.body.copy
            m.d.comb += [push.eq(eq_const(mine, 1)), entry.kind.eq(_COPY),
                         c.ctaid_x.eq(b.ctaid_x), c.ctaid_y.eq(b.ctaid_y),
                         c.ctaid_z.eq(b.ctaid_z), c.cga_cta_id.eq(b.cga_cta_id)]

        # ---------------- grid configuration (divide stage copy, emit stage copy) -------------
        def config(name):
            regs = {"plain": Signal(name=f"{name}_plain", init=1),
                    "gpu": Signal(name=f"{name}_gpu"),
                    "ux": Signal(p.GX_W, name=f"{name}_ux", init=1),
                    "uy": Signal(p.GY_W, name=f"{name}_uy", init=1),
                    "isz": Signal(18, name=f"{name}_isz", init=1)}
            for k, w in (("ix", 6), ("iy", 6), ("iz", 6), ("ox", 5), ("oy", 5), ("oz", 5)):
                regs[k] = Signal(w, name=f"{name}_{k}", init=1)
            return regs
        dcfg, ecfg = config("dcfg"), config("ecfg")
        # the emit stage's limits minus one (wrap compares); loaded with ecfg
        last = {k: Signal(len(ecfg[k]), name=f"ecfg_{k}_m1", init=ecfg[k].init - 1)
                for k in ("ux", "uy", "isz", "ix", "iy", "iz", "ox", "oy")}

        # ---------------- divide stage ---------------------------------------------------------
        head = data.View(entry_l, fifo.r_data)
        d_valid = Signal()
        d_left = Signal(range(steps + 1))
        d_entry = Signal(entry_l)
        d_done = d_valid & is_zero(d_left)
        e_take = Signal()
        pop = fifo.r_rdy & (~d_valid | e_take)
        m.d.comb += fifo.r_en.eq(pop)

        dl = Signal(steps)                    # delta, MSB first
        rk = Signal(steps)                    # ρ0, MSB first
        rem_x = Signal(min(p.GX_W, steps))
        rem_y = Signal(min(p.GY_W, steps))
        zd = Signal(steps)
        # ρ0 digits: ρ0 / in_x / in_y / in_z / out_x / out_y, and ρ0 mod isz
        rem_r = [Signal(min(w, steps), name=f"rem_{n}") for n, w in
                 (("rx", 6), ("ry", 6), ("rz", 6), ("vx", 5), ("vy", 5))]
        vz = Signal(steps)
        rem_isz = Signal(min(18, steps))
        def divide(rx, ry, z, dbit, rems, v, risz, rbit):
            """One step of the chained dividers: the remainders and quotient shift registers
            after shifting in the delta bit ``dbit`` and the rank bit ``rbit``."""
            q1, n1 = div_step(rx, dbit, dcfg["ux"])
            q2, n2 = div_step(ry, q1, dcfg["uy"])
            bit, n_r = rbit, []
            for reg, div in zip(rems, ("ix", "iy", "iz", "ox", "oy")):
                bit, nxt = div_step(reg, bit, dcfg[div])
                n_r.append(nxt)
            _, n_isz = div_step(risz, rbit, dcfg["isz"])
            return [rem_x.eq(n1), rem_y.eq(n2), zd.eq(Cat(q2, z[:-1])), vz.eq(Cat(bit, v[:-1])),
                    rem_isz.eq(n_isz), *(r.eq(n) for r, n in zip(rem_r, n_r))]

        with m.If(d_valid & nonzero(d_left)):
            m.d.sync += divide(rem_x, rem_y, zd, dl[-1], rem_r, vz, rem_isz, rk[-1])
            m.d.sync += [dl.eq(dl << 1), rk.eq(rk << 1), d_left.eq(d_left - 1)]
        with m.If(e_take):
            m.d.sync += d_valid.eq(0)
        with m.If(pop):
            is_run = eq_const(head.kind, _RUN)
            # PLAIN runs need only the delta's bits (its MSB moved to the top of dl); CGA runs
            # also the rank's, so they take max(DELTA_W + 1, RANK_W) steps. The first step
            # runs as the entry is taken (all remainders 0), which pays for the emit stage's
            # record register (WD-P5's DELTA_W + 4 cycles to the first ID).
            short = dcfg["plain"] & ~eq_const(head.kind, _GRID)
            first_dl = Signal(steps)
            m.d.comb += first_dl.eq(Mux(short, head.body.run.delta << (steps - run_w),
                                        head.body.run.delta))
            rho0 = head.body.run.rho0
            zeros = [Const(0, len(r)) for r in rem_r]
            m.d.sync += [d_valid.eq(1), d_entry.eq(head),
                         d_left.eq(Mux(is_run, Mux(short, run_w - 1, steps - 1), 0)),
                         dl.eq(first_dl << 1), rk.eq(rho0 << 1)]
            m.d.sync += divide(Const(0, len(rem_x)), Const(0, len(rem_y)), Const(0, steps),
                               first_dl[-1], zeros, Const(0, steps), Const(0, len(rem_isz)),
                               rho0[-1] if len(rho0) == steps else Const(0, 1))
            with m.If(eq_const(head.kind, _GRID)):
                hg = head.body.grid
                outer = eq_const(hg.level, Level.GPU) | eq_const(hg.level, Level.CPC)
                plain = eq_const(hg.level, Level.PLAIN)
                ix, iy, iz = (Mux(plain, 1, v) for v in (hg.in_x, hg.in_y, hg.in_z))
                m.d.sync += [
                    dcfg["plain"].eq(plain), dcfg["gpu"].eq(eq_const(hg.level, Level.GPU)),
                    dcfg["ux"].eq(hg.unit_x), dcfg["uy"].eq(hg.unit_y),
                    dcfg["ix"].eq(ix), dcfg["iy"].eq(iy), dcfg["iz"].eq(iz),
                    dcfg["ox"].eq(Mux(outer, hg.out_x, 1)), dcfg["oy"].eq(Mux(outer, hg.out_y, 1)),
                    dcfg["oz"].eq(Mux(outer, hg.out_z, 1)),
                    dcfg["isz"].eq(ix * iy * iz),
                ]

        # ---------------- emit stage -----------------------------------------------------------
        pos = [Signal(p.GX_W, name="pos_x"), Signal(p.GY_W, name="pos_y"),
               Signal(p.GZ_W, name="pos_z")]
        dig = {n: Signal(w, name=f"dig_{n}") for n, w in
               (("rx", 6), ("ry", 6), ("rz", 6), ("vx", 5), ("vy", 5), ("vz", p.GZ_W),
                ("r", rank_w), ("rho", rank_w))}
        e_left = Signal(cnt_w)
        e_meta = Signal(entry_l)              # grid_id, seq, is_cga, cga_id of the run
        # O·I per axis, loaded with ecfg (a register: the record's product starts from it)
        oi = [Signal(11, name=f"ecfg_oi{a}", init=1) for a in "xyz"]
        out = self.cta_id
        out_free = ~out.valid | out.ready
        with m.If(out.ready):
            m.d.sync += out.valid.eq(0)

        # A run is taken into the emit state one cycle before its first record, so the record
        # register is fed by registers only (the ID products are not behind A9's position
        # update; 28.5 MHz before, issue 9). A run may be taken in the cycle of the previous
        # run's last record, so back-to-back runs leave no gap.
        emit = Signal()
        m.d.comb += emit.eq(nonzero(e_left) & out_free)
        d_kind = d_entry.kind
        run_free = is_zero(e_left) | (eq_const(e_left, 1) & emit)
        m.d.comb += e_take.eq(d_done & Mux(eq_const(d_kind, _RUN), run_free,
                                           is_zero(e_left) & (~eq_const(d_kind, _COPY) | out_free)))
        take_run = Signal()
        m.d.comb += take_run.eq(e_take & eq_const(d_kind, _RUN))

        # A9: the new position after the run's delta, two carries
        ux, uy = ecfg["ux"], ecfg["uy"]
        x1 = pos[0] + rem_x
        cx = ge(x1, ux)
        y1 = pos[1] + rem_y + cx
        cy = ge(y1, uy)
        adv = [Mux(cx, x1 - ux, x1)[:p.GX_W], Mux(cy, y1 - uy, y1)[:p.GY_W],
               (pos[2] + zd + cy)[:p.GZ_W]]
        d_dig = dict(zip(("rx", "ry", "rz", "vx", "vy"), rem_r))
        d_dig.update(vz=vz, r=rem_isz, rho=d_entry.body.run.rho0)
        meta = data.View(entry_l, e_meta)

        # the record of the current state: ctaid = pos·(O·I) + v·I + r per axis (PLAIN: pos)
        plain, gpu = ecfg["plain"], ecfg["gpu"]
        ctaid = [(pos[a] * oi[a] + dig[v] * ecfg[i] + dig[r])[:len(pos[a])]
                 for a, v, i, r in ((0, "vx", "ix", "rx"), (1, "vy", "iy", "ry"),
                                    (2, "vz", "iz", "rz"))]
        rec = out.payload
        with m.If(emit):
            m.d.sync += [out.valid.eq(1), rec.grid_id.eq(meta.grid_id), rec.seq.eq(meta.seq),
                         rec.ctaid_x.eq(ctaid[0]), rec.ctaid_y.eq(ctaid[1]),
                         rec.ctaid_z.eq(ctaid[2]), rec.is_cga.eq(meta.is_cga),
                         rec.cga_id.eq(meta.cga_id),
                         rec.cga_cta_id.eq(Mux(plain, 0, Mux(gpu, dig["r"], dig["rho"])))]
        with m.Elif(e_take & eq_const(d_kind, _COPY)):
            cp = d_entry.body.copy
            m.d.sync += [out.valid.eq(1), rec.grid_id.eq(d_entry.grid_id),
                         rec.seq.eq(d_entry.seq), rec.ctaid_x.eq(cp.ctaid_x),
                         rec.ctaid_y.eq(cp.ctaid_y), rec.ctaid_z.eq(cp.ctaid_z),
                         rec.is_cga.eq(d_entry.is_cga), rec.cga_id.eq(d_entry.cga_id),
                         rec.cga_cta_id.eq(cp.cga_cta_id)]

        # the state after a record: +1 on the position (PLAIN) or on the rank digits. A digit
        # wraps when it holds its limit - 1 (a register loaded with the grid) and the carry
        # comes in, so the carries are an AND of parallel compares, not a chain of adders.
        x2 = pos[0] + 1
        wx = eq(pos[0], last["ux"])
        y2 = pos[1] + wx
        wy = wx & eq(pos[1], last["uy"])
        step_pos = [Mux(wx, 0, x2)[:p.GX_W], Mux(wy, 0, y2)[:p.GY_W], (pos[2] + wy)[:p.GZ_W]]
        step_dig, carry = {}, Const(1)
        for n, lim in (("rx", "ix"), ("ry", "iy"), ("rz", "iz"), ("vx", "ox"), ("vy", "oy")):
            wrap = carry & eq(dig[n], last[lim])
            step_dig[n] = Mux(wrap, 0, dig[n] + carry)
            carry = wrap
        step_dig["vz"] = dig["vz"] + carry
        step_dig["r"] = Mux(eq(dig["r"], last["isz"]), 0, dig["r"] + 1)
        step_dig["rho"] = dig["rho"] + 1
        with m.If(take_run):
            m.d.sync += [q.eq(a) for q, a in zip(pos, adv)]
            m.d.sync += [dig[n].eq(d_dig[n]) for n in dig]
            m.d.sync += [e_left.eq(d_entry.body.run.mine), e_meta.eq(d_entry)]
        with m.Elif(emit):
            # the position stays on the run's last CTA (the next delta counts from there)
            with m.If(plain & ~eq_const(e_left, 1)):
                m.d.sync += [q.eq(sp) for q, sp in zip(pos, step_pos)]
            with m.If(~plain):
                m.d.sync += [dig[n].eq(step_dig[n]) for n in dig]
            m.d.sync += e_left.eq(e_left - 1)
        with m.If(e_take & eq_const(d_kind, _GRID)):
            m.d.sync += [ecfg[k].eq(dcfg[k]) for k in ecfg]
            m.d.sync += [last[k].eq(dcfg[k] - 1) for k in last]
            m.d.sync += [o.eq(dcfg[f"o{a}"] * dcfg[f"i{a}"]) for o, a in zip(oi, "xyz")]
            m.d.sync += [q.eq(0) for q in pos]

        m.d.comb += self.idle.eq(~fifo.r_rdy & ~d_valid & is_zero(e_left) & ~out.valid)
        return m
