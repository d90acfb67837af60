"""The memory-router test builds shared by the RTL tests and benchmarks (one Verilator build
serves the random test and the benchmarks of its hardware parameters; a configuration of the
same hardware, e.g. CFG-D on an N_OFF = 2 build, is reached through the CSRs and PT_INIT)."""

from golden.memrouter.params import build_reference
from hw.memrouter.top import Memrouter
from sim.registry import MEMROUTER_FLAG_PROBES, MEMROUTER_SECTOR_PORT_PROBES, Block, Param

__all__ = ["BLOCK", "BUILDS", "router_top"]


def router_top(CFG=1, N_PROC=1, ROB_BEATS=256, LOG2G=0, NUM_LINES=0, POISON=1):
    """Memrouter with the reset configuration CFG_NAMES[CFG] (FAR_ALLOC = 0); LOG2G and
    NUM_LINES of 0 keep the configuration's. POISON (default 1): block-RAM reads that collide
    with a write return the inverted word, so a test sees the router use one (their result is
    undefined on the FPGA; hw/common/bram.py)."""
    return Memrouter(*build_reference(CFG, N_PROC, ROB_BEATS, LOG2G, NUM_LINES, FAR_ALLOC=0),
                     poison=POISON)


BLOCK = Block(
    name="memrouter_top", kind="test",
    summary="memory router (test builds)",
    spec="memrouter.md", top=router_top,
    params=(Param("CFG", 1, "0..4", "reset configuration: CFG-A, B, C, D, G64"),
            Param("N_PROC", 1, "1..4", "processor ports"),
            Param("ROB_BEATS", 256, "16..4096", "response buffer beats"),
            Param("LOG2G", 0, "0, 9..16", "page size 2^LOG2G (0: the configuration's)"),
            Param("NUM_LINES", 0, "0, 4..16", "lines (0: the configuration's)"),
            Param("POISON", 1, "0, 1", "colliding block-RAM reads return the inverted word")),
    # stress_tb samples MR-V5's counters back door in the cycle after MIG_DONE; every router
    # testbench watches the REF / ND memories' contract (tb/memrouter/flag_contract.py) and
    # counts the write-out beats that wait for the sector read port
    probes=("engine.inc_done", "csr.cnt_mig_walk_fills", "csr.cnt_mig_demand_fills",
            "csr.cnt_mig_prevalid", "csr.cnt_mig_full_writes", *MEMROUTER_FLAG_PROBES,
            *MEMROUTER_SECTOR_PORT_PROBES),
)

# B: the default hardware (MR-P1); A2: N_OFF = 2, two processor ports (MR-P2 on CFG-A and,
# reprogrammed, CFG-D); C2: CFG-C with two processor ports and the 1024-beat response buffers
# the QoS benchmark needs (docs/memrouter.md, golden finding on ROB_BEATS); G64: the seed's
# 64-KiB page (LOG2G = 16, NS = 2048, 4 lines; MR-C1); S9: CFG-B with the smallest page
# (LOG2G = 9, NS = 16; MR-C1), a third smaller on the FPGA (docs/memrouter.md).
BUILDS = {
    "B": dict(),
    "A2": dict(CFG=0, N_PROC=2),
    "C2": dict(CFG=2, N_PROC=2, ROB_BEATS=1024),
    "G64": dict(CFG=4),
    "S9": dict(LOG2G=9),
}
