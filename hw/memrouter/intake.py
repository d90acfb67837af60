"""proc_arb and the acceptance half of req_check (spec §2.3, §4.3, MR-F1, MR-E1..E3, MR-I1,
MR-I8): round-robin over the processor ports, one header per cycle, the beats of a write
contiguous; the range check; the ROB reservation; the request and write-data queues in front of
the routing stage.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.common.arbiter import RoundRobinArbiter
from hw.common.lintops import eq_const, ge, gt_const, lt, nonzero, select
from hw.common.memfifo import MemFifo
from hw.common.regfifo import RegFifo
from hw.memrouter.layouts import PREQ_L, proc_width

__all__ = ["Intake", "req_fields"]

REQ_DEPTH = 4


def req_fields(params):
    """(name, width) of a request-queue entry, low bits first."""
    sw = (params.ROB_BEATS - 1).bit_length()
    return (("proc", proc_width(params)), ("addr", 32), ("nb", 5), ("wr", 1), ("rng", 1), ("base", sw))



class Intake(wiring.Component):
    """Request intake.

    A header of port i is accepted when the routing stage's request queue has room, the port's
    response buffer has ``res`` free slots (nb for a read, 1 for a write or a misaligned /
    oversized / out-of-range request) and ``hold`` is low. The request's write beats (beat 0 is
    the header) then follow from the same port only, each accepted while the write-data queue
    has room. ``last`` is not used: the beat count comes from ``len``.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams

    Members
    -------
    preq : In(stream.Signature(PREQ_L)).array(N_PROC)
    hold : In(1)
        Accept no header (PT_INIT, FLUSH).
    pages : In
        PAGES: a request must end at or below PAGES·G.
    rob_free, rob_tail : In, one per port
        Free slots and next base slot of each response buffer.
    rsv_en, rsv_id, rsv_nb, rsv_wr, rsv_res : Out
        The reservation made this cycle (``rsv_en`` bit i: in the response buffer of port i).
    req_* : Out / In
        Head of the request queue: ``req_valid``, fields of :func:`req_fields`, ``req_pop``.
    wd_valid, wd_data, wd_be : Out; wd_pop : In
        Head of the write-data queue.
    beat : Out(1)
        A preq beat transferred (PREQ_BEATS).
    """

    def __init__(self, params):
        self.p = params
        n = params.N_PROC
        self.sw = (params.ROB_BEATS - 1).bit_length()
        self.fields = req_fields(params)
        members = {
            "preq": In(stream.Signature(PREQ_L)).array(n),
            "hold": In(1), "pages": In((params.PT_ENTRIES - 1).bit_length() + 1),
            "rob_free": In(params.ROB_BEATS.bit_length()).array(n),
            "rob_tail": In(self.sw).array(n),
            "rsv_en": Out(n), "rsv_id": Out(8), "rsv_nb": Out(5),
            "rsv_wr": Out(1), "rsv_res": Out(5),
            "req_valid": Out(1), "req_pop": In(1),
            "wd_valid": Out(1), "wd_data": Out(256), "wd_be": Out(32), "wd_pop": In(1),
            "beat": Out(1),
        }
        for name, w in self.fields:
            members[f"req_{name}"] = Out(w)
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        p = self.p
        n = p.N_PROC
        m.submodules.arb = arb = RoundRobinArbiter(n)
        # with one processor port the proc field is the constant 0 and is not stored
        fields = self.fields if n > 1 else self.fields[1:]
        width = sum(w for _, w in fields)
        m.submodules.reqq = reqq = RegFifo(width, REQ_DEPTH)
        m.submodules.wdq = wdq = MemFifo(256 + 32, max(2, 2 * p.MAX_LEN))

        locked = Signal()
        lock_proc = Signal(2)
        left = Signal(5)

        # per port: the header's range check and reservation need
        fits = Signal(n)
        rng = [Signal(name=f"rng{i}") for i in range(n)]
        res = [Signal(5, name=f"res{i}") for i in range(n)]
        nb = [Signal(5, name=f"nb{i}") for i in range(n)]
        for i in range(n):
            hdr = self.preq[i].payload
            end = Signal(33, name=f"end{i}")
            m.d.comb += [nb[i].eq(hdr.len + 1), end.eq(hdr.addr + Cat(C(0, 5), nb[i]))]
            m.d.comb += rng[i].eq(nonzero(hdr.addr[:5]) | gt_const(nb[i], p.MAX_LEN)
                                  | lt(Cat(C(0, p.LOG2G), self.pages), end))
            m.d.comb += res[i].eq(Mux(hdr.wr | rng[i], 1, nb[i]))
            m.d.comb += fits[i].eq(ge(self.rob_free[i], res[i]))

        room = Signal()
        wd_room = Signal()
        m.d.comb += [room.eq(~eq_const(reqq.level, REQ_DEPTH) & ~self.hold),
                     wd_room.eq(~eq_const(wdq.level, wdq.depth))]
        m.d.comb += arb.req.eq(Mux(locked | ~room, 0,
                                   Cat(self.preq[i].valid & fits[i] for i in range(n))))
        g = arb.grant_idx                   # (a wider copy would be an unread alias)
        sel_hdr = {}
        for name in ("id", "addr", "len", "wr", "data", "be"):
            sel_hdr[name] = select([getattr(self.preq[i].payload, name) for i in range(n)], g)
        g_rng = select(rng, g)
        g_res = select(res, g)
        g_nb = select(nb, g)
        g_tail = select(list(self.rob_tail), g)

        accept = Signal()
        m.d.comb += accept.eq(arb.valid & (~sel_hdr["wr"] | wd_room))
        m.d.comb += arb.advance.eq(accept)
        data_beat = Signal()
        m.d.comb += data_beat.eq(locked & wd_room)
        for i in range(n):
            m.d.comb += self.preq[i].ready.eq(
                (accept & arb.grant[i]) | (data_beat & eq_const(lock_proc, i)))

        lock_valid = select([self.preq[i].valid for i in range(n)], lock_proc)
        lock_data = select([self.preq[i].payload.data for i in range(n)], lock_proc)
        lock_be = select([self.preq[i].payload.be for i in range(n)], lock_proc)
        data_xfer = Signal()
        m.d.comb += data_xfer.eq(data_beat & lock_valid)
        with m.If(accept & sel_hdr["wr"] & nonzero(sel_hdr["len"])):
            m.d.sync += [locked.eq(1), lock_proc.eq(g), left.eq(sel_hdr["len"])]
        with m.If(data_xfer):
            m.d.sync += left.eq(left - 1)
            with m.If(eq_const(left, 1)):
                m.d.sync += locked.eq(0)

        m.d.comb += [
            self.rsv_en.eq(Mux(accept, arb.grant, 0)), self.rsv_id.eq(sel_hdr["id"]),
            self.rsv_nb.eq(g_nb), self.rsv_wr.eq(sel_hdr["wr"]), self.rsv_res.eq(g_res),
            reqq.w_en.eq(accept),
            reqq.w_data.eq(Cat(*([g] if n > 1 else []), sel_hdr["addr"], g_nb, sel_hdr["wr"], g_rng,
                               g_tail)),
            wdq.w_en.eq((accept & sel_hdr["wr"]) | data_xfer),
            wdq.w_data.eq(Mux(data_xfer, Cat(lock_data, lock_be),
                              Cat(sel_hdr["data"], sel_hdr["be"]))),
            self.beat.eq(accept | data_xfer),
        ]

        # queue heads to the routing stage
        m.d.comb += [self.req_valid.eq(reqq.r_rdy), reqq.r_en.eq(self.req_pop)]
        off = 0
        if n == 1:
            m.d.comb += self.req_proc.eq(0)
        for name, w in fields:
            m.d.comb += getattr(self, f"req_{name}").eq(reqq.r_data[off:off + w])
            off += w
        m.d.comb += [self.wd_valid.eq(wdq.r_rdy), self.wd_data.eq(wdq.r_data[:256]),
                     self.wd_be.eq(wdq.r_data[256:288]), wdq.r_en.eq(self.wd_pop)]
        return m
