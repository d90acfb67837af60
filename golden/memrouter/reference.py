"""The flat reference memory of §4.12 (MR-V3): one byte array over the partition address space,
initialised through route() of the initial page table, plus, per sector, the accepted writes in
acceptance order. It knows nothing of ports, lines or migration, which is why it is a check.

A write sector whose fill returned poisoned applies nothing (MR-E8); that is only known later,
so writes are kept as a log (tagged with the request's acceptance number) and a read's expected
value is the fold of the writes accepted before it that were not dropped."""

import numpy as np

from golden.memrouter.merge import merge
from golden.memrouter.pattern import port_image

__all__ = ["FlatReference"]


class FlatReference:
    def __init__(self, init, params):
        g = params.G
        self.mem = np.zeros(init.pages * g, dtype=np.uint8)
        self.log = {}               # sector address -> [[tag, value, be, dropped], ...]
        images = {}
        for p in range(init.pages):
            e = init.pt[p]
            if e.port not in images:
                top = max(x.frame for x in init.pt[:init.pages] if x.port == e.port) + 1
                images[e.port] = port_image(e.port, top * g)
            base = e.frame * g
            self.mem[p * g:(p + 1) * g] = images[e.port][base:base + g]

    def initial(self, addr):
        return int.from_bytes(self.mem[addr:addr + 32].tobytes(), "little")

    def write(self, addr, value, be, tag):
        """Log one accepted sector write; ``tag`` orders it (acceptance number)."""
        self.log.setdefault(addr, []).append([tag, value, be, False])

    def drop(self, tag, addr):
        """The sector write of request ``tag`` at ``addr`` was not applied (poisoned fill)."""
        for w in self.log[addr]:
            if w[0] == tag:
                w[3] = True

    def read(self, addr, before=None):
        """The value of sector ``addr`` seen by a request accepted as number ``before``
        (None: after every write)."""
        v = self.initial(addr)
        for tag, value, be, dropped in self.log.get(addr, ()):
            if before is not None and tag >= before:
                break
            if not dropped:
                v = merge(v, value, be)
        return v

    def image(self):
        """The whole final contents as a uint8 array."""
        out = self.mem.copy()
        for addr in self.log:
            out[addr:addr + 32] = np.frombuffer(self.read(addr).to_bytes(32, "little"), np.uint8)
        return out
