"""``wd_legacy``: the prior-art baseline distributor (WD-F30, WD-P8; G-LEGACY).

One CTA per cycle on the SM with the most free slots (the real A1 from the resource tracker,
which already holds this baseline's commits of earlier cycles), ties to the lowest index, the
CTA ID computed centrally and carried in a LAUNCH_ID beat. A level-GPC CGA spends one cycle
choosing its GPC (the largest total free among those that fit and hold a credit, ties to the
lowest index) and then one cycle per CTA; the credit is taken at rank 0. Only PLAIN and GPC
grids reach it (the command checker answers the others with BAD_LEVEL, WD-E4).

Its only trace records are FAIL records (WD-I11): one per level-GPC CGA that finds no fitting
GPC, so the choice cycle waits for ``tr_ok_single``.

The GRID beat takes the cycle before the grid's first placement (the golden model emits it
beside that placement), so a grid's placements start one cycle later than G-LEGACY's; they are
otherwise the same, cycle for cycle, while the beat queue drains one beat per cycle.
"""

from amaranth import Cat, Const, Module, Mux, Signal
from amaranth.lib import enum
from amaranth.utils import ceil_log2

from golden.wdist.formats import Err, Kind, Level, Mode
from hw.common.lintops import eq, eq_const, ge, is_zero, lt, nonzero, select
from hw.wdist.beatq import beat_queue, grid_beat
from hw.wdist.launch_ports import LauncherPorts

__all__ = ["Legacy"]


class _State(enum.Enum, shape=3):
    IDLE = 0
    RUN = 2          # PLAIN: one CTA per cycle
    CHOOSE = 3       # GPC: the choice cycle
    PLACE = 4        # GPC: one rank per cycle on g*
    RESULT = 5


def _argmax(m, keys, name):
    """(index, key) of the largest key, ties to the lowest index: a tree of comparators whose
    nodes are named signals (each is read by a comparison and two multiplexers)."""
    iw = max(1, ceil_log2(len(keys)))
    nodes = [(Const(k, iw), key) for k, key in enumerate(keys)]
    level = 0
    while len(nodes) > 1:
        nxt = []
        for k in range(0, len(nodes), 2):
            if k + 1 == len(nodes):
                nxt.append(nodes[k])
                continue
            (ia, ka), (ib, kb) = nodes[k], nodes[k + 1]
            right = lt(ka, kb)                       # strictly larger on the right wins
            idx = Signal(iw, name=f"{name}_i{level}_{k // 2}")
            m.d.comb += idx.eq(Mux(right, ib, ia))
            if len(nodes) > 2:
                key = Signal(len(ka), name=f"{name}_k{level}_{k // 2}")
                m.d.comb += key.eq(Mux(right, kb, ka))
            else:                                    # the root's key: unnamed (may be unread)
                key = Mux(right, kb, ka)
            nxt.append((idx, key))
        nodes, level = nxt, level + 1
    return nodes[0]


