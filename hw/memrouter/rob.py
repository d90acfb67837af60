"""resp_rob (spec §2.3, §4.9, MR-F44, MR-F45, MR-E5, MR-E14, MR-I2): the per-processor-port
in-order response buffer.

A request reserves ``res`` beat slots at acceptance (nb for a read, 1 for a write or a read
rejected by the range check), in acceptance order. Parts complete in any order through the
completion bus: a read beat writes its slot's data and sets its ``a`` and ``b`` flags; a write
part sets ``a`` and/or ``b`` (a write split over two pages completes when both are set); a
rejection sets both, with the error code, in every slot the request reserved. The sender walks
the slots in order and presents a beat as soon as its slot is complete, so ``prsp.valid``
depends on stored state only, never on ``prsp.ready`` (MR-I7).
"""

from amaranth import Cat, Module, Mux, ResetSignal, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, eq_const, lt, nonzero
from hw.memrouter.layouts import PRSP_L, proc_width

__all__ = ["RespRob", "comp_signature"]

E_RANGE, E_UNMAPPED, E_POISON = 1, 2, 3


def comp_signature(params):
    """Members of the completion bus (one completion per cycle, to one processor port)."""
    sw = (params.ROB_BEATS - 1).bit_length()
    return {"en": 1, "proc": proc_width(params), "slot": sw, "set_a": 1, "set_b": 1, "err": 2, "beat": 1,
            "data": 256}


