"""``gpublocks run tma`` on the RTL (``hw.tma.Tma``): plays the normalized stimulus of
``sim.blocks.tma`` through the top bench (``tb.tma.top_tb.TopBench``: descriptor, L2 and smem
models with random latency, out-of-order L2 responses, random back-pressure) and writes what the
ports showed as a ``golden.tma.record`` record, plus cycle counts: per command the cycles of its
``cmd`` handshake and of its ``done`` or ``err``, and the cycles of the whole run. The flow
compares the record with the golden model's; nothing is asserted here, so a mismatch is reported
rather than raised.

``grouped`` (default) issues the commands in groups whose smem and global footprints do not
overlap, each after the previous group finished: the unit does not order the memory effects of
commands in flight (tma.md §4.11), so only then is the image the golden model's. Ungrouped, the
commands go back to back.
"""

import cocotb

from golden.tma.formats import LINE, L2Op, TmaCmd
from golden.tma.record import (beat_rows, gmem_image, load_memories, mbar_totals, request_entry,
                               smem_image)
from tb.common import env
from tb.tma.setup_tb import Case
from tb.tma.top_tb import TopBench, start, top_params, wait_idle


@cocotb.test()
async def run_stimulus(dut):
    p = top_params()
    stim = env.stimulus()
    rng = env.rng(4)
    await start(dut)
    bench = TopBench(dut, p, rng)
    load_memories(stim, bench.gmem.write, bench.smem.write)
    load_memories(stim, bench.g_gmem.write, bench.g_smem.write)
    cases = []
    for c in stim["commands"]:
        cmd = TmaCmd(**{**c, "coord": tuple(c["coord"])})
        word = int.from_bytes(bytes(bench.gmem.read(cmd.desc_addr, 128)), "little") if cmd.op < 4 else 0
        cases.append(Case(cmd, word))
    await bench.run(cases, grouped=stim["grouped"], place=False, fill=False)
    await wait_idle(bench)
    cmd_cycles = [t.cycle for t in bench.cmd_mon.transfers]
    start_cycle = cmd_cycles[0] if cmd_cycles else 0
    ends = {}
    for t in bench.done.transfers:
        ends.setdefault(t.fields["id"], []).append(t.cycle)
    for t in bench.err.transfers:
        ends.setdefault(t.fields["id"], []).append(t.cycle)
    per_command = []
    for c, cyc in zip(stim["commands"], cmd_cycles):
        end = ends.get(c["id"], [None]).pop(0) if ends.get(c["id"]) else None
        per_command.append({"id": c["id"], "cmd": cyc - start_cycle,
                            "end": None if end is None else end - start_cycle})
    reqs = [t.fields for t in bench.l2_mon.transfers]
    beats = [t.fields for t in bench.wr.transfers]
    written = {f["line"] for f in reqs if f["op"] not in (L2Op.READ, L2Op.PREFETCH)}
    env.write_result({
        "requests": [request_entry(f["op"], f["line"], f["sectors"], f["dtype"],
                                   f["data"].to_bytes(LINE, "little"), f["be"]) for f in reqs],
        "errs": [[t.fields["id"], t.fields["code"]] for t in bench.err.transfers],
        "done": [t.fields["id"] for t in bench.done.transfers],
        "smem": smem_image(lambda c, r: bench.smem.read(c, r * LINE, LINE),
                           beat_rows((f["row"], f["be"], f["mask"]) for f in beats)),
        "gmem": gmem_image(lambda line: bench.gmem.read(line * LINE, LINE), written),
        "mbar_tx": mbar_totals((t.fields["addr"], t.fields["tx"], t.fields["mask"])
                               for t in bench.mbar.transfers),
        "desc_reads": bench.desc.stats["requests"],
        "cycles": max([e["end"] for e in per_command if e["end"] is not None], default=0) + 1,
        "per_command": per_command,
    })
