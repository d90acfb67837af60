"""LinkedQueues: head/tail/count of the tracking queues, the status queue and the checked
queues, with the TQ and CQ next-pointer RAMs (spec trackq.md §2 "LinkedQueues", §4.2)."""

from amaranth import Array, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

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
      ``cq_new`` is its next head;
    - ``ins``: ``ins_slot`` is appended to list ``ins_list`` (STEP 6, after the pops: a list
      emptied by this cycle's pop gets the new slot as head).

    Parameters
    ----------
    n_q : int
        Number of tracking (and checked) queues.
    size : int
        POOL, the number of slots.

    Members
    -------
    tq_head, tq_count : Out(ArrayLayout(.., n_q + 1))
        Head slot and entry count of each tracking queue and (last) the status queue.
    cq_head, cq_count : Out(ArrayLayout(.., n_q))
        Head slot and entry count of each checked queue.
    pop_en, pop_q : In
        Pop the head of tracking queue pop_q into its checked queue.
    pop_slot, pop_succ_valid, pop_succ : Out
        The popped slot; whether a successor exists, and its slot.
    sq_pop_en : In(1)
        Pop the status-queue head.
    sq_succ_valid, sq_succ : Out
        Next status-queue head (before this cycle's insert).
    cmt_en, cmt_q : In
        Pop the head of checked queue cmt_q.
    cmt_slot : Out
        That head's slot.
    cq_new_valid, cq_new_from_pop, cq_new : Out
        After the commit, checked queue cmt_q has a head; it is the slot popped this cycle;
        its slot.
    ins_en, ins_list, ins_slot : In
        Append ins_slot to list ins_list (N_Q = status queue).
    """

    def __init__(self, n_q, size):
        self.n_q = check_int(self, "n_q", n_q, 1, 64)
        self.size = check_int(self, "size", size, 2, 4096)
        self.slot_w = (size - 1).bit_length()
        self.cnt_w = size.bit_length()
        self.q_w = max(1, (n_q - 1).bit_length())
        self.l_w = max(1, n_q.bit_length())
        sw, cw = self.slot_w, self.cnt_w
        super().__init__({
            "tq_head": Out(data.ArrayLayout(sw, n_q + 1)),
            "tq_count": Out(data.ArrayLayout(cw, n_q + 1)),
            "cq_head": Out(data.ArrayLayout(sw, n_q)),
            "cq_count": Out(data.ArrayLayout(cw, n_q)),
            "pop_en": In(1), "pop_q": In(self.q_w), "pop_slot": Out(sw),
            "pop_succ_valid": Out(1), "pop_succ": Out(sw),
            "sq_pop_en": In(1), "sq_succ_valid": Out(1), "sq_succ": Out(sw),
            "cmt_en": In(1), "cmt_q": In(self.q_w), "cmt_slot": Out(sw),
            "cq_new_valid": Out(1), "cq_new_from_pop": Out(1), "cq_new": Out(sw),
            "ins_en": In(1), "ins_list": In(self.l_w), "ins_slot": In(sw),
        })

    def elaborate(self, platform):
        m = Module()
        n_q, size, sw, cw = self.n_q, self.size, self.slot_w, self.cnt_w
        m.submodules.tq_link = tq_link = Memory(shape=sw, depth=size, init=[])
        m.submodules.cq_link = cq_link = Memory(shape=sw, depth=size, init=[])

        tq_head = [Signal(sw, name=f"tq_head{k}") for k in range(n_q + 1)]
        tq_tail = [Signal(sw, name=f"tq_tail{k}") for k in range(n_q + 1)]
        tq_cnt = [Signal(cw, name=f"tq_cnt{k}") for k in range(n_q + 1)]
        cq_head = [Signal(sw, name=f"cq_head{k}") for k in range(n_q)]
        cq_tail = [Signal(sw, name=f"cq_tail{k}") for k in range(n_q)]
        cq_cnt = [Signal(cw, name=f"cq_cnt{k}") for k in range(n_q)]
        for k in range(n_q + 1):
            m.d.comb += [self.tq_head[k].eq(tq_head[k]), self.tq_count[k].eq(tq_cnt[k])]
        for k in range(n_q):
            m.d.comb += [self.cq_head[k].eq(cq_head[k]), self.cq_count[k].eq(cq_cnt[k])]

        # STEP 4 pop: TQ pop_q -> CQ pop_q
        pop_cnt = Array(tq_cnt[:n_q])[self.pop_q]
        rd_pop = tq_link.read_port(domain="comb")
        m.d.comb += [
            self.pop_slot.eq(Array(tq_head[:n_q])[self.pop_q]),
            rd_pop.addr.eq(self.pop_slot),
            self.pop_succ.eq(rd_pop.data),
            self.pop_succ_valid.eq(pop_cnt >= 2),
        ]
        # STEP 5 status pop
        rd_sq = tq_link.read_port(domain="comb")
        m.d.comb += [rd_sq.addr.eq(tq_head[n_q]), self.sq_succ.eq(rd_sq.data),
                     self.sq_succ_valid.eq(tq_cnt[n_q] >= 2)]
        # STEP 5 checked-queue pop
        rd_cq = cq_link.read_port(domain="comb")
        c_cnt = Array(cq_cnt)[self.cmt_q]
        m.d.comb += [
            self.cmt_slot.eq(Array(cq_head)[self.cmt_q]),
            rd_cq.addr.eq(self.cmt_slot),
            self.cq_new_from_pop.eq((c_cnt == 1) & self.pop_en & (self.pop_q == self.cmt_q)),
            self.cq_new_valid.eq((c_cnt >= 2) | self.cq_new_from_pop),
            self.cq_new.eq(Mux(c_cnt == 1, self.pop_slot, rd_cq.data)),
        ]
        # CQ link write (push onto a non-empty checked queue)
        wcq = cq_link.write_port()
        m.d.comb += [wcq.addr.eq(Array(cq_tail)[self.pop_q]), wcq.data.eq(self.pop_slot),
                     wcq.en.eq(self.pop_en & (Array(cq_cnt)[self.pop_q] != 0))]
        for q in range(n_q):
            push = self.pop_en & (self.pop_q == q)
            pop = self.cmt_en & (self.cmt_q == q)
            with m.If(push):
                m.d.sync += cq_tail[q].eq(self.pop_slot)
                with m.If(cq_cnt[q] == 0):
                    m.d.sync += cq_head[q].eq(self.pop_slot)
            with m.If(pop):
                m.d.sync += cq_head[q].eq(self.cq_new)
            m.d.sync += cq_cnt[q].eq(cq_cnt[q] + push - pop)

        # STEP 6 insert, after the pops
        wtq = tq_link.write_port()
        ins_tail = Array(tq_tail)[self.ins_list]
        after = []
        for k in range(n_q + 1):
            if k < n_q:
                popped = self.pop_en & (self.pop_q == k)
                succ = self.pop_succ
            else:
                popped = self.sq_pop_en
                succ = self.sq_succ
            cnt_after = Signal(cw, name=f"tq_after{k}")
            m.d.comb += cnt_after.eq(tq_cnt[k] - popped)
            after.append(cnt_after)
            ins = self.ins_en & (self.ins_list == k)
            with m.If(popped):
                m.d.sync += tq_head[k].eq(succ)
            with m.If(ins):
                m.d.sync += tq_tail[k].eq(self.ins_slot)
                with m.If(cnt_after == 0):
                    m.d.sync += tq_head[k].eq(self.ins_slot)
            m.d.sync += tq_cnt[k].eq(cnt_after + ins)
        m.d.comb += [wtq.addr.eq(ins_tail), wtq.data.eq(self.ins_slot),
                     wtq.en.eq(self.ins_en & (Array(after)[self.ins_list] != 0))]
        return m
