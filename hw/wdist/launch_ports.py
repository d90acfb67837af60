"""The ports every launcher has (the shadow session controller and the legacy baseline), so a
top can take either (WD-C20 ``DISTRIBUTOR``)."""

from amaranth import Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.formats import cmd_fields, raster_beat_fields
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, is_zero, nonzero
from hw.common.params import reject

__all__ = ["LauncherPorts"]


class LauncherPorts(wiring.Component):
    """Base of ``Launcher`` and ``Legacy``: their layouts and members.

    Members
    -------
    grid : In(stream.Signature(grid_layout))
        A legal command from the command checker with its unit grid (``cmd``, ``unit_x``,
        ``unit_y``, ``unit_z``). Taken when idle; one grid at a time.
    free : In(ArrayLayout(FREE_W, N_SM))
        The resource tracker's A1 for the head shape (combinational from its used counters).
    credit : In(ArrayLayout(8, N_GPC))
    empty : In(1)
        The tracker's WD-F4 ``empty`` (NEVER_FITS, WD-E5).
    dirty : In(1)
        A completion was accepted since the last attempt (the top's register).
    attempt : Out(1)
        A snapshot (shadow) or a placement / choice attempt (legacy): the top clears ``dirty``
        (a completion in the same cycle sets it again: set wins).
    commit, commit_a, commit_shape, credit_dec : Out
        CTAs per SM of the head shape and the GPCs that take a credit, to the tracker.
    beat : Out(stream.Signature(raster_beat_fields))
        GRID and LAUNCH (LAUNCH_ID) beats with ``cga_id`` 0, for the GPM stage.
    fail, never_fits : Out(1)
        A FAIL event (WD-F14), and with it whether the grid ends in NEVER_FITS.
    result : Out(stream.Signature(result_layout))
        One per grid when it ends: ``code`` 0 or NEVER_FITS (5) with ``info`` = units launched.
    stall : Out(3)
        WAIT_SLOTS (2) or WAIT_CGA_FIT (3) while waiting for ``dirty``, else 0.
    next_seq : Out(SEQ_W)
        The next sequence number (dbg sel 10).
    busy : Out(1)
        A grid is in progress.
    grid_id : Out(GRID_ID_W)
        The head grid's ``grid_id`` (valid while ``busy``).
    tr_ok_single : In(1)
        The trace unit can take a single record (SELECT, FAIL) this cycle
        (``hw.wdist.trace.TraceUnit``); tied high without a trace port. A launcher does not
        take the step that makes an event while it is low.

    Only with ``trace_batches`` (the shadow launcher; the legacy baseline traces FAIL records
    alone):

    tr_ok_batch : In(1)
        The trace unit can take a batch (SNAP / QUERY records) this cycle.
    tr_snap, tr_query, tr_select : Out(1)
        Trace strobes (WD-I11): a snapshot (the trace unit copies the tracker's ``free``,
        ``credit``, ``empty`` of this cycle, which the launcher samples too), a step's or round's
        answers (``tr_q_*``), a SELECT record (``tr_best``, ``tr_win_mask``). A FAIL record is
        ``fail`` (with ``never_fits``).
    tr_step, tr_pass : Out(8), Out(2)
        The step / round and the ``pass`` of the strobe.
    tr_q_valid, tr_q_cause, tr_q_speed, tr_q_credit, tr_q_lat, tr_q_a : Out
        The answers of every GPC (``tr_q_a`` per global SM) with their issue-to-response
        latency.
    tr_best, tr_win_mask : Out
    """

    def __init__(self, params, trace_batches=True):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {params!r}")
        p = self.p = params
        self.cmd_layout = struct_layout(cmd_fields(p))
        self.grid_layout = data.StructLayout({"cmd": self.cmd_layout, "unit_x": p.GX_W,
                                              "unit_y": p.GY_W, "unit_z": p.GZ_W})
        self.beat_fields = raster_beat_fields(p)
        self.beat_layout = struct_layout(self.beat_fields)
        self.shape_layout = data.StructLayout({"regs_g": 9, "smem_g": 10, "warps": 7})
        self.result_layout = data.StructLayout({"grid_id": p.GRID_ID_W, "code": 4, "info": 16})
        super().__init__({
            "grid": In(stream.Signature(self.grid_layout)),
            "free": In(data.ArrayLayout(p.FREE_W, p.N_SM)),
            "credit": In(data.ArrayLayout(8, p.N_GPC)),
            "empty": In(1), "dirty": In(1),
            "attempt": Out(1),
            "commit": Out(1), "commit_a": Out(data.ArrayLayout(p.CNT_W, p.N_SM)),
            "commit_shape": Out(self.shape_layout), "credit_dec": Out(p.N_GPC),
            "beat": Out(stream.Signature(self.beat_layout)),
            "fail": Out(1), "never_fits": Out(1),
            "result": Out(stream.Signature(self.result_layout)),
            "stall": Out(3), "next_seq": Out(p.SEQ_W), "busy": Out(1),
            "grid_id": Out(p.GRID_ID_W), "tr_ok_single": In(1),
            **(self._batch_ports(p) if trace_batches else {}),
        })

    @staticmethod
    def _batch_ports(p):
        return {"tr_ok_batch": In(1),
                "tr_snap": Out(1), "tr_query": Out(1), "tr_select": Out(1),
                "tr_step": Out(8), "tr_pass": Out(2),
                "tr_q_valid": Out(p.N_GPC), "tr_q_cause": Out(data.ArrayLayout(2, p.N_GPC)),
                "tr_q_speed": Out(data.ArrayLayout(p.FREE_W, p.N_GPC)),
                "tr_q_credit": Out(data.ArrayLayout(8, p.N_GPC)),
                "tr_q_lat": Out(data.ArrayLayout(8, p.N_GPC)),
                "tr_q_a": Out(data.ArrayLayout(p.CNT_W, p.N_SM)),
                "tr_best": Out(p.FREE_W), "tr_win_mask": Out(p.N_GPC)}

    def grid_head(self, m, state, result_state):
        """What both launchers do alike: the head grid's command register ``c`` and its
        ``launched`` count (16 bits, the WD-E5 ``info``), ``busy`` / ``grid.ready`` from the
        ``state`` enum (IDLE = 0), ``commit_shape`` from ``c``, and the ``result`` stream.
        Returns (c, launched, finish) where ``finish(code)`` gives the statements that offer
        the grid's result and move to ``result_state``."""
        c = Signal(self.cmd_layout, name="c")
        launched = Signal(16, name="launched")
        st = state.as_value()
        m.d.comb += [self.busy.eq(nonzero(st)), self.grid.ready.eq(is_zero(st)),
                     self.grid_id.eq(c.grid_id),
                     self.commit_shape.regs_g.eq(c.regs_g), self.commit_shape.smem_g.eq(c.smem_g),
                     self.commit_shape.warps.eq(c.warps)]
        res = self.result
        with m.If(res.valid & res.ready):
            m.d.sync += res.valid.eq(0)

        def finish(code):
            return [res.valid.eq(1), res.payload.grid_id.eq(c.grid_id), res.payload.code.eq(code),
                    res.payload.info.eq(Mux(eq_const(code, 0), 0, launched)),
                    state.eq(result_state)]
        return c, launched, finish
