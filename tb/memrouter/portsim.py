"""Memory ports for the memory-router testbenches: the golden cycle-exact port models (§4.11,
MR-F51) driven on the router's mreq / mrsp signals. The RTL PortModel is checked against the
same model cycle by cycle (MR-V12, tests/rtl/test_memrouter_portmodel.py); a simulated top
with RTL port models would be far slower to build (their memories are megabytes of Verilog).
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.common.stream import decode_word, encode_item
from golden.memrouter.formats import MREQ, MRSP
from golden.memrouter.portmodel import PortModel
from tb.common.stream import read_int, sim_cycle

__all__ = ["PyPorts", "HBM", "OFF"]

HBM, OFF = (4, 8, 32), (1, 8, 96)           # BW_NUM, BW_DEN, LAT (MR-C29, MR-C30)


class PyPorts:
    """The memory ports as golden cycle-exact port models (§4.11; the RTL PortModel is checked
    against the same model, MR-V12): each cycle, right after the edge, ``mreq.ready`` and the
    presented ``mrsp`` beat are driven from the models' state; in ReadOnly the transfers are
    sampled and every model is stepped."""

    def __init__(self, dut, p, cfg, sink):
        self.dut, self.sink = dut, sink
        frames = [cfg.HBM_FRAMES] + [cfg.MOD_FRAMES] * p.N_OFF
        self.models = [PortModel(j, *(HBM if j == 0 else OFF), frames[j], p.LOG2G)
                       for j in range(p.N_OFF + 1)]
        self.sig = [(getattr(dut, f"mreq__{j}__valid"), getattr(dut, f"mreq__{j}__ready"),
                     getattr(dut, f"mreq__{j}__payload"), getattr(dut, f"mrsp__{j}__valid"),
                     getattr(dut, f"mrsp__{j}__ready"), getattr(dut, f"mrsp__{j}__payload"))
                    for j in range(p.N_OFF + 1)]
        self._writing = [0] * len(self.models)
        self.headers = []                   # (cycle, port, class, sectors) of every request
        self.rsp_cycles = [[] for _ in self.models]     # per port: the cycle of each mrsp beat
        for s in self.sig:
            s[1].value = 0
            s[3].value = 0
        cocotb.start_soon(self._run())

    @staticmethod
    def _peek(model):
        ready = model._writing is not None or len(model.q) < model.pq_depth
        rsp = model.out[0][1] if model.out and model.out[0][0] <= model.t else None
        return ready, rsp

    async def _run(self):
        clk = self.dut.clk
        while True:
            await RisingEdge(clk)
            views = []
            for model, (_, q_rdy, _, r_val, _, r_pl) in zip(self.models, self.sig):
                ready, rsp = self._peek(model)
                q_rdy.value = int(ready)
                r_val.value = int(rsp is not None)
                if rsp is not None:
                    r_pl.value = encode_item(rsp, MRSP.width, MRSP)
                views.append((ready, rsp is not None))
            await ReadOnly()
            for j, (model, (q_val, _, q_pl, _, r_rdy, _)) in enumerate(zip(self.models, self.sig)):
                offer = None
                ready, presented = views[j]
                if read_int(q_val) == 1 and ready:
                    offer = decode_word(read_int(q_pl), MREQ)
                    self._observe(j, offer)
                taken = read_int(r_rdy) == 1
                if presented and taken:
                    self.rsp_cycles[j].append(sim_cycle())
                model.cycle(offer, taken)

    def _observe(self, j, beat):
        if beat["wr"] and self._writing[j]:
            self._writing[j] -= 1
            return
        self.headers.append((sim_cycle(), j, beat["cls"], beat["len"] + 1))
        self.sink(j, beat)
        if beat["wr"]:
            self._writing[j] = beat["len"]
