"""EntryPool: payload RAM, per-slot flag bits, allocation and in-order or free-list reclaim
(spec trackq.md §2 item 2, §4.2, §4.4 STEP 0/6/7, TQ-F7..F11)."""

from amaranth import C, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.onehot import onehot_to_binary
from hw.common.lintops import bit_at, eq_const, is_zero, nonzero, shift_left
from hw.common.params import check_int

__all__ = ["EntryPool"]


class EntryPool(wiring.Component):
    """POOL slots of one payload RAM, with the mutable per-slot flags and the reclaim logic.

    The payload (request fields, seq, queue) is written once, at allocation, and read through
    ``n_read`` combinational read ports. The flags that change after allocation — eoi, eog, term
    (eoi | eog, or 1 for non-TEX entries), upartial (first entry of a partial unit) and
    released — are POOL-bit registers, because the group tracker writes them retroactively
    (TQ-F35..F37) and the commit picker reads them for every checked-queue head.

    Reclaim (TQ-F9..F11):

    - in-order: slots are allocated at ``alloc_ptr`` and reclaimed at ``reclaim_ptr``; at the end
      of a cycle the oldest slot is reclaimed if it has been released (this cycle included), at
      most one per cycle;
    - free-list (``freelist``): a released slot sets its bit in a POOL-bit free mask and is
      allocatable from the next cycle; allocation takes the lowest free slot (slot numbers are
      not visible at the block's ports). While the pool is empty the mask is all ones (also
      after reset), so switching policy needs no copy.

    The effective policy loads ``cfg_reclaim`` in a cycle that starts with ``used = 0`` and acts
    from that cycle; ``reclaim_mode`` shows the register at the start of the cycle.

    Parameters
    ----------
    size : int
        POOL, 2..4096.
    payload : Layout
        Payload layout stored per slot.
    freelist : int
        Build free-list reclaim (FREELIST, 0 or 1).
    n_read : int
        Number of payload read ports.

    Members
    -------
    cfg_reclaim : In(1)
        Legalised reclaim policy of the cycle (1 = free-list); only with ``freelist``.
    reclaim_mode : Out(1)
        Effective policy at the start of the cycle; only with ``freelist`` (else in-order).
    used : Out(bit_length(POOL))
        Allocated slots (pool_used).
    alloc_en, alloc_data, alloc_eoi, alloc_eog, alloc_term, alloc_upartial : In
        Allocate a slot for ``alloc_data`` with these initial flags.
    alloc_slot : Out
        The slot an allocation takes this cycle.
    rel_en, rel_slot : In
        Slot ``rel_slot`` is delivered on resp this cycle (released).
    mark_en, mark_slot, mark_eoi, mark_eog : In
        Retroactive mark: set eoi and/or eog, and term, of ``mark_slot``.
    up_en, up_slot, up_val : In
        Write the upartial bit of ``up_slot``.
    eoi, eog, term, upartial : Out(POOL)
        The flag registers, one bit per slot.
    rd<i>_addr, rd<i>_data : In, Out
        Combinational payload read ports.
    """

    def __init__(self, size, payload, freelist=1, n_read=4):
        self.size = check_int(self, "size", size, 2, 4096)
        self.freelist = check_int(self, "freelist", freelist, 0, 1)
        self.n_read = check_int(self, "n_read", n_read, 1, 8)
        self.payload = payload
        self.slot_w = (size - 1).bit_length()
        ports = {
            "used": Out(size.bit_length()),
            "alloc_en": In(1), "alloc_data": In(payload), "alloc_eoi": In(1), "alloc_eog": In(1),
            "alloc_term": In(1), "alloc_upartial": In(1), "alloc_slot": Out(self.slot_w),
            "rel_en": In(1), "rel_slot": In(self.slot_w),
            "mark_en": In(1), "mark_slot": In(self.slot_w), "mark_eoi": In(1), "mark_eog": In(1),
            "up_en": In(1), "up_slot": In(self.slot_w), "up_val": In(1),
            "eoi": Out(size), "eog": Out(size), "term": Out(size), "upartial": Out(size),
        }
        if freelist:
            ports.update({"cfg_reclaim": In(1), "reclaim_mode": Out(1)})
        for i in range(n_read):
            ports[f"rd{i}_addr"] = In(self.slot_w)
            ports[f"rd{i}_data"] = Out(payload)
        super().__init__(ports)

    def _wrap_inc(self, value):
        if self.size == 1 << self.slot_w:
            return value + 1
        return Mux(eq_const(value, self.size - 1), 0, value + 1)

    def elaborate(self, platform):
        m = Module()
        size = self.size
        m.submodules.ram = ram = Memory(shape=self.payload, depth=size, init=[])
        # The memory ports use this component's port signals themselves: a copy (``wp.addr.eq(
        # self.alloc_slot)``) would leave one of the two names as an unread alias in the Verilog.
        wp = ram.write_port()
        wp.addr, wp.data, wp.en = self.alloc_slot, self.alloc_data, self.alloc_en
        for i in range(self.n_read):
            rp = ram.read_port(domain="comb")
            rp.addr, rp.data = getattr(self, f"rd{i}_addr"), getattr(self, f"rd{i}_data")

        used = self.used
        if self.freelist:
            policy = self.reclaim_mode       # 1 = free-list; the register is the output port
            eff = Signal()
            m.d.comb += eff.eq(Mux(is_zero(used), self.cfg_reclaim, policy))
            m.d.sync += policy.eq(eff)
            alloc_ptr = Signal(self.slot_w)
        else:
            eff = C(0, 1)
            alloc_ptr = self.alloc_slot      # in-order only: the pointer is the output port
        reclaim_ptr = Signal(self.slot_w)
        released = Signal(size)

        def onehot(slot, name):
            return shift_left(m, C(1, 1), slot, size, name=name)

        rel_mask = Signal(size)
        m.d.comb += rel_mask.eq(Mux(self.rel_en, onehot(self.rel_slot, "rel_bit"), 0))
        reclaim = Signal()
        m.d.comb += reclaim.eq(~eff & nonzero(used)
                               & bit_at(released | rel_mask, reclaim_ptr))
        with m.If(reclaim):
            m.d.sync += reclaim_ptr.eq(self._wrap_inc(reclaim_ptr))

        if self.freelist:
            # free-slot mask (1 = free): all ones after reset and whenever the pool is empty
            free = Signal(size, init=(1 << size) - 1)
            low = Signal(size)
            m.d.comb += low.eq(free & (~free + 1)[:size])
            m.d.comb += self.alloc_slot.eq(Mux(eff, onehot_to_binary(low)[:self.slot_w],
                                               alloc_ptr))
            with m.If(eff):
                m.d.sync += free.eq((free & ~Mux(self.alloc_en, low, 0)) | rel_mask)
        with m.If(~eff & self.alloc_en):
            m.d.sync += alloc_ptr.eq(self._wrap_inc(alloc_ptr))

        dec = Signal()
        m.d.comb += dec.eq(Mux(eff, self.rel_en, reclaim))
        m.d.sync += used.eq(used + self.alloc_en - dec)

        # flags: the registers are the output ports
        a_mask = Signal(size)
        k_mask = Signal(size)
        u_mask = Signal(size)
        m.d.comb += [a_mask.eq(Mux(self.alloc_en, onehot(self.alloc_slot, "alloc_bit"), 0)),
                     k_mask.eq(Mux(self.mark_en, onehot(self.mark_slot, "mark_bit"), 0)),
                     u_mask.eq(Mux(self.up_en, onehot(self.up_slot, "up_bit"), 0))]

        def rep(bit):
            return Mux(bit, (1 << size) - 1, 0)

        eoi, eog, term, upartial = self.eoi, self.eog, self.term, self.upartial
        m.d.sync += [
            eoi.eq((eoi & ~a_mask) | (a_mask & rep(self.alloc_eoi)) | (k_mask & rep(self.mark_eoi))),
            eog.eq((eog & ~a_mask) | (a_mask & rep(self.alloc_eog)) | (k_mask & rep(self.mark_eog))),
            term.eq((term & ~a_mask) | (a_mask & rep(self.alloc_term)) | k_mask),
            upartial.eq((upartial & ~a_mask & ~u_mask) | (a_mask & rep(self.alloc_upartial))
                        | (u_mask & rep(self.up_val))),
            released.eq((released & ~a_mask) | rel_mask),
        ]
        return m
