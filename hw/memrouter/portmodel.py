"""The simulation-only memory port model (memrouter spec §4.11, MR-F51, MR-I10), cycle-exact
against ``golden.memrouter.portmodel.PortModel``."""

from amaranth import C, Cat, Module, Mux, Signal, unsigned
from amaranth.lib import stream, wiring
from amaranth.lib.memory import Memory
from amaranth.lib.wiring import In, Out

from golden.common.fields import Fields
from golden.memrouter.formats import MREQ, MRSP
from hw.common.layout import struct_layout
from hw.common.lintops import eq, eq_const, lt_const, nonzero, wrap_inc
from hw.common.params import check_int

__all__ = ["PortModel", "mreq_fields", "mrsp_fields", "PAT_BASE", "PAT_STEP", "N_POISON",
           "MAX_BEATS"]

PAT_BASE = 0x9E3779B1       # §4.12: pat(j, d) = PAT_BASE·(j+1) + PAT_STEP·(d>>2) mod 2^32
PAT_STEP = 0x85EBCA77
N_POISON = 4                # poison_addr[k] / poison_en[k], k < 4 (MR-I10)
MAX_BEATS = 16              # a request is at most len+1 = 16 beats (MReq.len is 4 bits)
SECTOR_W = 256
BE_W = 32


def mreq_fields(mtag_w=8, dev_w=24):
    """``MREQ`` (golden/memrouter/formats.py) with tag and addr at the given widths."""
    return Fields(*[(n, {"tag": mtag_w, "addr": dev_w}.get(n, w)) for n, w in MREQ.fields])


def mrsp_fields(mtag_w=8):
    """``MRSP`` with the tag at the given width."""
    return Fields(*[(n, mtag_w if n == "tag" else w) for n, w in MRSP.fields])


def _ptr_w(depth):
    return max(1, (depth - 1).bit_length())


