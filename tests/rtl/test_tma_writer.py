"""RTL regression of the TMA write side (hw/tma/smem_writer.py, completion.py, swizzle.py).

The test top holds a ``TmaSmemWriter`` whose barrier updates feed a ``TmaCompletion``, and a
``SwizzleMap`` beside them. The testbench (tb/tma/writer_tb.py) runs random tile loads through the
golden model and replays their responses and fill jobs, interleaved across commands, with random
gaps and back-pressure; it compares the smem image (sentinel-prefilled), the beats, the barrier
updates, tx totals and the ``done`` order with the golden model. Two builds: the default
``SWZ_TABLE`` and a non-default one (TMA-C8). The throughput test measures beats per write-window
cycle with always-ready outputs, unswizzled and SW128B.
"""

import json

import pytest
from amaranth import Module
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import SEQ_W
from golden.tma.params import TmaParams
from golden.tma.swizzle import default_swz_table
from hw.common.params import reject
from hw.tma.completion import TmaCompletion
from hw.tma.smem_writer import TmaSmemWriter
from hw.tma.swizzle import RowSwizzle, SwizzleMap
from hw.tma.tracker import TmaTracker
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param
from tb.tma.writer_tb import alt_swz_table

TB = "tb.tma.writer_tb"


class WriterTop(wiring.Component):
    """Test top: writer -> completion, plus a swizzle address map (ports ``swz_*``)."""

    def __init__(self, swz_alt=0, smem_aw=18, depth=8):
        try:
            self.p = TmaParams(SMEM_AW=smem_aw, SWZ_TABLE=alt_swz_table() if swz_alt else None)
        except ValueError as exc:
            reject(self, str(exc))
        self.writer = TmaSmemWriter(self.p)
        self.completion = TmaCompletion(self.p, depth)
        self.map = SwizzleMap(smem_aw, self.p.SWZ_TABLE)
        ports = {}
        for unit, names in ((self.writer, ("resp", "fill", "smem_wr", "mbar")),
                            (self.completion, ("open", "close", "done", "idle", "fault",
                                               "ack_valid", "ack_seq"))):
            for name in names:
                ports[name] = unit.signature.members[name]
        ports.update(busy=In(1), swz_addr=In(smem_aw), swz_mode=In(2), swz_out=Out(smem_aw))
        super().__init__(ports)

    def elaborate(self, platform):
        m = Module()
        m.submodules.writer = w = self.writer
        m.submodules.completion = c = self.completion
        m.submodules.map = sm = self.map
        for name in ("resp", "fill", "smem_wr", "mbar"):
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(w, name))
        for name in ("open", "close", "done"):
            wiring.connect(m, wiring.flipped(getattr(self, name)), getattr(c, name))
        m.d.comb += [
            c.wr_valid.eq(w.wr_valid), c.wr_seq.eq(w.wr_seq), c.wr_bytes.eq(w.wr_bytes),
            c.ack_valid.eq(self.ack_valid), c.ack_seq.eq(self.ack_seq),
            c.busy.eq(self.busy | w.busy),
            self.idle.eq(c.idle), self.fault.eq(c.fault),
            sm.addr.eq(self.swz_addr), sm.mode.eq(self.swz_mode), self.swz_out.eq(sm.swz),
        ]
        return m


BLOCK = Block(
    name="tma_writer", kind="test", summary="TmaSmemWriter + TmaCompletion + SwizzleMap test top",
    spec="tma.md §2.2 SmemWriter, Completion; §4.8, §4.11", top=WriterTop,
    params=(Param("swz_alt", 0, "0, 1", "1: a non-default SWZ_TABLE (TMA-C8)"),
            Param("smem_aw", 18, "11..24", "SMEM_AW (TMA-C2)"),
            Param("depth", 8, "power of two, 2..64", "completion slots")),
)

BUILDS = {"default": {}, "alt_table": dict(swz_alt=1, depth=4)}


def _run(build, seed, testcase, **kw):
    return run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase,
                         seed=seed, **kw)


@pytest.mark.req("TMA-F22", "TMA-F30", "TMA-F31", "TMA-F33", "TMA-F34", "TMA-F35", "TMA-F36",
                 "TMA-F37", "TMA-I6", "TMA-I8", "TMA-V4", "TMA-V5", "TMA-C8")
@pytest.mark.parametrize("build", list(BUILDS))
def test_writer_random_loads_match_golden(build, seed):
    """Images, beats, barrier updates, tx and done order of random loads vs the golden model."""
    _run(build, seed, "random_loads")


@pytest.mark.req("TMA-GV24", "TMA-GV25", "TMA-F31")
def test_writer_fig9_vector(seed):
    """TMA-GV24 placements and TMA-GV25 beat/tx counts through the RTL writer."""
    _run("default", seed, "gv24_fig9")


@pytest.mark.req("TMA-F31", "TMA-C8", "TMA-V4", "TMA-GV23", "TMA-GV26")
@pytest.mark.parametrize("build", list(BUILDS))
def test_swizzle_map(build, seed):
    """The address map against golden swz (and the closed form, GV23, GV26 for the default)."""
    _run(build, seed, "swizzle_map")


@pytest.mark.req("TMA-P6")
def test_writer_throughput(seed, tmp_path):
    """>= 0.98 beats per write-window cycle for BM-WR / BM-FILL shapes, SW128B within 1 %."""
    out = tmp_path / "figures.json"
    _run("default", seed, "throughput", env={"GPUBLOCKS_RESULT": str(out)})
    figures = json.loads(out.read_text())
    print("writer throughput:", json.dumps(figures))
    for name, f in figures.items():
        assert f["beats"] == 512 and f["beats_per_cycle"] >= 0.98, (name, f)


@pytest.mark.parametrize("factory,name", [
    (lambda: TmaSmemWriter(params=object()), "params"),
    (lambda: TmaCompletion(depth=3), "depth"),
    (lambda: TmaCompletion(depth=128), "depth"),
    (lambda: SwizzleMap(smem_aw=10), "smem_aw"),
    (lambda: SwizzleMap(swz_table={1: [[0] * 8] * 8, 2: [], 3: []}), "swz_table"),
    (lambda: RowSwizzle(swz_table={0: default_swz_table()[1]}), "swz_table"),
    (lambda: TmaTracker(params=5), "params"),
])
def test_parameters_are_checked(factory, name):
    with pytest.raises(ValueError, match=name):
        factory()


def test_seq_width_matches_the_placement_layout():
    assert SEQ_W == 8
