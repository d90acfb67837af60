"""Golden model of the TMA unit (spec tma.md §4): pure numpy/Python, never imports Amaranth or cocotb.

Part 1: descriptor format and encoder, request FIFO, descriptor cache with look-ahead, validation
with every error code, tile-mode loads, L2 request splitting, tracker, swizzle writer, completion,
block copies. See ``docs/tma.md``.
"""