class PortModel(wiring.Component):
    """One memory port: HBM (port 0) or an off-package module (port 1+m), for simulation.

    Behaves exactly as ``golden.memrouter.portmodel.PortModel.cycle`` (§4.11). A credit
    counter ``acc`` starts at ``BW_DEN`` and gains ``BW_NUM`` per cycle up to ``BW_DEN``; a
    cycle where it is full, the head request was fully accepted in an earlier cycle (header of
    a read, last data beat of a write) and the output buffer has room (counting this cycle's
    ``mrsp`` transfer) services one beat and empties ``acc``. Reads and writes share that rate.
    A serviced read beat is read from the array then, so later writes never change it; it is
    queued with the cycle it becomes due, ``t + LAT``. A write beat is merged into the array
    under its byte enables; its last beat queues the acknowledgement (data 0, poison 0, last 1).
    ``mrsp`` presents the output head once due, so completion is in request order.

    The array starts with the §4.12 pattern ``pat(j, d)`` without storing it: a 1-bit
    "written" flag per sector selects the stored sector or the pattern computed from the
    sector index, so a full-size memory elaborates and builds fast. Writes (byte-enabled)
    merge against that same view. Reset clears the queues and the credit, not the array.

    The request queue keeps ``PQ_DEPTH`` whole requests; a write's data beats are stored in a
    slot of ``MAX_BEATS`` beats beside its header, so ``mreq.ready`` is ``(queue not full)``
    for a header and 1 for the data beats of a write whose header was taken. The beats of a
    write are counted, the ``last`` bit of ``mreq`` is not looked at; ``cls`` is ignored.
    Addresses must be sector-aligned and inside the array (``FRAMES · 2^LOG2G`` bytes): the
    sector index is ``(addr + 32·k) >> 5`` truncated to the array's index width.

    ``mrsp.valid`` and ``mreq.ready`` are register functions (MR-I7); the due time of an output
    entry is tracked by a ``LAT - 1``-bit delay line of pushes instead of a time stamp, so it is
    exact however long ``mrsp.ready`` stays low.

    Parameters
    ----------
    j : int
        Port index, 0..4 (0 is HBM); only the initial pattern depends on it.
    BW_NUM, BW_DEN : int
        Rate in beats per cycle, 1 <= BW_NUM <= BW_DEN <= 64 (MR-C29; HBM 4/8, module 1/8).
    LAT : int
        Latency from service to ``mrsp``, 1..1024 cycles (MR-C30; HBM 32, module 96).
    PQ_DEPTH : int
        Requests in the request queue, 1..64 (16).
    OUT_DEPTH : int
        Beats in the output buffer, 1..1024 (64).
    FRAMES : int
        Capacity in frames of ``2^LOG2G`` bytes, 1..2^(DEV_W-LOG2G), at most 65536.
    LOG2G : int
        Frame size, 9..16 (MR-C1).
    MTAG_W : int
        ``MReq.tag`` / ``MRsp.tag`` width, 4..16.
    DEV_W : int
        Device byte address width, LOG2G..32.

    Members
    -------
    mreq : In(stream.Signature(MReq))
        Requests (MR-I3): a read is its header beat, a write is ``len+1`` beats whose first
        is the header (and carries data beat 0).
    mrsp : Out(stream.Signature(MRsp))
        Responses (MR-I4): ``len+1`` read beats, or one write acknowledgement, in request order.
    poison_addr : In(DEV_W).array(4)
        Sector byte addresses whose read beats return ``poison = 1`` ...
    poison_en : In(4)
        ... when bit k is set (sampled in the cycle the beat is serviced).
    bd_addr : In(IDX_W)
        Back-door (MR-I10): sector index, ``IDX_W = ceil(log2(FRAMES · 2^LOG2G / 32))``.
    bd_rdata : Out(256)
        The sector at ``bd_addr`` (combinational), as a read serviced now would return it.
    bd_we, bd_wdata, bd_be : In(1), In(256), In(32)
        Merge ``bd_wdata`` under ``bd_be`` into sector ``bd_addr`` at the clock edge. A
        serviced write beat to the same sector in the same cycle makes the result undefined.
    """

    def __init__(self, j=0, BW_NUM=4, BW_DEN=8, LAT=32, PQ_DEPTH=16, OUT_DEPTH=64, FRAMES=64,
                 LOG2G=12, MTAG_W=8, DEV_W=24):
        self.j = check_int(self, "j", j, 0, 4)
        self.BW_DEN = check_int(self, "BW_DEN", BW_DEN, 1, 64)
        self.BW_NUM = check_int(self, "BW_NUM", BW_NUM, 1, BW_DEN)
        self.LAT = check_int(self, "LAT", LAT, 1, 1024)
        self.PQ_DEPTH = check_int(self, "PQ_DEPTH", PQ_DEPTH, 1, 64)
        self.OUT_DEPTH = check_int(self, "OUT_DEPTH", OUT_DEPTH, 1, 1024)
        self.LOG2G = check_int(self, "LOG2G", LOG2G, 9, 16)
        self.MTAG_W = check_int(self, "MTAG_W", MTAG_W, 4, 16)
        self.DEV_W = check_int(self, "DEV_W", DEV_W, LOG2G, 32)
        self.FRAMES = check_int(self, "FRAMES", FRAMES, 1, min(1 << 16, 1 << (DEV_W - LOG2G)))
        self.sectors = FRAMES << (LOG2G - 5)
        self.IDX_W = (self.sectors - 1).bit_length()
        self.mreq_fields = mreq_fields(MTAG_W, DEV_W)
        self.mrsp_fields = mrsp_fields(MTAG_W)
        super().__init__({
            "mreq": In(stream.Signature(struct_layout(self.mreq_fields))),
            "mrsp": Out(stream.Signature(struct_layout(self.mrsp_fields))),
            "poison_addr": In(DEV_W).array(N_POISON),
            "poison_en": In(N_POISON),
            "bd_addr": In(self.IDX_W),
            "bd_rdata": Out(SECTOR_W),
            "bd_we": In(1),
            "bd_wdata": In(SECTOR_W),
            "bd_be": In(BE_W),
        })

    # ---- helpers -----------------------------------------------------------------------------
    def _pattern(self, idx):
        """The §4.12 initial sector ``idx``: word w is base + STEP·(8·idx + w) mod 2^32.

        One multiply per word rather than a named row value: a name on the 32-bit slice of the
        wider sum would be an unread alias in the Verilog."""
        step8 = C((PAT_STEP * 8) & 0xFFFFFFFF, 32)
        return Cat(*[(C((PAT_BASE * (self.j + 1) + PAT_STEP * w) & 0xFFFFFFFF, 32)
                      + idx * step8)[:32] for w in range(SECTOR_W // 32)])

    @staticmethod
    def _merge(old, new, be):
        """``old`` with the bytes enabled by ``be`` taken from ``new`` (MR-I9)."""
        return Cat(*[Mux(be[b], new[8 * b:8 * b + 8], old[8 * b:8 * b + 8])
                     for b in range(BE_W)])

    def _sector_view(self, m, data_mem, flag_mem, idx, cur):
        """Drive ``cur`` with the current content of sector ``idx``: stored if written, else
        the pattern. Memory ports are bound to named signals (not copied into them), so the
        Verilog has no unread port aliases."""
        name = cur.name
        rd = data_mem.read_port(domain="comb")
        fl = flag_mem.read_port(domain="comb")
        rd.addr = fl.addr = idx
        rd.data = Signal(SECTOR_W, name=f"{name}_stored")
        fl.data = Signal(name=f"{name}_written")
        m.d.comb += cur.eq(Mux(fl.data, rd.data, self._pattern(idx)))

    @staticmethod
    def _write(m, mem, addr, data, en):
        wp = mem.write_port()
        wp.addr, wp.data, wp.en = addr, data, en

    def elaborate(self, platform):
        m = Module()
        tag_w, dev_w, idx_w = self.MTAG_W, self.DEV_W, self.IDX_W
        pq, od, lat = self.PQ_DEPTH, self.OUT_DEPTH, self.LAT
        beat_w = (MAX_BEATS - 1).bit_length()
        req = self.mreq.payload

        # ---- the array: data and written flags ---------------------------------------------
        m.submodules.data_mem = data_mem = Memory(shape=unsigned(SECTOR_W), depth=self.sectors,
                                                  init=[])
        m.submodules.flag_mem = flag_mem = Memory(shape=unsigned(1), depth=self.sectors, init=[])

        # ---- request queue: headers, and a slot of MAX_BEATS write beats per request --------
        hdr_w = tag_w + dev_w + 4 + 1
        slot_w = _ptr_w(pq)
        m.submodules.q_mem = q_mem = Memory(shape=unsigned(hdr_w), depth=1 << slot_w, init=[])
        m.submodules.wd_mem = wd_mem = Memory(shape=unsigned(SECTOR_W + BE_W),
                                              depth=MAX_BEATS << slot_w, init=[])
        q_rd = Signal(slot_w)          # head slot
        q_wr = Signal(slot_w)          # next free slot
        q_cnt = Signal(range(pq + 1))  # requests held (the one still taking data beats too)
        h_k = Signal(beat_w)           # beats of the head already serviced
        w_busy = Signal()              # a write header was taken, data beats still due
        w_slot = Signal(slot_w)
        w_cnt = Signal(beat_w)         # its beats taken so far
        w_len = Signal(beat_w)

        # ---- output buffer -----------------------------------------------------------------
        rsp_w = tag_w + SECTOR_W + 2
        o_ptr_w = _ptr_w(od)
        m.submodules.o_mem = o_mem = Memory(shape=unsigned(rsp_w), depth=1 << o_ptr_w, init=[])
        o_rd = Signal(o_ptr_w)
        o_wr = Signal(o_ptr_w)
        o_cnt = Signal(range(od + 1))
        o_due = Signal(range(od + 1))  # entries at the head whose due cycle has come

        # ---- mrsp: the head once due ------------------------------------------------------
        o_rp = o_mem.read_port(domain="comb")
        o_rp.addr = o_rd
        o_rp.data = self.mrsp.payload.as_value()
        pop = Signal()
        m.d.comb += [
            self.mrsp.valid.eq(nonzero(o_due)),
            pop.eq(self.mrsp.valid & self.mrsp.ready),
        ]

        # ---- mreq.ready and acceptance -----------------------------------------------------
        accept = Signal()
        take_hdr = Signal()
        m.d.comb += [
            self.mreq.ready.eq(w_busy | lt_const(q_cnt, pq)),
            accept.eq(self.mreq.valid & self.mreq.ready),
            take_hdr.eq(accept & ~w_busy),
        ]
        self._write(m, q_mem, q_wr, Cat(req.tag, req.addr, req.len, req.wr), take_hdr)
        wd_addr = Signal(slot_w + beat_w)
        wd_en = Signal()
        m.d.comb += [
            wd_addr.eq(Mux(w_busy, Cat(w_cnt, w_slot), Cat(C(0, beat_w), q_wr))),
            wd_en.eq(accept & (w_busy | req.wr)),
        ]
        self._write(m, wd_mem, wd_addr, Cat(req.data, req.be), wd_en)
        with m.If(take_hdr):
            m.d.sync += q_wr.eq(wrap_inc(q_wr, pq))
            with m.If(req.wr & nonzero(req.len)):
                m.d.sync += [w_busy.eq(1), w_slot.eq(q_wr), w_cnt.eq(1), w_len.eq(req.len)]
        with m.Elif(accept):
            m.d.sync += w_cnt.eq((w_cnt + 1)[:beat_w])
            with m.If(eq(w_cnt, w_len)):
                m.d.sync += w_busy.eq(0)

        # ---- service -------------------------------------------------------------------------
        q_rp = q_mem.read_port(domain="comb")
        q_rp.addr = q_rd
        q_rp.data = head = Signal(hdr_w, name="q_head")
        h_tag = head[:tag_w]
        h_addr = head[tag_w:tag_w + dev_w]
        h_len = head[tag_w + dev_w:tag_w + dev_w + 4]
        h_wr = head[-1]
        # the head is fully accepted unless it is the write still taking data beats
        h_ok = Signal()
        m.d.comb += h_ok.eq(nonzero(q_cnt) & ~(w_busy & eq_const(q_cnt, 1)))

        acc = Signal(range(self.BW_DEN + 1), init=self.BW_DEN)
        acc_sum = Signal(range(2 * self.BW_DEN + 1))
        acc_full = Signal()
        m.d.comb += [acc_sum.eq(acc + self.BW_NUM),
                     acc_full.eq(~lt_const(acc_sum, self.BW_DEN))]
        o_room = Signal()
        m.d.comb += o_room.eq(lt_const(o_cnt, od) | pop)
        service = Signal()
        m.d.comb += service.eq(h_ok & acc_full & o_room)
        with m.If(service):
            m.d.sync += acc.eq(0)
        with m.Elif(acc_full):
            m.d.sync += acc.eq(self.BW_DEN)
        with m.Else():
            m.d.sync += acc.eq(acc_sum[:len(acc)])

        # device byte address of beat h_k, with its carry: a poison address never matches an
        # overflowed one, as in the golden model's unbounded integers
        sec_addr = Signal(dev_w + 1)
        m.d.comb += sec_addr.eq(h_addr + Cat(C(0, 5), h_k))
        sec_idx = sec_addr[5:5 + idx_w]
        h_last = Signal()
        m.d.comb += h_last.eq(eq(h_k, h_len))
        poison = Signal()
        m.d.comb += poison.eq(Cat(*[self.poison_en[k] & eq(self.poison_addr[k], sec_addr)
                                    for k in range(N_POISON)]).any())

        cur = Signal(SECTOR_W, name="svc_cur")
        self._sector_view(m, data_mem, flag_mem, sec_idx, cur)
        wd_rp = wd_mem.read_port(domain="comb")
        wd_rp.addr = Cat(h_k, q_rd)
        wd_rp.data = w_beat = Signal(SECTOR_W + BE_W, name="w_beat")
        merged = self._merge(cur, w_beat[:SECTOR_W], w_beat[SECTOR_W:])
        svc_write = Signal()
        m.d.comb += svc_write.eq(service & h_wr)
        self._write(m, data_mem, sec_idx, merged, svc_write)
        self._write(m, flag_mem, sec_idx, C(1, 1), svc_write)

        with m.If(service):
            with m.If(h_last):
                m.d.sync += [h_k.eq(0), q_rd.eq(wrap_inc(q_rd, pq))]
            with m.Else():
                m.d.sync += h_k.eq((h_k + 1)[:beat_w])

        pop_q = Signal()
        m.d.comb += pop_q.eq(service & h_last)
        m.d.sync += q_cnt.eq((q_cnt + take_hdr - pop_q)[:len(q_cnt)])

        # ---- push into the output buffer ---------------------------------------------------
        push = Signal()
        m.d.comb += push.eq(service & (~h_wr | h_last))
        o_data = Signal(SECTOR_W)       # read data, or 0 for an acknowledgement
        m.d.comb += o_data.eq(Mux(h_wr, 0, cur))
        self._write(m, o_mem, o_wr, Cat(h_tag, o_data, poison & ~h_wr, h_last), push)
        with m.If(push):
            m.d.sync += o_wr.eq(wrap_inc(o_wr, od))
        with m.If(pop):
            m.d.sync += o_rd.eq(wrap_inc(o_rd, od))
        m.d.sync += o_cnt.eq((o_cnt + push - pop)[:len(o_cnt)])

        # an entry pushed at cycle t is due from t + LAT: a delay line of pushes
        if lat == 1:
            now_due = push
        else:
            line = Signal(lat - 1)
            m.d.sync += line.eq(Cat(push, line[:-1]) if lat > 2 else push)
            now_due = line[-1]
        m.d.sync += o_due.eq((o_due + now_due - pop)[:len(o_due)])

        # ---- back door -----------------------------------------------------------------------
        self._sector_view(m, data_mem, flag_mem, self.bd_addr, self.bd_rdata)
        bd_merged = self._merge(self.bd_rdata, self.bd_wdata, self.bd_be)
        self._write(m, data_mem, self.bd_addr, bd_merged, self.bd_we)
        self._write(m, flag_mem, self.bd_addr, C(1, 1), self.bd_we)
        return m
