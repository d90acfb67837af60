"""``wd_legacy``: the prior-art baseline distributor (WD-F30; G-LEGACY) [seed ¶0127, ¶0130].

Cycle-explicit: at most one CTA per cycle, on the SM with the most free slots (real A1, which
includes its own commits of earlier cycles), ties to the lowest index, with the CTA ID computed
centrally and carried in a LAUNCH_ID beat. A level-GPC CGA spends one cycle choosing the GPC
(largest total free among those that fit, with a credit; ties to the lowest index) and then one
cycle per CTA, the credit taken at rank 0. Levels GPU, GPU_FLAT and CPC are BAD_LEVEL (WD-E4).
"""

from golden.wdist.emit import SeqCounter, pad
from golden.wdist.formats import Beat, Kind, Level, Mode, TraceKind, TraceRec, lin2xyz
from golden.wdist.raster import grast_ctaid
from golden.wdist.session import DONE, MORE, NEVER_FITS, WAIT_CGA_FIT, WAIT_SLOTS

__all__ = ["Legacy"]


class Legacy:
    """Drives the head grid one cycle at a time against ``tracker`` (the real state)."""

    def __init__(self, params, tracker):
        self.p = params
        self.tracker = tracker
        self.seq = SeqCounter(params.SEQ_W)
        self.gstar = None        # chosen GPC of the CGA being placed
        self.rank = 0
        self.used = set()        # SMs of this CGA (MC)
        self.cga_seq = 0

    def cycle(self, grid):
        """One cycle on GridRun ``grid``: (outcome, events). ``events`` as in SessionResult."""
        cmd = grid.cmd
        events = []

        def beat(b):
            if not grid.grid_sent:
                events.append(("beat", Beat.grid_beat(cmd)))
                grid.grid_sent = True
            events.append(("beat", b))

        p, t = self.p, self.tracker
        shape = cmd.shape
        if cmd.level == Level.PLAIN:
            free = t.free_vector(shape)
            m = max(free)
            if m == 0:
                return (NEVER_FITS if t.empty() else WAIT_SLOTS), events
            s = free.index(m)
            g, i = p.gpc_of(s)
            t.commit(s, 1, shape)
            k = cmd.ctas - grid.remaining
            cnt = [0] * p.SM_PER_GPC[g]
            cnt[i] = 1
            beat(Beat(Kind.LAUNCH_ID, cmd.grid_id, seq=self.seq.alloc(), gpc=g, cnt=pad(p, cnt),
                      end_of_cga=1, ctaid=lin2xyz(k, cmd.grid_x, cmd.grid_y)))
            grid.remaining -= 1
            grid.launched += 1
            return (DONE if grid.remaining == 0 else MORE), events
        # level GPC
        isz = cmd.isz
        if self.gstar is None:                       # choice cycle
            best, best_sum = None, -1
            for g in range(p.N_GPC):
                f = [t.free(s, shape) for s in p.sms(g)]
                fits = sum(f) >= isz if cmd.mode == Mode.LB else sum(x >= 1 for x in f) >= isz
                if fits and t.credit[g] >= 1 and sum(f) > best_sum:
                    best, best_sum = g, sum(f)
            if best is None:
                never = t.empty()
                events.append(("trace", TraceRec(TraceKind.FAIL, grid_id=cmd.grid_id,
                                                 never_fits=int(never))))
                return (NEVER_FITS if never else WAIT_CGA_FIT), events
            self.gstar, self.rank, self.used = best, 0, set()
            return MORE, events
        g = self.gstar
        cand = [(t.free(s, shape), s) for s in p.sms(g)
                if not (cmd.mode == Mode.MC and s in self.used)]
        m = max(f for f, _ in cand)
        s = min(s for f, s in cand if f == m)
        assert m >= 1, "legacy: the chosen GPC ran out of slots"
        r = self.rank
        if r == 0:
            t.commit_credit(g)
            self.cga_seq = self.seq.alloc()
        t.commit(s, 1, shape)
        self.used.add(s)
        u = cmd.units - grid.remaining
        U = cmd.unit_grid
        ctaid, cci = grast_ctaid(Level.GPC, cmd.inner, (1, 1, 1), lin2xyz(u, U[0], U[1]), r)
        cnt = [0] * p.SM_PER_GPC[g]
        cnt[s - p.base(g)] = 1
        last = int(r == isz - 1)
        beat(Beat(Kind.LAUNCH_ID, cmd.grid_id, seq=self.cga_seq, gpc=g, cnt=pad(p, cnt),
                  first_rank=r, is_cga=1, gcga_first=int(r == 0), gcga_last=last, end_of_cga=last,
                  ctaid=ctaid, cga_cta_id=cci))
        self.rank += 1
        if last:
            self.gstar = None
            grid.remaining -= 1
            grid.launched += 1
            return (DONE if grid.remaining == 0 else MORE), events
        return MORE, events
