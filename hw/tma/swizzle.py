"""The TMA swizzle (spec tma.md TMA-F31, TMA-C8, §4.8, Fig 9) in hardware.

Swizzle code m in {1 SW32B, 2 SW64B, 3 SW128B} maps a CTA-relative byte address A to
``(A & ~0x70) | (SWZ_TABLE[m][(A >> 7) & 7][(A >> 4) & 7] << 4)``; NONE (0) is the identity. The
16-byte chunk k of a 128-byte smem row whose row id has low bits r moves to slot
``SWZ_TABLE[m][r][k]``, so every byte stays in its 128-byte row.

``SWZ_TABLE`` is an elaboration-time parameter (TMA-C8), checked with
:func:`golden.tma.swizzle.check_swz_table` (keys exactly {1, 2, 3}, every row a permutation of
0..7, else ``ValueError``); the default is the XOR table ``k ^ (r & (2**m - 1))``.

- :func:`table_words`: the table as one 24-bit constant per (mode, row) (slot of chunk k in bits
  [3k+2:3k]), optionally inverted (chunk that lands in slot s);
- :class:`SwizzleMap`: the address map, combinational;
- :class:`RowSwizzle`: the chunk permutation of a whole 128-byte beat (data and byte enables),
  combinational; used by the shared-memory writer.
"""

from amaranth import Cat, Module, Signal
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import BE_W, CHUNK, DATA_W
from golden.tma.params import RANGES
from golden.tma.swizzle import check_swz_table, default_swz_table
from hw.common.params import check_int, reject

__all__ = ["checked_table", "table_words", "SwizzleMap", "RowSwizzle"]

_CHUNKS = 8                 # 16-byte chunks per 128-byte row


def checked_table(component, swz_table):
    """``swz_table`` (None: the TMA-C8 default) normalised by ``check_swz_table``; a ValueError
    naming ``swz_table`` otherwise."""
    try:
        return check_swz_table(default_swz_table() if swz_table is None else swz_table)
    except (ValueError, TypeError) as exc:
        reject(component, f"swz_table: {exc}")


def table_words(table, inverse=False):
    """``{(mode, r): 24-bit int}`` for mode 0..3 and r 0..7: bits [3k+2:3k] hold the slot of chunk
    k (``inverse``: the chunk that goes to slot k). Mode 0 (NONE) is the identity."""
    words = {}
    for mode in range(4):
        for r in range(_CHUNKS):
            perm = list(range(_CHUNKS)) if mode == 0 else list(table[mode][r])
            if inverse:
                inv = [0] * _CHUNKS
                for k, s in enumerate(perm):
                    inv[s] = k
                perm = inv
            words[mode, r] = sum(v << (3 * k) for k, v in enumerate(perm))
    return words


def _select_word(m, words, mode, row, name):
    """A 24-bit signal holding ``words[mode, row]`` (a 32-way case on the 5 index bits)."""
    sel = Signal(3 * _CHUNKS, name=name)
    with m.Switch(Cat(row, mode)):
        for (md, r), word in sorted(words.items()):
            with m.Case(r | (md << 3)):
                m.d.comb += sel.eq(word)
    return sel


class SwizzleMap(wiring.Component):
    """The TMA-F31 address map: ``swz = swz(addr, mode)``, combinational.

    Parameters
    ----------
    smem_aw : int
        CTA-relative smem address width (TMA-C2), 11..24.
    swz_table : mapping, optional
        ``SWZ_TABLE`` (TMA-C8): ``{m: 8 rows of 8 slots}`` for m in {1, 2, 3}; default XOR table.

    Members
    -------
    addr : In(smem_aw)
        CTA-relative byte address before swizzle.
    mode : In(2)
        Swizzle code (0 NONE, 1 SW32B, 2 SW64B, 3 SW128B).
    swz : Out(smem_aw)
        Swizzled address: bits [6:4] replaced by ``SWZ_TABLE[mode][addr[9:7]][addr[6:4]]``.
    """

    def __init__(self, smem_aw=18, swz_table=None):
        self.smem_aw = check_int(self, "smem_aw", smem_aw, *RANGES["SMEM_AW"])
        self.table = checked_table(self, swz_table)
        super().__init__({"addr": In(smem_aw), "mode": In(2), "swz": Out(smem_aw)})

    def elaborate(self, platform):
        m = Module()
        word = _select_word(m, table_words(self.table), self.mode, self.addr[7:10], "slots")
        slot = Signal(3, name="slot")
        with m.Switch(self.addr[4:7]):
            for k in range(_CHUNKS):
                with m.Case(k):
                    m.d.comb += slot.eq(word.word_select(k, 3))
        m.d.comb += self.swz.eq(Cat(self.addr[:4], slot, self.addr[7:]))
        return m


class RowSwizzle(wiring.Component):
    """Moves the 16-byte chunks of one 128-byte smem beat to their swizzled slots, or back.

    Chunk k of ``data``/``be`` (lanes 16k..16k+15, unswizzled positions) appears in slot
    ``SWZ_TABLE[mode][row][k]`` of ``o_data``/``o_be``; for mode NONE the beat passes through.
    Each output slot is an 8-way multiplexer selected by the inverted table row. With
    ``unswizzle`` the map is inverted: output chunk k is input slot ``SWZ_TABLE[mode][row][k]``
    (a swizzled smem row read back into dense order, for stores: TMA-F32).

    Parameters
    ----------
    swz_table : mapping, optional
        ``SWZ_TABLE`` (TMA-C8), as for :class:`SwizzleMap`.
    unswizzle : bool
        Invert the map (default False).
    with_be : bool
        Build the ``be`` / ``o_be`` ports (default True; a store's read rows have none).

    Members
    -------
    row : In(3)
        Low 3 bits of the beat's smem row (``(A >> 7) & 7``).
    mode : In(2)
        Swizzle code.
    data : In(1024)
        Lane j in bits [8j+7:8j], unswizzled.
    be : In(128)
        Lane enables, unswizzled.
    o_data : Out(1024)
        Swizzled lanes.
    o_be : Out(128)
        Swizzled lane enables.
    """

    def __init__(self, swz_table=None, unswizzle=False, with_be=True):
        self.table = checked_table(self, swz_table)
        self.unswizzle = bool(unswizzle)
        self.with_be = bool(with_be)
        ports = {"row": In(3), "mode": In(2), "data": In(DATA_W), "o_data": Out(DATA_W)}
        if self.with_be:
            ports.update(be=In(BE_W), o_be=Out(BE_W))
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        words = table_words(self.table, inverse=not self.unswizzle)
        src = _select_word(m, words, self.mode, self.row, "src")
        for s in range(_CHUNKS):
            with m.Switch(src.word_select(s, 3)):
                for k in range(_CHUNKS):
                    with m.Case(k):
                        m.d.comb += self.o_data.word_select(s, 8 * CHUNK).eq(
                            self.data.word_select(k, 8 * CHUNK))
                        if self.with_be:
                            m.d.comb += self.o_be.word_select(s, CHUNK).eq(
                                self.be.word_select(k, CHUNK))
        return m
