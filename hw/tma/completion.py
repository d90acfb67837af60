"""The TMA completion unit: in-order ``done``, WAIT_ALL and ``idle`` (spec tma.md §2.2
Completion; TMA-F36, F37, F38, TMA-I9, I10, §4.11 retirement and done timing).

Event interface (what the other TMA modules tell it):

- ``open`` {seq, id} (stream): a command that passed setup starts generating. Commands open in
  acceptance order; ``seq`` names the command in the events below (the acceptance index mod
  2^SEQ_W: rejected commands skip their number, they end with ``err`` only; seqs of unretired
  commands must differ). The front end opens a command before it issues any of its
  work and after the ``err`` of every earlier rejected command has been handed over (setup is in
  order), so in-order retirement also orders each ``done`` after those ``err`` events.
  ``open.ready`` is low while ``depth`` commands are unretired.
- ``close`` {seq, total} (stream, always ready): generation of ``seq`` has ended and ``total``
  units of completion are due: for loads the bytes of all their beats (box bytes, OOB fill
  included; for block loads 16 * num_blocks); for stores and reductions the number of tracked
  WRITE/RED requests; 0 for NOP, DESC_INVAL, WAIT_ALL and prefetches (their ``done`` is due at
  once, in order).
- ``wr_valid``/``wr_seq``/``wr_bytes``: the writer's barrier update of ``wr_bytes`` bytes was
  accepted (all its beats are accepted already, TMA-F35), counted for ``wr_seq``.
- ``ack_valid``/``ack_seq``: the tracker processed a WRITE/RED response of ``ack_seq`` (one unit).
- ``busy``: some other module holds work (queue, setup, generation, tracker, writer).

A command is retired when it is the oldest unretired one, is closed and its counted units
equal ``total``; its ``done{id}`` is then loaded into the output register, one per cycle. The
last unit's event is registered before retirement is decided, so ``done`` always handshakes in a
later cycle than the side effect it follows. WAIT_ALL needs nothing more than this in-order rule
(TMA-F37), and it holds back no later command: later commands keep opening, issuing and counting.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from golden.common.fields import Fields
from golden.tma.formats import SEQ_W, done_fields
from hw.common.layout import struct_layout
from hw.common.params import check_int, reject
from hw.tma.tracker import check_params

__all__ = ["open_fields", "close_fields", "TmaCompletion"]


def _eq(x, value):
    """``x == value`` for an unsigned ``x`` and a constant (no width-mismatch compare in Verilog)."""
    return ~(x ^ C(value, len(x))).any()


def open_fields(p):
    """``open``: ``seq`` (SEQ_W), ``id`` (ID_W)."""
    return Fields(("seq", SEQ_W), ("id", p.ID_W))


def close_fields(p):
    """``close``: ``seq`` (SEQ_W), ``total`` (SMEM_AW + 1): units due (bytes or acknowledgements)."""
    return Fields(("seq", SEQ_W), ("total", p.SMEM_AW + 1))


class TmaCompletion(wiring.Component):
    """In-order retirement of TMA commands into ``done``, and the ``idle`` level.

    ``depth`` slots, taken in open order, each hold (open, closed, seq, id, total, count). An
    event finds its slot by comparing its seq with every open slot's; counting events add to
    ``count`` (up to two per cycle: a barrier update and an acknowledgement). The retirement
    pointer walks the slots in open order.

    ``fault`` is a sticky verification aid: an event or ``close`` for a seq that is not open, a
    ``close`` of an already closed command, an ``open`` reusing the seq of an unretired command,
    or a count beyond ``total``. A correct front end never raises it.

    Parameters
    ----------
    params : TmaParams, optional
        Uses ID_W and SMEM_AW.
    depth : int
        Unretired commands at most, a power of two in 2..64 (default 8).

    Members
    -------
    open : In(stream.Signature(open_fields(params)))
    close : In(stream.Signature(close_fields(params)))
    wr_valid : In(1)
    wr_seq : In(SEQ_W)
    wr_bytes : In(8)
    ack_valid : In(1)
    ack_seq : In(SEQ_W)
    busy : In(1)
    done : Out(stream.Signature(done_fields(params)))
        TMA-I9; in acceptance order among non-rejected commands.
    idle : Out(1)
        ``~busy``, no unretired command and no ``done`` waiting (TMA-F38, with ``busy``).
    fault : Out(1)
        Sticky interface-contract violation flag (see above).
    """

    def __init__(self, params=None, depth=8):
        p = self.p = check_params(self, params)
        check_int(self, "depth", depth, 2, 64)
        if depth & (depth - 1):
            reject(self, f"depth must be a power of two in 2..64, got {depth!r}")
        self.depth = depth
        self.tot_w = p.SMEM_AW + 1
        super().__init__({
            "open": In(stream.Signature(struct_layout(open_fields(p)))),
            "close": In(stream.Signature(struct_layout(close_fields(p)))),
            "wr_valid": In(1), "wr_seq": In(SEQ_W), "wr_bytes": In(8),
            "ack_valid": In(1), "ack_seq": In(SEQ_W),
            "busy": In(1),
            "done": Out(stream.Signature(struct_layout(done_fields(p)))),
            "idle": Out(1),
            "fault": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        d, tw = self.depth, self.tot_w
        sw = exact_log2(d)
        p = self.p

        is_open = [Signal(name=f"open{s}") for s in range(d)]
        closed = [Signal(name=f"closed{s}") for s in range(d)]
        seqs = [Signal(SEQ_W, name=f"seq{s}") for s in range(d)]
        ids = [Signal(p.ID_W, name=f"id{s}") for s in range(d)]
        totals = [Signal(tw, name=f"total{s}") for s in range(d)]
        counts = [Signal(tw, name=f"count{s}") for s in range(d)]
        head = Signal(sw, name="head")                      # oldest unretired slot
        n_open = Signal(range(d + 1), name="n_open")
        faults = []

        # -- open: slots are taken in open order ------------------------------------------------
        op_ = self.open
        tail = Signal(sw, name="tail")                      # next slot to open
        m.d.comb += op_.ready.eq(~_eq(n_open, d))
        open_hs = op_.valid & op_.ready
        with m.If(open_hs):
            m.d.sync += tail.eq(tail + 1)

        # -- retirement ------------------------------------------------------------------------
        done = self.done
        h_open = Signal(name="h_open")
        h_closed = Signal(name="h_closed")
        h_total = Signal(tw, name="h_total")
        h_count = Signal(tw, name="h_count")
        h_id = Signal(p.ID_W, name="h_id")
        with m.Switch(head):
            for s in range(d):
                with m.Case(s):
                    m.d.comb += [h_open.eq(is_open[s]), h_closed.eq(closed[s]),
                                 h_total.eq(totals[s]), h_count.eq(counts[s]), h_id.eq(ids[s])]
        retire = h_open & h_closed & (h_count == h_total) & (~done.valid | done.ready)
        with m.If(done.valid & done.ready):
            m.d.sync += done.valid.eq(0)
        with m.If(retire):
            m.d.sync += [done.valid.eq(1), done.payload.id.eq(h_id), head.eq(head + 1)]
        m.d.sync += n_open.eq(n_open + open_hs - retire)

        # -- per-slot state --------------------------------------------------------------------
        cl = self.close
        m.d.comb += cl.ready.eq(1)
        wr_any, ack_any, cl_any = [], [], []
        for s in range(d):
            here = _eq(head, s) & retire
            opening = open_hs & _eq(tail, s)
            closing = cl.valid & is_open[s] & (seqs[s] == cl.payload.seq)
            wr_hit = self.wr_valid & is_open[s] & (seqs[s] == self.wr_seq)
            ack_hit = self.ack_valid & is_open[s] & (seqs[s] == self.ack_seq)
            wr_any.append(wr_hit)
            ack_any.append(ack_hit)
            cl_any.append(closing)
            add = Mux(wr_hit, self.wr_bytes, 0) + ack_hit
            faults += [
                open_hs & is_open[s] & (seqs[s] == op_.payload.seq),
                closing & closed[s],
                is_open[s] & closed[s] & (counts[s] > totals[s]),
            ]
            with m.If(opening):
                m.d.sync += [is_open[s].eq(1), closed[s].eq(0), seqs[s].eq(op_.payload.seq),
                             ids[s].eq(op_.payload.id), counts[s].eq(0)]
            with m.Elif(here):
                m.d.sync += [is_open[s].eq(0), closed[s].eq(0)]
            with m.Else():
                m.d.sync += counts[s].eq(counts[s] + add)
                with m.If(closing):
                    m.d.sync += [closed[s].eq(1), totals[s].eq(cl.payload.total)]
        faults += [self.wr_valid & ~Cat(*wr_any).any(), self.ack_valid & ~Cat(*ack_any).any(),
                   cl.valid & ~Cat(*cl_any).any()]

        fault_now = Signal(name="fault_now")
        m.d.comb += fault_now.eq(0)
        for f in faults:
            with m.If(f):
                m.d.comb += fault_now.eq(1)
        with m.If(fault_now):
            m.d.sync += self.fault.eq(1)
        m.d.comb += self.idle.eq(~self.busy & ~n_open.any() & ~done.valid)
        return m
