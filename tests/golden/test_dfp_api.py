"""The golden package's contract (DFP-I10): no Amaranth import, the named entry points, and
the default metadata of ``DotUnit.chain``."""

import subprocess
import sys

import pytest


@pytest.mark.req("DFP-I10")
def test_golden_dfp_imports_no_amaranth_and_exports_the_api():
    code = (
        "import sys\n"
        "from golden.dfp.numerics import rshift_round, to_fp32, fadd32, dfp_add\n"
        "from golden.dfp.quant import quant_block, dequant, dequant_lzd\n"
        "from golden.dfp.dot import DotUnit\n"
        "from golden.dfp.downconvert import downconvert\n"
        "from golden.dfp.vector import dfp_matmul, quant_rows, quant_cols\n"
        "from golden.dfp.errbench import error_bench\n"
        "from golden.dfp.training import training_parity, spot_check_chains\n"
        "u = DotUnit(4, 32, bias_bits=1)\n"
        "assert u.r_cnt == 0 and callable(u.clr) and 'chains' in u.stats\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('amaranth', 'cocotb')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


@pytest.mark.req("DFP-I10", "DFP-F25")
def test_chain_default_metadata():
    """Omitted bl_a/bl_b are bitlen of the clamped operands; k_log2 = clog2(LANES x beats)
    with padding lanes included."""
    from golden.dfp.dot import DotUnit
    from golden.dfp.formats import Config, PRESHIFT
    unit = DotUnit(4, 32)
    explicit = unit.chain([-32768, 5, 0, 1, 2], [3, 3, 3, 3, 3], 0, 0, Config(mode=PRESHIFT),
                          bl_a=15, bl_b=2, k_log2=3)
    default = unit.chain([-32768, 5, 0, 1, 2], [3, 3, 3, 3, 3], 0, 0, Config(mode=PRESHIFT))
    assert default == explicit and default["op_err"] == 1 and default["meta_err"] == 0
