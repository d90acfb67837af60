"""The block registry: name -> top component factory, parameters, flow adapter, status.

Every CLI command and the demo walk this table, so a new block plugs in by adding one entry
here and one adapter module in ``sim/blocks/``.
"""

import importlib
from dataclasses import dataclass, field

from sim.errors import UsageError

__all__ = ["Param", "Block", "REGISTRY", "get", "ready_blocks", "resolve_names"]


# the memrouter engine's REF / ND FlagMemory ports and pending entry, which every router
# testbench reads back door to check the memories' contract (tb/memrouter/flag_contract.py)
MEMROUTER_FLAG_PROBES = tuple(f"engine.{mem}.{sig}" for mem in ("ref_bits", "nd_bits")
                              for sig in ("set_en", "set_addr", "wr_en", "wr_addr", "pend_v",
                                          "pend_a"))
# the engine's write-out beat (iss_wr) and whether the line store's one sector read port read
# its sector (rd2_ok): router testbenches count the beats that wait for the routing stage
MEMROUTER_SECTOR_PORT_PROBES = ("engine.iss_wr", "lines.rd2_ok")


@dataclass(frozen=True)
class Param:
    """One construction parameter of a top component."""
    name: str
    default: int
    legal: str
    help: str


@dataclass(frozen=True)
class Block:
    """A registered design: a block of the mission or a shared part from ``hw/common``.

    ``top`` is ``"module:Class"`` (or the class itself, for test-only designs); ``adapter`` is the ``sim.blocks`` module that gives the flow
    its stimulus schema, golden comparison, demo and benchmark. Planned blocks have neither.
    """
    name: str
    summary: str
    kind: str                       # "block" (a mission block) or "common" (shared part)
    spec: str
    params: tuple = ()
    top: object = None
    adapter: str | None = None
    testbench: str | None = None     # cocotb module run by the demo when there is no adapter
    demo_testcases: str | None = None  # the testbench's testcases the demo runs (None: all)
    issue: int | None = None
    status: str = "ready"
    notes: tuple = field(default=())
    probes: tuple = ()               # internal signals testbenches read ("sub.path.signal")
    # parameter overrides, each ((name, value), ...), that `gpublocks fpga` also builds when
    # the block is named without -p: a smaller configuration beside the default
    fpga_variants: tuple = ()
    # nextpnr route policy of `gpublocks fpga` (sim.fpga.ROUTERS): "router1" (the default
    # router under its time limit, then static placement and router2, then both untimed),
    # "router2" (start at the static placement and router2: a block whose router1 route runs
    # past its limit, which would be 20 minutes lost) or "untimed" (start at the untimed
    # placement and route: a block whose timed router2 route stalls, which would be an hour)
    fpga_router: str = "router1"
    # the policy of the `fpga_variants` builds (None: fpga_router)
    fpga_variant_router: str | None = None
    # which output bits each harness pin XORs (hw.common.fpga_wrapper.GROUPINGS)
    fpga_harness: str = "interleaved"

    @property
    def ready(self):
        return self.top is not None

    def defaults(self):
        return {p.name: p.default for p in self.params}

    def fpga_route_policy(self, params):
        """The nextpnr route policy of a ``gpublocks fpga`` build at ``params`` (a full dict)."""
        variants = [self.resolve_params(dict(v)) for v in self.fpga_variants]
        if params in variants and self.fpga_variant_router:
            return self.fpga_variant_router
        return self.fpga_router

    def resolve_params(self, overrides=None):
        """Defaults updated with ``overrides`` ({name: int or str}); UsageError on bad names/values."""
        params = self.defaults()
        for name, value in (overrides or {}).items():
            if name not in params:
                known = ", ".join(params) or "none"
                raise UsageError(f"{self.name} has no parameter {name!r} (parameters: {known})")
            if isinstance(value, str):
                try:
                    value = int(value, 0)
                except ValueError:
                    raise UsageError(f"parameter {name}={value!r} of {self.name} is not an integer")
            if isinstance(value, bool) or not isinstance(value, int):
                raise UsageError(f"parameter {name}={value!r} of {self.name} is not an integer")
            params[name] = value
        return params

    def component_class(self):
        if callable(self.top):                    # test-only designs pass the class itself
            return self.top
        module, cls = self.top.split(":")
        return getattr(importlib.import_module(module), cls)

    def build(self, params):
        """Construct the top component; a constructor ValueError becomes a UsageError."""
        if not self.ready:
            raise UsageError(self.not_ready_message())
        try:
            return self.component_class()(**params)
        except ValueError as exc:
            raise UsageError(str(exc)) from None

    def check_params(self, params):
        """Run the constructor's parameter checks (UsageError); the component is discarded."""
        self.build(params)._MustUse__silence = True

    def flow(self):
        """The adapter module (stimulus schema, golden comparison, demo, bench)."""
        if self.adapter is None:
            raise UsageError(self.not_ready_message())
        return importlib.import_module(self.adapter)

    def not_ready_message(self):
        where = f" (issue #{self.issue})" if self.issue else ""
        return f"block {self.name!r} is not built yet{where}; ready: {', '.join(b.name for b in ready_blocks())}"


