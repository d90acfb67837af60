"""The block buffer shared by the quantizer and the down-converter: ping-pong storage of two
blocks (DFP-P6), block cutting at BLK_MAX (DFP-E7), the register stages of pass 2, the
per-block tallies of saturations and magnitudes for the last-beat fields (n_sat, bl, meta),
and the output register stage."""

from amaranth import C, Cat, Mux, Signal, unsigned
from amaranth.lib import data
from amaranth.lib.memory import Memory
from amaranth.utils import ceil_log2

from golden.dfp.formats import BLK_MAX_RANGE, Q_LANES_LEGAL
from hw.common.params import check_int, reject
from hw.dfp.round import bitlen, eq_const, is_zero, popcount, rshift_round_parts

__all__ = ["BlockBuffer", "ReadPipeline", "check_block_params", "block_tally", "round_saturate",
           "register_output"]


def check_block_params(component, q_lanes, blk_max):
    """Shared constructor checks of Q_LANES (DFP-C3) and BLK_MAX (DFP-C4)."""
    if isinstance(q_lanes, bool) or q_lanes not in Q_LANES_LEGAL:
        reject(component, f"q_lanes must be one of {', '.join(map(str, Q_LANES_LEGAL))}, "
                          f"got {q_lanes!r}")
    check_int(component, "blk_max", blk_max, *BLK_MAX_RANGE)
    if blk_max % q_lanes:
        reject(component, f"blk_max must be a multiple of q_lanes ({q_lanes}) in "
                          f"{BLK_MAX_RANGE[0]}..{BLK_MAX_RANGE[1]}, got {blk_max!r}")


class BlockBuffer:
    """Two-block ping-pong buffer built into the caller's module (DFP-P6).

    A block is the beats from the first write after the previous block's end up to a beat with
    ``last`` set, or up to ``depth`` beats (the block is then *cut*: ``w_cut`` is high on its
    final beat, DFP-E7). The writer fills one buffer while the reader streams the other, in
    block order. Each buffer has a descriptor and its last beat index. A buffer is handed to
    the reader one cycle after its block ends (the memory write is registered); the
    descriptor is sampled from ``w_desc`` in that cycle (``end`` high), so the caller forms it
    from its pass-1 registers, off the input beat's path. The buffer goes back to the writer
    when the reader issues the read of its last beat, so with ``r_ready`` high blocks stream
    at one beat per cycle.

    ``w_ready`` is low only while both buffers hold blocks not yet read out. The read side is
    one synchronous memory read: ``r_data`` is the read port's output register, ``r_valid``,
    ``r_desc``, ``r_first`` and ``r_last`` are registered beside it; the consumer sets
    ``r_ready`` (only the read enable depends on it).

    This is a helper that adds its logic to the caller's ``Module`` rather than a component:
    the memory's read data then feed the caller's logic directly, and every memory port signal
    is a register or a logic output, so the Verilog has no unread port-alias wires.

    Parameters
    ----------
    m : Module
    width : int
        Beat width in bits.
    depth : int
        Beats per block at most (BLK_MAX / Q_LANES), 1..1024.
    desc_layout : Layout
        Per-block descriptor.
    w_valid, w_data, w_last : Value
        The incoming beat.
    w_desc : Value
        Descriptor of the block, read in the cycle after its final beat was accepted (``end``).
    r_ready : Value
        The consumer takes ``r_data`` this cycle.

    Attributes
    ----------
    w_ready, w_first, w_end, w_cut : Value
        Writer handshake; the next write is a block's first beat; the beat ends its block;
        it ends it by size, without ``last``.
    end, end_cut : Signal
        A block's final beat was accepted in the previous cycle (``w_desc`` is read now); it
        was cut.
    r_valid, r_data, r_first, r_last : Value
        Read beat.
    r_desc : View of desc_layout
        Its block's descriptor.
    """

    def __init__(self, m, width, depth, desc_layout, *, w_valid, w_data, w_last, w_desc,
                 r_ready, name="buf"):
        iw = max(1, ceil_log2(depth))
        dw = data.Layout.cast(desc_layout).size
        mem = Memory(shape=unsigned(width), depth=2 << iw, init=[])
        m.submodules[f"{name}_mem"] = mem
        wp = mem.write_port()
        rp = mem.read_port()

        full = [Signal(name=f"{name}_full0"), Signal(name=f"{name}_full1")]
        desc = [Signal(dw, name=f"{name}_desc0"), Signal(dw, name=f"{name}_desc1")]
        lastidx = [Signal(iw, name=f"{name}_lastidx0"), Signal(iw, name=f"{name}_lastidx1")]

        # -- write side: the accepted beat is written one cycle later ----------------------
        wsel = Signal(name=f"{name}_wsel")
        widx = Signal(iw, name=f"{name}_widx")
        wend = Signal(name=f"{name}_wend")            # the registered write ends its block
        self.end = wend
        self.end_cut = Signal(name=f"{name}_end_cut")
        self.w_ready = ~Mux(wsel, full[1], full[0])
        accept = w_valid & self.w_ready
        at_depth = eq_const(widx, depth - 1)
        self.w_first = is_zero(widx)
        self.w_end = w_last | at_depth
        self.w_cut = at_depth & ~w_last
        m.d.sync += [wp.en.eq(accept), wp.addr.eq(Cat(widx, wsel)), wp.data.eq(w_data),
                     wend.eq(accept & self.w_end), self.end_cut.eq(accept & self.w_cut)]
        with m.If(accept):
            with m.If(self.w_end):
                m.d.sync += [widx.eq(0), wsel.eq(~wsel)]
                for k in range(2):
                    with m.If(wsel == k):
                        m.d.sync += lastidx[k].eq(widx)
            with m.Else():
                m.d.sync += widx.eq(widx + 1)
        with m.If(wend):                                # its last beat is in memory now
            for k in range(2):
                with m.If(wp.addr[iw] == k):
                    m.d.sync += [full[k].eq(1), desc[k].eq(w_desc)]

        # -- read side ---------------------------------------------------------------------
        raddr = rp.addr                                # {rsel, ridx}: the next read
        ridx, rsel = raddr[:iw], raddr[iw]
        self.r_valid = Signal(name=f"{name}_r_valid")
        r_desc = Signal(dw, name=f"{name}_r_desc")
        self.r_desc = data.View(desc_layout, r_desc)
        self.r_first = Signal(name=f"{name}_r_first")
        self.r_last = Signal(name=f"{name}_r_last")
        self.r_data = rp.data
        rfull = Mux(rsel, full[1], full[0])
        advance = ~self.r_valid | r_ready
        issue = advance & rfull
        final = ridx == Mux(rsel, lastidx[1], lastidx[0])
        m.d.comb += rp.en.eq(advance)
        with m.If(advance):
            m.d.sync += self.r_valid.eq(rfull)
        with m.If(issue):
            m.d.sync += [r_desc.eq(Mux(rsel, desc[1], desc[0])), self.r_first.eq(is_zero(ridx)),
                         self.r_last.eq(final)]
            with m.If(final):
                m.d.sync += raddr.eq(Cat(C(0, iw), ~rsel))
                for k in range(2):
                    with m.If(rsel == k):
                        m.d.sync += full[k].eq(0)     # the writer never fills a full buffer
            with m.Else():
                m.d.sync += raddr.eq(Cat((ridx + 1)[:iw], rsel))