class RespRob(wiring.Component):
    """One processor port's response buffer of ROB_BEATS beats.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    index : int
        The processor port this buffer serves (completions for other ports are ignored).

    Members
    -------
    rsv_en, rsv_id, rsv_nb, rsv_wr, rsv_res : In
        Reserve ``rsv_res`` slots at ``tail`` for a request (id, nb, wr).
    tail : Out
        Slot of the next reservation (the request's base slot).
    free : Out
        Slots not reserved.
    c_* : In
        The completion bus (:func:`comp_signature`).
    prsp : Out(stream.Signature(PRSP_L))
    beat_sent, poison_sent : Out(1)
        A prsp beat transferred, and it carried E_POISON (PRSP_BEATS, ERR_POISON).
    empty : Out(1)
        Nothing reserved.
    """

    def __init__(self, params, index):
        self.p = params
        self.index = index
        n = params.ROB_BEATS
        self.sw = (n - 1).bit_length()
        comp = {f"c_{k}": In(w) for k, w in comp_signature(params).items()}
        super().__init__({
            "rsv_en": In(1), "rsv_id": In(8), "rsv_nb": In(5), "rsv_wr": In(1), "rsv_res": In(5),
            "tail": Out(self.sw), "free": Out(n.bit_length()),
            **comp,
            "prsp": Out(stream.Signature(PRSP_L)),
            "beat_sent": Out(1), "poison_sent": Out(1), "empty": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        n, sw = self.p.ROB_BEATS, self.sw
        pow2 = n == 1 << sw

        def wrap(x):
            """x mod n for x < 2n (x one bit wider than a slot index)."""
            if pow2:
                return x[:sw]
            return Mux(x[:sw + 1] >= n, x - n, x)[:sw]

        # request metadata at the base slot: id, nb, wr, res
        m.submodules.meta = meta = Memory(shape=8 + 5 + 1 + 5, depth=n, init=[])
        mw = meta.write_port()
        mr = meta.read_port(domain="comb")
        # beat data and per-beat err (reads). The read port is synchronous so that FPGA block
        # RAM can hold the beats (LUT RAM otherwise): it reads the slot the sender will be at
        # in the next cycle and is transparent to the completion write, so the data is the
        # same as an asynchronous read of the current slot.
        m.submodules.beats = beats = Memory(shape=256 + 2, depth=n, init=[])
        bw = beats.write_port()
        br = beats.read_port(transparent_for=[bw])
        # completion flags a and b per slot, each (phase, err) in a memory: a slot is complete
        # when its stored phase equals the parity of the lap the sender is in at that slot, so
        # passing a slot needs no clearing write (every reserved slot has both flags written
        # once per lap: read beats write a and b, write parts a or b, rejections every slot)
        flags = {}
        for name in ("a", "b"):
            mem = Memory(shape=3, depth=n, init=[])
            m.submodules[f"flag_{name}"] = mem
            flags[name] = (mem.write_port(), mem.read_port(domain="comb"),
                           mem.read_port(domain="comb") if name == "a" else None)
        # parity of the sender's lap at ``base``; it starts at 1 so that the memories' initial
        # phase 0 reads as "not complete"
        lap = Signal(init=1)

        tail = self.tail                    # the register itself is the port
        base = Signal(sw)
        k = Signal(5)
        used = Signal(n.bit_length())
        reqs = Signal(n.bit_length())
        m.d.comb += [self.free.eq(n - used), self.empty.eq(~nonzero(reqs))]

        # reservations (the memory ports are bound to their values, so the Verilog has no
        # copies of them)
        mw.addr = tail
        mw.data = Cat(self.rsv_id, self.rsv_nb, self.rsv_wr, self.rsv_res)
        m.d.comb += mw.en.eq(self.rsv_en)
        with m.If(self.rsv_en):
            m.d.sync += tail.eq(wrap(tail + self.rsv_res))

        # completions
        mine = Signal()
        m.d.comb += mine.eq(self.c_en & eq_const(self.c_proc, self.index))
        bw.addr = self.c_slot
        bw.data = Cat(self.c_data, self.c_err)
        m.d.comb += bw.en.eq(mine & self.c_beat)
        c_phase = Signal()
        m.d.comb += c_phase.eq(lap ^ lt(self.c_slot, base))
        for name, setter in (("a", self.c_set_a), ("b", self.c_set_b)):
            wp = flags[name][0]
            m.d.comb += [wp.addr.eq(self.c_slot), wp.en.eq(mine & setter),
                         wp.data.eq(Cat(c_phase, Mux(self.c_beat, 0, self.c_err)))]

        # the sender
        mr.addr = base
        r_id, r_nb, r_wr, r_res = mr.data[0:8], mr.data[8:13], mr.data[13], mr.data[14:19]
        cur = wrap(base + k)
        cur_next = br.addr = Signal(sw)
        have = Signal()
        m.d.comb += have.eq(nonzero(reqs))
        base_a = Signal()
        base_b = Signal()
        base_err = Signal(2)
        cur_a = Signal()
        a_base, a_cur, b_base = flags["a"][1], flags["a"][2], flags["b"][1]
        m.d.comb += [a_base.addr.eq(base), b_base.addr.eq(base), a_cur.addr.eq(cur),
                     base_a.eq(~(a_base.data[0] ^ lap)), base_b.eq(~(b_base.data[0] ^ lap)),
                     cur_a.eq(~(a_cur.data[0] ^ lap ^ lt(cur, base))),
                     base_err.eq(a_base.data[1:3] | b_base.data[1:3])]
        rej = Signal(2)                     # reject code latched at beat 0 of a read
        rejected = Signal()
        m.d.comb += rejected.eq(eq_const(base_err, E_RANGE) | eq_const(base_err, E_UNMAPPED))
        last = Signal()
        m.d.comb += last.eq(eq(k + 1, r_nb) | r_wr)
        payload = self.prsp.payload
        m.d.comb += payload.id.eq(r_id)
        m.d.comb += payload.last.eq(last)
        with m.If(r_wr):
            m.d.comb += [self.prsp.valid.eq(have & base_a & base_b), payload.err.eq(base_err),
                         payload.data.eq(0)]
        with m.Elif(nonzero(k) & nonzero(rej)):
            m.d.comb += [self.prsp.valid.eq(have), payload.err.eq(rej), payload.data.eq(0)]
        with m.Elif(~nonzero(k) & base_a & rejected):
            m.d.comb += [self.prsp.valid.eq(have), payload.err.eq(base_err), payload.data.eq(0)]
        with m.Else():
            m.d.comb += [self.prsp.valid.eq(have & cur_a), payload.err.eq(br.data[256:258]),
                         payload.data.eq(br.data[:256])]
        xfer = self.beat_sent
        m.d.comb += xfer.eq(self.prsp.valid & self.prsp.ready)
        m.d.comb += [self.poison_sent.eq(xfer & eq_const(payload.err,
                                                                                  E_POISON))]
        done = Signal()
        m.d.comb += done.eq(xfer & last)
        next_base = wrap(base + r_res)
        with m.If(ResetSignal()):
            m.d.comb += cur_next.eq(0)
        with m.Elif(done):
            m.d.comb += cur_next.eq(next_base)
        with m.Elif(xfer):
            m.d.comb += cur_next.eq(wrap(cur + 1))
        with m.Else():
            m.d.comb += cur_next.eq(cur)
        with m.If(xfer):
            with m.If(~nonzero(k) & ~r_wr):
                m.d.sync += rej.eq(Mux(rejected, base_err, 0))
            m.d.sync += k.eq(k + 1)
            with m.If(done):
                m.d.sync += [k.eq(0), base.eq(next_base), rej.eq(0),
                             lap.eq(lap ^ lt(next_base, base))]

        # occupancy: slots and requests
        released = Signal(5)
        m.d.comb += released.eq(Mux(done, r_res, 0))
        m.d.sync += [used.eq(used + Mux(self.rsv_en, self.rsv_res, 0) - released),
                     reqs.eq(reqs + self.rsv_en - done)]
        return m
