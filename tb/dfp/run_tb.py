"""``gpublocks run dfp`` and ``gpublocks bench dfp`` on the RTL ``DfpDotUnit``.

``run_stimulus`` plays the normalized stimulus of ``sim.blocks.dfp`` (chains of beats, each
chain with its cfg, optional ``clr`` before a chain) with the stimulus's valid-gap and
ready probabilities, and writes every result, the final ``stats`` port and the cycles in
which beats were accepted and results left (the benchmark derives throughput and latency
from them). The flow compares the results with the golden model.
"""

import cocotb
from cocotb.triggers import ReadOnly, RisingEdge

from golden.dfp.formats import DOT_STATS, Config, stats_fields
from tb.common import env
from tb.common.stream import read_int
from tb.dfp.player import DotPlayer


@cocotb.test(timeout_time=2, timeout_unit="sec")
async def run_stimulus(dut):
    stim = env.stimulus()
    if stim is None or "chains" not in stim:
        return
    timing = stim.get("timing", {})
    player = DotPlayer(dut, gap_prob=timing.get("gap_prob", 0.0),
                       ready_prob=timing.get("ready_prob", 1.0))
    await player.start()
    expected_results = 0
    for chain in stim["chains"]:
        if chain.get("clr_before"):
            await player.clr(expected_results)
        cfg = Config(**chain["cfg"])
        await player.play([(beat, cfg) for beat in chain["beats"]])
        expected_results += chain["results"]
    await player.wait_results(expected_results)
    for _ in range(8):                                  # nothing more may come out
        await RisingEdge(dut.clk)
    await ReadOnly()
    stats = stats_fields(DOT_STATS).unpack(read_int(dut.stats))
    env.write_result({
        "results": player.results,
        "stats": stats,
        "accept_cycles": player.accepted_cycles,
        "result_cycles": [t.cycle for t in player.monitor.transfers],
    })