class ReadPipeline:
    """Register stages of pass 2 between a :class:`BlockBuffer` read and the output register.

    The block-buffer read data come out of a DP16KD with 5.8 ns from clock to output on ECP5,
    so the shift, rounding and saturation of pass 2 each get a stage of their own to reach
    100 MHz (issue 9; DFP-P6 leaves 2n + 8 cycles for a block of n beats). Every stage moves
    when ``advance`` is high (the output register takes a beat) and holds otherwise, so a
    stalled output freezes the whole pipeline and nothing is dropped or duplicated (DFP-I9).

    ``stage(...)`` registers its values together with the beat's ``r_valid``, ``r_first``,
    ``r_last`` and ``r_desc``; after it, those attributes name the registered copies, so the
    object stands in for the buffer in :func:`register_output`. ``stages`` counts the stages.
    """

    def __init__(self, m, buf, advance):
        self._m = m
        self._advance = advance
        self.r_valid, self.r_first, self.r_last = buf.r_valid, buf.r_first, buf.r_last
        self.r_desc = buf.r_desc
        self.stages = 0

    def stage(self, name, **values):
        """Register ``values`` (a Value, View or list of them per keyword) one stage on.

        ``name`` prefixes the register names. Returns a dict of the registered copies, with the
        same keys and list shapes.
        """
        m = self._m
        self.stages += 1
        prefix = f"{name}_"

        def reg(key, value):
            out = Signal(value.shape(), name=prefix + key)
            with m.If(self._advance):
                m.d.sync += out.eq(value)
            return out

        out = {k: [reg(f"{k}{i}", x) for i, x in enumerate(v)] if isinstance(v, (list, tuple))
               else reg(k, v) for k, v in values.items()}
        self.r_valid = reg("valid", self.r_valid)
        self.r_first = reg("first", self.r_first)
        self.r_last = reg("last", self.r_last)
        self.r_desc = reg("desc", self.r_desc)
        return out


