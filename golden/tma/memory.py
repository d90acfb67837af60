"""Flat reference memories for the TMA golden model: global memory (2^ADDR_W bytes) and the
shared-memory windows of the 16 CTAs of a cluster (2^SMEM_AW bytes each, CTA-relative, TMA-I12).

Both are sparse (4 KiB pages allocated on first write), so tensors anywhere in a 64-bit address
space cost only the bytes they use. Unwritten bytes read as ``default`` (0, or a sentinel to check
that nothing outside a footprint is written, TMA-V5). Global addresses wrap modulo 2^ADDR_W
(TMA-F13), so a range that passes the top continues at 0.
"""

import numpy as np

from golden.tma.formats import N_CTA

__all__ = ["SparseMemory", "GlobalMemory", "SharedMemory"]

_PAGE_BITS = 12
_PAGE = 1 << _PAGE_BITS


class SparseMemory:
    """A byte-addressed memory of ``2**addr_bits`` bytes."""

    def __init__(self, addr_bits, default=0):
        self.addr_bits = addr_bits
        self.size = 1 << addr_bits
        self.default = int(default) & 0xFF
        self.pages = {}

    def _chunks(self, addr, n):
        """(page, offset, position in the range, length) pieces of ``[addr, addr + n)``."""
        pos = 0
        addr %= self.size
        while pos < n:
            page, off = divmod(addr, _PAGE)
            m = min(n - pos, _PAGE - off, self.size - addr)
            yield page, off, pos, m
            pos += m
            addr = (addr + m) % self.size

    def read(self, addr, n):
        """``n`` bytes from ``addr`` as a numpy uint8 array (a copy)."""
        out = np.full(n, self.default, dtype=np.uint8)
        for page, off, pos, m in self._chunks(addr, n):
            data = self.pages.get(page)
            if data is not None:
                out[pos:pos + m] = data[off:off + m]
        return out

    def write(self, addr, data):
        """Write the bytes ``data`` (bytes or uint8 array) from ``addr``."""
        data = np.frombuffer(bytes(data), dtype=np.uint8) if isinstance(data, (bytes, bytearray)) \
            else np.asarray(data, dtype=np.uint8)
        for page, off, pos, m in self._chunks(addr, len(data)):
            buf = self.pages.get(page)
            if buf is None:
                buf = self.pages[page] = np.full(_PAGE, self.default, dtype=np.uint8)
            buf[off:off + m] = data[pos:pos + m]

    def write_masked(self, addr, data, enables):
        """Write ``data[j]`` to ``addr + j`` for every j with ``enables`` bit j set."""
        data = np.frombuffer(bytes(data), dtype=np.uint8)
        for j in range(len(data)):
            if enables >> j & 1:
                self.write(addr + j, data[j:j + 1])

    def __getitem__(self, addr):
        return int(self.read(addr, 1)[0])

    def copy(self):
        other = type(self).__new__(type(self))
        other.__dict__.update(self.__dict__)
        other.pages = {k: v.copy() for k, v in self.pages.items()}
        return other

    def touched(self):
        """Sorted byte addresses that differ from ``default``."""
        out = []
        for page in sorted(self.pages):
            nz = np.flatnonzero(self.pages[page] != self.default)
            out.extend(int(page * _PAGE + i) for i in nz)
        return out

    def same_as(self, other):
        """True when every byte equals ``other``'s."""
        for page in set(self.pages) | set(other.pages):
            a = self.read(page * _PAGE, _PAGE)
            b = other.read(page * _PAGE, _PAGE)
            if not np.array_equal(a, b):
                return False
        return True


class GlobalMemory(SparseMemory):
    """Global memory of ``2**addr_w`` bytes (default ADDR_W = 64)."""

    def __init__(self, addr_w=64, default=0):
        super().__init__(addr_w, default)


class SharedMemory:
    """The smem windows of the 16 CTAs of a cluster, ``2**smem_aw`` bytes each, CTA-relative."""

    def __init__(self, smem_aw=18, default=0):
        self.smem_aw = smem_aw
        self.size = 1 << smem_aw
        self.default = default
        self.ctas = {}

    def cta(self, i):
        if not 0 <= i < N_CTA:
            raise ValueError(f"CTA {i} outside 0..{N_CTA - 1}")
        mem = self.ctas.get(i)
        if mem is None:
            mem = self.ctas[i] = SparseMemory(self.smem_aw, self.default)
        return mem

    def _check(self, addr, n):
        if not (0 <= addr and addr + n <= self.size):
            raise ValueError(f"smem range [{addr:#x}, {addr + n:#x}) outside the "
                             f"{self.size:#x}-byte window")

    def read(self, cta, addr, n):
        self._check(addr, n)
        return self.cta(cta).read(addr, n)

    def write(self, cta, addr, data):
        self._check(addr, len(data))
        self.cta(cta).write(addr, data)

    def apply_beat(self, beat):
        """Write one ``smem_wr`` beat (TMA-I6) into every CTA of its mask."""
        lanes = np.array([j for j in range(128) if beat.be >> j & 1], dtype=np.int64)
        if lanes.size == 0:
            return
        data = np.frombuffer(beat.data, dtype=np.uint8)
        base = beat.row * 128
        self._check(base, 128)
        for cta in range(N_CTA):
            if beat.mask >> cta & 1:
                mem = self.cta(cta)
                row = mem.read(base, 128)
                row[lanes] = data[lanes]
                mem.write(base, row)

    def copy(self):
        other = SharedMemory(self.smem_aw, self.default)
        other.ctas = {k: v.copy() for k, v in self.ctas.items()}
        return other

    def same_as(self, other):
        return all(self.cta(i).same_as(other.cta(i)) for i in set(self.ctas) | set(other.ctas))
