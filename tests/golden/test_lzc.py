# amaranth: UnusedElaboratable=no
"""Golden leading-zero count against int.bit_length, and LeadingZeroCount's parameter checks."""

import numpy as np
import pytest

from golden.common.lzc import lzc
from hw.common.lzc import LeadingZeroCount


def _reference(value, width):
    return width - int(value).bit_length()


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 8, 12, 16])
def test_lzc_matches_bit_length_exhaustively(width):
    """Every value; width 16 is the dfp dequantizer's LZC16."""
    for value in range(1 << width):
        assert lzc(value, width) == _reference(value, width), (width, value)


def test_lzc16_vectorized_cross_check():
    """LZC16 over all 65536 words once more, against a numpy log2-free form."""
    values = np.arange(1 << 16)
    highest = np.zeros_like(values)                 # bit length: 1 + index of the top set bit
    for b in range(16):
        highest = np.where((values >> b) & 1, b + 1, highest)
    want = 16 - highest
    got = np.array([lzc(int(v), 16) for v in values])
    assert np.array_equal(got, want)


@pytest.mark.parametrize("width", [17, 24, 32, 33, 48, 64, 100, 128, 255, 256])
def test_lzc_matches_bit_length_random_and_edges(width, seed):
    rng = np.random.default_rng(seed)
    values = [0, (1 << width) - 1]
    for b in range(width):
        values += [1 << b, (1 << b) - 1, (1 << (b + 1)) - 1, ((1 << width) - 1) >> b]
    for _ in range(2000):
        shift = int(rng.integers(0, width))     # spread the leading-zero counts evenly
        word = int(rng.integers(0, 2, width) @ (1 << np.arange(width, dtype=object)))
        values.append(word >> shift)
    for value in values:
        assert lzc(value, width) == _reference(value, width), (width, value)


@pytest.mark.parametrize("bad", [0, -1, 257, 16.0, "16", True, None])
def test_rtl_rejects_bad_width(bad):
    with pytest.raises(ValueError, match=r"width must be an integer in 1\.\.256"):
        LeadingZeroCount(bad)


@pytest.mark.parametrize("bad", [0, -1, 257, True])
def test_model_rejects_bad_width(bad):
    with pytest.raises(ValueError, match="width must be"):
        lzc(0, bad)


@pytest.mark.parametrize("value", [-1, 1 << 8, 3.0])
def test_model_rejects_value_wider_than_width(value):
    with pytest.raises(ValueError, match="value must be"):
        lzc(value, 8)


@pytest.mark.parametrize("width,count_bits", [(1, 1), (2, 2), (3, 2), (8, 4), (16, 5), (32, 6),
                                              (48, 6), (256, 9)])
def test_rtl_port_widths(width, count_bits):
    dut = LeadingZeroCount(width)
    assert (len(dut.i), len(dut.count), len(dut.zero)) == (width, count_bits, 1)
