"""Initial memory contents (spec §4.12): pat(j, d) = 0x9E3779B1·(j+1) + 0x85EBCA77·(d>>2)
mod 2^32, stored little-endian, so every port and address starts with distinct, predictable data."""

import numpy as np

__all__ = ["pat", "port_image", "sector_int", "sector_bytes"]


def pat(j, d):
    """The initial 32-bit word at device byte address ``d`` (d % 4 == 0) of port ``j``."""
    return (0x9E3779B1 * (j + 1) + 0x85EBCA77 * (d >> 2)) & 0xFFFFFFFF


def port_image(j, nbytes):
    """A fresh uint8 array holding the initial contents of ``nbytes`` of port ``j``."""
    idx = np.arange(nbytes // 4, dtype=np.uint64)
    words = (np.uint64(0x9E3779B1 * (j + 1) & 0xFFFFFFFF) + np.uint64(0x85EBCA77) * idx) \
        & np.uint64(0xFFFFFFFF)
    return words.astype("<u4").view(np.uint8).copy()


def sector_int(arr, a):
    """The 256-bit little-endian integer of the 32 bytes of ``arr`` at byte ``a`` (MR-I9)."""
    return int.from_bytes(arr[a:a + 32].tobytes(), "little")


def sector_bytes(value):
    return np.frombuffer(int(value).to_bytes(32, "little"), dtype=np.uint8)
