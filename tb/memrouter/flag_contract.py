"""A monitor of the engine's REF and ND bit memories (hw/memrouter/flagmem.py ``FlagMemory``):
every cycle, no set meets a waiting set of another bit while a write takes the port (the
memory's contract; broken, a set would be lost). Reads the memories' ports and pending entry
back door (``sim.registry.MEMROUTER_FLAG_PROBES``, probes of the registry's and the test
builds' memrouter blocks)."""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from sim.registry import MEMROUTER_FLAG_PROBES as FLAG_PROBES
from tb.common.stream import read_int, sim_cycle

__all__ = ["FLAG_PROBES", "FlagContract"]


class FlagContract:
    """Started with the router's testbench environment; ``waits`` counts, per memory, the
    cycles with a set waiting (the pending path in use)."""

    def __init__(self, dut):
        self.dut = dut
        self.handles = {}
        for probe in FLAG_PROBES:                        # "engine.<memory>.<signal>"
            _, mem, sig = probe.split(".")
            self.handles.setdefault(mem, {})[sig] = getattr(getattr(dut.engine, mem), sig)
        self.waits = dict.fromkeys(self.handles, 0)
        cocotb.start_soon(self._run())

    async def _run(self):
        while True:
            await RisingEdge(self.dut.clk)
            await ReadOnly()
            for f, h in self.handles.items():
                v = {k: read_int(x) for k, x in h.items()}
                wr = v["wr_en"] == 1
                p_live = v["pend_v"] == 1 and not (wr and v["pend_a"] == v["wr_addr"])
                s_live = v["set_en"] == 1 and not (wr and v["set_addr"] == v["wr_addr"])
                self.waits[f] += p_live
                assert not (wr and p_live and s_live and v["set_addr"] != v["pend_a"]), (
                    f"cycle {sim_cycle()}: engine.{f}: a set of bit {v['set_addr']} meets the "
                    f"waiting set of bit {v['pend_a']} and a write of bit {v['wr_addr']}: "
                    f"FlagMemory's contract is broken (a set would be lost)")
