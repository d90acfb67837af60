"""``wd_top`` as a cycle-stepped golden model: command FIFO, the shadow launcher (or the legacy
baseline), the beat stage with the GPMs and the per-SM rasterizers, and the completion path.

What is cycle-exact and what is not. The spec fixes the per-cycle behaviour of the legacy
baseline (G-LEGACY), the GPM's ID pool (G-GPM, WD-GV12) and the visibility rules of §4 ("an event
transferred in cycle t is visible from t+1"; a snapshot reads every commit of earlier cycles;
``dirty`` is cleared by a snapshot and set by any completion, set winning). It bounds, but does not
fix, the shadow launcher's session latency (WD-P4, WD-P10). This model therefore runs a whole
session in the cycle of its snapshot (latency 0) and takes a new session only when the beat
queue has drained; RTL is compared with it per session (WD-V7: from each SNAP the events are
recomputed with ``Launcher.run_session``), per beat stream (G-RAST, G-GPM), and cycle-exactly only
for the legacy placements and the GPM pool.

Order of one cycle (``step``):

1. ``cfg`` (accepted only when quiescent at the start of the cycle, WD-E9, WD-E10);
2. launcher: validate the FIFO head (one cycle), or run one session / one legacy cycle;
3. beat stage: the head beat transfers if it needs no CGA ID or one is free (else WAIT_CGA_ID);
   the GPM, every rasterizer and ``bcast`` take it in lock step;
4. ``flush_req`` out (one), 5. ``cga_complete`` out (one: ID recycled next cycle, credit back,
   ``dirty``), 6. ``cta_complete`` in, 7. ``dsmem_flush_done`` in, 8. ``cmd`` in (visible at the
   head from the next cycle), 9. end of cycle (released IDs become allocatable).

All outputs are always ready here (back-pressure is the testbench's business, WD-V15).
"""

from collections import deque
from dataclasses import replace

from golden.wdist.formats import (Err, ErrBeat, Kind, Shape, Stall, TraceKind)
from golden.wdist.gpm import Gpm
from golden.wdist.legacy import Legacy
from golden.wdist.raster import Rasterizer
from golden.wdist.session import (DONE, INTERNAL, MORE, NEVER_FITS, WAIT_CGA_FIT, WAIT_SLOTS,
                                  GridRun, Launcher)
from golden.wdist.tracker import ResourceTracker
from golden.wdist.validate import check_fits_ports, command_error

__all__ = ["WdistModel"]

_STALL = {WAIT_SLOTS: Stall.WAIT_SLOTS, WAIT_CGA_FIT: Stall.WAIT_CGA_FIT}


