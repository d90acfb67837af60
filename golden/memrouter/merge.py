"""Byte-enabled merge of 256-bit sectors (MR-I9: bits [8b+7:8b] are byte b, be[b] enables it)."""

from functools import lru_cache

__all__ = ["be_mask", "merge"]


@lru_cache(maxsize=4096)
def be_mask(be):
    """The 256-bit mask with byte b all ones where bit b of ``be`` is set."""
    m = 0
    for b in range(32):
        if (be >> b) & 1:
            m |= 0xFF << (8 * b)
    return m


def merge(old, new, be):
    """``old`` with the bytes enabled by ``be`` taken from ``new``."""
    m = be_mask(be)
    return (old & ~m) | (new & m)
