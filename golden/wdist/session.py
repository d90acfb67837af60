"""``wd_gpu2gpc`` sessions (G-SESS-PLAIN, -FLAT, -GPC, -GPU and level CPC; WD-F13..F18, WD-F32,
WD-F33) [seed ¶0194, ¶0203–0221].

A session starts from a snapshot (the real ``free`` vector for the head grid's shape, the real
credits and ``empty``) and runs to the end of its unit, chunk or step budget. Its output is the
exact, ordered event list the block produces: trace records (SNAP, QUERY, SELECT, FAIL) and LAUNCH
beats, preceded by the grid's GRID beat before its first LAUNCH beat. The snapshot inputs are
explicit, so the same call is the engine harness of the §5 vectors and the WD-V7 recomputation
from an observed SNAP. Timing (``ts``, ``lat``) is not modelled here: it is the RTL's, bounded by
WD-P4/P10, and the spec fixes no cycle-exact session latency.
"""

from dataclasses import dataclass, field

from golden.wdist.cpc import cpc_engine
from golden.wdist.emit import SeqCounter, launch_beat, pad
from golden.wdist.formats import (Beat, Command, Level, Pass, TraceKind, TraceRec)
from golden.wdist.select import select_step
from golden.wdist.shadow import Shadow
from golden.wdist.waterfill import lb_place

__all__ = ["GridRun", "SessionResult", "Launcher", "DONE", "MORE", "WAIT_SLOTS", "WAIT_CGA_FIT",
           "NEVER_FITS", "INTERNAL"]

DONE, MORE, WAIT_SLOTS, WAIT_CGA_FIT, NEVER_FITS, INTERNAL = (
    "DONE", "MORE", "WAIT_SLOTS", "WAIT_CGA_FIT", "NEVER_FITS", "INTERNAL")


@dataclass
class GridRun:
    """The head grid's progress: ``remaining`` CTAs (PLAIN) or top-level units (other levels);
    ``launched`` top-level units (the WD-E5 ``info``); ``next_unit``: index of the next unit."""
    cmd: Command
    remaining: int
    launched: int = 0
    grid_sent: bool = False

    @classmethod
    def start(cls, cmd):
        return cls(cmd, cmd.ctas if cmd.level == Level.PLAIN else cmd.units)


@dataclass
class SessionResult:
    outcome: str
    events: list = field(default_factory=list)    # ("trace", TraceRec) | ("beat", Beat)
    fail: bool = False
    launched: int = 0                              # top-level units (PLAIN: CTAs) this session
    commits: list = field(default_factory=list)    # (g, a, cga) in commit order

    @property
    def beats(self):
        return [b for k, b in self.events if k == "beat"]

    @property
    def trace(self):
        return [r for k, r in self.events if k == "trace"]