class WdistModel:
    def __init__(self, params):
        p = self.p = params
        self.tracker = ResourceTracker(p)
        self.legacy = p.DISTRIBUTOR == "legacy"
        self.launcher = Legacy(p, self.tracker) if self.legacy else Launcher(p, self.tracker)
        self.flush_q, self.complete_q = deque(), deque()
        self.gpms = [Gpm(p, g, self.flush_q, self.complete_q) for g in range(p.N_GPC)]
        self.rasters = [Rasterizer(p, s) for s in range(p.N_SM)]
        self.cmd_fifo = deque()
        self.head = None
        self.wait = None
        self.beat_q = deque()
        self.dirty = 1
        self.t = 0
        self.fail_cnt = 0
        self.stall = Stall.NONE
        self.stalls_seen = set()
        # observed outputs, each (cycle, record)
        self.bcast = []
        self.cta_ids = [[] for _ in range(p.N_SM)]
        self.flush_reqs = []
        self.cga_completes = []
        self.errs = []
        self.traces = []
        self.fails = []
        self.sessions = []        # (cycle, cmd, free, credit, empty, SessionResult) per session
        self.launched = {}        # grid_id -> top-level units launched, per finished grid
        self.new_records = []     # (s, CtaRecord) of the current cycle, for the SM stubs
        self.completions = []     # (cycle, sm, is_cga, cga_id, Shape) accepted cta_complete
        self.flush_dones = []     # (cycle, sm, cga_id) accepted dsmem_flush_done
        self.commands = []        # (cycle, Command) accepted on cmd

    # status ------------------------------------------------------------------------------------
    def cmd_ready(self):
        return len(self.cmd_fifo) < self.p.CMD_FIFO_DEPTH

    def quiescent(self):
        """WD-F31."""
        t = self.tracker
        return (not self.cmd_fifo and self.head is None and not self.beat_q
                and all(u.slots == 0 and u == Shape() for u in t.used)
                and all(t.credit[g] == self.p.credit_reset(g) for g in range(self.p.N_GPC))
                and all(g.idle() for g in self.gpms) and not self.flush_q and not self.complete_q)

    def idle_launcher(self):
        return not self.cmd_fifo and self.head is None and not self.beat_q

    def _err(self, code, grid_id=None, info=0):
        if grid_id is None:
            grid_id = self.head.cmd.grid_id if self.head is not None else 0
        self.errs.append((self.t, ErrBeat(int(code), grid_id, min(info, 0xFFFF))))

    # one cycle ---------------------------------------------------------------------------------
    def step(self, cmd=None, cta_complete=None, flush_done=None, cfg=None):
        """Advance one cycle. ``cmd``: a Command offered on ``cmd`` (accepted when ``cmd_ready``);
        ``cta_complete``: (sm, is_cga, cga_id, Shape); ``flush_done``: (sm, cga_id); ``cfg``: dict
        of ``ResourceTracker.cfg_write`` arguments. Returns True when ``cmd`` was accepted."""
        p = self.p
        self.new_records = []
        quiet = self.quiescent()
        if cfg is not None:
            if not quiet:
                self._err(Err.CFG_BUSY)
            else:
                e = self.tracker.cfg_write(**cfg)
                if e is not None:
                    self._err(e, info=cfg.get("sm", 0))
        self.stall = Stall.NONE
        self._launch()
        self._beat_stage()
        if self.flush_q:
            r = self.flush_q.popleft()
            self.gpms[r.gpc].flush_sent(r)
            self.flush_reqs.append((self.t, r))
        if self.complete_q:
            r = self.complete_q.popleft()
            self.gpms[r.gpc].complete_sent(r)
            self.tracker.return_credit(r.gpc)
            self.cga_completes.append((self.t, r))
            self.dirty = 1
        if cta_complete is not None:
            self._cta_complete(*cta_complete)
        if flush_done is not None:
            self._flush_done(*flush_done)
        accepted = False
        if cmd is not None and self.cmd_ready():
            check_fits_ports(p, cmd)
            self.cmd_fifo.append(cmd)
            self.commands.append((self.t, cmd))
            accepted = True
        for g in self.gpms:
            g.tick()
        if self.stall == Stall.NONE and not self.idle_launcher():
            self.stall = Stall.RUNNING
        self.stalls_seen.add(self.stall)
        self.t += 1
        return accepted

    def _launch(self):
        p = self.p
        if self.head is None:
            if not self.cmd_fifo:
                return
            cmd = self.cmd_fifo.popleft()
            e = command_error(p, cmd)
            if e is not None:
                self._err(e, cmd.grid_id)
            else:
                self.head, self.wait = GridRun.start(cmd), None
            return
        if self.wait is not None:
            if not self.dirty:
                self.stall = _STALL[self.wait]
                return
            self.wait = None
        if self.legacy:
            if len(self.beat_q) >= 2:
                return
            self.dirty = 0
            outcome, events = self.launcher.cycle(self.head)
            fail = any(k == "trace" and r.kind == TraceKind.FAIL for k, r in events)
        else:
            if self.beat_q:
                return
            t = self.tracker
            shape = self.head.cmd.shape
            free, credit, empty = t.free_vector(shape), list(t.credit), t.empty()
            self.dirty = 0
            res = self.launcher.run_session(self.head, free, credit, empty)
            self.sessions.append((self.t, self.head.cmd, free, credit, empty, res))
            outcome, events, fail = res.outcome, res.events, res.fail
        for k, x in events:
            if k == "trace":
                x.ts = self.t
                self.traces.append(x)
            else:
                self.beat_q.append(x)
        if fail:
            self.fail_cnt = (self.fail_cnt + 1) & 0xFFFF
            self.fails.append(self.t)
        head = self.head
        if outcome == DONE:
            self.launched[head.cmd.grid_id] = head.launched
            self.head = None
        elif outcome in (WAIT_SLOTS, WAIT_CGA_FIT):
            self.wait = outcome
            self.stall = _STALL[outcome]
        elif outcome in (NEVER_FITS, INTERNAL):
            self._err(Err.NEVER_FITS if outcome == NEVER_FITS else Err.INTERNAL,
                      head.cmd.grid_id, head.launched)
            self.launched[head.cmd.grid_id] = head.launched
            self.head = None
        else:
            assert outcome == MORE

    def _beat_stage(self):
        if not self.beat_q:
            return
        b = self.beat_q[0]
        if b.kind != Kind.GRID and b.is_cga:
            gpm = self.gpms[b.gpc]
            cid = gpm.try_alloc(b)
            if cid is None:
                self.stall = Stall.WAIT_CGA_ID
                return
            b = replace(b, cga_id=cid)
            gpm.accept_beat(b, cid)
        self.beat_q.popleft()
        self.bcast.append((self.t, b))
        for r in self.rasters:
            for rec in r.beat(b):
                self.cta_ids[r.s].append((self.t, rec))
                self.new_records.append((r.s, rec))

    def _cta_complete(self, sm, is_cga, cga_id, shape):
        p, t = self.p, self.tracker
        e = t.complete_error(sm, shape)
        if e is not None:
            self._err(e, info=sm)
            return
        g = p.gpc_of(sm)[0]
        if is_cga:
            e = self.gpms[g].cta_complete_error(cga_id)
            if e is not None:
                self._err(e, info=cga_id)
                return
        t.complete(sm, shape)
        self.completions.append((self.t, sm, is_cga, cga_id, shape))
        if is_cga:
            self.gpms[g].cta_complete(cga_id)
        self.dirty = 1

    def _flush_done(self, sm, cga_id):
        if not 0 <= sm < self.p.N_SM:
            self._err(Err.FLUSH_UNEXPECTED, info=cga_id)
            return
        gpm = self.gpms[self.p.gpc_of(sm)[0]]
        e = gpm.flush_done_error(cga_id)
        if e is not None:
            self._err(e, info=cga_id)
            return
        gpm.flush_done(cga_id)
        self.flush_dones.append((self.t, sm, cga_id))

    # dbg (WD-I12) -------------------------------------------------------------------------------
    def dbg(self, sel, idx):
        p, t = self.p, self.tracker
        if 0 <= sel <= 3:
            if not 0 <= idx < p.N_SM:
                return 0
            u = t.used[idx]
            return (u.regs_g, u.smem_g, u.warps, u.slots)[sel]
        if sel == 4:
            return t.credit[idx] if 0 <= idx < p.N_GPC else 0
        if sel in (5, 6):
            if not 0 <= idx < p.N_GPC:
                return 0
            pool = self.gpms[idx].pool
            return len(pool.free) if sel == 5 else pool.size - len(pool.free)
        if sel == 7:
            return len(self.cmd_fifo)
        if sel == 8:
            return t.resident()
        if sel == 9:
            return self.fail_cnt
        if sel == 10:
            return self.launcher.seq.value
        if sel == 11:
            if self.head is None or not 0 <= idx < p.N_SM:
                return 0
            return t.free(idx, self.head.cmd.shape)
        return 0
