"""The memory-side reduction unit ``hw.tma.TmaRedUnit`` (spec tma.md §2.2, §4.9; TMA-F42, F43,
F44, TMA-I11, I13).

It sits between the TMA's ``l2_req`` / ``l2_resp`` and a memory that only reads and writes::

    up_req  ──► TmaRedUnit ──► dn_req   (READ, WRITE, PREFETCH)
    up_resp ◄──            ◄── dn_resp

READ, WRITE and PREFETCH requests and every downstream response that is not the read of a
read-modify-write pass through unchanged. A RED_<op> request becomes a read-modify-write: a
downstream READ of its line (same line, sectors and tag), then, when that read's response comes
back, ``red_apply`` (§4.9) on the line, then a downstream WRITE of the result (same line,
sectors, tag and ``be``). The memory's acknowledgement of that WRITE passes through to
``up_resp`` like any write acknowledgement: it carries the RED request's tag.
"""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import (DATA_W, LINE, RED_OK, DType, L2Op, RedOp, l2_req_fields,
                                l2_resp_fields)
from golden.tma.params import TmaParams
from golden.tma.reduce import FLOAT_FORMATS, RED_NAN
from hw.common.fparith import FloatAdder, float_key
from hw.common.layout import struct_layout
from hw.common.lintops import eq, eq_const, is_zero, lt
from hw.common.params import check_int, reject

__all__ = ["TmaRedUnit"]

LANE = 64                                   # bits of one lane of the arithmetic datapath
_INT_OPS = (RedOp.ADD, RedOp.MIN, RedOp.MAX, RedOp.INC, RedOp.DEC, RedOp.AND, RedOp.OR,
            RedOp.XOR)


