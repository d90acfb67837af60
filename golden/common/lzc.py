"""Golden model of the leading-zero count (spec dfp §4.4 LZC16, §4.10 LZC32)."""

__all__ = ["lzc"]

MAX_WIDTH = 256


def lzc(value, width):
    """Zero bits above the highest set bit of the ``width``-bit word ``value``; ``width`` for 0.

    Scans from the most significant bit down, so it does not rely on ``int.bit_length``.
    """
    if not isinstance(width, int) or isinstance(width, bool) or not 1 <= width <= MAX_WIDTH:
        raise ValueError(f"lzc: width must be an integer in 1..{MAX_WIDTH}, got {width!r}")
    if not isinstance(value, int) or not 0 <= value < (1 << width):
        raise ValueError(f"lzc: value must be an integer in 0..2**{width}-1, got {value!r}")
    count = 0
    for b in reversed(range(width)):
        if (value >> b) & 1:
            break
        count += 1
    return count
