"""Verilog generation and Verilator -Wall lint of the memrouter QoS parts (hw/memrouter/qos.py
``QosArbiter``, hw/memrouter/qos_port.py ``QosPort``): port lists and widths."""

import re

import pytest

from golden.memrouter.formats import MREQ
from hw.memrouter.qos import QosArbiter
from hw.memrouter.qos_port import QosPort
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog

CFG = ["rate_n", "rate_f", "burst_n", "burst_f", "uth_en", "uth", "uw", "mig_starve"]
SEL = ["sel_valid", "sel_cls", "sel_paid", "sel_nb", "tok_n", "tok_f"]
ARB_PORTS = ["clk", "rst", *CFG, "n_valid", "n_nb", "f_valid", "f_nb", "m_valid", "m_nb",
             "xfer", *SEL, "busy"]
PORT_PORTS = ["clk", "rst", *CFG, *SEL, "mig_block", "beat_xfer", "beat_cls", "beat_wr",
              *(f"{s}__{x}" for s in ("near", "far", "mig", "mreq")
                for x in ("valid", "ready", "payload"))]

ARB_BUILDS = [dict(qden=24, max_len=8), dict(qden=255, max_len=16), dict(qden=1, max_len=1)]
PORT_BUILDS = [dict(qden=24, max_len=8, depth=16), dict(qden=1, max_len=1, depth=1),
               dict(qden=255, max_len=16, depth=20), dict(qden=24, max_len=8, depth=64),
               dict(qden=24, max_len=5, depth=24)]


def _verilog(cls, params, ports, tmp_path):
    block = Block(name=f"lint_{cls.__name__.lower()}", kind="test", summary=cls.__name__,
                  spec="memrouter.md §4.10", top=cls,
                  params=tuple(Param(k, v, "", k) for k, v in params.items()))
    path, module = write_verilog(block, params, out_dir=tmp_path)
    text = path.read_text()
    header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
    assert {x.strip() for x in header.split(",")} == set(ports)
    nbw = params["max_len"].bit_length()
    widths = {"output": {"tok_n": 18, "tok_f": 18, "sel_cls": 2, "sel_nb": nbw}}
    if cls is QosArbiter:
        widths["input"] = {"rate_n": 16, "burst_f": 8, "uw": 16, "mig_starve": 16, "n_nb": nbw}
    else:
        widths["input"] = {"near__payload": MREQ.width, "uth": 16}
        widths["output"].update({"mreq__payload": MREQ.width, "beat_cls": 2})
    for direction, items in widths.items():
        for name, width in items.items():
            decl = f"{direction} {name};" if width == 1 else f"{direction} [{width - 1}:0] {name};"
            assert decl in text, decl
    return path, module


@pytest.mark.req("MR-C9")
@pytest.mark.parametrize("params", ARB_BUILDS, ids=lambda p: f"q{p['qden']}_l{p['max_len']}")
def test_qos_arbiter_lints_clean(params, tmp_path):
    """`verilator --lint-only -Wall` with the project's generator waivers only (docs/flow.md)."""
    path, module = _verilog(QosArbiter, params, ARB_PORTS, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


@pytest.mark.req("MR-I3", "MR-C9")
@pytest.mark.parametrize("params", PORT_BUILDS,
                         ids=lambda p: f"q{p['qden']}_l{p['max_len']}_d{p['depth']}")
def test_qos_port_lints_clean(params, tmp_path):
    """The port list, the 328-bit MReq payloads (MR-I3) and a clean lint."""
    path, module = _verilog(QosPort, params, PORT_PORTS, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
