"""``wd_resource_tracker``: the real state and G-A1 free slots (WD-F1, WD-F2, WD-F3, WD-F29, WD-I2).

One instance serves the whole machine. Per SM (one ``wd_sm_slots`` each, hw/wdist/sm_slots.py)
it holds the capacity registers and enable bit written by ``cfg`` (reset: the parameter maxima,
enable 1) and the used counters ``regs_g``, ``smem_g``, ``warps``, ``slots`` (reset 0); per GPC the real CGA credit (reset
``SM_PER_GPC[g] × CGA_CREDIT_PER_SM``). Commits (from the session controller) add, completions
(``cta_complete``) subtract; ``free[]`` is G-A1 of every SM for the head grid's shape, computed
combinationally from the registers, so an event transferred in cycle t is visible in ``free``,
``credit``, ``empty`` and ``dbg_data`` from cycle t + 1 (spec §4 cycle rules). The golden model is
``golden.wdist.tracker.ResourceTracker``.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.wdist.formats import Err, cfg_fields, cta_complete_fields
from golden.wdist.params import WdistParams
from hw.common.layout import struct_layout
from hw.common.lintops import eq_const, gt_const, is_zero, lt, lt_const, select
from hw.common.params import reject
from hw.wdist.sm_slots import SmSlots, resource_widths, shape_fields

__all__ = ["ResourceTracker", "shape_fields", "CREDIT_W", "DBG_SELS"]

CREDIT_W = 8
DBG_SELS = (0, 1, 2, 3, 4, 8, 11)          # the WD-I12 codes answered here; others read 0


class ResourceTracker(wiring.Component):
    """The real per-SM resource state, the real CGA credits and G-A1 for the head shape.

    Every input event of a cycle is applied at the end of that cycle; every output below is a
    combinational function of the registers (and, for the strobes, of the same cycle's inputs).

    - **cfg** (WD-I2, WD-E9, WD-E10): applied when ``quiescent`` is 1 and the write is legal.
      Not quiescent: CFG_BUSY (9, ``info`` 0) — checked first, as the golden top does
      (``WdistModel.step``); else ``sm`` ≥ N_SM or a capacity above its parameter maximum:
      CFG_BAD (10, ``info`` = sm). Either error leaves the state unchanged.
    - **commit** (WD-F1, WD-F3, WD-F6): with ``commit`` = 1, used[s] += ``commit_a[s]`` ×
      (``commit_shape``, 1 slot) for every SM s, and credit[g] −= 1 for every set bit of
      ``credit_dec`` (``credit_dec`` is ignored while ``commit`` = 0).
    - **credit_inc**: credit[g] += 1 per set bit (a ``cga_complete`` of GPC g). Credits are 8-bit
      counters; a controller never takes them below 0 or above their reset value.
    - **cta_complete** (WD-F1, WD-I5, WD-E6): ``cc_underflow`` = the payload's ``sm`` ≥ N_SM, or
      its shape exceeds a used counter of that SM, or that SM's ``slots`` is 0 — judged on the
      registers, i.e. on the commits of earlier cycles (a commit in the same cycle is not yet
      visible, §4). Underflow: error COMPLETE_UNDERFLOW (6, ``info`` = sm), nothing applied.
      Otherwise, when ``cc_veto`` = 0: used[sm] −= (shape, 1 slot) and ``completed`` pulses.
      ``cc_veto`` = 1 (the GPM's COMPLETE_BAD_CGA verdict, WD-E7) drops the completion with no
      report from here. Underflow is reported whatever ``cc_veto`` says (the golden top checks
      WD-E6 before WD-E7, so a completion that is both reports only code 6; the GPM should not
      report WD-E7 while ``cc_underflow`` is 1). ``cc_underflow`` does not depend on
      ``cc_veto``. A commit and a completion on the same SM in one cycle both apply.
    - **free** (WD-F2, WD-F29, G-A1): per SM, 0 when disabled, else the minimum of
      ``cap.slots − used.slots`` and ``(cap.x − used.x) // shape.x`` for x in warps, regs_g,
      smem_g, a zero ``shape.x`` not constraining. The quotients come from FREE_W chained
      restoring-division steps (:func:`_step`, the combinational-chain form of
      ``hw.common.serialdiv.div_step``); a quotient of 2**FREE_W or more (also a zero
      ``shape.x``) saturates at 2**FREE_W − 1, which is ≥ CTA_SLOTS and hence never below the
      slot term. A difference that would be negative (a capacity lowered below its used
      counter, which a quiescent-only ``cfg`` prevents) counts as 0. ``shape.warps`` = 0
      (rejected by WD-E3 before a grid reaches the head) is treated as zero demand.

    Used counters (and capacity registers) have the bit length of their parameter maximum
    (REG_CAP_G, SMEM_CAP_G, WARP_CAP, CTA_SLOTS: 9, 10, 7, 6 bits at the defaults, see
    ``widths``): a correct controller commits only what ``free`` allows and ``cfg`` applies
    only on a quiescent (all-zero) machine, so a counter never exceeds its capacity.

    Parameters
    ----------
    params : WdistParams
        The build (N_SM, SM_PER_GPC, capacities, CGA_CREDIT_PER_SM, FREE_W / CNT_W, SM_ID_W).

    Members
    -------
    cfg : In(stream.Signature(cfg_fields))
        ``{sm, enable, regs_cap_g, smem_cap_g, warp_cap, slot_cap}``; ``ready`` is always 1.
    quiescent : In(1)
        ``status.quiescent`` (WD-F31) in the cycle of a ``cfg`` transfer.
    shape : In(StructLayout(shape_fields))
        The head grid's CTA shape ``{regs_g, smem_g, warps}`` for ``free`` and ``dbg`` sel 11.
    free : Out(ArrayLayout(FREE_W, N_SM))
        G-A1 free slots of every SM for ``shape``.
    commit : In(1)
        Strobe: apply ``commit_a`` × ``commit_shape`` and ``credit_dec`` this cycle.
    commit_a : In(ArrayLayout(CNT_W, N_SM))
        CTAs committed per SM (all GPCs of one step together, WD-F6).
    commit_shape : In(StructLayout(shape_fields))
    credit_dec : In(N_GPC)
        −1 credit per set bit (a committed GPC CGA of GPC g); only with ``commit``.
    credit_inc : In(N_GPC)
        +1 credit per set bit (a ``cga_complete`` of GPC g transferred this cycle).
    credit : Out(ArrayLayout(8, N_GPC))
        The real credits (the registers themselves).
    cta_complete : In(stream.Signature(cta_complete_fields))
        ``{sm, is_cga, cga_id, regs_g, smem_g, warps}``; ``ready`` is always 1. ``is_cga`` and
        ``cga_id`` are not read here (the GPM judges them, WD-E7).
    cc_veto : In(1)
        The GPM rejects the current ``cta_complete`` (WD-E7): drop it silently.
    cc_underflow : Out(1)
        The current ``cta_complete`` payload underflows (WD-E6); independent of ``valid``.
    completed : Out(1)
        A ``cta_complete`` is applied this cycle (sets the controller's ``dirty``).
    err_cfg_valid, err_cfg_code (4) : Out
        One-cycle strobe, in the cycle of the ``cfg`` transfer: CFG_BUSY or CFG_BAD. The top
        forms ``info`` (0 for CFG_BUSY, else ``cfg.sm``): a port that only copies an input
        field would be an unread alias in the Verilog.
    err_cc_valid, err_cc_code (4) : Out
        One-cycle strobe, in the cycle of the ``cta_complete`` transfer: COMPLETE_UNDERFLOW
        (``info`` = ``sm``, formed by the top).
        Two strobes, because a ``cfg`` error and a completion error may occur in one cycle; the
        top enqueues both (cfg first, golden ``WdistModel.step`` order).
    all_used_zero : Out(1)
        Every used counter of every SM is 0 (WD-F31).
    credits_at_reset : Out(1)
        Every credit equals its reset value (WD-F31).
    empty : Out(1)
        ``all_used_zero & credits_at_reset`` (WD-F4 snapshot ``empty``).
    dbg_sel : In(4), dbg_idx : In(16), dbg_data : Out(32)
        Combinational WD-I12 read: sel 0–3 used regs_g / smem_g / warps / slots of SM idx,
        4 credit[idx], 8 total resident CTAs (Σ used.slots), 11 free[idx] for ``shape``; an idx
        out of range and every other sel read 0 (the top answers 5, 6, 7, 9, 10).
    """

    def __init__(self, params):
        if not isinstance(params, WdistParams):
            reject(self, f"params must be a WdistParams, got {type(params).__name__}")
        p = self.p = params
        self.shape_fields = shape_fields()
        self.cfg_fields = cfg_fields(p)
        self.cc_fields = cta_complete_fields(p)
        shape = struct_layout(self.shape_fields)
        super().__init__({
            "cfg": In(stream.Signature(struct_layout(self.cfg_fields))),
            "quiescent": In(1),
            "shape": In(shape),
            "free": Out(data.ArrayLayout(p.FREE_W, p.N_SM)),
            "commit": In(1),
            "commit_a": In(data.ArrayLayout(p.CNT_W, p.N_SM)),
            "commit_shape": In(shape),
            "credit_dec": In(p.N_GPC),
            "credit_inc": In(p.N_GPC),
            "credit": Out(data.ArrayLayout(CREDIT_W, p.N_GPC),
                          init=[p.credit_reset(g) for g in range(p.N_GPC)]),
            "cta_complete": In(stream.Signature(struct_layout(self.cc_fields))),
            "cc_veto": In(1),
            "cc_underflow": Out(1),
            "completed": Out(1),
            "err_cfg_valid": Out(1), "err_cfg_code": Out(4),
            "err_cc_valid": Out(1), "err_cc_code": Out(4),
            "all_used_zero": Out(1),
            "credits_at_reset": Out(1),
            "empty": Out(1),
            "dbg_sel": In(4), "dbg_idx": In(16), "dbg_data": Out(32),
        })

    @property
    def widths(self):
        """Register widths (regs_g, smem_g, warps, slots): the bits of each parameter maximum."""
        return resource_widths(self.p)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        S, G = p.N_SM, p.N_GPC
        names = ("regs", "smem", "warps", "slots")
        widths = self.widths

        slots = [SmSlots(p) for _ in range(S)]
        for sm, sl in enumerate(slots):
            m.submodules[f"sm{sm}"] = sl
        used = [[sl.used[n] for n in names] for sl in slots]

        # cfg (WD-I2, WD-E9, WD-E10) ----------------------------------------------------------
        cf = self.cfg.payload
        m.d.comb += self.cfg.ready.eq(1)
        cfg_bad = Signal()
        m.d.comb += cfg_bad.eq(~lt_const(cf.sm, S) | gt_const(cf.regs_cap_g, p.REG_CAP_G)
                               | gt_const(cf.smem_cap_g, p.SMEM_CAP_G)
                               | gt_const(cf.warp_cap, p.WARP_CAP)
                               | gt_const(cf.slot_cap, p.CTA_SLOTS))
        busy = ~self.quiescent
        m.d.comb += [
            self.err_cfg_valid.eq(self.cfg.valid & (busy | cfg_bad)),
            self.err_cfg_code.eq(Mux(busy, C(Err.CFG_BUSY, 4), C(Err.CFG_BAD, 4))),
        ]
        cfg_apply = self.cfg.valid & self.quiescent & ~cfg_bad
        values = (cf.regs_cap_g, cf.smem_cap_g, cf.warp_cap, cf.slot_cap)
        for s, sl in enumerate(slots):
            m.d.comb += [sl.cfg_we.eq(cfg_apply & eq_const(cf.sm, s)), sl.enable.eq(cf.enable)]
            m.d.comb += [sl.cap[n].eq(values[r][:widths[r]]) for r, n in enumerate(names)]

        # cta_complete (WD-F1, WD-E6) ---------------------------------------------------------
        cc = self.cta_complete.payload
        m.d.comb += self.cta_complete.ready.eq(1)
        sm_ok = lt_const(cc.sm, S)
        idx_w = p.SM_ID_W
        sel_used = [select([used[s][r] for s in range(S)], cc.sm[:idx_w]) for r in range(4)]
        under = self.cc_underflow
        m.d.comb += under.eq(~sm_ok | lt(sel_used[0], cc.regs_g) | lt(sel_used[1], cc.smem_g)
                             | lt(sel_used[2], cc.warps) | is_zero(sel_used[3]))
        valid_cc = self.cta_complete.valid
        apply_cc = self.completed
        m.d.comb += [
            apply_cc.eq(valid_cc & ~under & ~self.cc_veto),
            self.err_cc_valid.eq(valid_cc & under),
            self.err_cc_code.eq(C(Err.COMPLETE_UNDERFLOW, 4)),
        ]

        # used counters (WD-F1) and free slots (WD-F2, WD-F29, G-A1): in each SM's wd_sm_slots
        for s, sl in enumerate(slots):
            m.d.comb += [sl.commit.eq(self.commit), sl.commit_k.eq(self.commit_a[s]),
                         sl.commit_shape.eq(self.commit_shape),
                         sl.complete.eq(apply_cc & eq_const(cc.sm, s)),
                         sl.complete_shape.regs_g.eq(cc.regs_g),
                         sl.complete_shape.smem_g.eq(cc.smem_g),
                         sl.complete_shape.warps.eq(cc.warps),
                         sl.shape.eq(self.shape), self.free[s].eq(sl.free)]

        # credits (WD-F3) ------------------------------------------------------------------------
        dec = self.credit_dec & self.commit.replicate(G)
        for g in range(G):
            m.d.sync += self.credit[g].eq(
                (self.credit[g] + self.credit_inc[g] - dec[g])[:CREDIT_W])

        # summaries (WD-F4, WD-F31) --------------------------------------------------------------
        m.d.comb += [
            self.all_used_zero.eq(~Cat(*(u for row in used for u in row)).any()),
            self.credits_at_reset.eq(Cat(*(eq_const(self.credit[g], p.credit_reset(g))
                                           for g in range(G))).all()),
            self.empty.eq(self.all_used_zero & self.credits_at_reset),
        ]

        # debug reads (WD-I12) -------------------------------------------------------------------
        res_w = max(1, (S * p.CTA_SLOTS).bit_length())
        total = C(0, 1)
        for s in range(S):
            total = total + used[s][3]
        resident = total[:res_w]
        idx = self.dbg_idx
        sm_in = lt_const(idx, S)
        gpc_in = lt_const(idx, G)
        sm_i = idx[:idx_w]
        gpc_i = idx[:p.GPC_W]
        with m.Switch(self.dbg_sel):
            for r in range(4):
                with m.Case(r):
                    m.d.comb += self.dbg_data.eq(
                        Mux(sm_in, select([used[s][r] for s in range(S)], sm_i), 0))
            with m.Case(4):
                m.d.comb += self.dbg_data.eq(
                    Mux(gpc_in, select([self.credit[g] for g in range(G)], gpc_i), 0))
            with m.Case(8):
                m.d.comb += self.dbg_data.eq(resident)
            with m.Case(11):
                m.d.comb += self.dbg_data.eq(
                    Mux(sm_in, select([self.free[s] for s in range(S)], sm_i), 0))
            with m.Default():
                m.d.comb += self.dbg_data.eq(0)
        return m
