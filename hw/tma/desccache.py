"""TMA descriptor cache with look-ahead (spec tma.md §2.2 DescCache, §4.12; TMA-F4..F8, TMA-E1
(the ``desc_rd`` clause), TMA-I3, TMA-C5; seed ¶87)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.tma.formats import (DESC_FIELDS, LINE, CmdOp, cmd_fields, desc_rd_req_fields,
                                desc_rd_resp_fields)
from golden.tma.params import RANGES, TmaParams
from hw.common.layout import struct_layout
from hw.common.onehot import onehot_to_binary
from hw.common.params import check_int
from hw.tma.reqqueue import PeekSignature
from hw.tma.setup import setup_in_layout
from hw.tma.validate import eqc, eqv, lt

__all__ = ["TmaDescCache", "is_cache_user"]

_LINE_BITS = LINE.bit_length() - 1          # 7: desc_addr[6:0] is the offset in the line


def is_cache_user(cmd):
    """TMA-F4 / §4.12 (``golden.tma.validate.is_cache_user``) on a ``TmaCmd`` view: a tensor op
    (``op`` 0..3) that passes rules 0x01-0x04. For a tensor op 0x01 always passes, 0x02 fails on
    ``mcast`` unless the op is TENSOR_LOAD, 0x03 fails on ``mcast`` with an empty ``cta_mask``,
    0x04 fails when ``desc_addr`` is not 128-byte aligned."""
    tensor = ~cmd.op[2:].any()
    mcast_bad = cmd.mcast & (~eqc(cmd.op, CmdOp.TENSOR_LOAD) | ~cmd.cta_mask.any())
    return tensor & ~mcast_bad & ~cmd.desc_addr[:_LINE_BITS].any()


class TmaDescCache(wiring.Component):
    """Descriptor cache between the request queue and Setup.

    ``dc_entries`` fully associative 128-byte entries tagged by ``desc_addr[ADDR_W-1:7]``. Only
    cache users (:func:`is_cache_user`: tensor ops passing rules 0x01-0x04) look their line up;
    every other command (block and control ops, reserved opcodes, tensor ops failing 0x01-0x04)
    passes straight to Setup with a zero descriptor, without lookup, read, install or LRU update
    (TMA-F4). Setup then rejects or executes it.

    **Head (setup lookup).** The queue head is presented on ``o`` in the same cycle it appears
    when it bypasses or hits: the tag compare and the descriptor read (the ``dc_entries`` x
    1024-bit line memory, read combinationally at the hit entry) sit between the queue's head
    entry and ``o``, so a hit that entered an empty queue in cycle t is valid on ``o`` in cycle
    t + 1. A missing head issues one ``desc_rd_req`` for its line (TMA-F5) unless a read is in flight: a read of
    its own line (the look-ahead of its command) is waited for and never repeated; any other read
    is finished first (TMA-F7: one read outstanding). The response is installed, and the head hits
    in the next cycle. ``o`` stays valid with a stable payload until Setup takes it: the head's
    entry is never the victim of an install, and invalidation happens only when the head itself
    (DESC_INVAL) leaves.

    **Look-ahead (TMA-F6).** While the head is presented (hit or bypass; Setup busy with earlier
    commands), the command behind it (``next``) is looked up too: if it is a cache user whose
    line is neither cached nor being read, its ``desc_rd_req`` is valid in the same cycle, and
    transfers in that cycle when ``desc_rd_req.ready`` is high. No look-ahead while DESC_INVAL is
    at the head (TMA-F8). A look-ahead of a cached line does nothing. ``desc_rd_req.valid`` is a
    function of registered state only (queue entries, tags, the read-in-flight flag), and its
    address stays the same until the transfer: the command it serves is the head or becomes it.

    **Replacement (§4.12).** An install takes the lowest-numbered invalid entry, else the least
    recently used entry that is not the head's (the "command in setup"; at most one entry, so
    the victim is the oldest or, when that one is held, the second oldest). Recency is a
    permutation of ages 0..dc_entries-1 (0 = most recent). A use refreshes an entry: the head's
    lookup (once per command, in the first cycle it hits) and every install. Both happen in
    command order (head k's lookup, then the look-ahead install of k + 1), so the sequence of
    reads equals that of the golden ``golden.tma.desccache.DescCache``.

    **DESC_INVAL (TMA-F8).** When an accepted DESC_INVAL (``mcast = 0``; one with ``mcast = 1``
    is rejected by rule 0x02 and invalidates nothing) is taken by Setup, after every earlier
    command, all valid bits are cleared; it goes on to Setup as a command and completes like a
    NOP there. No read is in flight at that moment (nothing is fetched for a DESC_INVAL and no
    look-ahead is made while it is at the head).

    ``desc_rd_resp.ready`` is high while a read is outstanding (and only then).

    Parameters
    ----------
    dc_entries : int
        DC_ENTRIES, 2..16 (TMA-C5).
    addr_w : int
        ADDR_W, 40..64 (TMA-C1).
    smem_aw : int
        SMEM_AW, 11..24 (TMA-C2).
    id_w : int
        ID_W, 1..16 (TMA-C3).
    nb_w : int
        NB_W, 1..28 (TMA-C7).

    Members
    -------
    head : In(stream.Signature(TmaCmd layout))
        The head of the request queue; taken when it moves on to Setup.
    next : In(PeekSignature(TmaCmd layout))
        The command behind the head (look-ahead only).
    o : Out(stream.Signature(setup_in layout))
        Setup input: ``cmd`` and, for cache users, its 128-byte descriptor (zero otherwise);
        ``hw.tma.setup.setup_in_layout``, ``golden.tma.jobs.setup_in_fields``.
    desc_rd_req : Out(stream.Signature({addr: ADDR_W}))
        Descriptor line reads, 128-byte aligned (TMA-I3).
    desc_rd_resp : In(stream.Signature({data: 1024}))
        The line of the outstanding read, byte j in ``data[8j+7:8j]`` (TMA-I3).
    """

    def __init__(self, dc_entries=4, addr_w=64, smem_aw=18, id_w=8, nb_w=20):
        check_int(self, "dc_entries", dc_entries, *RANGES["DC_ENTRIES"])
        check_int(self, "addr_w", addr_w, *RANGES["ADDR_W"])
        check_int(self, "smem_aw", smem_aw, *RANGES["SMEM_AW"])
        check_int(self, "id_w", id_w, *RANGES["ID_W"])
        check_int(self, "nb_w", nb_w, *RANGES["NB_W"])
        self.entries = dc_entries
        self.p = TmaParams(ADDR_W=addr_w, SMEM_AW=smem_aw, ID_W=id_w, NB_W=nb_w,
                           DC_ENTRIES=dc_entries)
        cmd_layout = struct_layout(cmd_fields(self.p))
        super().__init__({
            "head": In(stream.Signature(cmd_layout)),
            "next": In(PeekSignature(cmd_layout)),
            "o": Out(stream.Signature(setup_in_layout(self.p))),
            "desc_rd_req": Out(stream.Signature(struct_layout(desc_rd_req_fields(self.p)))),
            "desc_rd_resp": In(stream.Signature(struct_layout(desc_rd_resp_fields()))),
        })

    def elaborate(self, platform):
        m = Module()
        n = self.entries
        aw = self.p.ADDR_W
        tw = aw - _LINE_BITS
        age_w = ceil_log2(n)

        tags = [Signal(tw, name=f"tag{i}") for i in range(n)]
        valid = Signal(n)
        ages = [Signal(age_w, name=f"age{i}", init=i) for i in range(n)]
        busy = self.desc_rd_resp.ready      # a desc_rd is outstanding (TMA-F7); a register
        rd_line = Signal(tw)                # its line
        head_used = Signal()                # the head's lookup has refreshed its entry

        # the lines: a memory with a combinational read, which ECP5 builds from distributed RAM
        # (TRELLIS_DPR16X4) with its own read multiplexer, in place of dc_entries x 1024
        # flip-flops and an AND-OR tree in logic beside the tag compare, where the TMA's FPGA
        # routing congestion sits (issue 9); reads and writes behave as the registers did
        m.submodules.lines = lines = Memory(shape=DESC_FIELDS.width, depth=n, init=[])
        line_wr = lines.write_port()
        line_rd = lines.read_port(domain="comb")

        def wire(value, name, shape=None):
            """A named combinational signal for ``value``: every use reads the same net."""
            sig = Signal(shape if shape is not None else len(value), name=name)
            m.d.comb += sig.eq(value)
            return sig

        def lookup(cmd, who):
            """One-hot hit vector of ``cmd``'s line (valid & tag equal)."""
            line = cmd.desc_addr[_LINE_BITS:aw]
            return Cat(*(wire(valid[i] & eqv(tags[i], line), f"{who}_hit{i}") for i in range(n)))

        # ---------------------------------------------------------------- head: setup lookup
        h = self.head.payload
        h_user = wire(self.head.valid & is_cache_user(h), "h_user")
        h_hitv = lookup(h, "h")
        h_hit = wire(h_hitv.any(), "h_hit")
        h_wait = wire(h_user & ~h_hit, "h_wait")          # missing: its read, or waiting
        h_inval = wire(eqc(h.op, CmdOp.DESC_INVAL), "h_inval")
        # the hit entry's line; zero without a hit or for a command that is no cache user
        line_rd.addr = onehot_to_binary(h_hitv, m, "h_hit_idx")   # the port's own address net
        desc = Mux(h_user & h_hit, line_rd.data, 0)
        m.d.comb += [
            self.o.valid.eq(self.head.valid & ~h_wait),
            self.o.payload.cmd.eq(h),
            self.o.payload.desc.eq(desc),
            self.head.ready.eq(self.o.ready & ~h_wait),
        ]
        leave = wire(self.o.valid & self.o.ready, "leave")

        # ---------------------------------------------------------------- look-ahead (TMA-F6)
        nx = self.next.payload
        n_user = wire(self.next.valid & is_cache_user(nx), "n_user")
        n_hitv = lookup(nx, "n")
        la_need = wire(n_user & ~n_hitv.any() & self.head.valid & ~h_inval & ~h_wait, "la_need")

        # ---------------------------------------------------------------- desc_rd (TMA-F5, F7)
        # a cache user's desc_addr is line aligned (rule 0x04), so it is the read address
        req_addr = Mux(h_wait, h.desc_addr, nx.desc_addr)
        m.d.comb += [
            self.desc_rd_req.valid.eq(~busy & (h_wait | la_need)),
            self.desc_rd_req.payload.addr.eq(req_addr),
        ]
        with m.If(self.desc_rd_req.valid & self.desc_rd_req.ready):
            m.d.sync += [busy.eq(1), rd_line.eq(req_addr[_LINE_BITS:aw])]
        install = wire(self.desc_rd_resp.valid & busy, "install")
        with m.If(install):
            m.d.sync += busy.eq(0)

        # victim: the lowest invalid entry, else the oldest entry not held by the head
        held = Cat(*(h_hitv[i] & h_user for i in range(n)))
        free = ~valid
        first_free = []
        seen = C(0, 1)
        for i in range(n):
            first_free.append(free[i] & ~seen)
            seen = seen | free[i]
        oldest = Cat(*(eqc(ages[i], n - 1) for i in range(n)))
        second = Cat(*(eqc(ages[i], n - 2) for i in range(n)))
        oldest_held = (oldest & held).any()
        lru = Cat(*((oldest[i] & ~held[i]) | (second[i] & oldest_held) for i in range(n)))
        victim = wire(Mux(free.any(), Cat(*first_free), lru), "victim")
        for i in range(n):
            with m.If(install & victim[i]):
                m.d.sync += [tags[i].eq(rd_line), valid[i].eq(1)]
        line_wr.en = install                                # victim is one-hot
        line_wr.addr = onehot_to_binary(victim, m, "victim_idx")
        line_wr.data = self.desc_rd_resp.payload.data

        # recency: the head's lookup (once per command), then an install in the same cycle
        use_head = wire(h_user & h_hit & ~head_used, "use_head")
        with m.If(use_head):
            m.d.sync += head_used.eq(1)
        with m.If(leave):
            m.d.sync += head_used.eq(0)

        def refresh(cur, en, onehot, name):
            used_age = C(0, age_w)
            for i in range(n):
                used_age = used_age | Mux(onehot[i], cur[i], 0)
            used_age = wire(used_age, f"{name}_age")
            return [wire(Mux(en & onehot[i], 0,
                             Mux(en & lt(cur[i], used_age), (cur[i] + 1)[:age_w], cur[i])),
                         f"{name}_age{i}", age_w)
                    for i in range(n)]

        new_ages = refresh(refresh(ages, use_head, h_hitv, "lookup"), install, victim, "install")
        m.d.sync += [ages[i].eq(new_ages[i]) for i in range(n)]

        # DESC_INVAL (TMA-F8): an accepted one clears every entry as it moves on to Setup
        with m.If(leave & h_inval & ~h.mcast):
            m.d.sync += valid.eq(0)
        return m
