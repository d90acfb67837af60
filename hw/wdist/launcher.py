"""``wd_gpu2gpc``: the shadow-state session controller with its mock GPCs (WD-F4..F18, WD-F33;
G-SESS-PLAIN, G-SESS-FLAT, G-SESS-GPC, G-SESS-GPU, G-A5, G-EMIT).

A session starts with a snapshot of the tracker's ``free`` and ``credit`` into the shadow and
clears ``dirty``. Then:

- **PLAIN**: one global water-fill over all SMs (a ``PlaceEngine`` of N_SM SMs) with
  N' = min(remaining, Σf), one commit of every share, and one LAUNCH beat per GPC with a share,
  all under one ``seq``. Σf = 0 waits for ``dirty`` (WAIT_SLOTS, not a FAIL event), or is
  NEVER_FITS on an empty snapshot.
- **GPU_FLAT** (WD-F33): the same global fill for one GPU CGA of isz CTAs, all or nothing:
  Σf < isz is a FAIL event (WAIT_CGA_FIT, or NEVER_FITS on an empty snapshot); otherwise
  exactly isz CTAs, one beat per GPC share with ``first_rank`` the running rank and
  ``end_of_cga`` on the last share. No credit, no CGA ID; one GPU CGA per session.
- **GPC** (LB or MC): A5 steps until the grid's CGAs are exhausted, a step finds no valid GPC
  (a FAIL event: WAIT_CGA_FIT, or NEVER_FITS at the first step of an empty snapshot) or
  SESSION_MAX_STEPS steps ran (then a new session at once). A step queries every ``MockGpc``
  in parallel, takes the best speed, lets every GPC tied at it (ascending, at most the CGAs
  remaining) win, commits the winners and cancels the other valid answers in one cycle, and
  emits one beat per winner with its own ``seq``.
- **GPU** (WD-F15, WD-F16): one GPU CGA of n = out_x·out_y·out_z GPC CGAs per session.
  Pass I: query rounds over every mock GPC with the reservations accumulating, cnt += the
  valid answers of a round, until cnt ≥ n; a round with no valid answer RESETs the mock GPCs'
  launch registers and is a FAIL event (WAIT_CGA_FIT, or NEVER_FITS on an empty snapshot).
  No commit in Pass I. Pass II: RESET the launch registers (the free-slot registers keep the
  snapshot), allocate one ``seq``, and run A5 steps limited to n − placed, committing each one
  (credits too) and emitting one beat per GPC CGA v with ``first_rank`` = v·isz,
  ``gcga_first`` = ``gcga_last`` = 1 and ``end_of_cga`` only on v = n − 1. A Pass II step with
  no valid GPC cannot happen after Pass I (§6 item 6); if it did, the grid ends with
  ``result.code`` INTERNAL (15).

Level CPC is not built; the command checker must answer it BAD_LEVEL
(``CommandCheck(levels=Launcher.LEVELS)``). The ports match ``Legacy``'s, so a top can take
either.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import enum
from amaranth.utils import ceil_log2

from golden.wdist.formats import Err, Kind, Level, Mode, Pass
from hw.common.lintops import eq, eq_const, ge, is_zero, lt, nonzero
from hw.wdist.beatq import beat_queue, grid_beat
from hw.wdist.engine import PlaceEngine
from hw.wdist.launch_ports import LauncherPorts
from hw.wdist.mock_gpc import MockGpc, Op

__all__ = ["Launcher"]


class _State(enum.Enum, shape=4):
    IDLE = 0
    SNAP = 1
    QUERY = 2        # GPC, GPU: ask every mock GPC
    RESP = 3         # GPC, GPU: wait for every answer
    SELECT = 4       # GPC, GPU Pass II: best, winners, commit / cancel; GPU Pass I: count
    EMIT = 5         # GPC, GPU: one beat per winner
    PCHECK = 6       # PLAIN: N' = min(remaining, Σf); GPU_FLAT: Σf >= isz
    PRESP = 7        # PLAIN, GPU_FLAT: the global fill
    PEMIT = 8        # PLAIN, GPU_FLAT: one beat per GPC share
    WAIT = 9
    RESULT = 10


def _lowest(m, mask, n, name):
    """(one-hot of the lowest set bit, its index), as signals: Amaranth emits an expression
    again at every use, and these are used per SM."""
    onehot = Signal(n, name=f"{name}_onehot")
    idx_s = Signal(range(max(2, n)), name=f"{name}_idx")
    idx, seen = 0, Const(0, 1)
    for g in range(n):
        hit = mask[g] & ~seen
        m.d.comb += onehot[g].eq(hit)
        idx = Mux(hit, g, idx)
        seen = seen | mask[g]
    m.d.comb += idx_s.eq(idx)
    return onehot, idx_s


def _popcount(bits, n):
    return sum((bits[g] for g in range(1, n)), bits[0])


class Launcher(LauncherPorts):
    """The shadow-state launcher (``DISTRIBUTOR = "shadow"``), levels PLAIN, GPC, GPU and
    GPU_FLAT.

    Parameters
    ----------
    params : WdistParams

    Members
    -------
    See :class:`~hw.wdist.launch_ports.LauncherPorts`.
    """

    #: the levels it places; the command checker answers the others BAD_LEVEL (WD-E4)
    LEVELS = frozenset({Level.PLAIN, Level.GPC, Level.GPU, Level.GPU_FLAT})

    def elaborate(self, platform):
        p = self.p
        m = Module()
        G, W = p.N_GPC, p.FREE_W
        state = Signal(_State)
        st = state.as_value()
        c, launched, finish = self.grid_head(m, state, _State.RESULT)
        unit = [Signal(p.GX_W, name="unit_x"), Signal(p.GY_W, name="unit_y")]
        plain = eq_const(c.level, Level.PLAIN)
        flat = eq_const(c.level, Level.GPU_FLAT)
        gpu = eq_const(c.level, Level.GPU)
        glob = plain | flat                         # the global fill (PLAIN, GPU_FLAT)
        seq = self.next_seq
        remaining = Signal(p.GX_W + p.GY_W + p.GZ_W)
        empty_snap = Signal()
        step = Signal(8)
        isz = Signal(18)
        grid_sent = Signal()
        n_gcga = Signal(15)                         # GPU: GPC CGAs per GPU CGA
        cnt = Signal(16)                            # GPU Pass I: valid answers so far
        placed = Signal(16)                         # GPU Pass II: GPC CGAs placed
        pass2 = Signal()                            # GPU: in Pass II
        rank = Signal(p.RANK_W)                     # GPU, GPU_FLAT: first_rank of the next beat

        bt, w_en, room = beat_queue(m, p, self.beat, self.beat_layout,
                                     zero=("cga_id", "ctaid_x", "ctaid_y", "ctaid_z",
                                           "cga_cta_id"))
        m.d.comb += bt.grid_id.eq(c.grid_id)

        res = self.result

        def count(n):                               # launched += n, saturating at 65535
            total = launched + n
            return launched.eq(Mux(nonzero(total[16:]), 0xFFFF, total[:16]))

        # ---------------- the mock GPCs (levels GPC and GPU) -----------------------------------
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

        # best speed over the valid answers, the tied GPCs, the first `limit` of them: the CGAs
        # remaining (GPC), the GPC CGAs left to place (GPU Pass II)
        limit = Signal(len(remaining))
        m.d.comb += limit.eq(Mux(gpu, (n_gcga - placed)[:len(placed)], remaining))
        # a chain of signals: an expression used twice per step would be emitted 2^G times
        best = Const(0, W)
        for g in range(G):
            nxt = Signal(W, name=f"best_upto{g}")
            m.d.comb += nxt.eq(Mux(r_valid[g] & lt(best, r_speed[g]), r_speed[g], best))
            best = nxt
        best_s = best
        # (signals, not expressions: Amaranth emits an expression again at every use)
        tied, win = Signal(G), Signal(G)
        m.d.comb += tied.eq(Cat(*[r_valid[g] & eq(r_speed[g], best_s) for g in range(G)]))
        before = Const(0, ceil_log2(G + 1))
        for g in range(G):
            m.d.comb += win[g].eq(tied[g] & lt(before, limit))
            before = before + tied[g]
        n_win = _popcount(win, G)
        n_valid = _popcount(r_valid, G)

        # ---------------- the global fill (PLAIN, GPU_FLAT) ------------------------------------
        m.submodules.fill = eng = PlaceEngine(p.N_SM, W, p.SM_PER_TPC, p.CNT_W)
        fs = [Signal(W, name=f"fs{s}") for s in range(p.N_SM)]
        pa = [Signal(p.CNT_W, name=f"pa{s}") for s in range(p.N_SM)]
        sum_f = sum(fs[1:], fs[0])
        total = Signal(len(sum_f))          # its full width: a slice of the sum would be an alias
        m.d.comb += total.eq(sum_f)
        n_fill = Signal(len(eng.i.payload.n))
        m.d.comb += [eng.i.payload.f[s].eq(fs[s]) for s in range(p.N_SM)]
        m.d.comb += [eng.i.payload.n.eq(n_fill), eng.i.payload.mode.eq(Mode.LB)]
        chunk_seq = Signal(p.SEQ_W)                 # the seq of a PLAIN chunk or a GPU CGA
        share = Cat(*[nonzero(Cat(*[pa[s] for s in p.sms(g)])) for g in range(G)])

        def fail_event(never):
            """A FAIL event (WD-F14): the pulse, then NEVER_FITS (WD-E5) or the wait."""
            m.d.comb += [self.fail.eq(1), self.never_fits.eq(never)]
            with m.If(never):
                m.d.sync += finish(Err.NEVER_FITS)
            with m.Else():
                m.d.sync += state.eq(_State.WAIT)

        def reset_mocks():
            return [x for mg in mgs for x in (mg.op.eq(1), mg.op_kind.eq(Op.RESET))]

        # ---------------- trace (WD-I11): context, answers, issue-to-response latency -----------
        m.d.comb += [self.tr_step.eq(Mux(glob, 0, step)),
                     self.tr_pass.eq(Mux(glob, Pass.PLAIN,
                                         Mux(gpu, Mux(pass2, Pass.PASS2, Pass.PASS1),
                                             Pass.GPC_STEP)))]
        for g, mg in enumerate(mgs):
            lat = Signal(8, name=f"lat{g}")
            with m.If(mg.q.valid & mg.q.ready):
                m.d.sync += lat.eq(1)
            with m.Elif(asked[g] & ~mg.resp.valid & ~eq_const(lat, 255)):
                m.d.sync += lat.eq(lat + 1)
            r = mg.resp.payload
            m.d.comb += [self.tr_q_valid[g].eq(r.valid), self.tr_q_cause[g].eq(r.cause),
                         self.tr_q_speed[g].eq(r.speed), self.tr_q_credit[g].eq(r.credit),
                         self.tr_q_lat[g].eq(lat)]
            m.d.comb += [self.tr_q_a[p.base(g) + i].eq(r.a[i]) for i in range(p.SM_PER_GPC[g])]

        # ---------------- the cycle ------------------------------------------------------------
        first, first_g = _lowest(m, pend, G, "first")
        pend_now = Signal(G)                        # PEMIT: the GPC shares still to send
        m.d.comb += pend_now.eq(Mux(asked[0], pend, share))
        f1, fg = _lowest(m, pend_now, G, "share")
        with m.If(eq_const(st, _State.IDLE.value)):
            with m.If(self.grid.valid):
                gp = self.grid.payload
                cmd = gp.cmd
                n_units = Mux(eq_const(cmd.level, Level.PLAIN),
                              cmd.grid_x * cmd.grid_y * cmd.grid_z,
                              gp.unit_x * gp.unit_y * gp.unit_z)
                m.d.sync += [c.eq(cmd), unit[0].eq(gp.unit_x), unit[1].eq(gp.unit_y),
                             remaining.eq(n_units), launched.eq(0), grid_sent.eq(0),
                             isz.eq(cmd.in_x * cmd.in_y * cmd.in_z),
                             n_gcga.eq(cmd.out_x * cmd.out_y * cmd.out_z), state.eq(_State.SNAP)]
        with m.Elif(eq_const(st, _State.SNAP.value)):
            with m.If(self.tr_ok_batch):                        # the SNAP records (WD-I11)
                m.d.comb += [self.attempt.eq(1), self.tr_snap.eq(1)]
                m.d.sync += [empty_snap.eq(self.empty), step.eq(0), cnt.eq(0), pass2.eq(0)]
                m.d.sync += [fs[s].eq(self.free[s]) for s in range(p.N_SM)]
                m.d.comb += [mg.snap.eq(~glob) for mg in mgs]
                m.d.sync += [state.eq(Mux(glob, _State.PCHECK, _State.QUERY)), asked.eq(0)]
        # ---- levels GPC and GPU ----------------------------------------------------------------
        with m.Elif(eq_const(st, _State.QUERY.value)):
            now = Cat(*[mg.q.valid & mg.q.ready for mg in mgs])
            m.d.comb += [mg.q.valid.eq(~asked[g]) for g, mg in enumerate(mgs)]
            m.d.sync += asked.eq(asked | now)
            with m.If(is_zero(~(asked | now))):
                m.d.sync += state.eq(_State.RESP)
        with m.Elif(eq_const(st, _State.RESP.value)):
            all_valid = Cat(*[mg.resp.valid for mg in mgs]).all() & self.tr_ok_batch
            m.d.comb += [mg.resp.ready.eq(all_valid) for mg in mgs]
            m.d.comb += self.tr_query.eq(all_valid)             # the QUERY records
            with m.If(all_valid):
                m.d.sync += [r_valid.eq(Cat(*[mg.resp.payload.valid for mg in mgs])),
                             state.eq(_State.SELECT)]
                for g, mg in enumerate(mgs):
                    m.d.sync += r_speed[g].eq(mg.resp.payload.speed)
                    m.d.sync += [r_a[g][i].eq(mg.resp.payload.a[i])
                                 for i in range(p.SM_PER_GPC[g])]
        with m.Elif(eq_const(st, _State.SELECT.value)):
            with m.If(self.tr_ok_single):                  # a SELECT or FAIL record
                with m.If(gpu & ~pass2):                            # GPU Pass I (WD-F15)
                    new_cnt = cnt + n_valid
                    with m.If(is_zero(r_valid)):                    # a FAIL event (WD-F14)
                        m.d.comb += reset_mocks()
                        fail_event(empty_snap)
                    with m.Elif(ge(new_cnt, n_gcga)):               # Pass II (WD-F16)
                        m.d.comb += reset_mocks()
                        m.d.sync += [pass2.eq(1), placed.eq(0), rank.eq(0), chunk_seq.eq(seq),
                                     seq.eq(seq + 1), state.eq(_State.QUERY), asked.eq(0),
                                     step.eq(0)]
                    with m.Else():                              # the next round
                        m.d.sync += [cnt.eq(new_cnt), state.eq(_State.QUERY), asked.eq(0),
                                     step.eq(step + 1)]
                with m.Elif(is_zero(r_valid)):
                    with m.If(gpu):                                 # Pass II failed: WD-E11
                        m.d.sync += finish(Err.INTERNAL)
                    with m.Else():                                  # a FAIL event (WD-F14)
                        fail_event(is_zero(step) & empty_snap)
                with m.Else():
                    for g, mg in enumerate(mgs):
                        m.d.comb += [mg.op.eq(r_valid[g]), mg.op_cga.eq(1),
                                     mg.op_kind.eq(Mux(win[g], Op.COMMIT, Op.CANCEL))]
                        base = p.base(g)
                        m.d.comb += [self.commit_a[base + i].eq(Mux(win[g], r_a[g][i], 0))
                                     for i in range(p.SM_PER_GPC[g])]
                    m.d.comb += [self.commit.eq(1), self.credit_dec.eq(win),
                                 self.tr_select.eq(1), self.tr_best.eq(best_s),
                                 self.tr_win_mask.eq(win)]
                    m.d.sync += [pend.eq(win), step.eq(step + 1), state.eq(_State.EMIT)]
                    with m.If(gpu):
                        new_placed = placed + n_win
                        m.d.sync += placed.eq(new_placed)
                        with m.If(eq(new_placed, n_gcga)):          # the GPU CGA is placed
                            m.d.sync += [remaining.eq(remaining - 1), count(1)]
                    with m.Else():
                        m.d.sync += [remaining.eq(remaining - n_win), count(n_win)]
        with m.Elif(eq_const(st, _State.EMIT.value)):
            gpu_done = eq(placed, n_gcga)
            with m.If(room & ~grid_sent):
                m.d.comb += grid_beat(bt, w_en, c, unit[0], unit[1], plain)
                m.d.sync += grid_sent.eq(1)
            with m.Elif(room & nonzero(pend)):
                m.d.comb += [w_en.eq(1), bt.kind.eq(Kind.LAUNCH),
                             bt.seq.eq(Mux(gpu, chunk_seq, seq)), bt.gpc.eq(first_g),
                             bt.first_rank.eq(Mux(gpu, rank, 0)), bt.is_cga.eq(1),
                             bt.gcga_first.eq(1), bt.gcga_last.eq(1),
                             bt.end_of_cga.eq(~gpu | (gpu_done & is_zero(pend & ~first)))]
                for i in range(p.S_MAX):
                    v = Const(0, p.CNT_W)
                    for g in range(G):
                        if i < p.SM_PER_GPC[g]:
                            v = Mux(first[g], r_a[g][i], v)
                    m.d.comb += bt.cnt[i].eq(v)
                m.d.sync += [pend.eq(pend & ~first), rank.eq(rank + isz)]
                with m.If(~gpu):
                    m.d.sync += seq.eq(seq + 1)
            with m.Elif(is_zero(pend)):
                with m.If(gpu & ~gpu_done):                     # the next Pass II step
                    m.d.sync += [state.eq(_State.QUERY), asked.eq(0)]
                with m.Elif(is_zero(remaining)):
                    m.d.sync += finish(0)
                with m.Elif(gpu | eq_const(step, p.SESSION_MAX_STEPS)):
                    m.d.sync += state.eq(_State.SNAP)
                with m.Else():
                    m.d.sync += [state.eq(_State.QUERY), asked.eq(0)]
        # ---- PLAIN and GPU_FLAT ---------------------------------------------------------------
        with m.Elif(eq_const(st, _State.PCHECK.value)):
            n = Mux(lt(remaining, total), remaining, total)
            with m.If(flat & ~self.tr_ok_single):               # a FAIL record may follow
                pass
            with m.Elif(flat):
                with m.If(lt(total, isz)):                      # a FAIL event (WD-F14, WD-F33)
                    fail_event(empty_snap)
                with m.Else():
                    m.d.sync += [n_fill.eq(isz), state.eq(_State.PRESP)]
            with m.Elif(is_zero(total)):                        # not a FAIL event (WD-F17)
                with m.If(empty_snap):
                    m.d.sync += finish(Err.NEVER_FITS)
                with m.Else():
                    m.d.sync += state.eq(_State.WAIT)
            with m.Else():
                m.d.sync += [n_fill.eq(n), state.eq(_State.PRESP)]
        with m.Elif(eq_const(st, _State.PRESP.value)):
            m.d.comb += [eng.i.valid.eq(~asked[0]), eng.o.ready.eq(self.tr_ok_single)]
            with m.If(eng.i.valid & eng.i.ready):
                m.d.sync += asked.eq(1)
            with m.If(eng.o.valid & self.tr_ok_single):         # commit, the SELECT record
                m.d.comb += [self.tr_select.eq(1), self.tr_best.eq(eng.o.payload.speed),
                             self.tr_win_mask.eq(Cat(*[
                                 nonzero(Cat(*[eng.o.payload.a[s] for s in p.sms(g)]))
                                 for g in range(G)]))]
                m.d.sync += [pa[s].eq(eng.o.payload.a[s]) for s in range(p.N_SM)]
                m.d.sync += [state.eq(_State.PEMIT), asked.eq(0), rank.eq(0)]
                m.d.comb += [self.commit.eq(1)]
                m.d.comb += [self.commit_a[s].eq(eng.o.payload.a[s]) for s in range(p.N_SM)]
                units = Mux(flat, 1, n_fill)
                m.d.sync += [remaining.eq(remaining - units), count(units),
                             chunk_seq.eq(seq), seq.eq(seq + 1)]
        with m.Elif(eq_const(st, _State.PEMIT.value)):
            with m.If(room & ~grid_sent):
                m.d.comb += grid_beat(bt, w_en, c, unit[0], unit[1], plain)
                m.d.sync += [grid_sent.eq(1), pend.eq(pend_now), asked.eq(1)]
            with m.Elif(room & nonzero(pend_now)):
                m.d.comb += [w_en.eq(1), bt.kind.eq(Kind.LAUNCH), bt.seq.eq(chunk_seq),
                             bt.gpc.eq(fg), bt.first_rank.eq(Mux(flat, rank, 0)),
                             bt.end_of_cga.eq(is_zero(pend_now & ~f1))]
                cnts = []
                for i in range(p.S_MAX):
                    v = Const(0, p.CNT_W)
                    for g in range(G):
                        if i < p.SM_PER_GPC[g]:
                            v = Mux(f1[g], pa[p.base(g) + i], v)
                    cnt_i = Signal(p.CNT_W, name=f"share_cnt{i}")
                    m.d.comb += [cnt_i.eq(v), bt.cnt[i].eq(cnt_i)]
                    cnts.append(cnt_i)
                m.d.sync += [pend.eq(pend_now & ~f1), asked.eq(1),
                             rank.eq(rank + sum(cnts[1:], cnts[0]))]
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
