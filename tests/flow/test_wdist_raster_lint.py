"""Verilog generation and Verilator -Wall lint of the wdist rasterizers (``RasterArray``)."""

import pytest

from sim.verilog import lint, write_verilog
from tests.rtl.test_wdist_raster import BLOCK, BUILDS


@pytest.mark.parametrize("build", list(BUILDS))
def test_raster_array_lints_clean(build, tmp_path):
    path, module = write_verilog(BLOCK, BLOCK.resolve_params(BUILDS[build]), out_dir=tmp_path)
    ok, messages = lint(path, module)
    assert ok, messages