class Legacy(LauncherPorts):
    """The baseline distributor (``DISTRIBUTOR = "legacy"``).

    Parameters
    ----------
    params : WdistParams

    Members
    -------
    See :class:`~hw.wdist.launch_ports.LauncherPorts`.
    """

    #: the levels it places; the command checker answers the others BAD_LEVEL (WD-E4)
    LEVELS = frozenset({Level.PLAIN, Level.GPC})

    def __init__(self, params):
        super().__init__(params, trace_batches=False)

    def elaborate(self, platform):
        p = self.p
        m = Module()
        state = Signal(_State)
        c, launched, finish = self.grid_head(m, state, _State.RESULT)
        unit = [Signal(p.GX_W, name="unit_x"), Signal(p.GY_W, name="unit_y"),
                Signal(p.GZ_W, name="unit_z")]
        waiting = Signal()
        seq = self.next_seq                      # the sequence counter is the port itself
        cga_seq = Signal(p.SEQ_W)

        bt, w_en, room = beat_queue(m, p, self.beat, self.beat_layout)
        m.d.comb += bt.grid_id.eq(c.grid_id)

        # position counters: PLAIN CTA k = (kx, ky, kz); GPC unit u = (ux, uy, uz) and rank r's
        # digits (rx, ry, rz) in the CGA
        kpos = [Signal(p.GX_W, name="kx"), Signal(p.GY_W, name="ky"), Signal(p.GZ_W, name="kz")]
        rdig = [Signal(6, name="rx"), Signal(6, name="ry"), Signal(6, name="rz")]
        rank = Signal(range(64 * 64 * 64))
        plain = eq_const(c.level, Level.PLAIN)
        dims = [c.grid_x, c.grid_y, c.grid_z]
        udims = unit
        last_k = Signal()
        wrap = [eq(kpos[0] + 1, Mux(plain, dims[0], udims[0])),
                eq(kpos[1] + 1, Mux(plain, dims[1], udims[1]))]
        inner = [c.in_x, c.in_y, c.in_z]
        isz = Signal(18)
        rwrap = [eq(rdig[0] + 1, inner[0]), eq(rdig[1] + 1, inner[1])]
        last_rank = eq(rank + 1, isz)

        def step_pos():
            return [kpos[0].eq(Mux(wrap[0], 0, kpos[0] + 1)),
                    kpos[1].eq(Mux(wrap[0], Mux(wrap[1], 0, kpos[1] + 1), kpos[1])),
                    kpos[2].eq(kpos[2] + (wrap[0] & wrap[1]))]

        # ------------- PLAIN: the SM with the most free slots --------------------------------
        free = [self.free[s] for s in range(p.N_SM)]
        s_best, f_best = _argmax(m, free, "pl")
        # ------------- GPC choice: per GPC sum f, count f >= 1, credit ------------------------
        mc = eq_const(c.mode, Mode.MC)
        keys = []
        for g in range(p.N_GPC):
            sms = list(p.sms(g))
            fsum = sum((free[s] for s in sms[1:]), free[sms[0]])
            ones = sum((nonzero(free[s]) for s in sms[1:]), nonzero(free[sms[0]]))
            fits = Mux(mc, ge(ones, isz), ge(fsum, isz)) & nonzero(self.credit[g])
            key = Signal(len(fsum) + 1, name=f"gkey{g}")
            m.d.comb += key.eq(Mux(fits, fsum + 1, 0))
            keys.append(key)
        g_best, g_key = _argmax(m, keys, "gc")
        # ------------- placement on g*: the local SM with the most free slots -----------------
        gstar = Signal(max(1, ceil_log2(p.N_GPC)))
        used = Signal(p.S_MAX)                    # MC: local SMs of this CGA
        local = []
        for i in range(p.S_MAX):
            opts = [(g, free[p.base(g) + i]) for g in range(p.N_GPC) if i < p.SM_PER_GPC[g]]
            f_i = Const(0, p.FREE_W)
            for g, f in opts:
                f_i = Mux(eq_const(gstar, g), f, f_i)
            fl = Signal(p.FREE_W, name=f"gl{i}")
            m.d.comb += fl.eq(Mux(mc & used[i], 0, f_i))
            local.append(fl)
        i_best, _ = _argmax(m, local, "pg")

        # ------------- one LAUNCH_ID beat and its commit ----------------------------------------
        g_of_s = select([Const(p.gpc_of(x)[0], len(gstar)) for x in range(p.N_SM)], s_best)
        l_of_s = select([Const(p.gpc_of(x)[1], len(i_best)) for x in range(p.N_SM)], s_best)
        onehot_plain = [eq_const(s_best, x) for x in range(p.N_SM)]
        onehot_gstar = [eq_const(gstar, p.gpc_of(x)[0]) & eq_const(i_best, p.gpc_of(x)[1])
                        for x in range(p.N_SM)]

        def launch(gpc, loc, onehot, seq_v, first_rank, ctaid):
            m.d.comb += [w_en.eq(1), bt.kind.eq(Kind.LAUNCH_ID), bt.seq.eq(seq_v),
                         bt.gpc.eq(gpc), bt.first_rank.eq(first_rank),
                         bt.ctaid_x.eq(ctaid[0]), bt.ctaid_y.eq(ctaid[1]), bt.ctaid_z.eq(ctaid[2]),
                         self.commit.eq(1)]
            m.d.comb += [bt.cnt[i].eq(eq_const(loc, i)) for i in range(p.S_MAX)]
            m.d.comb += [self.commit_a[x].eq(onehot[x]) for x in range(p.N_SM)]

        # ------------- the cycle ---------------------------------------------------------------
        res = self.result

        def count_unit():
            return launched.eq(launched + nonzero(~launched))          # saturating

        grid_sent = Signal()

        def grid_beat_once():
            """The GRID beat, just before the grid's first LAUNCH_ID beat (WD-F19: a grid that
            launches nothing emits no beat)."""
            m.d.comb += grid_beat(bt, w_en, c, unit[0], unit[1], plain)
            m.d.sync += grid_sent.eq(1)

        go = room & (~waiting | self.dirty)
        st = state.as_value()
        with m.If(eq_const(st, _State.IDLE.value)):
            with m.If(self.grid.valid):
                g = self.grid.payload
                m.d.sync += [c.eq(g.cmd), unit[0].eq(g.unit_x), unit[1].eq(g.unit_y),
                             unit[2].eq(g.unit_z),
                             state.eq(Mux(eq_const(g.cmd.level, Level.PLAIN), _State.RUN,
                                          _State.CHOOSE)),
                             waiting.eq(0), launched.eq(0), grid_sent.eq(0),
                             isz.eq(g.cmd.in_x * g.cmd.in_y * g.cmd.in_z)]
                m.d.sync += [v.eq(0) for v in kpos + rdig] + [rank.eq(0)]
        with m.Elif(eq_const(st, _State.RUN.value)):
            m.d.comb += self.stall.eq(Mux(waiting & ~self.dirty, 2, 0))
            with m.If(go):
                m.d.comb += self.attempt.eq(1)
                with m.If(is_zero(f_best)):
                    with m.If(self.empty):
                        m.d.sync += finish(Err.NEVER_FITS)
                    with m.Else():
                        m.d.sync += waiting.eq(1)
                with m.Elif(~grid_sent):            # it fits: the GRID beat first
                    grid_beat_once()
                    m.d.sync += waiting.eq(0)
                with m.Else():
                    m.d.sync += waiting.eq(0)
                    launch(g_of_s, l_of_s, onehot_plain, seq, Const(0, 1), kpos)
                    m.d.comb += [bt.end_of_cga.eq(1)]
                    m.d.sync += [seq.eq(seq + 1), count_unit()] + step_pos()
                    m.d.comb += last_k.eq(eq(kpos[0] + 1, dims[0]) & eq(kpos[1] + 1, dims[1])
                                          & eq(kpos[2] + 1, dims[2]))
                    with m.If(last_k):
                        m.d.sync += finish(0)
        with m.Elif(eq_const(st, _State.CHOOSE.value)):
            m.d.comb += self.stall.eq(Mux(waiting & ~self.dirty, 3, 0))
            with m.If(go & self.tr_ok_single):      # a FAIL record waits for trace room
                m.d.comb += self.attempt.eq(1)
                with m.If(is_zero(g_key)):
                    m.d.comb += [self.fail.eq(1), self.never_fits.eq(self.empty)]
                    with m.If(self.empty):
                        m.d.sync += finish(Err.NEVER_FITS)
                    with m.Else():
                        m.d.sync += waiting.eq(1)
                with m.Else():
                    m.d.sync += [waiting.eq(0), gstar.eq(g_best), used.eq(0),
                                 state.eq(_State.PLACE), rank.eq(0)]
                    m.d.sync += [v.eq(0) for v in rdig]
        with m.Elif(eq_const(st, _State.PLACE.value)):
            with m.If(room & ~grid_sent):
                grid_beat_once()
            with m.Elif(room):
                m.d.comb += self.attempt.eq(1)
                first = is_zero(rank)
                this_seq = Mux(first, seq, cga_seq)
                with m.If(first):
                    m.d.sync += [cga_seq.eq(seq), seq.eq(seq + 1)]
                    m.d.comb += self.credit_dec.eq(Cat(*[eq_const(gstar, g) for g in range(p.N_GPC)]))
                launch(gstar, i_best, onehot_gstar, this_seq, rank,
                       [kpos[a] * inner[a] + rdig[a] for a in range(3)])
                m.d.comb += [bt.is_cga.eq(1), bt.gcga_first.eq(first), bt.cga_cta_id.eq(rank),
                             bt.gcga_last.eq(last_rank), bt.end_of_cga.eq(last_rank)]
                m.d.sync += [used.eq(used | Cat(*[eq_const(i_best, i) for i in range(p.S_MAX)])),
                             rank.eq(rank + 1),
                             rdig[0].eq(Mux(rwrap[0], 0, rdig[0] + 1)),
                             rdig[1].eq(Mux(rwrap[0], Mux(rwrap[1], 0, rdig[1] + 1), rdig[1])),
                             rdig[2].eq(rdig[2] + (rwrap[0] & rwrap[1]))]
                with m.If(last_rank):
                    m.d.sync += [count_unit(), state.eq(_State.CHOOSE)] + step_pos()
                    m.d.comb += last_k.eq(eq(kpos[0] + 1, udims[0])
                                          & eq(kpos[1] + 1, udims[1]))
                    with m.If(last_k & eq(kpos[2] + 1, udims[2])):
                        m.d.sync += finish(0)
        with m.Else():                           # RESULT
            with m.If(~res.valid | res.ready):
                m.d.sync += state.eq(_State.IDLE)
        return m
