"""``wd_resource_tracker``: the real state (WD-F1, WD-F2, WD-F3, WD-F29, WD-I2).

Per SM: capacities and enable (from ``cfg``; reset values are the parameters, enable 1) and used
counters; per GPC: the real CGA credit. The shadow (``golden.wdist.shadow``) copies ``free`` and
``credit`` from here at a snapshot; commits add here, completions subtract here only (WD-F24).
"""

from golden.wdist.formats import Err, Shape
from golden.wdist.freeslots import free_slots

__all__ = ["ResourceTracker"]

_ZERO = Shape(0, 0, 0, 0)


def _add(a, b, k=1):
    return Shape(a.regs_g + k * b.regs_g, a.smem_g + k * b.smem_g, a.warps + k * b.warps,
                 a.slots + k * b.slots)


class ResourceTracker:
    def __init__(self, params):
        self.p = params
        n = params.N_SM
        self.cap = [Shape(params.REG_CAP_G, params.SMEM_CAP_G, params.WARP_CAP, params.CTA_SLOTS)
                    for _ in range(n)]
        self.enable = [1] * n
        self.used = [_ZERO] * n
        self.credit = [params.credit_reset(g) for g in range(params.N_GPC)]

    # configuration (WD-I2, WD-E10; WD-E9 is checked by the caller, which knows quiescence) ----
    def cfg_error(self, sm, enable, regs_cap_g, smem_cap_g, warp_cap, slot_cap):
        p = self.p
        if not 0 <= sm < p.N_SM or enable not in (0, 1):
            return Err.CFG_BAD
        for v, hi in ((regs_cap_g, p.REG_CAP_G), (smem_cap_g, p.SMEM_CAP_G),
                      (warp_cap, p.WARP_CAP), (slot_cap, p.CTA_SLOTS)):
            if not 0 <= v <= hi:
                return Err.CFG_BAD
        return None

    def cfg_write(self, sm, enable=1, regs_cap_g=None, smem_cap_g=None, warp_cap=None,
                  slot_cap=None):
        """One ``cfg`` beat; None fields keep the parameter maximum. Returns an Err or None."""
        p = self.p
        regs_cap_g = p.REG_CAP_G if regs_cap_g is None else regs_cap_g
        smem_cap_g = p.SMEM_CAP_G if smem_cap_g is None else smem_cap_g
        warp_cap = p.WARP_CAP if warp_cap is None else warp_cap
        slot_cap = p.CTA_SLOTS if slot_cap is None else slot_cap
        e = self.cfg_error(sm, enable, regs_cap_g, smem_cap_g, warp_cap, slot_cap)
        if e is None:
            self.cap[sm] = Shape(regs_cap_g, smem_cap_g, warp_cap, slot_cap)
            self.enable[sm] = enable
        return e

    # A1 ---------------------------------------------------------------------------------------
    def free(self, s, shape):
        return free_slots(self.cap[s], self.used[s], shape, self.enable[s])

    def free_vector(self, shape):
        return [self.free(s, shape) for s in range(self.p.N_SM)]

    # updates ------------------------------------------------------------------------------------
    def commit(self, s, k, shape):
        """k CTAs of ``shape`` placed on SM s (WD-F1)."""
        if k:
            self.used[s] = _add(self.used[s], shape, k)

    def commit_credit(self, g):
        self.credit[g] -= 1

    def return_credit(self, g):
        self.credit[g] += 1

    def complete_error(self, sm, shape):
        """WD-E6 check of a ``cta_complete``: Err.COMPLETE_UNDERFLOW or None."""
        if not 0 <= sm < self.p.N_SM:
            return Err.COMPLETE_UNDERFLOW
        u = self.used[sm]
        if (shape.regs_g > u.regs_g or shape.smem_g > u.smem_g or shape.warps > u.warps
                or u.slots < 1):
            return Err.COMPLETE_UNDERFLOW
        return None

    def complete(self, sm, shape):
        """An accepted ``cta_complete``: subtract its shape and one slot (WD-F1)."""
        self.used[sm] = _add(self.used[sm], Shape(shape.regs_g, shape.smem_g, shape.warps, 1), -1)

    # summaries ----------------------------------------------------------------------------------
    def empty(self):
        """WD-F4 ``empty``: every used counter 0 and every credit at reset."""
        return (all(u == _ZERO for u in self.used)
                and all(self.credit[g] == self.p.credit_reset(g) for g in range(self.p.N_GPC)))

    def resident(self):
        return sum(u.slots for u in self.used)
