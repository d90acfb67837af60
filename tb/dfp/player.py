"""Drive operand beats (each with the cfg it needs) into ``DfpDotUnit`` and collect results.

Shared by the ``gpublocks run dfp`` / ``bench dfp`` testbench (``tb.dfp.run_tb``). The cfg
port is sampled on a chain's first beat, so each beat is presented together with its cfg
word; ``clr`` is strobed only when the unit is idle (every earlier result received), the
point in beat order where the golden model's ``clr()`` sits.
"""

from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import RandomGate
from golden.dfp.formats import Config, op_beat_fields, result_fields
from tb.common import env
from tb.common.clock import reset, start_clock
from tb.common.stream import StreamMonitor, read_int, sim_cycle

__all__ = ["DotPlayer"]


class DotPlayer:
    """Beats in, results out, with optional random valid gaps and back-pressure."""

    def __init__(self, dut, gap_prob=0.0, ready_prob=1.0):
        self.dut = dut
        params = env.params()
        self.lanes, self.acc_w = params["lanes"], params["acc_w"]
        self.beat_fields = op_beat_fields(self.lanes)
        self.res_fields = result_fields(self.acc_w)
        self.gate = RandomGate(1.0 - gap_prob, env.rng(11))
        self.ready_prob = ready_prob
        self.accepted_cycles = []

    async def start(self):
        dut = self.dut
        dut.i_op__valid.value = 0
        dut.o_res__ready.value = 0
        dut.clr.value = 0
        dut.stats_clr.value = 0
        dut.cfg.value = Config().pack()
        start_clock(dut)
        await reset(dut)
        self.monitor = StreamMonitor(dut, "o_res", dut.clk, fields=self.res_fields,
                                     rng=env.rng(12), ready_prob=self.ready_prob)

    @property
    def results(self):
        return self.monitor.items()

    async def play(self, beats):
        """Present ``beats`` ((beat dict, Config) pairs) in order; returns once all transferred."""
        dut, clk = self.dut, self.dut.clk
        for beat, cfg in beats:
            while not self.gate.next():
                dut.i_op__valid.value = 0
                await RisingEdge(clk)
            dut.i_op__payload.value = self.beat_fields.pack(**beat)
            dut.cfg.value = cfg.pack()
            dut.i_op__valid.value = 1
            while True:
                await ReadOnly()
                accepted = read_int(dut.i_op__ready) == 1
                if accepted:
                    self.accepted_cycles.append(sim_cycle())
                await RisingEdge(clk)
                if accepted:
                    break
            dut.i_op__valid.value = 0

    async def wait_results(self, n, timeout_cycles=200_000):
        await self.monitor.wait_for(n, timeout_cycles)

    async def clr(self, expected_results):
        """Strobe ``clr`` for one cycle once ``expected_results`` results have arrived."""
        await self.wait_results(expected_results)
        self.dut.clr.value = 1
        await RisingEdge(self.dut.clk)
        self.dut.clr.value = 0
