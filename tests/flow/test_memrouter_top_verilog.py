"""Verilog generation of the memory router top (hw/memrouter/top.py ``Memrouter``): its port
list and payload widths (MR-I1..I6), and ``verilator --lint-only -Wall`` clean (CFG-B, CFG-A
with two processor ports, CFG-G64's 64-KiB pages and CFG-B's 512-byte pages)."""

import re

import pytest

from golden.memrouter.formats import CSRREQ, CSRRSP, EVT, MREQ, MRSP, PREQ, PRSP
from golden.memrouter.params import build_reference
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog
from tb.memrouter.builds import router_top

STREAM = ("valid", "ready", "payload")

# CFG index in CFG_NAMES (A, B, C, D, G64), processor ports, page size (0: the CFG's).
BUILDS = {"B_p1": dict(CFG=1, N_PROC=1), "A_p2": dict(CFG=0, N_PROC=2),
          "G64_p1": dict(CFG=4, N_PROC=1), "B_p1_page512": dict(CFG=1, N_PROC=1, LOG2G=9)}


BLOCK = Block(name="lint_memrouter", kind="test", summary="Memrouter", spec="memrouter.md §2.3",
              top=router_top, params=(Param("CFG", 1, "0..4", "CFG_NAMES index"),
                                Param("N_PROC", 1, "1..4", "processor ports"),
                                Param("LOG2G", 0, "0, 9..16", "page size (0: the CFG's)")))


def _verilog(params, tmp_path):
    """Write the Verilog, check the port list and payload widths; returns (path, module)."""
    p, _ = build_reference(**params, FAR_ALLOC=0)
    path, module = write_verilog(BLOCK, params, out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    ports = {"clk", "rst", "evt__valid", "evt__payload",
             *(f"csr_{s}__{x}" for s in ("req", "rsp") for x in STREAM),
             *(f"{s}__{i}__{x}" for s in ("preq", "prsp") for i in range(p.N_PROC)
               for x in STREAM),
             *(f"{s}__{j}__{x}" for s in ("mreq", "mrsp") for j in range(p.N_OFF + 1)
               for x in STREAM)}
    assert {x.strip() for x in header.split(",")} == ports
    widths = {"input": {"csr_req__payload": CSRREQ.width,
                        **{f"preq__{i}__payload": PREQ.width for i in range(p.N_PROC)},
                        **{f"mrsp__{j}__payload": MRSP.width for j in range(p.N_OFF + 1)}},
              "output": {"csr_rsp__payload": CSRRSP.width, "evt__payload": EVT.width,
                         **{f"prsp__{i}__payload": PRSP.width for i in range(p.N_PROC)},
                         **{f"mreq__{j}__payload": MREQ.width for j in range(p.N_OFF + 1)}}}
    for direction, items in widths.items():
        for name, width in items.items():
            decl = f"{direction} [{width - 1}:0] {name};"
            assert decl in text, decl
    return path, module


@pytest.mark.req("MR-I1", "MR-I2", "MR-I3", "MR-I4", "MR-I5", "MR-I6")
@pytest.mark.parametrize("build", [pytest.param(b, marks=pytest.mark.req("MR-C1"))
                                   if b in ("G64_p1", "B_p1_page512") else b for b in BUILDS])
def test_memrouter_top_verilog(build, tmp_path):
    """Converts; the spec's streams (preq/prsp per processor port, mreq/mrsp per memory port,
    csr_req/csr_rsp, evt without ready) with the payload widths of golden.memrouter.formats;
    the whole top lints clean with the project's waivers only (generator artefacts). G64 is the
    seed's 64-KiB page (LOG2G = 16, NS = 2048, MR-C1's top value), page512 its bottom value
    (LOG2G = 9, NS = 16)."""
    path, module = _verilog(BUILDS[build], tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages[-3000:]
