"""G-A1: how many more CTAs of one shape fit in an SM (WD-F2, §6 item 1).

The minimum over CTA slots, warps, 256-register granules and 256-byte shared-memory granules,
as the CUDA occupancy calculation does; a resource the shape does not use does not constrain,
and a disabled SM (TPC enable table, WD-F29) has none.
"""

__all__ = ["free_slots"]


def free_slots(cap, used, shape, enabled=True):
    """``cap``, ``used``, ``shape``: :class:`~golden.wdist.formats.Shape`; ``shape.warps`` >= 1."""
    if not enabled:
        return 0
    t = [cap.slots - used.slots, (cap.warps - used.warps) // shape.warps]
    if shape.regs_g > 0:
        t.append((cap.regs_g - used.regs_g) // shape.regs_g)
    if shape.smem_g > 0:
        t.append((cap.smem_g - used.smem_g) // shape.smem_g)
    return min(t)
