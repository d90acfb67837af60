# amaranth: UnusedElaboratable=no
"""Golden prefix popcount (both forms) against numpy, and PrefixPopcount's parameter checks."""

import numpy as np
import pytest

from golden.common.popcount import (blelloch_prefix_popcount, count_width, pack,
                                    prefix_popcount, unpack)
from hw.common.popcount import PrefixPopcount


def _numpy_reference(value, n):
    """Independent reference: exclusive cumulative sum of the bit array."""
    bits = (np.asarray([value], dtype=object) >> np.arange(n)) & 1
    bits = bits.astype(np.int64)
    return np.concatenate([[0], np.cumsum(bits)[:-1]]).tolist(), int(bits.sum())


def _check(value, n):
    want, want_total = _numpy_reference(value, n)
    assert prefix_popcount(value, n) == want, (n, value)
    assert blelloch_prefix_popcount(value, n) == (want, want_total), (n, value)


@pytest.mark.parametrize("n", range(1, 11))
def test_both_forms_match_numpy_exhaustively(n):
    for value in range(1 << n):
        _check(value, n)


@pytest.mark.parametrize("n", [11, 16, 17, 31, 33, 48, 64, 100, 255, 256, 257, 1000, 1023, 1024])
def test_both_forms_match_numpy_random(n, seed):
    rng = np.random.default_rng(seed)
    directed = [0, (1 << n) - 1, 1, 1 << (n - 1), int("01" * n, 2) & ((1 << n) - 1)]
    for value in directed + [int(rng.integers(0, 2, n) @ (1 << np.arange(n, dtype=object)))
                             for _ in range(200)]:
        _check(value, n)


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 16, 48, 64, 1000, 1024])
def test_blelloch_structure_is_log_depth_and_work_efficient(n):
    """2 * ceil(log2 n) levels (L up, L down) and fewer than 2 * P additions, P = 2**L."""
    trace = []
    blelloch_prefix_popcount((1 << n) - 1, n, trace)
    levels = (n - 1).bit_length()
    assert [(phase, d) for phase, d, _ in trace] == (
        [("up", d) for d in range(1, levels + 1)] + [("down", d) for d in reversed(range(levels))])
    adds = sum(a for _, _, a in trace)
    assert adds == 2 * ((1 << levels) - 1)


def test_rank_selects_first_r_candidates():
    """How wdist uses it (WD-F9, G-A2): candidates with prefix < R are the first R set bits."""
    n = 8
    for value in range(1 << n):
        prefix = prefix_popcount(value, n)
        set_bits = [k for k in range(n) if (value >> k) & 1]
        for r in range(len(set_bits) + 1):
            chosen = [k for k in set_bits if prefix[k] < r]
            assert chosen == set_bits[:r]


@pytest.mark.parametrize("n", [1, 2, 3, 7, 64])
def test_pack_unpack_round_trip(n, seed):
    rng = np.random.default_rng(seed)
    counts = [int(c) for c in rng.integers(0, 1 << count_width(n), n)]
    assert unpack(pack(counts, n), n) == counts
    assert count_width(n) == int(np.ceil(np.log2(n + 1)))


@pytest.mark.parametrize("bad", [0, -1, 1025, 2.0, "4", True, None])
def test_rtl_rejects_bad_n(bad):
    with pytest.raises(ValueError, match=r"n must be an integer in 1\.\.1024"):
        PrefixPopcount(bad)


@pytest.mark.parametrize("bad", [0, -1, 1025, True])
def test_model_rejects_bad_n(bad):
    with pytest.raises(ValueError, match="n must be"):
        prefix_popcount(0, bad)


@pytest.mark.parametrize("bits", [-1, 1 << 4, 1.0])
def test_model_rejects_bits_wider_than_n(bits):
    with pytest.raises(ValueError, match="bits must be"):
        prefix_popcount(bits, 4)


@pytest.mark.parametrize("n", [1, 2, 5, 1024])
def test_rtl_port_widths(n):
    dut = PrefixPopcount(n)
    w = count_width(n)
    assert (len(dut.i), len(dut.o), len(dut.total)) == (n, n * w, w)
    assert dut.count_width == w and dut.layout.size == n * w
