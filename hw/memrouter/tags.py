"""Memory-request tags and the response side (spec §2.3 data flow, MR-I3, MR-I4, MR-F44,
MR-F45, MR-E6): every mreq carries a tag naming an entry of its port's tag table, which says
where the response goes; mrsp beats of all ports are taken one per cycle, round robin, and
turned into completion-bus writes to the response buffers.

Tags are needed because the QoS arbiter reorders requests between the class queues of a port,
so a port's responses, though in order on the port, are not in issue order.

A beat taken in cycle t reaches the completion bus and the line store in cycle t + 1: the
outputs are registers, so the round-robin choice, the tag lookup and the slot arithmetic do not
share a cycle with the response buffers' and the line store's block-RAM writes (on the
smallest configuration's ECP5 build that chain was the critical path, 33.9 ns). The counts
that say a response has arrived (``inflight``, ``done``) move with the registered beat.
"""

from amaranth import Cat, Module, Mux, Signal
from amaranth.lib import data, stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.arbiter import RoundRobinArbiter
from hw.common.lintops import eq_const, select
from hw.memrouter.layouts import MRSP_L, proc_width, slot_add
from hw.memrouter.rob import comp_signature

__all__ = ["PortTags", "KIND_RD", "KIND_WR", "KIND_FILL", "KIND_WB", "dest_width"]

KIND_RD, KIND_WR, KIND_FILL, KIND_WB = 0, 1, 2, 3
E_POISON = 3


def dest_width(params):
    """Width of a tag's destination: a response-buffer slot, or a flat line sector (line · NS
    + sector) for a fill."""
    sw = (params.ROB_BEATS - 1).bit_length()
    lw = max(1, (params.NUM_LINES - 1).bit_length())
    return max(sw, lw + (params.NS - 1).bit_length())