class TmaRedUnit(wiring.Component):
    """Memory-side read-modify-write for RED requests (spec tma.md §2.2 ``TmaRedUnit``).

    Behaviour (TMA-F42, F43, I11):

    - Requests are handled one at a time, in acceptance order, and reach ``dn_req`` in that
      order, so the memory (which performs requests in acceptance order) sees every WRITE and
      RED where the TMA put it.
    - READ / WRITE / PREFETCH go to ``dn_req`` unchanged, one per cycle.
    - A RED request is accepted together with its downstream READ (``op`` READ, the RED's
      ``line``, ``sectors`` and ``tag``; ``dtype``, ``data`` and ``be`` zero). ``up_req`` then
      stays not ready until the read-modify-write's WRITE has been loaded for ``dn_req``, so no
      other request gets between the READ and the WRITE (TMA-F43).
    - ``dn_resp`` beats are matched by tag: while the unit waits for its READ, the beat with
      the RED's tag is taken in and every other beat (responses of earlier requests, in any
      order) goes on to ``up_resp``. The line is then combined with the RED's data, LANES x 64
      bits per cycle, and the WRITE (the RED's ``line``, ``sectors``, ``tag`` and ``be``;
      ``dtype`` zero; in lanes without ``be`` the data is the computed value, which the memory
      ignores) is loaded for ``dn_req``. Its acknowledgement passes through to ``up_resp``:
      the RED's response, sent only once the write is acknowledged.

    Downstream tags are the upstream tags. A request's tag is unique among the upstream
    requests awaiting a response (TMA-F27), and a RED's tag stays outstanding upstream until
    its WRITE is acknowledged, so the RED's READ and WRITE (which are never outstanding at the
    same time) may both carry it: downstream tags are then unique among outstanding downstream
    requests. PREFETCH keeps its tag and gets no response.

    Arithmetic (§4.9, TMA-F44), per 64-bit lane: one 64-bit integer unit (wrapping add split at
    bit 32 for 32-bit types, signed/unsigned compare for MIN/MAX, INC/DEC, bitwise ops); two
    F32 adders (FTZ, NaN -> 0x7FFFFFFF); four F16 and four BF16 adders (subnormals kept, NaN ->
    0x7FFF) and four 16-bit min/max selects (-0 < +0, NaN rules). A pair outside RED_OK (the
    TMA never sends one: rule 0x1C) leaves memory unchanged: the WRITE carries the old line.
    Every element is computed whatever its ``be``; the WRITE's ``be`` keeps disabled bytes.

    Timing: a RED occupies the unit for 2 + L + N + P cycles, where L is the downstream read
    latency (READ handshake to response handshake), N = 16 / LANES the datapath passes over the
    line and P = ``stages`` (the pipeline register in the adders); with L = 1, LANES = 2 and
    P = 1 that is 12 cycles per RED line. READ / WRITE / PREFETCH pass at one per cycle with
    one cycle of latency; responses pass with one cycle of latency. ``dn_req`` and ``up_resp``
    are registers; ``up_req.ready`` depends on ``dn_req.ready`` and ``dn_resp.ready`` on
    ``up_resp.ready`` combinationally.

    Parameters
    ----------
    addr_w : int
        ADDR_W, 40..64 (TMA-C1): ``line`` is ADDR_W - 7 bits.
    trk_entries : int
        TRK_ENTRIES, a power of two in 4..256 (TMA-C6): tags are TAG_W = log2 bits.
    lanes : int
        64-bit lanes of the arithmetic datapath, 1, 2, 4, 8 or 16 (16 = the whole line per cycle).
    stages : int
        Pipeline registers in the arithmetic, 0 or 1.

    Members (TMA-I11)
    -------
    up_req : In(stream l2_req)
        Requests from the TMA: READ, WRITE, PREFETCH, RED_*.
    up_resp : Out(stream l2_resp)
        One response per READ, WRITE and RED; any order.
    dn_req : Out(stream l2_req)
        Requests to the memory: READ, WRITE, PREFETCH.
    dn_resp : In(stream l2_resp)
        The memory's responses, in any order.
    """

    def __init__(self, addr_w=64, trk_entries=32, lanes=2, stages=1):
        try:
            p = TmaParams(ADDR_W=addr_w, TRK_ENTRIES=trk_entries)
        except ValueError as exc:
            reject(self, str(exc))
        self.p = p
        self.lanes = check_int(self, "lanes", lanes, 1, 16)
        if lanes & (lanes - 1):
            reject(self, f"lanes must be 1, 2, 4, 8 or 16, got {lanes}")
        self.stages = check_int(self, "stages", stages, 0, 1)
        self.passes = (8 * LINE) // (LANE * lanes)
        self.req_fields = l2_req_fields(p)
        self.resp_fields = l2_resp_fields(p)
        super().__init__({
            "up_req": In(stream.Signature(struct_layout(self.req_fields))),
            "up_resp": Out(stream.Signature(struct_layout(self.resp_fields))),
            "dn_req": Out(stream.Signature(struct_layout(self.req_fields))),
            "dn_resp": In(stream.Signature(struct_layout(self.resp_fields))),
        })

    def red_cycles(self, latency):
        """Cycles a RED occupies the unit for a downstream read latency ``latency``."""
        return 2 + latency + self.passes + self.stages

    # -----------------------------------------------------------------------------------------
    def elaborate(self, platform):
        m = Module()
        p = self.p
        tw = p.TAG_W
        up, dn, ur, dr = self.up_req, self.dn_req, self.up_resp, self.dn_resp
        wb = LANE * self.lanes                  # bits per pass
        n_pass = self.passes
        last = n_pass + self.stages - 1         # index of the last datapath cycle

        # ------------------------------------------------------------- state
        waiting = Signal(name="waiting")        # READ issued, its response not yet in
        calc = Signal(name="calc")              # stepping the datapath over the line
        count = Signal(range(last + 1), name="count") if last else None
        r_line = Signal(p.ADDR_W - 7, name="r_line")
        r_sectors = Signal(4, name="r_sectors")
        r_tag = Signal(tw, name="r_tag")
        r_be = Signal(LINE, name="r_be")
        src = Signal(DATA_W, name="src")        # the RED's data, shifted down by wb per pass
        acc = Signal(DATA_W, name="acc")        # the line: old slices out, results in
        ctl = _Controls(m)

        idle = ~waiting & ~calc
        dn_free = ~dn.valid | dn.ready          # dn_req's register can take a request
        ur_free = ~ur.valid | ur.ready

        # ------------------------------------------------------------- requests
        upp = up.payload
        is_red = upp.op[3]                      # RED_* = 8 + RedOp
        m.d.comb += up.ready.eq(idle & dn_free)
        take = up.valid & up.ready
        with m.If(dn.valid & dn.ready):
            m.d.sync += dn.valid.eq(0)
        with m.If(take):
            m.d.sync += dn.valid.eq(1)
            with m.If(is_red):
                m.d.sync += [
                    dn.payload.eq(0),
                    dn.payload.op.eq(L2Op.READ),
                    dn.payload.line.eq(upp.line),
                    dn.payload.sectors.eq(upp.sectors),
                    dn.payload.tag.eq(upp.tag),
                    waiting.eq(1),
                    r_line.eq(upp.line), r_sectors.eq(upp.sectors), r_tag.eq(upp.tag),
                    r_be.eq(upp.be), src.eq(upp.data),
                ]
                ctl.load(upp.op[:3], upp.dtype)
            with m.Else():
                m.d.sync += dn.payload.eq(upp)

        # ------------------------------------------------------------- responses
        # the RMW's response: only once its READ has left the dn_req register (so that register
        # is free again when the WRITE is loaded at the end of the pass)
        mine = waiting & ~dn.valid & eq(dr.payload.tag, r_tag)
        m.d.comb += dr.ready.eq(mine | ur_free)
        with m.If(ur.valid & ur.ready):
            m.d.sync += ur.valid.eq(0)
        with m.If(dr.valid & dr.ready):
            with m.If(mine):
                m.d.sync += [acc.eq(dr.payload.data), waiting.eq(0), calc.eq(1)]
                if last:
                    m.d.sync += count.eq(0)
            with m.Else():
                m.d.sync += [ur.valid.eq(1), ur.payload.eq(dr.payload)]

        # ------------------------------------------------------------- datapath
        result = Signal(wb, name="result")
        for k in range(self.lanes):
            lo = k * LANE
            m.d.comb += result[lo:lo + LANE].eq(
                _lane(m, k, acc[lo:lo + LANE], src[lo:lo + LANE], ctl, self.stages))
        line_out = Cat(acc[wb:], result)        # after the last pass: the whole result line
        with m.If(calc):
            m.d.sync += [acc.eq(line_out), src.eq(src[wb:])]
            if last:
                m.d.sync += count.eq(count + 1)
            with m.If(eq_const(count, last) if last else C(1, 1)):
                m.d.sync += [
                    calc.eq(0),
                    # dn_req's register is empty here: it held only the READ, taken before
                    # its response arrived, and nothing else loads it while the RMW runs
                    dn.valid.eq(1),
                    dn.payload.eq(0),
                    dn.payload.op.eq(L2Op.WRITE),
                    dn.payload.line.eq(r_line),
                    dn.payload.sectors.eq(r_sectors),
                    dn.payload.tag.eq(r_tag),
                    dn.payload.be.eq(r_be),
                    dn.payload.data.eq(line_out),
                ]
        return m


