"""Test-only hardware: stream loopback tops for exercising the tb/common models in simulation.

Hardware for tests only; it lives in ``tb/`` on purpose and is not in ``sim.registry``. Tests
wrap it in an ad-hoc ``sim.registry.Block`` (see :data:`HARNESS_BLOCK`).
"""

from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from hw.common.skid import SkidBuffer
from sim.registry import Block, Param

__all__ = ["StreamLoopbackHarness", "HARNESS_BLOCK"]


class StreamLoopbackHarness(wiring.Component):
    """Two independent skid buffers standing in for a block with a memory port.

    ``req_in`` -> ``req_out`` and ``resp_in`` -> ``resp_out``, each through a
    :class:`hw.common.skid.SkidBuffer` (latency 1, full throughput). A test drives ``req_in``,
    attaches a memory model to ``req_out``/``resp_in`` and monitors ``resp_out``.

    Parameters
    ----------
    req_width : int
        Request payload width in bits, 1..4096.
    resp_width : int
        Response payload width in bits, 1..4096.

    Members
    -------
    req_in : In(stream.Signature(req_width))
    req_out : Out(stream.Signature(req_width))
    resp_in : In(stream.Signature(resp_width))
    resp_out : Out(stream.Signature(resp_width))
    """

    def __init__(self, req_width=32, resp_width=32):
        for name, value in (("req_width", req_width), ("resp_width", resp_width)):
            if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4096:
                self._MustUse__silence = True
                raise ValueError(f"StreamLoopbackHarness: {name} must be an integer in 1..4096, "
                                 f"got {value!r}")
        self.req_width = req_width
        self.resp_width = resp_width
        super().__init__({
            "req_in": In(stream.Signature(req_width)),
            "req_out": Out(stream.Signature(req_width)),
            "resp_in": In(stream.Signature(resp_width)),
            "resp_out": Out(stream.Signature(resp_width)),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.req_skid = req_skid = SkidBuffer(self.req_width)
        m.submodules.resp_skid = resp_skid = SkidBuffer(self.resp_width)
        wiring.connect(m, wiring.flipped(self.req_in), req_skid.i)
        wiring.connect(m, req_skid.o, wiring.flipped(self.req_out))
        wiring.connect(m, wiring.flipped(self.resp_in), resp_skid.i)
        wiring.connect(m, resp_skid.o, wiring.flipped(self.resp_out))
        return m


HARNESS_BLOCK = Block(
    name="stream_harness", kind="test", spec="-",
    summary="test-only loopback: req_in -> skid -> req_out, resp_in -> skid -> resp_out",
    top="tb.common.harness:StreamLoopbackHarness",
    params=(Param("req_width", 32, "1..4096", "request payload width in bits"),
            Param("resp_width", 32, "1..4096", "response payload width in bits")),
)
