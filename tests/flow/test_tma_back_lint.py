"""Verilog generation and Verilator -Wall lint of the TMA back-end modules (hw/tma/tracker.py,
smem_writer.py, completion.py, swizzle.py), with their port lists and widths."""

import re

import pytest

from golden.tma.formats import l2_req_fields, l2_resp_fields, mbar_fields, smem_wr_fields
from golden.tma.params import TmaParams
from hw.common.params import reject
from hw.tma.completion import TmaCompletion
from hw.tma.smem_writer import TmaSmemWriter, fill_fields
from hw.tma.swizzle import SwizzleMap
from hw.tma.tracker import TmaTracker, line_fields, track_fields
from sim.registry import Block, Param
from sim.verilog import lint, write_verilog


def _params(component, **kw):
    try:
        return TmaParams(**kw)
    except ValueError as exc:
        reject(component, str(exc))


class Tracker(TmaTracker):
    def __init__(self, trk_entries=32, addr_w=64, smem_aw=18):
        super().__init__(_params(self, TRK_ENTRIES=trk_entries, ADDR_W=addr_w, SMEM_AW=smem_aw))


class Writer(TmaSmemWriter):
    def __init__(self, smem_aw=18):
        super().__init__(_params(self, SMEM_AW=smem_aw))


class Completion(TmaCompletion):
    def __init__(self, depth=8, smem_aw=18, id_w=8):
        super().__init__(_params(self, SMEM_AW=smem_aw, ID_W=id_w), depth)


def _block(name, top, **defaults):
    return Block(name=name, kind="test", summary=name, spec="tma.md §2.2", top=top,
                 params=tuple(Param(k, v, "-", "-") for k, v in defaults.items()))


BLOCKS = {
    "tracker": _block("tma_trk", Tracker, trk_entries=32, addr_w=64, smem_aw=18),
    "writer": _block("tma_wr", Writer, smem_aw=18),
    "completion": _block("tma_cpl", Completion, depth=8, smem_aw=18, id_w=8),
    "swizzle": _block("tma_swz", SwizzleMap, smem_aw=18),
}

CASES = [
    ("tracker", {}), ("tracker", {"trk_entries": 4, "addr_w": 40, "smem_aw": 11}),
    ("tracker", {"trk_entries": 256, "smem_aw": 24}),
    ("writer", {}), ("writer", {"smem_aw": 11}), ("writer", {"smem_aw": 24}),
    ("completion", {}), ("completion", {"depth": 2, "smem_aw": 11, "id_w": 1}),
    ("completion", {"depth": 64, "id_w": 16}),
    ("swizzle", {}), ("swizzle", {"smem_aw": 11}),
]


def _verilog(kind, params, tmp_path):
    block = BLOCKS[kind]
    return write_verilog(block, block.resolve_params(params), out_dir=tmp_path)


@pytest.mark.parametrize("kind,params", CASES,
                         ids=[k + "".join(f"_{n}{v}" for n, v in p.items()) for k, p in CASES])
def test_tma_back_end_lints_clean(kind, params, tmp_path):
    path, module = _verilog(kind, params, tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages


PORTS = {
    "tracker": ["i__valid", "i__ready", "i__payload", "l2_req__valid", "l2_req__ready",
                "l2_req__payload", "l2_resp__valid", "l2_resp__ready", "l2_resp__payload",
                "o__valid", "o__ready", "o__payload", "ack_valid", "ack_seq", "outstanding",
                "busy", "clk", "rst"],
    "writer": ["resp__valid", "resp__ready", "resp__payload", "fill__valid", "fill__ready",
               "fill__payload", "smem_wr__valid", "smem_wr__ready", "smem_wr__payload",
               "mbar__valid", "mbar__ready", "mbar__payload", "wr_valid", "wr_seq", "wr_bytes",
               "busy", "clk", "rst"],
}


@pytest.mark.req("TMA-I4", "TMA-I5", "TMA-I6", "TMA-I8", "TMA-I10")
def test_tma_back_end_port_names_and_widths(tmp_path):
    p = TmaParams(TRK_ENTRIES=16, ADDR_W=48, SMEM_AW=16)
    widths = {
        "tracker": ({"trk_entries": 16, "addr_w": 48, "smem_aw": 16},
                    {"input": {"i__payload": track_fields(p).width,
                               "l2_resp__payload": l2_resp_fields(p).width},
                     "output": {"l2_req__payload": l2_req_fields(p).width,
                                "o__payload": line_fields(p).width, "outstanding": 5}}),
        "writer": ({"smem_aw": 16},
                   {"input": {"resp__payload": line_fields(p).width,
                              "fill__payload": fill_fields(p).width},
                    "output": {"smem_wr__payload": smem_wr_fields(p).width,
                               "mbar__payload": mbar_fields(p).width}}),
    }
    for kind, (params, decls) in widths.items():
        path, module = _verilog(kind, params, tmp_path)
        text = path.read_text()
        header = re.search(rf"module {module}\(([^)]*)\)", text).group(1)
        assert {x.strip() for x in header.split(",")} == set(PORTS[kind])
        for direction, ports in decls.items():
            for name, width in ports.items():
                decl = f"{direction} [{width - 1}:0] {name};"
                assert decl in text, decl
