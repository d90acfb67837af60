"""LinkedQueues: head/tail/count of the tracking queues, the status queue and the checked
queues, with the TQ and CQ next-pointer RAMs (spec trackq.md §2 "LinkedQueues", §4.2)."""

from amaranth import Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq_const, ge_const_bits, is_zero, nonzero, select
from hw.common.params import check_int

__all__ = ["LinkedQueues"]


class LinkedQueues(wiring.Component):
    """Linked lists of slot pointers over the entry pool.

    Lists 0..N_Q−1 of the TQ link RAM are the tracking queues and list N_Q is the status queue
    (no TQ entry shares it); the CQ link RAM holds the N_Q checked queues. Every list has a head,
    a tail and a count register; the next pointers live in two POOL-word memories with
    combinational read ports (the seed's TQ-link and CQ-link tables, [seed ¶29]).

    Operations of one cycle, in the order of §4.4:

    - ``pop``: the head of tracking queue ``pop_q`` moves to the tail of checked queue ``pop_q``
      (STEP 4); ``pop_slot``/``pop_succ`` name the moved slot and the promoted successor;
    - ``sq_pop``: the status-queue head commits (STEP 5); ``sq_succ`` is the next head;
    - ``cmt``: the head of checked queue ``cmt_q`` commits (STEP 5, after the pop: a checked
      queue with one entry that also receives the popped entry gets that entry as its head);
    - ``ins``: ``ins_slot`` is appended to list ``ins_list`` (STEP 6, after the pops: a list
      emptied by this cycle's pop gets the new slot as head).

    Parameters
    ----------
    n_q : int
        Number of tracking (and checked) queues.
    size : int
        POOL, the number of slots.
    status : bool
        Build the status queue (list N_Q); without it there are N_Q lists and no ``sq_*``
        ports (the SingleFifo baseline).
    tag : Shape or None
        What the commit decision needs of a checked-queue head (``pop_tag`` in, ``cq_tag``
        out); None: no tags (the SingleFifo baseline).

    **Two-level checked-queue heads.** Each checked queue keeps its head and the entry behind
    it (slot and tag) in registers, and a tag RAM beside the CQ link RAM stores the tag of the
    entry each link points to. A commit therefore moves registered values (second → head) and
    refills the second level from a read at the second entry, whose address is a register too:
    one read port per checked queue, so which queue commits only enables registers and never
    addresses a RAM in the same cycle.

    **One read port per memory.** Every read of a link RAM (the third entry of each tracking
    queue, the status-queue successor, the entry behind each checked queue's second) has its
    own copy of the memory, all copies of a list written alike. Read ports of one memory whose
    data is used under mutually exclusive conditions (the ``pop_q`` and ``cmt_q`` decodes) are
    merged by Yosys's resource sharing (``share``) into one port addressed through a multiplexer
    of the decision, which put a RAM read behind the pop arbiter and the commit decision again.
    (On LUT RAM every read port is a copy of the memory anyway.)

    Members
    -------
    tq_head, tq_count : Out(ArrayLayout(.., n_q + 1))
        Head slot and entry count of each tracking queue and (last) the status queue.
    cq_head, cq_count : Out(ArrayLayout(.., n_q))
        Head slot and entry count of each checked queue.
    cq_nonempty : Out(n_q)
        Checked queue q is not empty: a register, so the commit decision starts without a
        compare of the count.
    pop_en, pop_q : In
        Pop the head of tracking queue pop_q into its checked queue.
    pop_slot, pop_succ_valid, pop_succ : Out
        The popped slot; whether a successor exists, and its slot. The successor comes from a
        per-queue second-entry register (the slot behind the head), so promoting it needs no
        link-RAM read (spec §4.4 RTL notes).
    tq_third : Out(ArrayLayout(.., n_q))
        The slot behind each tracking queue's second entry (meaningful with three entries or
        more): one link read per queue, addressed by its second-entry register, so that the
        top can refresh what it caches of the second entry before knowing which queue pops.
    sq_pop_en : In(1)
        Pop the status-queue head.
    sq_succ_valid, sq_succ : Out
        Next status-queue head (before this cycle's insert).
    cmt_en, cmt_q : In
        Pop the head of checked queue cmt_q.
    cmt_slot : Out
        That head's slot.
    pop_tag : In(tag)
        The tag of the entry popped this cycle (it joins checked queue pop_q).
    cq_tag : Out(ArrayLayout(tag, n_q))
        The tag of each checked-queue head (registers; meaningful while the queue is not empty).
    ins_en, ins_list, ins_slot : In
        Append ins_slot to list ins_list (N_Q = status queue).
    """

    def __init__(self, n_q, size, status=True, tag=None):
        self.n_q = check_int(self, "n_q", n_q, 1, 64)
        self.size = check_int(self, "size", size, 2, 4096)
        self.slot_w = (size - 1).bit_length()
        self.cnt_w = size.bit_length()
        self.q_w = max(1, (n_q - 1).bit_length())
        self.status = bool(status)
        self.n_lists = n_lists = n_q + self.status
        self.l_w = max(1, (n_lists - 1).bit_length())
        sw, cw = self.slot_w, self.cnt_w
        ports = {
            "tq_head": Out(data.ArrayLayout(sw, n_lists)),
            "tq_count": Out(data.ArrayLayout(cw, n_lists)),
            "cq_head": Out(data.ArrayLayout(sw, n_q)),
            "cq_count": Out(data.ArrayLayout(cw, n_q)), "cq_nonempty": Out(n_q),
            "pop_en": In(1), "pop_q": In(self.q_w), "pop_slot": Out(sw),
            "pop_succ_valid": Out(1), "pop_succ": Out(sw),
            "tq_third": Out(data.ArrayLayout(sw, n_q)),
            "cmt_en": In(1), "cmt_q": In(self.q_w), "cmt_slot": Out(sw),
            "ins_en": In(1), "ins_list": In(self.l_w), "ins_slot": In(sw),
        }
        if self.status:
            ports.update({"sq_pop_en": In(1), "sq_succ_valid": Out(1), "sq_succ": Out(sw)})
        self.tag = tag
        if tag is not None:
            ports.update({"pop_tag": In(tag), "cq_tag": Out(data.ArrayLayout(tag, n_q))})
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        n_q, size, sw, cw = self.n_q, self.size, self.slot_w, self.cnt_w
        tag = self.tag
        if tag is not None:          # the tag of the entry each CQ link points to, as raw
            # bits: the fields of a struct-shaped read port would be unread aliases
            pop_tag = self.pop_tag.as_value()

        # head and count registers are the elements of the output ports themselves
        n_lists = self.n_lists
        tq_head = [self.tq_head[k] for k in range(n_lists)]
        tq_tail = [Signal(sw, name=f"tq_tail{k}") for k in range(n_lists)]
        tq_cnt = [self.tq_count[k] for k in range(n_lists)]
        cq_head = [self.cq_head[k] for k in range(n_q)]
        cq_tail = [Signal(sw, name=f"cq_tail{k}") for k in range(n_q)]
        cq_cnt = [self.cq_count[k] for k in range(n_q)]

        # The memory ports use this component's port signals where one exists (a copy would be
        # an unread alias in the Verilog).
        # STEP 4 pop: TQ pop_q -> CQ pop_q
        # The successor of a popped head comes from the per-queue second-entry register (spec
        # §4.4 RTL notes), not from the link RAM, so the promotion reads one RAM (the payload)
        # after the pop arbiter instead of two chained ones. The link RAM is read at the second
        # entry to refill that register for the next cycle.
        tq_second = [Signal(sw, name=f"tq_second{k}") for k in range(n_q)]
        tq_waddr, tq_wen = Signal(sw), Signal()       # the TQ link write (STEP 6)
        cq_waddr, cq_wen = Signal(sw), Signal()       # the CQ link write (STEP 4)

        def link_copy(name, data, waddr, wen):
            """A copy of a link memory with its list's write, and the copy's read port (class
            docstring: one read port per memory)."""
            m.submodules[name] = mem = Memory(shape=len(data), depth=size, init=[])
            wp = mem.write_port()
            wp.data, wp.addr, wp.en = data, waddr, wen
            return mem.read_port(domain="comb")

        for k in range(n_q):
            rd_third = link_copy(f"tq_link{k}", self.ins_slot, tq_waddr, tq_wen)
            rd_third.addr, rd_third.data = tq_second[k], self.tq_third[k]
        m.d.comb += [
            self.pop_slot.eq(select(tq_head[:n_q], self.pop_q)),
            self.pop_succ.eq(select(tq_second, self.pop_q)),
            # per queue before the select: the popped queue is known only after the arbiter
            self.pop_succ_valid.eq(select([ge_const_bits(c, 2) for c in tq_cnt[:n_q]],
                                          self.pop_q)),
        ]
        # STEP 5 status pop
        if self.status:
            rd_sq = link_copy("tq_link_sq", self.ins_slot, tq_waddr, tq_wen)
            rd_sq.addr, rd_sq.data = tq_head[n_q], self.sq_succ
            m.d.comb += self.sq_succ_valid.eq(ge_const_bits(tq_cnt[n_q], 2))
        # STEP 5 checked-queue pop: the head and the second level are registers (class docstring)
        m.d.comb += self.cmt_slot.eq(select(cq_head, self.cmt_q))
        # CQ link write (push onto a non-empty checked queue): the pushed slot and its tag
        m.d.comb += [cq_waddr.eq(select(cq_tail, self.pop_q)),
                     cq_wen.eq(self.pop_en & nonzero(select(cq_cnt, self.pop_q)))]

        for q in range(n_q):
            push = self.pop_en & eq_const(self.pop_q, q)
            pop = self.cmt_en & eq_const(self.cmt_q, q)
            one = eq_const(cq_cnt[q], 1)
            second = Signal(sw, name=f"cq_second{q}")
            rd = link_copy(f"cq_link{q}", self.pop_slot, cq_waddr, cq_wen)
            rd.addr = second
            # per field: (head register, second-level register, value pushed this cycle, value
            # linked behind the second entry)
            levels = [(cq_head[q], second, self.pop_slot, rd.data)]
            if tag is not None:
                tag2 = Signal(len(pop_tag), name=f"cq_tag2_{q}")
                rd_tag = link_copy(f"cq_link_tag{q}", pop_tag, cq_waddr, cq_wen)
                rd_tag.addr = second
                levels.append((self.cq_tag[q].as_value(), tag2, pop_tag, rd_tag.data))
            with m.If(push):
                m.d.sync += cq_tail[q].eq(self.pop_slot)
            for head, lvl2, pushed, linked in levels:
                with m.If(push):
                    with m.If(is_zero(cq_cnt[q])):
                        m.d.sync += head.eq(pushed)
                    with m.Elif(one & ~pop):
                        m.d.sync += lvl2.eq(pushed)
                with m.If(pop):
                    m.d.sync += [head.eq(Mux(one, pushed, lvl2)),
                                 lvl2.eq(Mux(ge_const_bits(cq_cnt[q], 3), linked, pushed))]
            m.d.sync += [cq_cnt[q].eq(cq_cnt[q] + push - pop),
                         self.cq_nonempty[q].eq(push | ge_const_bits(cq_cnt[q], 2)
                                                | (~pop & nonzero(cq_cnt[q])))]

        # STEP 6 insert, after the pops
        after = []
        for k in range(n_lists):
            if k < n_q:
                popped = self.pop_en & eq_const(self.pop_q, k)
                succ = self.pop_succ
            else:
                popped = self.sq_pop_en
                succ = self.sq_succ
            cnt_after = (tq_cnt[k] - popped)[:cw]
            after.append(cnt_after)
            ins = self.ins_en & eq_const(self.ins_list, k)
            with m.If(popped):
                m.d.sync += tq_head[k].eq(succ)
            if k < n_q:                      # second entry: the popped queue's third, or the
                with m.If(popped):           # inserted slot when it lands behind the head
                    m.d.sync += tq_second[k].eq(self.tq_third[k])
                with m.If(ins & eq_const(cnt_after, 1)):
                    m.d.sync += tq_second[k].eq(self.ins_slot)
            with m.If(ins):
                m.d.sync += tq_tail[k].eq(self.ins_slot)
                with m.If(is_zero(cnt_after)):
                    m.d.sync += tq_head[k].eq(self.ins_slot)
            m.d.sync += tq_cnt[k].eq(cnt_after + ins)
        m.d.comb += [tq_waddr.eq(select(tq_tail, self.ins_list)),
                     tq_wen.eq(self.ins_en & nonzero(select(after, self.ins_list)))]
        return m
