"""Golden model of the round-robin arbiter (spec trackq §4.1): the function and its one register."""

__all__ = ["rr_pick", "RoundRobinArbiterModel"]


def rr_pick(req, ptr, n):
    """Index of the first set bit of ``req`` at or after ``ptr`` in cyclic order, or None.

    ``req`` is an int bit vector (bit i = requester i); ``ptr`` is in 0..n-1.
    """
    for k in range(n):
        i = (ptr + k) % n
        if (req >> i) & 1:
            return i
    return None


class RoundRobinArbiterModel:
    """Cycle model: :meth:`outputs` is the combinational view, :meth:`clock` the edge."""

    def __init__(self, n, ptr=0):
        if not isinstance(n, int) or n < 1:
            raise ValueError(f"RoundRobinArbiterModel: n must be an integer >= 1, got {n!r}")
        if not 0 <= ptr < n:
            raise ValueError(f"RoundRobinArbiterModel: ptr must be in 0..{n - 1}, got {ptr!r}")
        self.n = n
        self.ptr = ptr

    def outputs(self, req):
        """(grant one-hot, grant_idx, valid) for request vector ``req`` in the current state."""
        if not 0 <= req < (1 << self.n):
            raise ValueError(f"req {req:#x} does not fit in n = {self.n} bits")
        idx = rr_pick(req, self.ptr, self.n)
        if idx is None:
            return 0, 0, 0
        return 1 << idx, idx, 1

    def clock(self, req, advance):
        """Apply one clock edge; returns the outputs that held during the cycle."""
        out = self.outputs(req)
        if advance and out[2]:
            self.ptr = (out[1] + 1) % self.n
        return out