REGISTRY = {b.name: b for b in [
    Block(
        name="arbiter", kind="common",
        summary="round-robin arbiter with one-hot grant (hw/common, shared by trackq, memrouter, ...)",
        spec="trackq.md §4.1, TQ-F45, TQ-I12", top="hw.common.arbiter:RoundRobinArbiter",
        adapter="sim.blocks.arbiter", testbench="tb.common.arbiter_tb",
        params=(Param("n", 4, "1..1024", "number of requesters"),),
    ),
    Block(
        name="skid", kind="common",
        summary="stream skid buffer / register slice: full throughput, registered valid and ready",
        spec="CONVENTIONS §2 stream rules", top="hw.common.skid:SkidBuffer",
        testbench="tb.common.skid_tb",
        params=(Param("shape", 8, "1..4096", "payload width in bits"),),
    ),
    Block(
        name="mwfifo", kind="common",
        summary="register FIFO taking several ordered writes per cycle, first-word-fall-through "
                "(the wdist err queue)",
        spec="wdist.md WD-I10", top="hw.common.mwfifo:MultiWriteFifo",
        testbench="tb.common.mwfifo_tb",
        params=(Param("width", 8, "1..4096", "entry width in bits"),
                Param("depth", 4, "1..64", "entries"),
                Param("ports", 4, "1..8", "write ports")),
    ),
    Block(
        name="memfifo", kind="common",
        summary="first-word-fall-through FIFO in a synchronous-read memory (block RAM on FPGA; "
                "the memrouter free lists and QoS request-length queues)",
        spec="memrouter.md MR-F30", top="hw.common.memfifo:MemFifo",
        testbench="tb.common.memfifo_tb",
        params=(Param("width", 64, "1..4096", "entry width in bits"),
                Param("depth", 64, "2..65536", "entries")),
    ),
    Block(
        name="prefix_popcount", kind="common",
        summary="exclusive prefix population count, log-depth (wdist WD-F9)",
        spec="wdist.md WD-F9", top="hw.common.popcount:PrefixPopcount",
        testbench="tb.common.popcount_tb",
        params=(Param("n", 16, "1..1024", "input bits"),),
    ),
    Block(
        name="lzc", kind="common",
        summary="leading-zero count, log-depth (dfp dequantizer and precision manager)",
        spec="dfp.md DFP-F16", top="hw.common.lzc:LeadingZeroCount",
        testbench="tb.common.lzc_tb",
        params=(Param("width", 32, "1..256", "input width in bits"),),
    ),
    Block(
        name="tma", kind="block", spec="tma.md", issue=4,
        summary="tensor memory access unit: descriptor-driven tile and im2col loads, stores, "
                "reductions, prefetch, multicast; L2 line requests, swizzler, completion",
        top="hw.tma:Tma", adapter="sim.blocks.tma",
        params=(Param("addr_w", 64, "40..64", "global address width (TMA-C1)"),
                Param("smem_aw", 18, "11..24", "shared-memory address width (TMA-C2)"),
                Param("id_w", 8, "1..16", "command id width (TMA-C3)"),
                Param("q_depth", 4, "2..16", "request FIFO depth (TMA-C4)"),
                Param("dc_entries", 4, "2..16", "descriptor cache entries (TMA-C5)"),
                Param("trk_entries", 32, "4..256, a power of two", "tracker tags (TMA-C6)"),
                Param("nb_w", 20, "1..28", "num_blocks width (TMA-C7)")),
    ),
    Block(
        name="trackq", kind="block", spec="trackq.md", issue=5,
        summary="out-of-order memory request tracking queues over a shared linked-list pool",
        top="hw.trackq.top:TrackingQueues", adapter="sim.blocks.trackq",
        params=(Param("N_Q", 4, "1..64", "tracking queues (TQ-C1; full size 48)"),
                Param("POOL", 16, "2..4096", "entry-pool slots (TQ-C2; full size 512)"),
                Param("N_WARPS", 8, "1..64", "warp-number range (TQ-C3)"),
                Param("BANKS", 4, "1..8", "tag banks per request (TQ-C4)"),
                Param("SECTORS", 4, "4", "sectors per dslot (TQ-C5)"),
                Param("DSLOTS", 16, "2..4096", "dslots per bank (TQ-C6; full size 256)"),
                Param("ID_W", 8, "1..32", "request-id width (TQ-C7)"),
                Param("FAST_PATH", 1, "0, 1", "build the L/G/TTU hit fast path (TQ-C8)"),
                Param("FAST_DEPTH", 2, "1..64", "fast-FIFO depth (TQ-C9)"),
                Param("COMMIT_DEPTH", 4, "1..64", "commit-FIFO depth (TQ-C10)"),
                Param("FREELIST", 1, "0, 1", "build free-list reclaim (TQ-C11)"),
                Param("SEQ_W", 16, "ceil(log2 POOL)+3..32", "sequence-number width (TQ-C12)")),
    ),
    Block(
        name="wdist", kind="block", spec="wdist.md", issue=6,
        summary="work distributor with shadow-state launcher, water-filling, rasterization",
        top="sim.blocks.wdist:build_top", adapter="sim.blocks.wdist",
        params=(Param("N_GPC", 2, "1..16", "GPCs (WD-C1; spec default 4, benchmark 16)"),
                Param("SM_PER_GPC", 4, "2..32, multiple of SM_PER_TPC",
                      "SMs per GPC, every GPC (WD-C2; spec default 8)"),
                Param("SM_PER_TPC", 2, "1..4", "SMs per TPC (WD-C3)"),
                Param("REG_CAP_G", 256, "1..256", "register granules per SM (WD-C4)"),
                Param("SMEM_CAP_G", 912, "1..1023", "shared-memory granules per SM (WD-C5)"),
                Param("WARP_CAP", 64, "1..64", "warps per SM (WD-C6)"),
                Param("CTA_SLOTS", 8, "1..63", "CTA slots per SM (WD-C7; spec default 32)"),
                Param("MAX_CGA_CTAS", 16, "1..32", "largest innermost CGA (WD-C8)"),
                Param("MAX_OUTER", 16, "1..16", "inner CGAs per outer CGA (WD-C9)"),
                Param("GPC_CGA_ID_W", 2, "1..8",
                      "gpc_local_cga_id width (WD-C10; spec default 8, a slow compile)"),
                Param("CGA_CREDIT_PER_SM", 2, "1..4", "CGA credits per SM (WD-C11; spec default 1)"),
                Param("SEQ_W", 8, "1..16", "sequence-number width (WD-C12)"),
                Param("DELTA_W", 12, ">= clog2(S_MAX*CTA_SLOTS+1)+1", "raster delta width (WD-C13)"),
                Param("GX_W", 32, "1..32", "grid_x width (WD-C14)"),
                Param("GY_W", 16, "1..16", "grid_y width (WD-C14)"),
                Param("GZ_W", 16, "1..16", "grid_z width (WD-C14)"),
                Param("GRID_ID_W", 8, "1..16", "grid tag width (WD-C15)"),
                Param("SESSION_MAX_STEPS", 8, "1..255", "A5 steps per session (WD-C16)"),
                Param("CMD_FIFO_DEPTH", 4, "1..16", "command FIFO depth (WD-C17)"),
                Param("RASTER_FIFO_DEPTH", 4, "2..16", "pending runs per rasterizer (WD-C18)"),
                Param("TRACE", 1, "0, 1", "build the trace port (WD-C19)"),
                Param("LEGACY", 0, "0, 1", "1: DISTRIBUTOR = legacy baseline (WD-C20)"),
                Param("MAX_FLAT_CTAS", 64, "1..256", "largest GPU_FLAT CGA (WD-C22)")),
        notes=("levels PLAIN, GPC, GPU and GPU_FLAT (legacy: PLAIN, GPC); CPC is not built "
               "(CPC_PER_GPC = 0)",),
    ),
    Block(
        name="memrouter", kind="block", spec="memrouter.md", issue=7,
        summary="base-layer memory router: HBM + off-package interleave, page table, QoS, migration",
        top="sim.blocks.memrouter:build_top", adapter="sim.blocks.memrouter",
        params=(Param("CFG", 1, "0..4", "reference configuration CFG-A, B, C, D, G64 (MR-GV1): "
                      "hardware parameters and CSR reset values (MR-C11)"),
                Param("N_PROC", 1, "1..4", "processor ports (MR-C4)"),
                Param("ROB_BEATS", 256, ">= 2*MAX_LEN", "response buffer beats per processor "
                      "port (MR-C8)"),
                Param("LOG2G", 0, "0, 9..16", "page size 2^LOG2G bytes (MR-C1); 0: the CFG's"),
                Param("NUM_LINES", 0, "0, 4..16", "migration-cache lines (MR-C3); 0: the CFG's"),
                Param("POISON", 0, "0, 1", "test builds: block-RAM reads colliding with a "
                      "write return the inverted word")),
        probes=MEMROUTER_FLAG_PROBES + MEMROUTER_SECTOR_PORT_PROBES,
        # the smallest configuration
        fpga_variants=((("CFG", 4), ("LOG2G", 9), ("ROB_BEATS", 16)),),
        # router1 ran past its 20 minutes on every build since 2026-11-26, and the default
        # build's timed router2 route stalls (500 to 1,500 overused wires from iteration 30 on,
        # 2026-11-28/29), while the untimed one routes it in minutes; the smallest
        # configuration routes timed (docs/memrouter.md)
        fpga_router="untimed",
        fpga_variant_router="router2",
        # its untimed route converges with contiguous groups (119 iterations) and stalls at
        # 640 to 820 overused wires with interleaved ones, whose trees span the whole design
        fpga_harness="contiguous",
        notes=("`run` on the RTL refuses migration commands, triggers and FLUSH (timing-"
               "dependent; verified by tests/rtl/test_memrouter_mig.py); `run --sim golden` "
               "covers all of the spec",),
    ),
    Block(
        name="dfp", kind="block", spec="dfp.md", issue=3,
        summary="DFP16 dot/MAC unit with the dynamic precision manager (NONE/PRESHIFT/CHUNK/ADAPTIVE)",
        top="hw.dfp.dot:DfpDotUnit", adapter="sim.blocks.dfp",
        params=(Param("lanes", 16, "1, 2, 4, 8, 16", "multipliers per operand beat (DFP-C1)"),
                Param("acc_w", 32, "32..48", "integer accumulator width (DFP-C2)"),
                Param("mul_stages", 2, "1..2", "pipeline registers after the multipliers (DFP-C7)"),
                Param("tree_reg_every", 2, "1..5", "adder-tree levels between registers (DFP-C7)"),
                Param("fadd_cyc", 3, "1..4", "cycles per FP32 accumulation, CHUNK mode (DFP-C7)")),
    ),
    Block(
        name="dfp_quantizer", kind="part", spec="dfp.md §4.3", issue=3,
        summary="dfp: FP32 -> DFP16 block quantizer (two-pass, TRUNC/BIASED/RNE, metadata)",
        top="hw.dfp.quantizer:DfpQuantizer", testbench="tb.dfp.quant_tb",
        demo_testcases="golden_vectors,random_blocks",
        params=(Param("q_lanes", 1, "1, 2, 4, 8, 16", "elements per beat (DFP-C3)"),
                Param("blk_max", 64, "1..1024, multiple of q_lanes", "largest block (DFP-C4)"),
                Param("bias_bits", 1, "1..4", "bias bits of BIASED rounding (DFP-C6)")),
    ),
    Block(
        name="dfp_dequantizer", kind="part", spec="dfp.md §4.4", issue=3,
        summary="dfp: DFP16 -> FP32 dequantizer (LZD path)",
        top="hw.dfp.dequantizer:DfpDequantizer", testbench="tb.dfp.dequant_tb",
        demo_testcases="golden_vectors,random_beats",
        params=(Param("q_lanes", 1, "1, 2, 4, 8, 16", "elements per beat (DFP-C3)"),),
    ),
    Block(
        name="dfp_downconverter", kind="part", spec="dfp.md §4.10", issue=3,
        summary="dfp: DFP32 -> DFP16 down-converter (align, R shift, round, saturate)",
        top="hw.dfp.downconvert:DfpDownConverter", testbench="tb.dfp.down_tb",
        demo_testcases="golden_vectors,random_blocks",
        params=(Param("q_lanes", 1, "1, 2, 4, 8, 16", "elements per beat (DFP-C3)"),
                Param("blk_max", 64, "1..1024, multiple of q_lanes", "largest block (DFP-C4)"),
                Param("in_w", 32, "16..48", "input integer width (DFP-C5)"),
                Param("bias_bits", 1, "1..4", "bias bits of BIASED rounding (DFP-C6)")),
    ),
]}


def get(name):
    try:
        return REGISTRY[name]
    except KeyError:
        raise UsageError(f"unknown block {name!r}; known: {', '.join(REGISTRY)}") from None


def ready_blocks():
    return [b for b in REGISTRY.values() if b.ready]


def resolve_names(names, use_all, need=lambda b: b.ready, what="this command"):
    """Blocks named on a command line (or every capable one with --all); UsageError otherwise."""
    capable = [b for b in REGISTRY.values() if need(b)]
    if use_all or not names:
        if not use_all and not names:
            raise UsageError(f"name a block or use --all; {what} supports: "
                             f"{', '.join(b.name for b in capable) or 'none yet'}")
        return capable
    blocks = []
    for name in names:
        block = get(name)
        if not need(block):
            supported = ", ".join(b.name for b in capable) or "none yet"
            status = "" if block.ready else f" ({block.status})"
            raise UsageError(f"{what} does not support {name!r}{status}; supported: {supported}")
        blocks.append(block)
    return blocks
