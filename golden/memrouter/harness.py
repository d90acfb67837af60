"""A thin synchronous driver over the router for directed tests and examples: issue one request
and run the block to quiescence, send a CSR write, snapshot the per-port beat counters."""

from golden.memrouter.csr import Csr
from golden.memrouter.formats import FULL_BE
from golden.memrouter.router import Router

__all__ = ["Harness"]


class Harness:
    def __init__(self, params, cfg):
        self.p = params
        self.r = Router(params, cfg)
        self.csr = Csr(self.r)
        self.rid = 0

    def _go(self, proc, addr, nb, wr, data, be, settle):
        req = self.r.request(proc, self.rid & 0xFF, addr, nb, wr, data, be)
        assert req is not None, "request not accepted"
        self.rid += 1
        if not settle:
            return req
        self.r.settle()
        out = [x for x in self.r.responses(proc)]
        assert out and out[-1].uid == req.uid
        return out[-1]

    def read(self, addr, nb=1, proc=0, settle=True):
        """Response of a read (settled), or the Req when ``settle`` is False."""
        return self._go(proc, addr, nb, False, None, None, settle)

    def write(self, addr, data, be=None, proc=0, settle=True):
        data = list(data)
        return self._go(proc, addr, len(data), True, data, be or [FULL_BE] * len(data), settle)

    def cmd(self, op, p, v=0, settle=True):
        """MIG_CMD (op, p) with MIG_ARG = v; returns the csr err bit."""
        self.csr.write("MIG_ARG", v)
        err = self.csr.write("MIG_CMD", op | p << 16)
        if settle:
            self.r.settle()
        return err

    def beats(self):
        """{(port, wr, cls): beats} now."""
        return {(j, wr, c): n for j, port in enumerate(self.r.ports.ports)
                for (wr, c), n in port.beats.items()}

    def delta(self, before):
        now = self.beats()
        return {k: now[k] - before.get(k, 0) for k in now if now[k] != before.get(k, 0)}

    def page_addr(self, p, s=0):
        return (p << self.p.LOG2G) + 32 * s