class Launcher:
    """The session controller with its mock GPCs. ``tracker``: the real state to commit into
    (``ResourceTracker``), or None in an engine harness."""

    def __init__(self, params, tracker=None):
        self.p = params
        self.shadow = Shadow(params)
        self.seq = SeqCounter(params.SEQ_W)
        self.sess = 0
        self.tracker = tracker
        self._res = None
        self._shape = None
        self.shadow.commit_hook = self._on_commit

    def _on_commit(self, g, a, cga):
        self._res.commits.append((g, tuple(a), cga))
        t = self.tracker
        if t is not None:
            for s, k in zip(self.p.sms(g), a):
                t.commit(s, k, self._shape)
            if cga:
                t.commit_credit(g)

    # events ------------------------------------------------------------------------------------
    def _trace(self, **kw):
        self._res.events.append(("trace", TraceRec(sess=self._sess, grid_id=self._grid.cmd.grid_id,
                                                   **kw)))

    def _beat(self, beat):
        if not self._grid.grid_sent:
            self._res.events.append(("beat", Beat.grid_beat(self._grid.cmd)))
            self._grid.grid_sent = True
        self._res.events.append(("beat", beat))

    def _queries(self, resp, step, pass_):
        for g, r in enumerate(resp):
            self._trace(kind=TraceKind.QUERY, step=step, pass_=pass_, gpc=g, valid=r.valid,
                        cause=int(r.cause), speed=r.speed,
                        vec=pad(self.p, r.a if r.valid else ()), credit=r.credit)

    def _fail(self, step, pass_, never):
        self._res.fail = True
        self._trace(kind=TraceKind.FAIL, step=step, pass_=pass_, never_fits=int(never))
        self._res.outcome = NEVER_FITS if never else WAIT_CGA_FIT

    # entry point -------------------------------------------------------------------------------
    def run_session(self, grid, free, credit, empty):
        """One session of the head grid ``grid`` (a GridRun, updated) from the snapshot
        (``free`` per global SM, ``credit`` per GPC, ``empty``)."""
        p = self.p
        self._grid, self._shape = grid, grid.cmd.shape
        self._res = SessionResult(DONE)
        self._sess = self.sess
        self.sess = (self.sess + 1) & 0xFFFF
        self.shadow.snapshot(free, credit, empty)
        for g in range(p.N_GPC):
            self._trace(kind=TraceKind.SNAP, gpc=g, vec=pad(p, self.shadow.fs(g)),
                        credit=self.shadow.CS[g], empty=int(bool(empty)))
        level = grid.cmd.level
        if level in (Level.PLAIN, Level.GPU_FLAT):
            self._global_fill(grid, level == Level.GPU_FLAT)
        elif level in (Level.GPC, Level.CPC):
            self._gpc_session(grid)
        elif level == Level.GPU:
            self._gpu_session(grid)
        else:
            raise ValueError(f"level {level} has no session")
        res, self._res = self._res, None
        return res

    # G-SESS-PLAIN and G-SESS-FLAT ---------------------------------------------------------------
    def _global_fill(self, grid, flat):
        p, sh, cmd = self.p, self.shadow, grid.cmd
        total = sum(sh.FS)
        if flat:
            n = cmd.isz
            if total < n:
                self._fail(0, Pass.PLAIN, sh.empty)
                return
        else:
            n = min(grid.remaining, total)
            if n == 0:
                self._res.outcome = NEVER_FITS if sh.empty else WAIT_SLOTS
                return
        r = lb_place(sh.FS, n, p.FREE_W)
        shares = []
        for g in range(p.N_GPC):
            a_g = [r.a[s] for s in p.sms(g)]
            if sum(a_g):
                sh.reserve(g, a_g, count=0)
                sh.commit(g, a_g, cga=False)
                shares.append((g, a_g))
        self._trace(kind=TraceKind.SELECT, pass_=Pass.PLAIN, best=r.speed,
                    win_mask=sum(1 << g for g, _ in shares))
        seq = self.seq.alloc()
        rank = 0
        for i, (g, a_g) in enumerate(shares):
            last = int(i == len(shares) - 1)
            self._beat(launch_beat(p, cmd.grid_id, seq, g, a_g, first_rank=rank if flat else 0,
                                   end_of_cga=last))
            rank += sum(a_g)
        if flat:
            grid.remaining -= 1
            grid.launched += 1
            self._res.launched = 1
        else:
            grid.remaining -= n
            grid.launched += n
            self._res.launched = n
        self._res.outcome = DONE if grid.remaining == 0 else MORE

    # G-SESS-GPC and level CPC -------------------------------------------------------------------
    def _gpc_session(self, grid):
        p, sh, cmd = self.p, self.shadow, grid.cmd
        cpc = cmd.level == Level.CPC
        isz, m = cmd.isz, cmd.n
        engine = cpc_engine(p, isz, m, cmd.mode) if cpc else None
        k = 0
        while grid.remaining > 0 and k < p.SESSION_MAX_STEPS:
            st = select_step(sh, isz, cmd.mode, grid.remaining, engine=engine)
            self._queries(st.resp, k, Pass.GPC_STEP)
            if not st.ok:
                self._fail(k, Pass.GPC_STEP, k == 0 and sh.empty)
                return
            self._trace(kind=TraceKind.SELECT, step=k, pass_=Pass.GPC_STEP, best=st.best,
                        win_mask=st.win_mask)
            for g in st.winners:
                seq = self.seq.alloc()
                parts = st.resp[g].parts
                for w, (_, a_w) in enumerate(parts):
                    self._beat(launch_beat(p, cmd.grid_id, seq, g, a_w, first_rank=w * isz,
                                           is_cga=1, gcga_first=int(w == 0),
                                           gcga_last=int(w == len(parts) - 1),
                                           end_of_cga=int(w == len(parts) - 1)))
                grid.remaining -= 1
                grid.launched += 1
                self._res.launched += 1
            k += 1
        self._res.outcome = DONE if grid.remaining == 0 else MORE

    # G-SESS-GPU ---------------------------------------------------------------------------------
    def _gpu_session(self, grid):
        p, sh, cmd = self.p, self.shadow, grid.cmd
        isz, n = cmd.isz, cmd.n
        cnt, rnd = 0, 0
        while True:                                              # Pass I
            resp = [sh.query(g, isz, cmd.mode) for g in range(p.N_GPC)]
            self._queries(resp, rnd, Pass.PASS1)
            nvalid = sum(r.valid for r in resp)
            if nvalid == 0:
                sh.reset()
                self._fail(rnd, Pass.PASS1, sh.empty)
                return
            cnt += nvalid
            rnd += 1
            if cnt >= n:
                break
        sh.reset()                                               # Pass II
        seq = self.seq.alloc()
        placed, step = 0, 0
        while placed < n:
            st = select_step(sh, isz, cmd.mode, n - placed)
            self._queries(st.resp, step, Pass.PASS2)
            if not st.ok:
                self._res.outcome = INTERNAL
                return
            self._trace(kind=TraceKind.SELECT, step=step, pass_=Pass.PASS2, best=st.best,
                        win_mask=st.win_mask)
            for i, g in enumerate(st.winners):
                v = placed + i
                self._beat(launch_beat(p, cmd.grid_id, seq, g, st.resp[g].a, first_rank=v * isz,
                                       is_cga=1, gcga_first=1, gcga_last=1,
                                       end_of_cga=int(v == n - 1)))
            placed += len(st.winners)
            step += 1
        grid.remaining -= 1
        grid.launched += 1
        self._res.launched = 1
        self._res.outcome = DONE if grid.remaining == 0 else MORE