def round_saturate(m, pipe, name, mags, shifts, signs, kills, overs, bias_bits, s_max):
    """The last two pass-2 stages of the quantizer and the down-converter, per lane.

    Stage 3 shifts each magnitude right by its ``shifts`` entry with the block's round mode
    (``pipe.r_desc.rm``) into a quotient and a round-up bit; stage 4 adds them and saturates:
    a killed lane gives 0, an ``overs`` lane or a sum past 32767 gives 32767 and counts as
    saturated. The sum never exceeds 2^15 (the shifts leave 15 bits), so bit 15 and above only
    flag saturation. Returns (15-bit magnitudes, saturation flags, signed outputs), registered.
    ``name`` prefixes the stage registers.
    """
    quots, ups = [], []
    for k, (mag, shift) in enumerate(zip(mags, shifts)):
        quot, up = rshift_round_parts(m, mag, shift, pipe.r_desc.rm, bias_bits, s_max,
                                      f"rnd{k}")
        quots.append(quot)
        ups.append(up)
    st3 = pipe.stage(f"{name}r", q=quots, up=ups, sign=signs, kill=kills, over=overs)
    out_mag, out_sat = [], []
    for quot, up, kill, over in zip(st3["q"], st3["up"], st3["kill"], st3["over"]):
        rounded = quot + up
        sat = ~kill & (over | rounded[15:].any())
        out_mag.append(Mux(kill, 0, Mux(sat, 32767, rounded[:15])))
        out_sat.append(sat)
    st4 = pipe.stage(f"{name}m", mag=out_mag, sat=out_sat, sign=st3["sign"])
    out_i = [Mux(sign, -mag, mag) for sign, mag in zip(st4["sign"], st4["mag"])]
    return st4["mag"], st4["sat"], out_i


def block_tally(m, first, mags, sats):
    """Running totals over a block's output beats, this beat included.

    ``first``: this beat starts its block; ``mags``: the beat's 15-bit output magnitudes;
    ``sats``: their saturation flags. Returns (n_sat, or_mags, bl, update): the block's
    saturation count and OR of magnitudes so far, bitlen(max|I|) of the block so far, and the
    sync statements that keep the totals when the caller consumes the beat.
    """
    nsat_acc = Signal(16)
    or_acc = Signal(15)
    beat_or = mags[0]
    for mag in mags[1:]:
        beat_or = beat_or | mag
    nsat_tot = (Mux(first, 0, nsat_acc) + popcount(sats))[:16]
    or_tot = Signal(15)
    m.d.comb += or_tot.eq(Mux(first, 0, or_acc) | beat_or)
    bl = bitlen(m, or_tot, "bl")
    return nsat_tot, or_tot, bl, [nsat_acc.eq(nsat_tot), or_acc.eq(or_tot)]


def register_output(m, o, buf, can_load, out_i, mags, sats, flag, extra):
    """The output register of a block stream (quantizer, down-converter): one beat of ``buf``
    (a :class:`BlockBuffer` or the last stage of a :class:`ReadPipeline`).

    ``out_i``: the beat's signed outputs; ``mags``/``sats``: their magnitudes and saturation
    flags (for the tallies); ``flag``: the meta bit after bl (inv or exp_ovf); ``extra(last,
    bl)``: the unit's own payload assignments. Common fields (sf_b, last, n_sat, zero,
    blk_err, meta) come from ``buf.r_desc``; block fields are 0 except on the last beat.
    """
    desc, last = buf.r_desc, buf.r_last
    nsat_tot, _, bl, keep_tally = block_tally(m, buf.r_first, mags, sats)
    op = o.payload
    with m.If(can_load):
        m.d.sync += o.valid.eq(buf.r_valid)
        with m.If(buf.r_valid):
            m.d.sync += keep_tally
            m.d.sync += [op.i[k].eq(v) for k, v in enumerate(out_i)]
            m.d.sync += [
                op.sf_b.eq(desc.sf_b),
                op.last.eq(last),
                op.n_sat.eq(Mux(last, nsat_tot, 0)),
                op.zero.eq(last & desc.zero),
                op.blk_err.eq(last & desc.blk_err),
                op.meta.eq(Mux(last, Cat(desc.sf_b, bl, flag, desc.zero, nsat_tot.any(),
                                         C(0, 1)), 0)),
            ]
            m.d.sync += extra(last, bl)
