"""The migration cache's line state and data (spec §4.5, §4.6, MR-F9, MR-F12..F18): NUM_LINES
page-sized lines, each with a tag, lock / nomig / mod flags, an 8-bit access counter and NS-bit
valid, dirty and pending vectors; the sector data of all lines in one memory; true LRU order;
the allocation victim; LINE_STATUS.

The state is changed by one owner (the routing stage's line service) through the ``op_*``
inputs, which act on line ``cur``, and by fill returns, which have priority on the data memory
(a fill beat is stored and marks its sector valid, or, poisoned, only clears its pending bit).
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from hw.common.lintops import bit_at, eq, eq_const, is_zero, nonzero, select, shift_left

__all__ = ["LineStore"]


class LineStore(wiring.Component):
    """Lines of the migration cache.

    Parameters
    ----------
    params : golden.memrouter.params.MemrouterParams
    pw : int
        Width of a page number.

    Members
    -------
    look_ppn : In(pw); hit : Out(1); hit_line : Out(lw)
        Tag lookup (combinational): the line holding page ``look_ppn``.
    csr_ppn : In(pw); csr_hit : Out(1)
        A second lookup, for the CSR block (PT_DATA writes to a page with a line are refused).
    cur : In(lw)
        The line the ``op_*`` inputs act on.
    cur_tv, cur_tag, cur_valid, cur_dirty, cur_pending : Out
        Its state.
    vic_ok, vic_line, vic_tv : Out
        The allocation victim (MR-F16): the lowest-index free line, else the LRU line that is
        unlocked and has no fill in flight; ``vic_ok`` = 0: none, wait.
    op_alloc, op_ppn : In
        Line ``cur`` now holds page ``op_ppn``: flags, counter and vectors cleared, MRU.
    op_free : In(1)
        Line ``cur`` becomes invalid (end of an eviction).
    op_access, op_wr : In(1)
        A processor part is served by line ``cur``: counter +1 (saturating), MRU, mod if a
        write.
    op_pend : In(NS)
        Sectors of line ``cur`` whose fills are issued now.
    op_dclr : In(NS)
        Dirty sectors of line ``cur`` written back now.
    op_wset, op_sect : In
        Sector ``op_sect`` of line ``cur`` is written: valid and dirty.
    inval_all : In(1)
        PT_INIT: every line invalid, no write-back (MR-F6).
    window : In(32)
        WINDOW: every counter is cleared in each cycle where the free-running cycle count is a
        multiple of it (0: never, MR-F18).
    f_en, f_addr, f_poison, f_data : In
        A fill beat for flat sector ``f_addr`` = line · NS + sector.
    rd_en, rd_addr : In; rd_data : Out(256)
        Data read port, shared by the owner and the migration engine: the sector at the
        previous cycle's ``rd_addr`` when ``rd_en`` was high, else at its ``rd2_addr``.
    wr_en, wr_addr, wr_data : In; wr_ok : Out(1)
        Data write port of the owner; it writes only when ``wr_ok`` (no fill beat this cycle).
    status_line : In(log2 NUM_LINES); status : Out(32)
        LINE_STATUS of line ``status_line``: [0] valid, [1] lock, [2] nomig, [15:4] valid
        count, [31:16] ppn. The selection is here, beside the lines, so one word goes to the
        CSR block (NUM_LINES words were 8 % of router2's overuse on the default ECP5 build).
    op_lock : In(1)
        With ``op_alloc``: the new line is locked (a line allocated for the migration engine).
    cur_lock, cur_nomig, cur_cnt, cur_vcount : Out
        More of line ``cur`` (the trigger conditions of §4.7).
    e_line, e_valid, e_pending, e_dirty, e_mod : line ``e_line`` for the migration engine
    e_lock, e_unlock, e_unlock_nomig, e_release : In(1)
        Lock line ``e_line``; unlock it; unlock it with nomig set (ABORT); release it (invalid,
        unlocked, no write-back).
    e_release2, e_line2 : In
        Release a second line in the same cycle (the end of a swap).
    e_pend, e_dclr : In(NS); e_dall : In(1)
        Walker fills issued; sectors written out; every sector dirty (the start of WRITE).
    look2_ppn : In; hit2, hit2_line : Out
        A third lookup (the engine's line_of).
    rd2_addr : In; rd2_ok : Out(1)
        The engine's read address (write-out); ``rd2_ok``: ``rd_data`` is the sector read at
        the previous cycle's ``rd2_addr`` (the owner did not read then).
    pending_any, dirty_any : Out(NUM_LINES)
        Lines with a fill in flight, lines with a dirty sector.
    """

    def __init__(self, params, pw):
        self.p = params
        nl, ns = params.NUM_LINES, params.NS
        self.lw = max(1, (nl - 1).bit_length())
        self.sw = (ns - 1).bit_length()
        self.aw = self.lw + self.sw
        self.pw = pw
        super().__init__({
            "look_ppn": In(pw), "hit": Out(1), "hit_line": Out(self.lw),
            "csr_ppn": In(pw), "csr_hit": Out(1),
            "cur": In(self.lw), "cur_tv": Out(1), "cur_tag": Out(pw),
            "cur_valid": Out(ns), "cur_dirty": Out(ns), "cur_pending": Out(ns),
            "vic_ok": Out(1), "vic_line": Out(self.lw), "vic_tv": Out(1),
            "op_alloc": In(1), "op_ppn": In(pw), "op_free": In(1),
            "op_access": In(1), "op_wr": In(1), "op_pend": In(ns), "op_dclr": In(ns),
            "op_wset": In(1), "op_sect": In(self.sw), "inval_all": In(1), "window": In(32),
            "f_en": In(1), "f_addr": In(self.aw), "f_poison": In(1), "f_data": In(256),
            "rd_en": In(1), "rd_addr": In(self.aw), "rd_data": Out(256),
            "wr_en": In(1), "wr_addr": In(self.aw), "wr_data": In(256), "wr_ok": Out(1),
            "status_line": In(self.lw), "status": Out(32),
            "op_lock": In(1),
            "cur_lock": Out(1), "cur_nomig": Out(1), "cur_cnt": Out(8), "cur_vcount": Out(12),
            "e_line": In(self.lw), "e_valid": Out(ns), "e_pending": Out(ns), "e_dirty": Out(ns),
            "e_mod": Out(1),
            "e_lock": In(1), "e_unlock": In(1), "e_unlock_nomig": In(1), "e_release": In(1),
            "e_release2": In(1), "e_line2": In(self.lw),
            "e_pend": In(ns), "e_dclr": In(ns), "e_dall": In(1),
            "look2_ppn": In(pw), "hit2": Out(1), "hit2_line": Out(self.lw),
            "rd2_addr": In(self.aw), "rd2_ok": Out(1),
            "pending_any": Out(nl), "dirty_any": Out(nl),
        })

    def elaborate(self, platform):
        m = Module()
        p = self.p
        nl, ns, lw, sw = p.NUM_LINES, p.NS, self.lw, self.sw

        tv = Signal(nl)
        lock = Signal(nl)               # (set by the migration engine, not built yet)
        nomig = Signal(nl)
        mod = Signal(nl)
        tag = [Signal(self.pw, name=f"tag{i}") for i in range(nl)]
        cnt = [Signal(8, name=f"cnt{i}") for i in range(nl)]
        valid = [Signal(ns, name=f"valid{i}") for i in range(nl)]
        dirty = [Signal(ns, name=f"dirty{i}") for i in range(nl)]
        pending = [Signal(ns, name=f"pending{i}") for i in range(nl)]
        order = [Signal(lw, init=k, name=f"lru{k}") for k in range(nl)]     # [0] = LRU

        # lookups
        def lookup(ppn, hit, line=None):
            hits = Cat(tv[i] & eq(tag[i], ppn) for i in range(nl))
            m.d.comb += hit.eq(hits.any())
            if line is not None:
                for i in range(nl):
                    with m.If(hits[i]):
                        m.d.comb += line.eq(i)
        lookup(self.look_ppn, self.hit, self.hit_line)
        lookup(self.csr_ppn, self.csr_hit)
        lookup(self.look2_ppn, self.hit2, self.hit2_line)

        cur = self.cur
        m.d.comb += [self.cur_tv.eq(select([tv[i] for i in range(nl)], cur)),
                     self.cur_tag.eq(select(tag, cur)),
                     self.cur_valid.eq(select(valid, cur)),
                     self.cur_dirty.eq(select(dirty, cur)),
                     self.cur_pending.eq(select(pending, cur)),
                     self.cur_lock.eq(select([lock[i] for i in range(nl)], cur)),
                     self.cur_nomig.eq(select([nomig[i] for i in range(nl)], cur)),
                     self.cur_cnt.eq(select(cnt, cur))]
        el = self.e_line
        m.d.comb += [self.e_valid.eq(select(valid, el)), self.e_pending.eq(select(pending, el)),
                     self.e_dirty.eq(select(dirty, el)),
                     self.e_mod.eq(select([mod[i] for i in range(nl)], el))]
        m.d.comb += [self.pending_any.eq(Cat(nonzero(pending[i]) for i in range(nl))),
                     self.dirty_any.eq(Cat(nonzero(dirty[i]) for i in range(nl)))]

        # victim: lowest free line, else the first LRU-ordered line that may be evicted
        busy = Cat(lock[i] | nonzero(pending[i]) for i in range(nl))
        m.d.comb += self.vic_tv.eq(1)
        for k in reversed(range(nl)):
            with m.If(~select([busy[i] for i in range(nl)], order[k])):
                m.d.comb += [self.vic_ok.eq(1), self.vic_line.eq(order[k])]
        for i in reversed(range(nl)):
            with m.If(~tv[i]):
                m.d.comb += [self.vic_ok.eq(1), self.vic_line.eq(i), self.vic_tv.eq(0)]

        # LRU: the touched line moves to the end, the lines after it one place forward
        touch = Signal()
        m.d.comb += touch.eq(self.op_alloc | self.op_access)
        at_or_after = [Cat(eq(order[j], cur) for j in range(k + 1)).any() for k in range(nl - 1)]
        with m.If(touch):
            for k in range(nl - 1):
                with m.If(at_or_after[k]):
                    m.d.sync += order[k].eq(order[k + 1])
            m.d.sync += order[nl - 1].eq(cur)

        # access-counter window (a free-running count modulo WINDOW)
        wcyc = Signal(32)
        wrap = Signal()
        m.d.comb += wrap.eq(nonzero(self.window) & eq(wcyc + 1, self.window))
        m.d.sync += wcyc.eq(Mux(wrap, 0, wcyc + 1))
        win_clear = Signal()
        m.d.comb += win_clear.eq(nonzero(self.window) & is_zero(wcyc))

        # per-line updates
        f_line = self.f_addr[sw:]
        f_bit = shift_left(m, C(1, 1), self.f_addr[:sw], ns, name="f_bit")
        w_bit = shift_left(m, C(1, 1), self.op_sect, ns, name="w_bit")
        status = []                     # LINE_STATUS of each line
        for i in range(nl):
            mine = Signal(name=f"cur_is{i}")
            fill = Signal(name=f"fill_is{i}")
            emine = Signal(name=f"eng_is{i}")
            m.d.comb += [mine.eq(eq_const(cur, i)), fill.eq(self.f_en & eq_const(f_line, i)),
                         emine.eq(eq_const(el, i))]
            alloc = self.op_alloc & mine
            f_set = fill & ~self.f_poison
            w_set = self.op_wset & mine
            m.d.sync += [
                valid[i].eq(Mux(alloc, 0, valid[i]) | Mux(f_set, f_bit, 0) | Mux(w_set, w_bit, 0)),
                dirty[i].eq((Mux(alloc, 0, dirty[i]) & ~Mux(mine, self.op_dclr, 0)
                             & ~Mux(emine, self.e_dclr, 0))
                            | Mux(w_set, w_bit, 0)
                            | Mux(self.e_dall & emine, (1 << ns) - 1, 0)),
                pending[i].eq((Mux(alloc, 0, pending[i]) & ~Mux(fill, f_bit, 0))
                              | Mux(mine, self.op_pend, 0) | Mux(emine, self.e_pend, 0)),
            ]
            rel = Signal(name=f"release{i}")
            m.d.comb += rel.eq(self.e_release & emine
                               | self.e_release2 & eq_const(self.e_line2, i))
            with m.If(alloc):
                m.d.sync += [tv[i].eq(1), tag[i].eq(self.op_ppn), lock[i].eq(self.op_lock),
                             nomig[i].eq(0), mod[i].eq(0), cnt[i].eq(0)]
            with m.Elif(rel):
                m.d.sync += [tv[i].eq(0), lock[i].eq(0)]
            with m.Elif(self.e_lock & emine):
                m.d.sync += lock[i].eq(1)
            with m.Elif((self.e_unlock | self.e_unlock_nomig) & emine):
                m.d.sync += [lock[i].eq(0), nomig[i].eq(nomig[i] | self.e_unlock_nomig)]
            with m.If(self.op_free & mine):
                m.d.sync += [tv[i].eq(0), lock[i].eq(0)]
            with m.Elif(self.op_access & mine):
                m.d.sync += mod[i].eq(mod[i] | self.op_wr)
                m.d.sync += cnt[i].eq(Mux(eq_const(cnt[i], 255), 255, cnt[i] + 1))
            with m.If(win_clear):
                m.d.sync += cnt[i].eq(0)
            with m.If(self.inval_all):
                m.d.sync += tv[i].eq(0)
            # the number of valid sectors, kept beside the vector: a fill and a write set at
            # most one new bit each (the same one counts once), an allocation clears them all
            vcount = Signal(ns.bit_length(), name=f"vcount{i}")
            f_new = f_set & (alloc | ~bit_at(valid[i], self.f_addr[:sw]))
            w_new = w_set & (alloc | ~bit_at(valid[i], self.op_sect)) \
                & ~(f_set & eq(self.f_addr[:sw], self.op_sect))
            m.d.sync += vcount.eq(Mux(alloc, 0, vcount) + f_new + w_new)
            with m.If(mine):
                m.d.comb += self.cur_vcount.eq(vcount)
            status.append(Mux(tv[i], Cat(tv[i], lock[i], nomig[i], C(0, 1),
                                         vcount, C(0, 12 - len(vcount)),
                                         Cat(tag[i], C(0, 16))[:16]), 0))
        m.d.comb += self.status.eq(select(status, self.status_line))

        # sector data: fill beats first. One read port, the owner's first: a second port (the
        # engine's) was a second copy of the memory, whose block-RAM pins were the default
        # build's routing congestion (docs/memrouter.md). (Reads without collision logic,
        # hw/common/bram.py, would be correct here: fills write only pending sectors, which no
        # reader uses, and a processor write to a sector the engine reads for a write-out sets it
        # dirty again (MR-F29). In the whole router they gave more cells, not fewer.)
        m.submodules.sectors = sectors = Memory(shape=256, depth=nl * ns, init=[])
        wp = sectors.write_port()
        rp = sectors.read_port(transparent_for=[wp])
        m.d.comb += self.wr_ok.eq(~self.f_en)
        wp.en = self.f_en & ~self.f_poison | self.wr_en & ~self.f_en
        wp.addr = Mux(self.f_en, self.f_addr, self.wr_addr)
        wp.data = Mux(self.f_en, self.f_data, self.wr_data)
        rp.data = self.rd_data
        m.d.comb += rp.addr.eq(Mux(self.rd_en, self.rd_addr, self.rd2_addr))
        m.d.sync += self.rd2_ok.eq(~self.rd_en)
        return m
