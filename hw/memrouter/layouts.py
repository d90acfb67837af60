"""Bit layouts the memory router's modules share: page-table entries and frame descriptors in
their stored form, and the stream payloads at the widths of golden.memrouter.formats.

A stored PTE is the PT_DATA word of §3.3 without its two unused bits [7:6]:
[1:0] state, [2] pool, [5:3] port, [29:6] frame. A descriptor is [2:0] port, [26:3] frame.
"""

from amaranth import C, Cat, Mux, Value

from golden.memrouter.formats import CSRREQ, CSRRSP, EVT, MREQ, MRSP, PREQ, PRSP
from hw.common.layout import struct_layout

__all__ = ["FRAME_W", "PTE_W", "DESC_W", "pte_value", "pte_fields", "pt_data_word",
           "pt_data_pte", "desc_word", "word_desc", "PREQ_L", "PRSP_L", "MREQ_L", "MRSP_L", "CSRREQ_L",
           "CSRRSP_L", "EVT_L", "slot_add"]

FRAME_W = 24
PTE_W = 2 + 1 + 3 + FRAME_W
DESC_W = 3 + FRAME_W

PREQ_L = struct_layout(PREQ)
PRSP_L = struct_layout(PRSP)
MREQ_L = struct_layout(MREQ)
MRSP_L = struct_layout(MRSP)
CSRREQ_L = struct_layout(CSRREQ)
CSRRSP_L = struct_layout(CSRRSP)
EVT_L = struct_layout(EVT)


def pte_value(state, pool, port, frame):
    """A stored PTE from its fields (ints or values)."""
    def v(x, w):
        return C(x, w) if isinstance(x, int) else x[:w] if len(x) > w else x
    return Cat(v(state, 2), v(pool, 1), v(port, 3), v(frame, FRAME_W))


def proc_width(params):
    """Width of a processor-port index (the intake arbiter's grant index): at least 1 bit."""
    return max(1, (params.N_PROC - 1).bit_length())


def pte_fields(pte):
    """(state, pool, port, frame) slices of a stored PTE."""
    return pte[0:2], pte[2], pte[3:6], pte[6:6 + FRAME_W]


def pt_data_word(pte):
    """The 32-bit PT_DATA encoding of a stored PTE."""
    return Cat(pte[0:6], C(0, 2), pte[6:6 + FRAME_W])


def pt_data_pte(word):
    """The stored PTE of a 32-bit PT_DATA word (bits [7:6] dropped)."""
    return Cat(word[0:6], word[8:32])


def desc_word(desc):
    """The NFREE_PUSH/FFREE_PUSH encoding ([5:3] port, [31:8] frame) of a descriptor."""
    return Cat(C(0, 3), desc[0:3], C(0, 2), desc[3:3 + FRAME_W])


def word_desc(word):
    """The descriptor of an NFREE_PUSH/FFREE_PUSH word (the inverse of :func:`desc_word`)."""
    return Cat(word[3:6], word[8:8 + FRAME_W])


def slot_add(a, b, n):
    """(a + b) mod n for slot indices a < n and b < n of a ring of n slots."""
    a, b = Value.cast(a), Value.cast(b)
    sw = (n - 1).bit_length()
    total = (a + b)[:sw + 1]
    if n == 1 << sw:
        return total[:sw]
    return Mux(total >= n, total - n, total)[:sw]
