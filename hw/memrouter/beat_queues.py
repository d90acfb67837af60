"""BeatQueues: a QoS port's class beat queues in one memory with one write and one read port, so
that block RAM holds several classes and needs no write-through bypass (memrouter spec §2.3
``qos_arb``, §4.10)."""

from amaranth import Cat, Module, Mux, ResetSignal, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from hw.common.bram import collision_free_memory, registered_read
from hw.common.lintops import eq_const, select, wrap_inc
from hw.common.params import check_int

__all__ = ["BeatQueues"]


class BeatQueues(wiring.Component):
    """``queues`` first-in first-out queues of ``depth`` entries each, in one memory: queue q
    holds the addresses ``{q, pointer}``. One entry is written per cycle (into queue ``w_q``) and
    one is read per cycle: ``r_data`` in cycle t + 1 is the head of queue ``r_next`` as it stands
    after cycle t (after that cycle's removal by ``r_en``).

    The read has no write-port transparency: an entry written in cycle t is on ``r_data`` from
    cycle t + 2 at the earliest, and ``r_data`` in cycle t + 1 is undefined when cycle t wrote
    the slot it reads (:func:`hw.common.bram.registered_read`; in simulation the old data, or
    its inverse with ``poison_collisions``). That is what lets FPGA block RAM (ECP5 PDPW16KD)
    hold the queues without the bypass multiplexer Yosys adds for a transparent read, or the
    write-data registers and multiplexer it adds to return the old data on a collision. It costs
    nothing in :class:`~hw.memrouter.qos_port.QosPort`: a request is read only after it has been
    selected, and it can be selected only from the cycle after its last beat was written.

    The user never writes a full queue or removes from an empty one (it checks ``level``).

    Parameters
    ----------
    width : int
        Entry width in bits.
    depth : int
        Entries per queue, 2..256.
    queues : int
        Number of queues, 1..4.
    poison_collisions : bool
        Test builds: a read colliding with a write returns the inverted word.

    Members
    -------
    w_en, w_q, w_data : In
        Append ``w_data`` to queue ``w_q``.
    r_en, r_q : In
        Remove the head of queue ``r_q``.
    r_next : In
        The queue whose head ``r_data`` shows in the next cycle. (``w_q``, ``r_q`` and
        ``r_next`` exist only for more than one queue.)
    r_data : Out(width)
        The head of the queue ``r_next`` named in the previous cycle (see above).
    level : Out(range(depth + 1)).array(queues)
        Entries per queue.
    """

    def __init__(self, width, depth, queues, poison_collisions=False):
        self.poison_collisions = bool(poison_collisions)
        self.width = check_int(self, "width", width, 1, 4096)
        self.depth = check_int(self, "depth", depth, 2, 256)
        self.queues = check_int(self, "queues", queues, 1, 4)
        members = {"w_en": In(1), "w_data": In(width), "r_en": In(1), "r_data": Out(width),
                   "level": Out(depth.bit_length()).array(queues)}
        if queues > 1:                        # (one queue has nothing to choose)
            q_w = (queues - 1).bit_length()
            members.update(w_q=In(q_w), r_q=In(q_w), r_next=In(q_w))
        super().__init__(members)

    def elaborate(self, platform):
        m = Module()
        depth, nq = self.depth, self.queues
        ptr_w = (depth - 1).bit_length()
        q_bits = (nq - 1).bit_length()                # 0 for one queue: the pointer alone
        m.submodules.mem = mem = collision_free_memory(shape=self.width, depth=nq << ptr_w)
        wp = mem.write_port()
        wp.data = self.w_data

        def is_q(sel, q):
            return eq_const(sel, q) if q_bits else 1

        rd = [Signal(ptr_w, name=f"rd{q}") for q in range(nq)]
        wr = [Signal(ptr_w, name=f"wr{q}") for q in range(nq)]
        rd_next = []
        for q in range(nq):
            take = self.r_en & is_q(getattr(self, "r_q", 0), q)
            put = self.w_en & is_q(getattr(self, "w_q", 0), q)
            # a reset empties the queues, so the read port follows the reset pointers there too
            # (expressions, not named signals: a named copy would be an unread alias in the
            # Verilog)
            nxt = Mux(ResetSignal(), 0, Mux(take, wrap_inc(rd[q], depth), rd[q]))
            m.d.sync += rd[q].eq(nxt)
            with m.If(put):
                m.d.sync += wr[q].eq(wrap_inc(wr[q], depth))
            m.d.sync += self.level[q].eq(self.level[q] + put - take)
            rd_next.append(nxt)
        if q_bits:
            r_addr = Cat(select(rd_next, self.r_next), self.r_next)
            wp.addr = Cat(select(wr, self.w_q), self.w_q)
        else:
            r_addr, wp.addr = rd_next[0], wr[0]
        m.d.comb += wp.en.eq(self.w_en)
        registered_read(m, mem, r_addr, write_port=wp, poison=self.poison_collisions,
                        into=self.r_data)
        return m