class _Controls:
    """Registered decode of a RED's (op, dtype), loaded when the RED is accepted."""

    def __init__(self, m):
        self.m = m
        self.op = {op: Signal(name=f"k_{op.name.lower()}") for op in _INT_OPS}
        for name in ("es8", "sgn", "s_int", "s_f32", "s_f16", "s_bf16", "s_mm", "mm_max",
                     "mm_bf16"):
            setattr(self, name, Signal(name=name))

    def load(self, op, dtype):
        def is_dt(*dts):
            return Cat(*[eq_const(dtype, d) for d in dts]).any()

        def pair_ok(dts, op_set):
            terms = [eq_const(op, o) & eq_const(dtype, d) for o, d in sorted(RED_OK)
                     if d in dts and o in op_set]
            return Cat(*terms).any()

        ints = (DType.U32, DType.S32, DType.U64, DType.S64)
        self.m.d.sync += [sig.eq(eq_const(op, o)) for o, sig in self.op.items()]
        self.m.d.sync += [
            self.es8.eq(is_dt(DType.U64, DType.S64)),
            self.sgn.eq(is_dt(DType.S32, DType.S64)),
            self.s_int.eq(pair_ok(ints, _INT_OPS)),
            self.s_f32.eq(pair_ok((DType.F32,), (RedOp.ADD,))),
            self.s_f16.eq(pair_ok((DType.F16,), (RedOp.ADD,))),
            self.s_bf16.eq(pair_ok((DType.BF16,), (RedOp.ADD,))),
            self.s_mm.eq(pair_ok((DType.F16, DType.BF16), (RedOp.MIN, RedOp.MAX))),
            self.mm_max.eq(eq_const(op, RedOp.MAX)),
            self.mm_bf16.eq(eq_const(dtype, DType.BF16)),
        ]


def _named(m, name, value):
    sig = Signal(len(value), name=name)
    m.d.comb += sig.eq(value)
    return sig


def _delay(m, name, value, stages):
    """``value`` delayed by ``stages`` (0 or 1) cycles, as the adders' results are."""
    if not stages:
        return value
    reg = Signal(len(value), name=name)
    m.d.sync += reg.eq(value)
    return reg


