"""``make``'s main job: Verilog for every block, Verilator lint, a short demo simulation, a table.

Blocks with a flow adapter run their demo stimulus through the RTL and the golden model; shared
parts without one run their cocotb testbench. Planned blocks are listed with their status.
"""

import random
import sys
import time

from sim import registry
from sim.cocotb_run import TestbenchFailure, run_testbench
from sim.errors import UsageError
from sim.run import run_parsed
from sim.seed import pick_seed
from sim.simulators import verilator_version
from sim.table import print_table
from sim.verilog import lint, write_verilog


def demo_block(block, seed):
    row = {"block": block.name, "status": block.status}
    if not block.ready:
        return row
    params = block.defaults()
    path, name = write_verilog(block, params)
    row["verilog"] = f"{path.name} ({path.read_text().count(chr(10))} lines)"
    ok, _ = lint(path, name)
    row["lint -Wall"] = "clean" if ok else "FAILED"
    start = time.monotonic()
    try:
        if block.adapter:
            adapter = block.flow()
            p, stim = adapter.parse(adapter.demo_stimulus(params, random.Random(seed)), block)
            record = run_parsed(block, p, stim, sim="verilator", seed=seed)
            row["demo"] = (f"{record['summary']}, "
                           + ("matches golden" if record["passed"] else f"{record['mismatch_count']} MISMATCHES"))
            row["result"] = "PASS" if record["passed"] and ok else "FAIL"
        else:
            res = run_testbench(block, params, block.testbench, testcase=block.demo_testcases,
                                seed=seed, label="demo")
            row["demo"] = f"cocotb {res.tests} tests passed"
            row["result"] = "PASS" if ok else "FAIL"
    except (TestbenchFailure, UsageError) as exc:
        row["demo"] = str(exc).splitlines()[0][:70]
        row["result"] = "FAIL"
    row["seconds"] = f"{time.monotonic() - start:.1f}"
    return row


def main():
    seed = pick_seed("demo")
    print(f"Verilator: {verilator_version()}")
    rows = []
    for block in registry.REGISTRY.values():
        print(f"... {block.name}", flush=True)
        rows.append(demo_block(block, seed))
    columns = ["block", "status", "verilog", "lint -Wall", "demo", "result", "seconds"]
    print()
    print_table(rows, columns, missing="-")
    failed = [r["block"] for r in rows if r.get("result") == "FAIL"]
    print(f"\nVerilog in build/verilog/, simulation builds in build/sim/. "
          + (f"FAILED: {', '.join(failed)}" if failed else "All built blocks pass."))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
