"""DFP-V10: training dot products through the RTL dot unit (LANES 16, ACC_W 32), bit-exact."""

import pytest

from sim import registry
from sim.blocks import dfp as adapter


@pytest.mark.req("DFP-V10", "DFP-V1")
def test_training_chains_bit_exact_on_rtl(seed):
    """>= 256 chains per mode (ADAPTIVE and CHUNK), sampled with default_rng(99) from the
    first and last mini-batch products of the seed-0 run of §4.14, all five product types;
    every result field and the stats port compared with the golden model."""
    spot = adapter.spot_check(registry.get("dfp"), seed)
    assert spot["checked"] >= 512 and spot["mismatches"] == 0, spot["problems"]
    assert spot["product_types"] == ["dW1", "dW2", "dh", "z1", "z2"]
    assert spot["golden_matches_recorded"]
