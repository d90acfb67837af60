"""Golden model of the TMA unit (spec tma.md §4): pure numpy/Python, never imports Amaranth or cocotb.

Descriptor format and encoder, request FIFO, descriptor cache with look-ahead, validation with
every error code, tile and im2col enumeration, L2 request splitting, tracker, swizzle writer,
completion, block copies, tensor stores / reductions / prefetches, the reduction arithmetic and
the convolution driver of TMA-V3. See ``docs/tma.md``.
"""