class PortTags(wiring.Component):
    """Tag tables of every memory port and the mrsp → completion-bus path.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    ntags : int
        Tags per port (requests in flight per port), a power of 2.

    Members
    -------
    take_en, take_port, take_kind, take_proc, take_slot, take_ab : In
        Allocate tag ``next_tag[take_port]`` of that port with its destination: a direct read's
        first beat slot (kind RD; beat k goes to slot + k), a direct write's base slot and
        the flags its ack sets (kind WR, ``ab`` = set_a | set_b << 1), a fill's first flat line
        sector (kind FILL; beat k fills sector slot + k), or nothing (kind WB, a write-back
        whose ack is only counted).
    avail : Out(ports)
        Ports with a free tag.
    next_tag : Out, one per port
        The tag the next take on that port gets.
    mrsp : In(stream.Signature(MRSP_L)).array(ports)
    c_* : Out
        The completion bus (:func:`hw.memrouter.rob.comp_signature`), registered: the beat
        taken in the previous cycle.
    take_cls : In(2)
        The class of the request (NEAR, FAR, MIG), for the FENCE counts.
    f_en, f_addr, f_poison, f_walker : Out
        A fill beat for the line store (kind FILL; not on the completion bus, whose ``c_data``
        register carries its data), and it is the walker's (``ab`` bit 0 of the tag);
        registered like ``c_*``.
    w_ack : Out(1)
        A write-out of the migration engine is acknowledged (kind WB with ``ab`` bit 0);
        registered.
    issued, done : Out(8).array(3 · ports)
        Per port j and class c (index 3j + c), requests taken and requests completed (their
        last beat delivered on the registered outputs), modulo 256 (FENCE compares them).
    inflight : Out, one per port
        Requests whose last beat has not been delivered yet.
    """

    def __init__(self, params, ntags=16):
        self.p = params
        self.ports = params.N_OFF + 1
        self.ntags = ntags
        self.tw = (ntags - 1).bit_length()
        dw = dest_width(params)
        lw = max(1, (params.NUM_LINES - 1).bit_length())
        comp = {f"c_{k}": Out(w) for k, w in comp_signature(params).items()}
        super().__init__({
            "take_en": In(1), "take_port": In(3), "take_kind": In(2), "take_proc": In(proc_width(params)),
            "take_slot": In(dw), "take_ab": In(2),
            "f_en": Out(1), "f_addr": Out(lw + (params.NS - 1).bit_length()),
            "f_poison": Out(1), "f_walker": Out(1), "w_ack": Out(1),
            "take_cls": In(2),
            "issued": Out(8).array(3 * self.ports), "done": Out(8).array(3 * self.ports),
            "avail": Out(self.ports), "next_tag": Out(self.tw).array(self.ports),
            "mrsp": In(stream.Signature(MRSP_L)).array(self.ports),
            **comp,
            "inflight": Out(ntags.bit_length()).array(self.ports),
        })

    def elaborate(self, platform):
        m = Module()
        p, nt, tw = self.p, self.ntags, self.tw
        sw = (p.ROB_BEATS - 1).bit_length()
        dw = dest_width(p)
        m.submodules.arb = arb = RoundRobinArbiter(self.ports)
        # a response beat transfers (the completion-bus write); the grant is then used
        taken = Signal()
        m.d.comb += [arb.req.eq(Cat(self.mrsp[j].valid for j in range(self.ports))),
                     taken.eq(Cat(self.mrsp[j].valid & self.mrsp[j].ready
                                  for j in range(self.ports)).any()),
                     arb.advance.eq(taken)]
        g = arb.grant_idx
        beat_tag = Signal(tw)
        m.d.comb += beat_tag.eq(select([self.mrsp[j].payload.tag[:tw]
                                        for j in range(self.ports)], g))
        beat = select([self.mrsp[j].payload for j in range(self.ports)], g)
        info_kind, info_proc, info_slot, info_ab = [], [], [], []
        counts = []
        info_layout = data.StructLayout({"kind": 2, "proc": len(self.take_proc), "slot": dw,
                                         "ab": 2, "cls": 2})
        for j in range(self.ports):
            used = Signal(nt, name=f"used{j}")
            # the destinations of the port's tags: written when a tag is taken, read
            # (asynchronously) at the tag of the response beat; FPGA LUT RAM, where registers
            # would need an nt-way multiplexer per bit
            m.submodules[f"info{j}"] = table = Memory(shape=info_layout.size, depth=nt, init=[])
            info_w = table.write_port()
            info_r = table.read_port(domain="comb")
            info_r.addr = beat_tag
            info = data.View(info_layout, info_r.data)  # (slices, no named copies)
            k = Signal(5, name=f"beat{j}")
            counts.append(k)
            # lowest free tag
            free = Signal(nt, name=f"free{j}")
            low = Signal(nt, name=f"low{j}")
            m.d.comb += [free.eq(~used), low.eq(free & (-free)[:nt])]
            m.d.comb += self.avail[j].eq(free.any())
            for t in range(nt):
                with m.If(low[t]):
                    m.d.comb += self.next_tag[j].eq(t)
            take = Signal(name=f"take{j}")
            m.d.comb += take.eq(self.take_en & eq_const(self.take_port, j))
            for t in range(nt):
                with m.If(take & eq_const(self.next_tag[j], t)):
                    m.d.sync += used[t].eq(1)
            # (the ports' own values, not copies, which would be unread aliases in the Verilog)
            info_w.addr, info_w.en = self.next_tag[j], take
            info_w.data = Cat(self.take_kind, self.take_proc, self.take_slot, self.take_ab,
                              self.take_cls)
            mine = self.mrsp[j].ready
            # a request is complete when its last beat is delivered, a cycle after it is taken
            last_r = Signal(name=f"last_r{j}")
            cls_r = Signal(2, name=f"cls_r{j}")
            m.d.sync += [last_r.eq(mine & self.mrsp[j].payload.last), cls_r.eq(info.cls)]
            for c in range(3):
                iss = self.issued[3 * j + c]
                fin = self.done[3 * j + c]
                m.d.sync += iss.eq(iss + (take & eq_const(self.take_cls, c)))
                m.d.sync += fin.eq(fin + (last_r & eq_const(cls_r, c)))
            info_kind.append(info.kind)
            info_proc.append(info.proc)
            info_slot.append(info.slot)
            info_ab.append(info.ab)
            # (the grant is one-hot and 0 when no response waits, so ``& valid`` changes
            # nothing; it makes ready a net of its own rather than a bit of the grant port)
            m.d.comb += mine.eq(arb.grant[j] & self.mrsp[j].valid)
            with m.If(mine):
                m.d.sync += k.eq(Mux(self.mrsp[j].payload.last, 0, k + 1))
                with m.If(self.mrsp[j].payload.last):
                    for t in range(nt):
                        with m.If(eq_const(beat_tag, t)):
                            m.d.sync += used[t].eq(0)
            pop = self.inflight[j]                    # the register itself is the port
            m.d.sync += pop.eq(pop + take - last_r)

        kind = select(info_kind, g)
        slot = select(info_slot, g)
        ab = select(info_ab, g)
        k = select(counts, g)
        rd = Signal()
        m.d.comb += rd.eq(eq_const(kind, KIND_RD))
        m.d.sync += [
            self.c_data.eq(beat.data),      # also the fill's data
            self.c_beat.eq(rd),
            self.c_en.eq(taken & (rd | eq_const(kind, KIND_WR))),
            self.f_walker.eq(ab[0]),
            self.w_ack.eq(taken & eq_const(kind, KIND_WB) & ab[0] & beat.last),
            self.f_en.eq(taken & eq_const(kind, KIND_FILL)),
            self.f_addr.eq(slot + k), self.f_poison.eq(beat.poison),
            self.c_proc.eq(select(info_proc, g)),
            self.c_slot.eq(Mux(rd, slot_add(slot[:sw], k, p.ROB_BEATS), slot[:sw])),
            self.c_set_a.eq(rd | ab[0]), self.c_set_b.eq(rd | ab[1]),
            self.c_err.eq(Mux(rd & beat.poison, E_POISON, 0)),
        ]
        return m
