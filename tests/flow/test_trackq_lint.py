"""Verilog generation and Verilator -Wall lint of ``TrackingQueues`` and ``SingleFifo`` (TQ-I14),
their port lists and port widths (TQ-I1..I13)."""

import re

import pytest

from golden.trackq.fifo import SINGLE_FIFO_COUNTERS
from golden.trackq.formats import (COUNTERS, cmt_fields, fill_fields, inval_fields, pop_fields,
                                   req_fields, resp_fields)
from golden.trackq.params import TrackqParams
from hw.trackq.fifo import SingleFifo
from hw.trackq.top import TrackingQueues
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog

STREAMS = ["req__valid", "req__ready", "req__payload", "fill__valid", "fill__payload",
           "inval__valid", "inval__payload", "resp__valid", "resp__ready", "resp__payload",
           "pop__valid", "pop__payload", "cmt__valid", "cmt__payload", "clk", "rst"]
TQ_PORTS = STREAMS + ["cfg_mode", "cfg_lgq", "cfg_cgm", "cfg_reclaim", "err_clr", "occ",
                      "st_occ", "fast_occ", "pool_used", "pool_full", "ready_vec", "lock_valid",
                      "lock_q", "reclaim_mode", "err", *COUNTERS]
FIFO_PORTS = STREAMS + ["ready_vec", "pool_used", "pool_full", *SINGLE_FIFO_COUNTERS]


def _block(cls):
    return Block(name=f"lint_{cls.__name__.lower()}", kind="test", summary=cls.__name__,
                 spec="trackq.md", top=cls,
                 params=tuple(Param(k, v, "TQ-C", k)
                              for k, v in TrackqParams.test().as_dict().items()))


TEST_BUILDS = {
    "test": TrackqParams.test(),
    "nq1_nofast_nofl": TrackqParams.test(N_Q=1, POOL=2, FAST_PATH=0, FREELIST=0, BANKS=1,
                                         DSLOTS=2, ID_W=1, N_WARPS=1, SEQ_W=4, COMMIT_DEPTH=1),
    "nq6_pool8": TrackqParams.test(N_Q=6, POOL=8, BANKS=3, DSLOTS=5, FAST_DEPTH=3),
}
FULL = TrackqParams.full()


def _verilog(cls, params, ports, tmp_path):
    """Write the Verilog, check the port list and widths; returns (path, module)."""
    path, module = write_verilog(_block(cls), params.as_dict(), out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == set(ports)
    widths = {"input": {"req__payload": req_fields(params).width,
                        "fill__payload": fill_fields(params).width,
                        "inval__payload": inval_fields(params).width},
              "output": {"resp__payload": resp_fields(params).width,
                         "pop__payload": pop_fields(params).width,
                         "cmt__payload": cmt_fields(params).width,
                         "pool_used": params.OCC_W}}
    for direction, items in widths.items():
        for name, width in items.items():
            decl = (f"{direction} {name};" if width == 1
                    else f"{direction} [{width - 1}:0] {name};")
            assert decl in text, decl
    return path, module


def _lint(cls, params, ports, tmp_path):
    path, module = _verilog(cls, params, ports, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


@pytest.mark.req("TQ-I14", "TQ-I1", "TQ-I3", "TQ-I4", "TQ-I5", "TQ-I6", "TQ-I7", "TQ-I8",
                 "TQ-I9", "TQ-I10", "TQ-I11")
@pytest.mark.parametrize("build", list(TEST_BUILDS))
def test_trackq_top_verilog_ports(build, tmp_path):
    """Converts with amaranth.back.verilog; the spec's port list and payload widths."""
    _verilog(TrackingQueues, TEST_BUILDS[build], TQ_PORTS, tmp_path)


@pytest.mark.req("TQ-I13", "TQ-I14")
def test_single_fifo_verilog_ports(tmp_path):
    _verilog(SingleFifo, TrackqParams.test(), FIFO_PORTS, tmp_path)


@pytest.mark.req("TQ-I14")
@pytest.mark.parametrize("build", list(TEST_BUILDS))
def test_trackq_top_lints_clean(build, tmp_path):
    """`verilator --lint-only -Wall` with the project's generator waivers only (docs/flow.md)."""
    _lint(TrackingQueues, TEST_BUILDS[build], TQ_PORTS, tmp_path)


@pytest.mark.req("TQ-I14", "TQ-I13")
@pytest.mark.parametrize("build", ["test", "pool4_cd1"])
def test_single_fifo_lints_clean(build, tmp_path):
    params = TrackqParams.test() if build == "test" else TrackqParams.test(POOL=4, COMMIT_DEPTH=1)
    _lint(SingleFifo, params, FIFO_PORTS, tmp_path)


@pytest.mark.slow
@pytest.mark.req("TQ-I14", "TQ-I1")
def test_trackq_full_size_verilog_ports_and_lint(tmp_path):
    """Full size (N_Q = 48, POOL = 512, DSLOTS = 256): converts (a few MB of Verilog, minutes),
    the 76-bit req payload, the port list, and lints clean."""
    assert req_fields(FULL).width == 76
    _lint(TrackingQueues, FULL, TQ_PORTS, tmp_path)
