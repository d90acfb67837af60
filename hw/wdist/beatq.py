"""The launcher side of the broadcast: a two-entry beat queue and the GRID beat (WD-F19).

Both launchers (the shadow session controller and the legacy baseline) write at most one beat
per cycle and place only while the queue has room, so the broadcast drains one beat per cycle
behind them (WD-P7). ``cga_id`` is 0 here and filled in by the GPM stage, so its bits do not go
through the queue.
"""

from amaranth import Mux
from amaranth.lib import data

from golden.wdist.formats import Kind
from hw.common.lintops import lt
from hw.common.regfifo import RegFifo

__all__ = ["beat_queue", "grid_beat"]


def beat_queue(m, p, beat, beat_layout, zero=("cga_id",)):
    """Add the queue feeding the Out stream ``beat``. Returns (the write view ``bt`` of every
    field but those in ``zero``, ``w_en``, ``room``): set ``w_en`` and fields combinationally.
    The ``zero`` fields are 0 on ``beat`` and do not go through the queue (``cga_id``, filled in
    by the GPM; and fields a launcher never sets)."""
    layout = data.StructLayout({name: fld.shape for name, fld in beat_layout if name not in zero})
    m.submodules.beat_q = q = RegFifo(layout.size, 2)
    head = data.View(layout, q.r_data)
    m.d.comb += [beat.valid.eq(q.r_rdy), q.r_en.eq(beat.valid & beat.ready)]
    m.d.comb += [getattr(beat.payload, name).eq(getattr(head, name)) for name, _ in layout]
    return data.View(layout, q.w_data), q.w_en, lt(q.level, 2)


def grid_beat(bt, w_en, cmd, unit_x, unit_y, plain):
    """Statements writing the GRID beat of ``cmd`` (unit grid: the grid itself for PLAIN)."""
    return [w_en.eq(1), bt.kind.eq(Kind.GRID), bt.level.eq(cmd.level), bt.mode.eq(cmd.mode),
            bt.grid_x.eq(cmd.grid_x), bt.grid_y.eq(cmd.grid_y), bt.grid_z.eq(cmd.grid_z),
            bt.in_x.eq(cmd.in_x), bt.in_y.eq(cmd.in_y), bt.in_z.eq(cmd.in_z),
            bt.out_x.eq(cmd.out_x), bt.out_y.eq(cmd.out_y), bt.out_z.eq(cmd.out_z),
            bt.unit_x.eq(Mux(plain, cmd.grid_x, unit_x)),
            bt.unit_y.eq(Mux(plain, cmd.grid_y, unit_y))]