def _int_lane(m, k, old, b, ctl):
    """The integer unit of lane ``k``: 64 result bits for U32/S32 (two elements) or U64/S64."""
    pre = f"l{k}_"
    flip = Cat(C(0, 31), ctl.sgn & ~ctl.es8, C(0, 31), ctl.sgn)
    ko = _named(m, pre + "ko", old ^ flip)
    kb = _named(m, pre + "kb", b ^ flip)
    lt_lo, lt_hi = lt(ko[:32], kb[:32]), lt(ko[32:], kb[32:])
    eq_lo, eq_hi = eq(old[:32], b[:32]), eq(old[32:], b[32:])
    lt64 = lt_hi | (eq_hi & lt_lo)
    lts = (Mux(ctl.es8, lt64, lt_lo), Mux(ctl.es8, lt64, lt_hi))
    eqs = (eq_lo, eq_hi)
    sum_lo = _named(m, pre + "sum_lo", old[:32] + b[:32])
    sum_hi = (old[32:] + b[32:] + (sum_lo[32] & ctl.es8))[:32]
    sums = (sum_lo[:32], sum_hi)
    op = ctl.op
    halves = []
    for h in range(2):
        o, y = old[32 * h:32 * h + 32], b[32 * h:32 * h + 32]
        less = lts[h]
        inc = Mux(less, (o + 1)[:32], 0)                            # 0 if old >= b
        dec = Mux(is_zero(o) | ~(less | eqs[h]), y, (o - 1)[:32])   # b if old = 0 or old > b
        r = Mux(op[RedOp.ADD], sums[h],
                Mux(op[RedOp.MIN], Mux(less, o, y),
                    Mux(op[RedOp.MAX], Mux(less, y, o),
                        Mux(op[RedOp.INC], inc,
                            Mux(op[RedOp.DEC], dec,
                                Mux(op[RedOp.AND], o & y,
                                    Mux(op[RedOp.OR], o | y, o ^ y)))))))
        halves.append(r)
    return Cat(*halves)


def _minmax16(m, name, a, b, ctl):
    """§4.9 F16/BF16 MIN/MAX of one 16-bit element (format from ``ctl.mm_bf16``)."""
    def nan(x):
        return Mux(ctl.mm_bf16, x[7:15].all() & x[:7].any(), x[10:15].all() & x[:10].any())
    na, nb = nan(a), nan(b)
    a_less = lt(float_key(a), float_key(b))
    pick_a = Mux(ctl.mm_max, ~a_less, a_less)
    return _named(m, name, Mux(na & nb, RED_NAN[DType.F16],
                               Mux(na, b, Mux(nb, a, Mux(pick_a, a, b)))))


def _lane(m, k, old, b, ctl, stages):
    """One 64-bit lane: every unit on (old, b), the result of the RED's pair selected."""
    pre = f"l{k}_"
    f32 = []
    for h in range(2):
        add = FloatAdder(*FLOAT_FORMATS[DType.F32], RED_NAN[DType.F32], ftz=True, stages=stages)
        m.submodules[f"{pre}f32_{h}"] = add
        m.d.comb += [add.a.eq(old[32 * h:32 * h + 32]), add.b.eq(b[32 * h:32 * h + 32])]
        f32.append(add.s)
    f16, bf16, mm = [], [], []
    for q in range(4):
        x, y = old[16 * q:16 * q + 16], b[16 * q:16 * q + 16]
        for dt, out in ((DType.F16, f16), (DType.BF16, bf16)):
            add = FloatAdder(*FLOAT_FORMATS[dt], RED_NAN[dt], stages=stages)
            m.submodules[f"{pre}{dt.name.lower()}_{q}"] = add
            m.d.comb += [add.a.eq(x), add.b.eq(y)]
            out.append(add.s)
        mm.append(_minmax16(m, f"{pre}mm{q}", x, y, ctl))
    r_int = _delay(m, pre + "int_d", _int_lane(m, k, old, b, ctl), stages)
    r_mm = _delay(m, pre + "mm_d", Cat(*mm), stages)
    r_old = _delay(m, pre + "old_d", old, stages)
    return Mux(ctl.s_f32, Cat(*f32),
               Mux(ctl.s_f16, Cat(*f16),
                   Mux(ctl.s_bf16, Cat(*bf16),
                       Mux(ctl.s_mm, r_mm,
                           Mux(ctl.s_int, r_int, r_old)))))
