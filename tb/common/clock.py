"""Clock and synchronous reset for Amaranth tops (ports ``clk`` and ``rst``)."""

from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

__all__ = ["PERIOD_NS", "start_clock", "reset"]

PERIOD_NS = 10


def start_clock(dut, period_ns=PERIOD_NS):
    """Start the free-running clock on ``dut.clk``."""
    return Clock(dut.clk, period_ns, unit="ns").start(start_high=False)


async def reset(dut, cycles=2):
    """Hold ``dut.rst`` high for ``cycles`` rising edges, then release it just after an edge.

    Inputs are driven right after a rising edge and outputs sampled in the ReadOnly phase of
    the same cycle: the convention every testbench here follows.
    """
    dut.rst.value = 1
    for _ in range(cycles):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
