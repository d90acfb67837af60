"""The interface map and PT_INIT (spec §4.2, MR-F5..F8): slot-table interleave of the near pool
over HBM and the module carve-outs, page-by-page striping of the far pool above the carve-out,
and the static route() used by MR-V1."""

from dataclasses import dataclass

from golden.memrouter.formats import (E_RANGE, FAR, NEAR, PTE, STABLE, UNMAPPED_PTE, Desc)
from golden.memrouter.params import config_error, geometry

__all__ = ["IfMap", "PtInit", "pt_init", "route"]


class IfMap:
    """near_desc / far_desc of one configuration, bit-exact with §4.2 (MR-F5)."""

    def __init__(self, params, cfg):
        self.params = params
        self.cfg = cfg
        self.geo = geometry(params, cfg)
        # per slot: (kind H?, rank among same target) — what the hardware's running counters give
        self._slot = []
        seen_h, seen_m = 0, {}
        for s in cfg.SLOTS:
            if s & 1 == 0:
                self._slot.append((0, None, seen_h))
                seen_h += 1
            else:
                m = s >> 1
                self._slot.append((1, m, seen_m.get(m, 0)))
                seen_m[m] = seen_m.get(m, 0) + 1

    def near_desc(self, nf):
        r, s = divmod(nf, self.geo.RLEN)
        kind, m, k = self._slot[s]
        if kind == 0:
            return Desc(0, r * self.geo.RON + k)
        return Desc(1 + m, r * self.geo.CNT[m] + k)

    def far_desc(self, f):
        n_off = self.params.N_OFF
        return Desc(1 + f % n_off, self.geo.CARVE + f // n_off)

    home = far_desc


@dataclass
class PtInit:
    """What PT_INIT leaves: the page table, PAGES and both free lists (NFREE, FFREE)."""
    pt: list
    pages: int
    nfree: list
    ffree: list
    ifmap: IfMap


def pt_init(params, cfg):
    """PT_INIT of §4.2; ValueError (the CSR err of MR-E12) on an illegal configuration."""
    err = config_error(params, cfg)
    if err:
        raise ValueError(f"PT_INIT refused: {err}")
    im = IfMap(params, cfg)
    g = im.geo
    pt = [UNMAPPED_PTE] * params.PT_ENTRIES
    nfree = []
    if cfg.MODE == 0:
        used = cfg.NEAR_FRAMES - cfg.NEAR_RESERVE
        for p in range(g.PAGES):
            pt[p] = (PTE.of(STABLE, NEAR, im.near_desc(p)) if p < used
                     else PTE.of(STABLE, FAR, im.far_desc(p - used)))
        nfree = [im.near_desc(nf) for nf in range(used, cfg.NEAR_FRAMES)]
    else:
        for p in range(g.PAGES):
            pt[p] = PTE.of(STABLE, FAR, im.far_desc(p))
        nfree = [im.near_desc(nf) for nf in range(cfg.NEAR_FRAMES)]
    return PtInit(pt, g.PAGES, nfree, [], im)


def route(init, addr, log2g):
    """Static golden map (MR-V1): (port, device address) of partition byte address ``addr`` with
    the PT left by PT_INIT, or E_RANGE when its page is >= PAGES."""
    p = addr >> log2g
    if p >= init.pages:
        return E_RANGE
    e = init.pt[p]
    return e.port, e.desc.dev(addr & ((1 << log2g) - 1), log2g)
