"""Verilog generation and Verilator -Wall lint of the TMA top ``hw.tma.Tma`` and its store path,
with the spec's port names (TMA-I13)."""

import re

import pytest

from golden.tma.params import TmaParams
from hw.common.params import reject
from hw.tma.storepath import TmaStorePath
from sim.verilog import lint, write_verilog
from tests.rtl.test_tma_top import BLOCK as TOP, BUILDS
from tests.flow.test_tma_back_lint import _block


class StorePath(TmaStorePath):
    def __init__(self, addr_w=64, smem_aw=18):
        try:
            p = TmaParams(ADDR_W=addr_w, SMEM_AW=smem_aw)
        except ValueError as exc:
            reject(self, str(exc))
        super().__init__(p)


STOREPATH = _block("tma_sp", StorePath, addr_w=64, smem_aw=18)
CASES = [(TOP, BUILDS["default"]), (TOP, BUILDS["corner"]), (STOREPATH, {}),
         (STOREPATH, {"addr_w": 40, "smem_aw": 11})]

PORTS = {f"{s}__{k}" for s in ("cmd", "desc_rd_req", "desc_rd_resp", "l2_req", "l2_resp",
                               "smem_wr", "smem_rd_req", "smem_rd_resp", "mbar", "err", "done")
         for k in ("valid", "ready", "payload")} | {"idle", "outstanding", "clk", "rst"}


@pytest.mark.req("TMA-I13")
@pytest.mark.parametrize("block,params", CASES,
                         ids=[f"{b.name}-{'_'.join(f'{k}{v}' for k, v in p.items()) or 'default'}"
                              for b, p in CASES])
def test_tma_top_lints_clean(block, params, tmp_path):
    path, module = write_verilog(block, block.resolve_params(params), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
    if block is TOP:
        header = re.search(rf"module {module}\(([^)]*)\)", path.read_text()).group(1)
        assert {x.strip() for x in header.split(",")} == PORTS
