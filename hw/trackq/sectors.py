"""SectorValidTable: BANKS × DSLOTS × SECTORS valid bits with fill/inval writes and two check
read ports (spec trackq.md §2, §4.4 STEP 3, TQ-F12, TQ-F14, TQ-F16, TQ-E5, TQ-E10)."""

from amaranth import C, Cat, Module, Mux, Signal
from amaranth.lib import data, wiring
from amaranth.lib.wiring import In, Out

from hw.common.lintops import eq, eq_const, shift_left, word_at
from hw.common.params import check_int

__all__ = ["SectorValidTable"]


class SectorValidTable(wiring.Component):
    """The sector-valid table: per tag bank a register of DSLOTS × SECTORS valid bits.

    Registers rather than a memory, because reset must make the whole table invalid (TQ-F44).
    An inval clears all sectors of {bank, dslot} unless ``inval_ignore`` is high (the dslot is
    used by a current head, TQ-E5); a fill then sets one sector (an inval and a fill of the same
    dslot in one cycle leave only the fill's sector, TQ-F16).

    Each check read port reads one dslot per bank combinationally and returns the valid masks as
    they are *after* this cycle's inval and fill (the same-cycle bypass of TQ-F12/TQ-F15); the
    table itself changes at the clock edge. Reset: all invalid (TQ-F44).

    With ``miss_b``, port b also says whether a needed sector is invalid (``b_miss``, the
    fast-path test of STEP 6), built for timing as "missing in the table or the fill, or cleared
    by the applied inval": ``inval_ignore`` (a CAM compare against every head) then enters an
    AND next to the output instead of the select of the masks' multiplexer, ahead of the
    sector compare and the OR over banks.

    Parameters
    ----------
    banks : int
        Tag banks, 1..8.
    dslots : int
        dslots per bank, 2..4096.
    sectors : int
        Sectors per dslot (4).
    miss_b : bool
        Build ``b_need`` and ``b_miss``.

    Members
    -------
    inval_valid, inval_bank, inval_dslot : In
        The inval stream's valid and payload.
    inval_ignore : In(1)
        The inval addresses a live head (TQ-E5): leave the table unchanged.
    fill_valid, fill_bank, fill_dslot, fill_sector : In
        The fill stream's valid and payload.
    a_dslot, b_dslot : In(ArrayLayout(DSLOT_W, banks))
        Addresses of the two check read ports, one dslot per bank.
    a_valid, b_valid : Out(ArrayLayout(sectors, banks))
        Valid masks at those addresses after this cycle's inval and fill.
    b_need, b_miss : In(ArrayLayout(sectors, banks)), Out(1)
        Only with ``miss_b``: some sector of ``b_need`` is not in ``b_valid``.
    """

    def __init__(self, banks, dslots, sectors=4, miss_b=False):
        self.banks = check_int(self, "banks", banks, 1, 8)
        self.dslots = check_int(self, "dslots", dslots, 2, 4096)
        self.sectors = check_int(self, "sectors", sectors, 4, 4)
        self.dslot_w = (dslots - 1).bit_length()
        self.bank_w = max(1, (banks - 1).bit_length())
        arr_d = data.ArrayLayout(self.dslot_w, banks)
        arr_s = data.ArrayLayout(sectors, banks)
        self.miss_b = miss_b
        ports = {
            "inval_valid": In(1), "inval_bank": In(self.bank_w), "inval_dslot": In(self.dslot_w),
            "inval_ignore": In(1),
            "fill_valid": In(1), "fill_bank": In(self.bank_w), "fill_dslot": In(self.dslot_w),
            "fill_sector": In(2),
            "a_dslot": In(arr_d), "a_valid": Out(arr_s),
            "b_dslot": In(arr_d), "b_valid": Out(arr_s),
        }
        if miss_b:
            ports.update({"b_need": In(arr_s), "b_miss": Out(1)})
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        sw, dslots = self.sectors, self.dslots
        width = sw * dslots
        fill_bit = shift_left(m, C(1, 1), self.fill_sector, sw, name="fill_bit")
        inval_apply = Signal()
        m.d.comb += inval_apply.eq(self.inval_valid & ~self.inval_ignore)
        miss = []
        for b in range(self.banks):
            table = Signal(width, name=f"bank{b}")
            fill_here = Signal(name=f"fill_here{b}")
            inval_here = Signal(name=f"inval_here{b}")
            m.d.comb += [fill_here.eq(self.fill_valid & eq_const(self.fill_bank, b)),
                         inval_here.eq(inval_apply & eq_const(self.inval_bank, b))]
            clear = shift_left(m, Mux(inval_here, (1 << sw) - 1, 0), self.inval_dslot, width,
                               unit=sw, name=f"clear{b}_")
            setm = shift_left(m, Mux(fill_here, fill_bit, 0), self.fill_dslot, width, unit=sw,
                              name=f"set{b}_")
            m.d.sync += table.eq((table & ~clear) | setm)
            for addr, out in ((self.a_dslot, self.a_valid), (self.b_dslot, self.b_valid)):
                m.d.comb += out[b].eq(
                    Mux(inval_here & eq(self.inval_dslot, addr[b]), 0, word_at(table, addr[b], sw))
                    | Mux(fill_here & eq(self.fill_dslot, addr[b]), fill_bit, 0))
            if self.miss_b:
                addr = self.b_dslot[b]
                fset = Mux(fill_here & eq(self.fill_dslot, addr), fill_bit, 0)
                need = self.b_need[b]
                inval_at = inval_here & eq(self.inval_dslot, addr)
                miss.append((need & ~(word_at(table, addr, sw) | fset)).any()
                            | (inval_at & (need & ~fset).any()))
        if self.miss_b:
            m.d.comb += self.b_miss.eq(Cat(*miss).any())
        return m
