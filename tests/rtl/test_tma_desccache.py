"""RTL regression of the TMA request queue and descriptor cache, TmaReqQueue -> TmaDescCache
(hw/tma/reqqueue.py, hw/tma/desccache.py), on Verilator.

The test top ``TmaCacheTop`` chains the two modules; its ``o`` stream is the Setup input
(``golden.tma.jobs.setup_in_fields``), fed by a testbench sink with random back-pressure, and a
descriptor memory model with random latency and random ``desc_rd_req.ready`` answers the reads.
Two builds: default parameters, and Q_DEPTH = 2, DC_ENTRIES = 2, ADDR_W = 40 (the TMA-V19
corner) with narrow SMEM_AW / ID_W / NB_W. The testbench (tb/tma/desccache_tb.py) checks the
Setup input bit-exactly (commands in order, each with its DESC_INVAL epoch's descriptor), the
read sequence against the golden ``DescCache`` and the §4.12 count, one read outstanding, no
read for bypassing commands, the look-ahead bound of TMA-F6 and the hit path (a hit entering an
idle queue is presented to Setup in the next cycle).
"""

import json

import pytest
from amaranth import Module
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.tma.formats import SEQ_W, cmd_fields, desc_rd_req_fields, desc_rd_resp_fields
from hw.common.layout import struct_layout
from hw.tma.desccache import TmaDescCache
from hw.tma.reqqueue import TmaReqQueue
from hw.tma.setup import setup_in_layout
from sim.cocotb_run import run_testbench
from sim.registry import Block, Param

TB = "tb.tma.desccache_tb"


class TmaCacheTop(wiring.Component):
    """Test top: ``TmaReqQueue`` feeding ``TmaDescCache``; ports ``cmd``, ``o`` (Setup input),
    ``desc_rd_req``, ``desc_rd_resp`` and ``head_seq``."""

    def __init__(self, q_depth=4, dc_entries=4, addr_w=64, smem_aw=18, id_w=8, nb_w=20):
        self.queue = TmaReqQueue(q_depth, addr_w, smem_aw, id_w, nb_w)
        self.cache = TmaDescCache(dc_entries, addr_w, smem_aw, id_w, nb_w)
        p = self.cache.p
        super().__init__({
            "cmd": In(stream.Signature(struct_layout(cmd_fields(p)))),
            "o": Out(stream.Signature(setup_in_layout(p))),
            "desc_rd_req": Out(stream.Signature(struct_layout(desc_rd_req_fields(p)))),
            "desc_rd_resp": In(stream.Signature(struct_layout(desc_rd_resp_fields()))),
            "head_seq": Out(SEQ_W),
        })

    def elaborate(self, platform):
        m = Module()
        m.submodules.queue = self.queue
        m.submodules.cache = self.cache
        wiring.connect(m, wiring.flipped(self.cmd), self.queue.cmd)
        wiring.connect(m, self.queue.head, self.cache.head)
        wiring.connect(m, self.queue.next, self.cache.next)
        wiring.connect(m, self.cache.o, wiring.flipped(self.o))
        wiring.connect(m, self.cache.desc_rd_req, wiring.flipped(self.desc_rd_req))
        wiring.connect(m, wiring.flipped(self.desc_rd_resp), self.cache.desc_rd_resp)
        m.d.comb += self.head_seq.eq(self.queue.head_seq)
        return m


BLOCK = Block(
    name="tma_cache", kind="test", summary="TmaReqQueue -> TmaDescCache test top",
    spec="tma.md §2.2, §4.12", top=TmaCacheTop,
    params=(Param("q_depth", 4, "2..16", "Q_DEPTH"), Param("dc_entries", 4, "2..16", "DC_ENTRIES"),
            Param("addr_w", 64, "40..64", "ADDR_W"), Param("smem_aw", 18, "11..24", "SMEM_AW"),
            Param("id_w", 8, "1..16", "ID_W"), Param("nb_w", 20, "1..28", "NB_W")),
)

BUILDS = {"default": {},
          "small": dict(q_depth=2, dc_entries=2, addr_w=40, smem_aw=11, id_w=3, nb_w=6)}


def _run(build, seed, testcase, tmp_path):
    out = tmp_path / f"{testcase}.json"
    run_testbench(BLOCK, BLOCK.resolve_params(BUILDS[build]), TB, testcase=testcase, seed=seed,
                  env={"GPUBLOCKS_RESULT": str(out)})
    figures = json.loads(out.read_text())
    print(json.dumps(figures, indent=1))
    return figures


@pytest.mark.req("TMA-F1", "TMA-F2", "TMA-F4", "TMA-F5", "TMA-F6", "TMA-F7", "TMA-F8",
                 "TMA-E1", "TMA-I3", "TMA-V15")
@pytest.mark.parametrize("build", list(BUILDS))
def test_cache_random_streams(build, seed, tmp_path):
    """Random streams (cache users on few and on more than DC_ENTRIES lines, bypassing and
    rejected commands, DESC_INVAL epochs with changed descriptors) under random gaps,
    back-pressure and descriptor latency: Setup input, reads and timing against golden."""
    figures = _run(build, seed, "random_streams", tmp_path)
    assert figures["lookahead_wait_max"] <= 2
    assert figures["lookahead_reads"] > 0 and figures["epochs"] > 10


@pytest.mark.req("TMA-F6", "TMA-F8", "TMA-V15")
def test_cache_timing(seed, tmp_path):
    """Directed: hit/bypass presented one cycle after the cmd handshake from an idle queue,
    look-ahead read in the cycle the next command arrives behind a held head, no look-ahead
    behind DESC_INVAL, changed descriptors refetched after it."""
    figures = _run("default", seed, "timing", tmp_path)
    assert figures["hit_idle_cmd_to_valid_hist"].keys() == {"1"}
    assert figures["lookahead_wait_hist"].keys() == {"0"}


@pytest.mark.parametrize("cls,kwargs,name", [
    (TmaReqQueue, {"q_depth": 1}, "q_depth"), (TmaReqQueue, {"q_depth": 17}, "q_depth"),
    (TmaReqQueue, {"addr_w": 39}, "addr_w"), (TmaReqQueue, {"id_w": 0}, "id_w"),
    (TmaDescCache, {"dc_entries": 1}, "dc_entries"), (TmaDescCache, {"dc_entries": 17}, "dc_entries"),
    (TmaDescCache, {"dc_entries": True}, "dc_entries"), (TmaDescCache, {"addr_w": 65}, "addr_w"),
    (TmaDescCache, {"nb_w": 29}, "nb_w"), (TmaDescCache, {"smem_aw": 10}, "smem_aw"),
])
def test_cache_parameters_are_checked(cls, kwargs, name):
    with pytest.raises(ValueError, match=name):
        cls(**kwargs)
