"""``wd_gpu2gpc``: the shadow-state session controller with its mock GPCs (WD-F4..F18;
G-SESS-PLAIN, G-SESS-GPC, G-A5, G-EMIT).

A session starts with a snapshot of the tracker's ``free`` and ``credit`` into the shadow and
clears ``dirty``. Then:

- **PLAIN**: one global water-fill over all SMs (a ``PlaceEngine`` of N_SM SMs) with
  N' = min(remaining, Σf), one commit of every share, and one LAUNCH beat per GPC with a share,
  all under one ``seq``. Σf = 0 waits for ``dirty`` (WAIT_SLOTS, not a FAIL event), or is
  NEVER_FITS on an empty snapshot.
- **GPC** (LB or MC): A5 steps until the grid's CGAs are exhausted, a step finds no valid GPC
  (a FAIL event: WAIT_CGA_FIT, or NEVER_FITS at the first step of an empty snapshot) or
  SESSION_MAX_STEPS steps ran (then a new session at once). A step queries every ``MockGpc``
  in parallel, takes the best speed, lets every GPC tied at it (ascending, at most the CGAs
  remaining) win, commits the winners and cancels the other valid answers in one cycle, and
  emits one beat per winner with its own ``seq``.

Levels GPU, GPU_FLAT and CPC are not built yet; the command checker must answer them BAD_LEVEL
(``CommandCheck(levels=...)``). The ports match ``Legacy``'s, so a top can take either.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import enum
from amaranth.utils import ceil_log2

from golden.wdist.formats import Err, Kind, Level, Mode
from hw.common.lintops import eq, eq_const, is_zero, lt, nonzero
from hw.wdist.beatq import beat_queue, grid_beat
from hw.wdist.engine import PlaceEngine
from hw.wdist.launch_ports import LauncherPorts
from hw.wdist.mock_gpc import MockGpc, Op

__all__ = ["Launcher"]


class _State(enum.Enum, shape=4):
    IDLE = 0
    SNAP = 1
    QUERY = 2        # GPC: ask every mock GPC
    RESP = 3         # GPC: wait for every answer
    SELECT = 4       # GPC: best, winners, commit / cancel
    EMIT = 5         # GPC: one beat per winner
    PCHECK = 6       # PLAIN: N' = min(remaining, Σf)
    PRESP = 7        # PLAIN: the global fill
    PEMIT = 8        # PLAIN: one beat per GPC share
    WAIT = 9
    RESULT = 10


def _lowest(mask, n):
    """(one-hot of the lowest set bit, its index)."""
    onehot, idx, seen = [], 0, Const(0, 1)
    for g in range(n):
        hit = mask[g] & ~seen
        onehot.append(hit)
        idx = Mux(hit, g, idx)
        seen = seen | mask[g]
    return Cat(*onehot), idx


class Launcher(LauncherPorts):
    """The shadow-state launcher (``DISTRIBUTOR = "shadow"``), levels PLAIN and GPC.

    Parameters
    ----------
    params : WdistParams

    Members
    -------
    See :class:`~hw.wdist.launch_ports.LauncherPorts`.
    """

    #: the levels it places; the command checker answers the others BAD_LEVEL (WD-E4)
    LEVELS = frozenset({Level.PLAIN, Level.GPC})

    def elaborate(self, platform):
        p = self.p
        m = Module()
        G, W = p.N_GPC, p.FREE_W
        state = Signal(_State)
        st = state.as_value()
        c, launched, finish = self.grid_head(m, state, _State.RESULT)
        unit = [Signal(p.GX_W, name="unit_x"), Signal(p.GY_W, name="unit_y")]
        plain = eq_const(c.level, Level.PLAIN)
        seq = self.next_seq
        remaining = Signal(p.GX_W + p.GY_W + p.GZ_W)
        empty_snap = Signal()
        step = Signal(8)
        isz = Signal(18)
        grid_sent = Signal()

        bt, w_en, room = beat_queue(m, p, self.beat, self.beat_layout,
                                     zero=("cga_id", "first_rank", "ctaid_x", "ctaid_y",
                                           "ctaid_z", "cga_cta_id"))
        m.d.comb += bt.grid_id.eq(c.grid_id)

        res = self.result

        def count(n):                               # launched += n, saturating at 65535
            total = launched + n
            return launched.eq(Mux(nonzero(total[16:]), 0xFFFF, total[:16]))

        # ---------------- the mock GPCs (level GPC) --------------------------------------------
        mgs = []
        for g in range(G):
            mg = MockGpc(p.SM_PER_GPC[g], W, p.SM_PER_TPC, p.CNT_W)
            m.submodules[f"mock_gpc{g}"] = mg
            mgs.append(mg)
            base = p.base(g)
            # a CGA larger than the query's n field can hold cannot fit: ask for 0 (a FAIL)
            n_w = len(mg.q.payload.n)
            m.d.comb += [mg.snap_credit.eq(self.credit[g]),
                         mg.q.payload.n.eq(Mux(nonzero(isz[n_w:]), 0, isz[:n_w])),
                         mg.q.payload.mode.eq(c.mode)]
            m.d.comb += [mg.snap_free[i].eq(self.free[base + i]) for i in range(p.SM_PER_GPC[g])]
        r_valid = Signal(G)
        r_speed = [Signal(W, name=f"r_speed{g}") for g in range(G)]
        r_a = [[Signal(p.CNT_W, name=f"r_a{g}_{i}") for i in range(p.SM_PER_GPC[g])]
               for g in range(G)]
        asked = Signal(G)
        pend = Signal(G)                            # winners (GPC) or shares (PLAIN) to emit

        # best speed over the valid answers, the tied GPCs, the first `remaining` of them
        best = Const(0, W)
        for g in range(G):
            best = Mux(r_valid[g] & lt(best, r_speed[g]), r_speed[g], best)
        best_s = Signal(W)
        m.d.comb += best_s.eq(best)
        tied = Cat(*[r_valid[g] & eq(r_speed[g], best_s) for g in range(G)])
        win_bits, before = [], Const(0, ceil_log2(G + 1))
        for g in range(G):
            win_bits.append(tied[g] & lt(before, remaining))
            before = before + tied[g]
        win = Cat(*win_bits)
        n_win = sum((win[g] for g in range(1, G)), win[0])

        # ---------------- the global fill (PLAIN) ----------------------------------------------
        m.submodules.fill = eng = PlaceEngine(p.N_SM, W, p.SM_PER_TPC, p.CNT_W)
        fs = [Signal(W, name=f"fs{s}") for s in range(p.N_SM)]
        pa = [Signal(p.CNT_W, name=f"pa{s}") for s in range(p.N_SM)]
        total = sum(fs[1:], fs[0])
        n_fill = Signal(len(eng.i.payload.n))
        m.d.comb += [eng.i.payload.f[s].eq(fs[s]) for s in range(p.N_SM)]
        m.d.comb += [eng.i.payload.n.eq(n_fill), eng.i.payload.mode.eq(Mode.LB)]
        chunk_seq = Signal(p.SEQ_W)
        share = Cat(*[nonzero(Cat(*[pa[s] for s in p.sms(g)])) for g in range(G)])

        # ---------------- the cycle ------------------------------------------------------------
        first, first_g = _lowest(pend, G)
        with m.If(eq_const(st, _State.IDLE.value)):
            with m.If(self.grid.valid):
                gp = self.grid.payload
                cmd = gp.cmd
                n_units = Mux(eq_const(cmd.level, Level.PLAIN),
                              cmd.grid_x * cmd.grid_y * cmd.grid_z,
                              gp.unit_x * gp.unit_y * gp.unit_z)
                m.d.sync += [c.eq(cmd), unit[0].eq(gp.unit_x), unit[1].eq(gp.unit_y),
                             remaining.eq(n_units), launched.eq(0), grid_sent.eq(0),
                             isz.eq(cmd.in_x * cmd.in_y * cmd.in_z), state.eq(_State.SNAP)]
        with m.Elif(eq_const(st, _State.SNAP.value)):
            m.d.comb += self.attempt.eq(1)
            m.d.sync += [empty_snap.eq(self.empty), step.eq(0)]
            m.d.sync += [fs[s].eq(self.free[s]) for s in range(p.N_SM)]
            m.d.comb += [mg.snap.eq(~plain) for mg in mgs]
            m.d.sync += [state.eq(Mux(plain, _State.PCHECK, _State.QUERY)), asked.eq(0)]
        # ---- GPC level -------------------------------------------------------------------------
        with m.Elif(eq_const(st, _State.QUERY.value)):
            now = Cat(*[mg.q.valid & mg.q.ready for mg in mgs])
            m.d.comb += [mg.q.valid.eq(~asked[g]) for g, mg in enumerate(mgs)]
            m.d.sync += asked.eq(asked | now)
            with m.If(is_zero(~(asked | now))):
                m.d.sync += state.eq(_State.RESP)
        with m.Elif(eq_const(st, _State.RESP.value)):
            all_valid = Cat(*[mg.resp.valid for mg in mgs]).all()
            m.d.comb += [mg.resp.ready.eq(all_valid) for mg in mgs]
            with m.If(all_valid):
                m.d.sync += [r_valid.eq(Cat(*[mg.resp.payload.valid for mg in mgs])),
                             state.eq(_State.SELECT)]
                for g, mg in enumerate(mgs):
                    m.d.sync += r_speed[g].eq(mg.resp.payload.speed)
                    m.d.sync += [r_a[g][i].eq(mg.resp.payload.a[i])
                                 for i in range(p.SM_PER_GPC[g])]
        with m.Elif(eq_const(st, _State.SELECT.value)):
            with m.If(is_zero(r_valid)):                        # a FAIL event (WD-F14)
                never = is_zero(step) & empty_snap
                m.d.comb += [self.fail.eq(1), self.never_fits.eq(never)]
                with m.If(never):
                    m.d.sync += finish(Err.NEVER_FITS)
                with m.Else():
                    m.d.sync += state.eq(_State.WAIT)
            with m.Else():
                for g, mg in enumerate(mgs):
                    m.d.comb += [mg.op.eq(r_valid[g]), mg.op_cga.eq(1),
                                 mg.op_kind.eq(Mux(win[g], Op.COMMIT, Op.CANCEL))]
                    base = p.base(g)
                    m.d.comb += [self.commit_a[base + i].eq(Mux(win[g], r_a[g][i], 0))
                                 for i in range(p.SM_PER_GPC[g])]
                m.d.comb += [self.commit.eq(1), self.credit_dec.eq(win)]
                m.d.sync += [pend.eq(win), remaining.eq(remaining - n_win), count(n_win),
                             step.eq(step + 1), state.eq(_State.EMIT)]
        with m.Elif(eq_const(st, _State.EMIT.value)):
            with m.If(room & ~grid_sent):
                m.d.comb += grid_beat(bt, w_en, c, unit[0], unit[1], plain)
                m.d.sync += grid_sent.eq(1)
            with m.Elif(room & nonzero(pend)):
                m.d.comb += [w_en.eq(1), bt.kind.eq(Kind.LAUNCH), bt.seq.eq(seq),
                             bt.gpc.eq(first_g), bt.is_cga.eq(1), bt.gcga_first.eq(1),
                             bt.gcga_last.eq(1), bt.end_of_cga.eq(1)]
                for i in range(p.S_MAX):
                    v = Const(0, p.CNT_W)
                    for g in range(G):
                        if i < p.SM_PER_GPC[g]:
                            v = Mux(first[g], r_a[g][i], v)
                    m.d.comb += bt.cnt[i].eq(v)
                m.d.sync += [seq.eq(seq + 1), pend.eq(pend & ~first)]
            with m.Elif(is_zero(pend)):
                with m.If(is_zero(remaining)):
                    m.d.sync += finish(0)
                with m.Elif(eq_const(step, p.SESSION_MAX_STEPS)):
                    m.d.sync += state.eq(_State.SNAP)
                with m.Else():
                    m.d.sync += [state.eq(_State.QUERY), asked.eq(0)]
        # ---- PLAIN ----------------------------------------------------------------------------
        with m.Elif(eq_const(st, _State.PCHECK.value)):
            n = Mux(lt(remaining, total), remaining, total)
            with m.If(is_zero(total)):                          # not a FAIL event (WD-F17)
                with m.If(empty_snap):
                    m.d.sync += finish(Err.NEVER_FITS)
                with m.Else():
                    m.d.sync += state.eq(_State.WAIT)
            with m.Else():
                m.d.sync += [n_fill.eq(n), state.eq(_State.PRESP)]
        with m.Elif(eq_const(st, _State.PRESP.value)):
            m.d.comb += [eng.i.valid.eq(~asked[0]), eng.o.ready.eq(1)]
            with m.If(eng.i.valid & eng.i.ready):
                m.d.sync += asked.eq(1)
            with m.If(eng.o.valid):
                m.d.sync += [pa[s].eq(eng.o.payload.a[s]) for s in range(p.N_SM)]
                m.d.sync += [state.eq(_State.PEMIT), asked.eq(0)]
                m.d.comb += [self.commit.eq(1)]
                m.d.comb += [self.commit_a[s].eq(eng.o.payload.a[s]) for s in range(p.N_SM)]
                m.d.sync += [remaining.eq(remaining - n_fill), count(n_fill),
                             chunk_seq.eq(seq), seq.eq(seq + 1)]
        with m.Elif(eq_const(st, _State.PEMIT.value)):
            pend_now = Mux(asked[0], pend, share)
            f1, fg = _lowest(pend_now, G)
            with m.If(room & ~grid_sent):
                m.d.comb += grid_beat(bt, w_en, c, unit[0], unit[1], plain)
                m.d.sync += [grid_sent.eq(1), pend.eq(pend_now), asked.eq(1)]
            with m.Elif(room & nonzero(pend_now)):
                m.d.comb += [w_en.eq(1), bt.kind.eq(Kind.LAUNCH), bt.seq.eq(chunk_seq),
                             bt.gpc.eq(fg), bt.end_of_cga.eq(is_zero(pend_now & ~f1))]
                for i in range(p.S_MAX):
                    v = Const(0, p.CNT_W)
                    for g in range(G):
                        if i < p.SM_PER_GPC[g]:
                            v = Mux(f1[g], pa[p.base(g) + i], v)
                    m.d.comb += bt.cnt[i].eq(v)
                m.d.sync += [pend.eq(pend_now & ~f1), asked.eq(1)]
            with m.Elif(is_zero(pend_now)):
                m.d.sync += asked.eq(0)
                with m.If(is_zero(remaining)):
                    m.d.sync += finish(0)
                with m.Else():
                    m.d.sync += state.eq(_State.SNAP)
        with m.Elif(eq_const(st, _State.WAIT.value)):
            m.d.comb += self.stall.eq(Mux(plain, 2, 3))
            with m.If(self.dirty):
                m.d.sync += state.eq(_State.SNAP)
        with m.Else():                                          # RESULT
            with m.If(~res.valid | res.ready):
                m.d.sync += state.eq(_State.IDLE)
        return m
