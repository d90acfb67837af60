"""``wd_raster[s]``: per-SM distributed rasterization (WD-F25, WD-F26, WD-F27; G-RAST, A9)
[seed ¶0176–0190].

No CTA ID travels on the broadcast: every SM watches every LAUNCH beat, counts how many units
went by since it last computed an ID (delta) and, when one of its own CTAs arrives, moves its
stored position forward by delta with the A9 decomposition (one division into z, y, x parts and
two carries). PLAIN grids count CTAs; CGA levels count top-level units (beats with
``end_of_cga``) and take the in-CGA part from the beat's ranks. Legacy LAUNCH_ID beats carry
their IDs and are copied, not counted.

``Rasterizer`` is the hardware form (delta folded into the position before it would overflow
DELTA_W bits); ``raster_reference`` is the direct G-RAST formula over a whole beat stream, the
independent check of the hardware form.
"""

from golden.wdist.formats import CtaRecord, Kind, Level, lin2xyz

__all__ = ["advance", "grast_ctaid", "Rasterizer", "raster_reference"]


def advance(pos, delta, dims):
    """A9: move ``pos`` (x, y, z) forward by ``delta`` on a grid of ``dims`` (X, Y, Z).

    Returns (new pos, (xd, yd, zd), (carry x, carry y)).
    """
    X, Y = dims[0], dims[1]
    zd, t = divmod(delta, X * Y)
    yd, xd = divmod(t, X)
    x, y, z = pos
    x += xd
    cx = int(x >= X)
    if cx:
        x -= X
    y += yd + cx
    cy = int(y >= Y)
    if cy:
        y -= Y
    z += zd + cy
    return (x, y, z), (xd, yd, zd), (cx, cy)


def _outer(level, outer):
    return tuple(outer) if level in (Level.GPU, Level.CPC) else (1, 1, 1)


def grast_ctaid(level, inner, outer, upos, rho):
    """CGA levels: ctaid = upos·(O·I) + lin2xyz(v; O)·I + lin2xyz(r; I) per axis, and
    ``cga_cta_id`` (r for GPU; ρ for GPC, CPC, GPU_FLAT). ``upos``: the unit's grid position."""
    O = _outer(level, outer)
    I = tuple(inner)
    isz = I[0] * I[1] * I[2]
    v, r = divmod(rho, isz)
    vo = lin2xyz(v, O[0], O[1])
    ri = lin2xyz(r, I[0], I[1])
    ctaid = tuple(upos[i] * O[i] * I[i] + vo[i] * I[i] + ri[i] for i in range(3))
    return ctaid, (r if level == Level.GPU else rho)


def _unit_dims(beat):
    if beat.level == Level.PLAIN:
        return tuple(beat.grid)
    O = _outer(beat.level, beat.outer)
    return tuple(beat.grid[i] // (O[i] * beat.inner[i]) for i in range(3))


class Rasterizer:
    """The rasterizer of global SM ``s`` (hardware form). ``beat(b)`` returns its records."""

    def __init__(self, p, s):
        self.p = p
        self.s = s
        self.g, self.local = p.gpc_of(s)
        self.limit = 1 << p.DELTA_W
        self.grid = None
        self.pos = (0, 0, 0)
        self.delta = 0
        self.folds = 0
        self.max_delta = 0

    def _fold(self, extra):
        """WD-F26: fold delta into the position before delta + extra would overflow."""
        if self.delta + extra >= self.limit:
            self.pos = advance(self.pos, self.delta, self.dims)[0]
            self.delta = 0
            self.folds += 1
        self.delta += extra
        self.max_delta = max(self.max_delta, self.delta)

    def beat(self, b):
        if b.kind == Kind.GRID:
            self.grid, self.dims = b, _unit_dims(b)
            self.pos, self.delta = (0, 0, 0), 0
            return []
        mine = b.cnt[self.local] if b.gpc == self.g else 0
        if b.kind == Kind.LAUNCH_ID:
            if mine != 1:
                return []
            return [CtaRecord(b.grid_id, b.seq, tuple(b.ctaid), b.is_cga, b.cga_cta_id, b.cga_id)]
        g = self.grid
        prefix = sum(b.cnt[:self.local]) if b.gpc == self.g else 0
        total = sum(b.cnt)
        out = []
        if g.level == Level.PLAIN:
            if mine == 0:
                self._fold(total)
                return out
            self._fold(prefix)
            self.pos = advance(self.pos, self.delta, self.dims)[0]
            for t in range(mine):
                if t:
                    self.pos = advance(self.pos, 1, self.dims)[0]
                out.append(CtaRecord(b.grid_id, b.seq, self.pos, 0, 0, b.cga_id))
            self.delta = 0
            self._fold(total - prefix - mine + 1)
            return out
        if mine:
            self.pos = advance(self.pos, self.delta, self.dims)[0]
            self.delta = 0
            for t in range(mine):
                rho = b.first_rank + prefix + t
                ctaid, cci = grast_ctaid(g.level, g.inner, g.outer, self.pos, rho)
                out.append(CtaRecord(b.grid_id, b.seq, ctaid, b.is_cga, cci, b.cga_id))
        if b.end_of_cga:
            self._fold(1)
        return out


def raster_reference(p, beats):
    """The G-RAST formula over a ``bcast`` beat sequence: {global SM: [CtaRecord, ...]}."""
    out = {s: [] for s in range(p.N_SM)}
    grid, k, u = None, 0, 0
    for b in beats:
        if b.kind == Kind.GRID:
            grid, k, u = b, 0, 0
            continue
        base = p.base(b.gpc)
        if b.kind == Kind.LAUNCH_ID:
            i = b.cnt.index(1)
            out[base + i].append(CtaRecord(b.grid_id, b.seq, tuple(b.ctaid), b.is_cga,
                                           b.cga_cta_id, b.cga_id))
            continue
        before = 0
        for i, c in enumerate(b.cnt):
            for t in range(c):
                if grid.level == Level.PLAIN:
                    ctaid = lin2xyz(k + before + t, grid.grid[0], grid.grid[1])
                    rec = CtaRecord(b.grid_id, b.seq, ctaid, 0, 0, b.cga_id)
                else:
                    U = _unit_dims(grid)
                    upos = lin2xyz(u, U[0], U[1])
                    ctaid, cci = grast_ctaid(grid.level, grid.inner, grid.outer, upos,
                                             b.first_rank + before + t)
                    rec = CtaRecord(b.grid_id, b.seq, ctaid, b.is_cga, cci, b.cga_id)
                out[base + i].append(rec)
            before += c
        if grid.level == Level.PLAIN:
            k += before
        elif b.end_of_cga:
            u += 1
    return out
